package featurize

import (
	"bytes"
	"context"
	"encoding/gob"
	"errors"
	"fmt"
	"io"
	"math"
	"reflect"
	"runtime"
	"slices"
	"sync"

	"github.com/parastream/parastream/internal/beamfn"

	"github.com/apache/beam/sdks/v2/go/pkg/beam"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/register"

	"github.com/parastream/parastream/shards"
	"github.com/parastream/parastream/transforms/text"
)

// ShardTask is one input shard of a featurize pipeline: its index in the
// input manifest, its path on disk, and its corpus and split.
type ShardTask struct {
	Index int
	// Path is the shard: a local file, or an object of a store
	// (s3://...), which the worker copies and checks against SHA256.
	Path          string
	Corpus, Split string
	SHA256        string
}

// Counts is what the counting pass gathers from training texts: each
// token's occurrences and document frequency (Tokens sorted, Count and Docs
// beside them), the number of texts, and the seeded sample of texts the
// topic model is fitted on (the SampleSize texts of least priority, by
// increasing priority).
type Counts struct {
	Tokens []string
	Count  []int64
	Docs   []int64
	Texts  int64
	Sample []SampledText
}

// SampledText is a text of the NMF sample: its tokens and its priority, a
// seeded hash of the tokens, so that the sample is the same whatever the
// sharding and the order of the input, and a text seen twice counts once.
type SampledText struct {
	Priority uint64
	Tokens   []string
}

// CountTraining counts the tokens of the tasks' rows (PCollection of
// ShardTask) and samples sampleSize distinct texts, with a Beam combine, and
// writes the result to path (gob-encoded Counts; read it with ReadCounts).
// Both sides of every row count as texts.
func CountTraining(s beam.Scope, tasks beam.PCollection, sampleSize int, seed uint64, path string) {
	s = s.Scope("featurize.CountTraining")
	partial := beam.ParDo(s, &countShardFn{SampleSize: sampleSize, Seed: seed}, tasks)
	total := beam.Combine(s, &mergeCountsFn{SampleSize: sampleSize}, partial)
	beam.ParDo0(s, &writeCountsFn{Path: path}, total)
}

type countShardFn struct {
	SampleSize int
	Seed       uint64
}

func (fn *countShardFn) ProcessElement(ctx context.Context, task ShardTask, emit func(Counts)) error {
	r, done, err := shards.OpenTask(ctx, task.Path, task.SHA256)
	if err != nil {
		return err
	}
	defer done()
	type tc struct{ count, docs int64 }
	counts := map[string]*tc{}
	seen := map[string]bool{}
	sample := newSampler(fn.SampleSize)
	var texts int64
	text := func(tokens []string) {
		texts++
		clear(seen)
		for _, t := range tokens {
			c := counts[t]
			if c == nil {
				c = &tc{}
				counts[t] = c
			}
			c.count++
			if !seen[t] {
				seen[t] = true
				c.docs++
			}
		}
		if len(tokens) > 0 {
			sample.offer(textPriority(fn.Seed, tokens), tokens)
		}
	}
	for row, err := range r.All() {
		if err != nil {
			return fmt.Errorf("counting tokens of %s: %w", task.Path, err)
		}
		if ctx.Err() != nil {
			return ctx.Err()
		}
		text(row.TokensA)
		if len(row.TokensB) > 0 {
			text(row.TokensB)
		}
	}
	out := Counts{Texts: texts, Sample: sample.sorted()}
	out.Tokens = make([]string, 0, len(counts))
	for t := range counts {
		out.Tokens = append(out.Tokens, t)
	}
	slices.Sort(out.Tokens)
	out.Count = make([]int64, len(out.Tokens))
	out.Docs = make([]int64, len(out.Tokens))
	for i, t := range out.Tokens {
		out.Count[i], out.Docs[i] = counts[t].count, counts[t].docs
	}
	emit(out)
	return nil
}

// textPriority is a seeded 64-bit hash of a text's tokens (text.Hash64's
// hash over the tokens, each followed by a zero byte).
func textPriority(seed uint64, tokens []string) uint64 {
	h := text.SeededFNV(seed)
	for _, t := range tokens {
		h.Write([]byte(t))
		h.Write([]byte{0})
	}
	return text.Mix64(h.Sum64())
}

// sampler keeps the n texts of least priority, one per priority.
type sampler struct {
	n     int
	items []SampledText // a max-heap on Priority
	have  map[uint64]bool
}

func newSampler(n int) *sampler { return &sampler{n: n, have: map[uint64]bool{}} }

func (s *sampler) offer(p uint64, tokens []string) {
	if s.n <= 0 || s.have[p] {
		return
	}
	if len(s.items) == s.n {
		if p >= s.items[0].Priority {
			return
		}
		delete(s.have, s.items[0].Priority)
		s.items[0] = SampledText{Priority: p, Tokens: slices.Clone(tokens)}
		s.down(0)
	} else {
		s.items = append(s.items, SampledText{Priority: p, Tokens: slices.Clone(tokens)})
		s.up(len(s.items) - 1)
	}
	s.have[p] = true
}

func (s *sampler) up(i int) {
	for i > 0 {
		parent := (i - 1) / 2
		if s.items[parent].Priority >= s.items[i].Priority {
			return
		}
		s.items[parent], s.items[i] = s.items[i], s.items[parent]
		i = parent
	}
}

func (s *sampler) down(i int) {
	for {
		big, l, r := i, 2*i+1, 2*i+2
		if l < len(s.items) && s.items[l].Priority > s.items[big].Priority {
			big = l
		}
		if r < len(s.items) && s.items[r].Priority > s.items[big].Priority {
			big = r
		}
		if big == i {
			return
		}
		s.items[big], s.items[i] = s.items[i], s.items[big]
		i = big
	}
}

func (s *sampler) sorted() []SampledText {
	out := slices.Clone(s.items)
	slices.SortFunc(out, func(a, b SampledText) int {
		switch {
		case a.Priority < b.Priority:
			return -1
		case a.Priority > b.Priority:
			return 1
		}
		return 0
	})
	return out
}

// mergeCountsFn merges Counts: token counts add up, samples merge keeping
// the SampleSize texts of least priority.
type mergeCountsFn struct {
	SampleSize int
}

func (fn *mergeCountsFn) MergeAccumulators(a, b Counts) Counts {
	out := Counts{Texts: a.Texts + b.Texts}
	n := len(a.Tokens) + len(b.Tokens)
	out.Tokens, out.Count, out.Docs = make([]string, 0, n), make([]int64, 0, n), make([]int64, 0, n)
	i, j := 0, 0
	for i < len(a.Tokens) || j < len(b.Tokens) {
		switch {
		case j == len(b.Tokens) || (i < len(a.Tokens) && a.Tokens[i] < b.Tokens[j]):
			out.Tokens, out.Count, out.Docs = append(out.Tokens, a.Tokens[i]), append(out.Count, a.Count[i]), append(out.Docs, a.Docs[i])
			i++
		case i == len(a.Tokens) || b.Tokens[j] < a.Tokens[i]:
			out.Tokens, out.Count, out.Docs = append(out.Tokens, b.Tokens[j]), append(out.Count, b.Count[j]), append(out.Docs, b.Docs[j])
			j++
		default:
			out.Tokens, out.Count, out.Docs = append(out.Tokens, a.Tokens[i]), append(out.Count, a.Count[i]+b.Count[j]), append(out.Docs, a.Docs[i]+b.Docs[j])
			i++
			j++
		}
	}
	out.Sample = make([]SampledText, 0, min(fn.SampleSize, len(a.Sample)+len(b.Sample)))
	i, j = 0, 0
	for len(out.Sample) < fn.SampleSize && (i < len(a.Sample) || j < len(b.Sample)) {
		switch {
		case j == len(b.Sample) || (i < len(a.Sample) && a.Sample[i].Priority < b.Sample[j].Priority):
			out.Sample = append(out.Sample, a.Sample[i])
			i++
		case i == len(a.Sample) || b.Sample[j].Priority < a.Sample[i].Priority:
			out.Sample = append(out.Sample, b.Sample[j])
			j++
		default: // the same text in both
			out.Sample = append(out.Sample, a.Sample[i])
			i++
			j++
		}
	}
	return out
}

type writeCountsFn struct {
	Path string
}

func (fn *writeCountsFn) ProcessElement(ctx context.Context, c Counts) error {
	var b bytes.Buffer
	if err := gob.NewEncoder(&b).Encode(c); err != nil {
		return fmt.Errorf("writing token counts: %w", err)
	}
	return shards.WriteObject(ctx, fn.Path, b.Bytes())
}

// ReadCounts reads what CountTraining wrote (a local file, or an object
// of a store). A missing file means that there was no training text.
func ReadCounts(ctx context.Context, path string) (*Counts, error) {
	b, err := shards.ReadFile(ctx, path)
	if err != nil {
		return nil, err
	}
	var c Counts
	if err := gob.NewDecoder(bytes.NewReader(b)).Decode(&c); err != nil {
		return nil, fmt.Errorf("reading token counts %s: %w", path, err)
	}
	return &c, nil
}

// TokenCounts returns the counts as TokenCount records.
func (c *Counts) TokenCounts() []TokenCount {
	out := make([]TokenCount, len(c.Tokens))
	for i, t := range c.Tokens {
		out[i] = TokenCount{Token: t, Count: c.Count[i], Docs: c.Docs[i]}
	}
	return out
}

// Receipt is what the featurize DoFn leaves for the driver once a shard is
// written: the input shard, the featurized shard (its path relative to
// Root) and what was seen.
type Receipt struct {
	Task  ShardTask
	Root  string
	Shard shards.ShardInfo
	Stats TextStats
}

// Apply featurizes every shard of tasks (PCollection of ShardTask) with the
// model in the singleton side input model (PCollection of []byte, a
// Model's MarshalBinary), writing each as one shard under
// dir/shards/<index>/<corpus>/<split>/ and a receipt under dir/receipts/
// (read them with Receipts). dir may be a staging prefix on an object
// store (shards.Output.Staging): each shard is then written on the
// worker's temporary directory and put there whole. Rows keep their order. It returns the
// receipts as a PCollection too.
func Apply(s beam.Scope, tasks, model beam.PCollection, dir string) beam.PCollection {
	s = s.Scope("featurize.Apply")
	return beam.ParDo(s, &featurizeFn{Dir: dir}, tasks, beam.SideInput{Input: model})
}

type featurizeFn struct {
	Dir string

	model *Model
	enc   []byte
}

// batchRows is the number of rows featurized at a time, across the cores.
const batchRows = 2048

func (fn *featurizeFn) ProcessElement(ctx context.Context, task ShardTask, model []byte, emit func(Receipt)) error {
	if fn.model == nil || !slices.Equal(fn.enc, model) {
		m, err := UnmarshalModel(model)
		if err != nil {
			return err
		}
		fn.model, fn.enc = m, model
	}
	rec, err := fn.featurize(ctx, task)
	if err != nil {
		return fmt.Errorf("featurizing %s: %w", task.Path, err)
	}
	if err := shards.WriteReceipt(ctx, fn.Dir, fmt.Sprintf("%06d", task.Index), rec); err != nil {
		return err
	}
	for name, v := range map[string]int64{"featurized_rows": rec.Shard.Rows, "featurized_texts": rec.Stats.Texts,
		"featurized_tokens": rec.Stats.Tokens, "featurized_unknown_tokens": rec.Stats.Unknown, "featurized_bucketed_tokens": rec.Stats.Bucketed,
		"featurized_empty_texts": rec.Stats.Empty} {
		beam.NewCounter(beamfn.CounterNamespace, name).Inc(ctx, v)
	}
	emit(rec)
	return nil
}

func (fn *featurizeFn) featurize(ctx context.Context, task ShardTask) (Receipt, error) {
	in, doneIn, err := shards.OpenTask(ctx, task.Path, task.SHA256)
	if err != nil {
		return Receipt{}, err
	}
	defer doneIn()
	rel := fmt.Sprintf("shards/%06d", task.Index)
	root, done, err := shards.LocalRoot(fn.Dir, rel)
	if err != nil {
		return Receipt{}, err
	}
	defer done()
	w, err := shards.NewWriter(root, task.Corpus, task.Split, shards.WriterOptions{MaxRows: math.MaxInt64, MaxBytes: math.MaxInt64, Overwrite: true})
	if err != nil {
		return Receipt{}, err
	}
	workers := make([]*Featurizer, max(1, runtime.GOMAXPROCS(0)))
	stats := make([]TextStats, len(workers))
	for i := range workers {
		workers[i] = fn.model.NewFeaturizer()
	}
	buf := make([]shards.Row, batchRows)
	for {
		if err := ctx.Err(); err != nil {
			w.Abort()
			return Receipt{}, err
		}
		n, err := in.Read(buf)
		if n > 0 {
			var wg sync.WaitGroup
			per := (n + len(workers) - 1) / len(workers)
			for i, f := range workers {
				lo, hi := i*per, min((i+1)*per, n)
				if lo >= hi {
					break
				}
				wg.Go(func() {
					for r := lo; r < hi; r++ {
						f.Apply(&buf[r], &stats[i])
					}
				})
			}
			wg.Wait()
			if werr := w.Write(buf[:n]...); werr != nil {
				w.Abort()
				return Receipt{}, werr
			}
		}
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			w.Abort()
			return Receipt{}, err
		}
	}
	infos, err := w.Close()
	if err != nil {
		return Receipt{}, err
	}
	if root, err = shards.StageShards(ctx, root, fn.Dir, rel, infos); err != nil {
		return Receipt{}, err
	}
	rec := Receipt{Task: task, Root: root}
	for _, st := range stats {
		rec.Stats.Add(st)
	}
	switch len(infos) {
	case 0: // an empty shard gives no file: nothing to place
	case 1:
		rec.Shard = infos[0]
	default:
		return Receipt{}, fmt.Errorf("the featurized shard came out as %d files, want 1", len(infos))
	}
	return rec, nil
}

func init() {
	beam.RegisterType(reflect.TypeOf((*ShardTask)(nil)).Elem())
	beam.RegisterType(reflect.TypeOf((*Counts)(nil)).Elem())
	beam.RegisterType(reflect.TypeOf((*Receipt)(nil)).Elem())
	beamfn.DoFn3x1[context.Context, ShardTask, func(Counts), error](&countShardFn{})
	register.Combiner1[Counts](&mergeCountsFn{})
	beamfn.DoFn2x1[context.Context, Counts, error](&writeCountsFn{})
	beamfn.DoFn4x1[context.Context, ShardTask, []byte, func(Receipt), error](&featurizeFn{})
	register.Emitter1[Counts]()
	register.Emitter1[Receipt]()
}
