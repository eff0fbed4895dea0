package transforms

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"

	"github.com/apache/beam/sdks/v2/go/pkg/beam"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/register"

	"github.com/parastream/parastream/corpora"
	"github.com/parastream/parastream/internal/atomicfile"
	"github.com/parastream/parastream/shards"
)

// The extraction pipeline keeps its memory bounded whatever the size of
// the input: instead of grouping records with Beam's GroupByKey, which the
// Prism runner holds in memory, it scatters them into bucket files ("spill"
// files) by a hash of the key they must be grouped by, and a later DoFn
// reads one bucket at a time. Only the names of the spill files go through
// GroupByKey. Memory then holds one bucket (1/Buckets of the data, or the
// largest single thread) per parallel bundle, not the data set.
//
// Spill files live under a work directory that every worker must reach (a
// local directory for Prism; a shared mount on a cluster).

// Scatter keys.
const (
	// ByGroup buckets records by Row.GroupKey (Reddit threads).
	ByGroup = "group"
	// ByDedupeKey buckets records by their normalised dedupe key.
	ByDedupeKey = "dedupe"
)

// externalSplit marks the records of other extractions, read for
// --dedupe-against: they block their dedupe keys and are never written.
const externalSplit = "\x00external"

// Bucketed is a bucket and one of its spill files.
type Bucketed struct {
	Bucket int
	Path   string
}

// Scatter writes each record of rows (PCollection<shards.Row>) to the spill
// file of its bucket under dir/name, and returns the buckets with their
// files as PCollection<KV<int, []string>> (grouped).
func Scatter(s beam.Scope, rows beam.PCollection, dir, name, key string, buckets int, symmetric bool) beam.PCollection {
	s = s.Scope("transforms.Scatter." + name)
	spilled := beam.ParDo(s, &scatterFn{Dir: filepath.Join(dir, name), Key: key, Buckets: buckets, Symmetric: symmetric}, rows)
	return beam.GroupByKey(s, spilled)
}

type scatterFn struct {
	Dir       string
	Key       string
	Buckets   int
	Symmetric bool

	writers map[int]*bucketFile
}

type bucketFile struct {
	w    *SpillWriter
	path string
}

func (fn *scatterFn) StartBundle(_ context.Context, _ func(int, string)) {
	fn.writers = make(map[int]*bucketFile)
}

func (fn *scatterFn) bucket(r *shards.Row) int {
	var k string
	switch fn.Key {
	case ByGroup:
		k = r.GroupKey
	default:
		k = NormalizedKey(r, fn.Symmetric)
	}
	return int(hash64(0, k) % uint64(fn.Buckets))
}

func (fn *scatterFn) ProcessElement(ctx context.Context, r shards.Row, _ func(int, string)) error {
	b := fn.bucket(&r)
	f := fn.writers[b]
	if f == nil {
		path := filepath.Join(fn.Dir, fmt.Sprintf("b%05d", b), randomName()+".spill")
		w, err := CreateSpill(ctx, path)
		if err != nil {
			return err
		}
		f = &bucketFile{w: w, path: path}
		fn.writers[b] = f
	}
	return f.w.Write(&r)
}

func (fn *scatterFn) FinishBundle(ctx context.Context, emit func(int, string)) error {
	keys := slices.Sorted(mapKeys(fn.writers))
	for _, b := range keys {
		f := fn.writers[b]
		if err := f.w.Close(); err != nil {
			return err
		}
		emit(b, f.path)
	}
	fn.writers = nil
	return nil
}

func mapKeys[K comparable, V any](m map[K]V) func(func(K) bool) {
	return func(yield func(K) bool) {
		for k := range m {
			if !yield(k) {
				return
			}
		}
	}
}

func randomName() string {
	var b [8]byte
	rand.Read(b[:])
	return hex.EncodeToString(b[:])
}

// readBucket reads every spill file of a bucket, in a stable order.
func readBucket(ctx context.Context, paths func(*string) bool, fn func(*shards.Row) error) error {
	var all []string
	var p string
	for paths(&p) {
		all = append(all, p)
	}
	slices.Sort(all)
	return ReadSpillFiles(ctx, all, fn)
}

// Pair reads the thread buckets of Reddit records (the output of Scatter
// ByGroup) and pairs each thread's comments with PairThread. It returns
// PCollection<shards.Row> of pairs.
func Pair(s beam.Scope, buckets beam.PCollection, opt PairOptions) beam.PCollection {
	s = s.Scope("transforms.Pair")
	return beam.ParDo(s, &pairFn{Options: opt}, buckets)
}

type pairFn struct {
	Options PairOptions
	c       counters
}

func (fn *pairFn) ProcessElement(ctx context.Context, _ int, paths func(*string) bool, emit func(shards.Row)) error {
	threads := make(map[string][]shards.Row)
	err := readBucket(ctx, paths, func(r *shards.Row) error {
		threads[r.GroupKey] = append(threads[r.GroupKey], *r)
		return nil
	})
	if err != nil {
		return err
	}
	var st PairStats
	for _, rows := range threads {
		t := PairThread(rows, fn.Options, emit)
		st.Pairs += t.Pairs
		st.Titles += t.Titles
		st.Orphans += t.Orphans
		st.NoTitle += t.NoTitle
	}
	fn.c.add("threads", int64(len(threads)))
	fn.c.add("paired", st.Pairs)
	fn.c.add("paired_titles", st.Titles)
	fn.c.add("orphan_replies", st.Orphans)
	fn.c.add("no_title", st.NoTitle)
	LocalProgress.add("paired", st.Pairs)
	fn.c.flush(ctx)
	return nil
}

// SplitConfig chooses each record's split.
type SplitConfig struct {
	Ratios SplitRatios
	Seed   uint64
	// Official keeps the evaluation sets' own splits (see OfficialSplit).
	Official bool
}

func (c SplitConfig) split(r *shards.Row) string {
	if c.Official {
		if s, ok := OfficialSplit(r.Corpus, r.Dataset); ok {
			return s
		}
	}
	return AssignSplit(r.GroupKey, c.Seed, c.Ratios)
}

// Run is one bucket's records of one split, deduplicated, sorted by ID and
// spilled: the unit the shard writer concatenates.
type Run struct {
	Split  string
	Bucket int
	Path   string
	Rows   int64
}

// DedupeAndSplit reads the dedupe buckets (the output of Scatter
// ByDedupeKey), keeps one record of each normalised key (see Deduper),
// assigns splits, and spills each bucket's records of each split sorted by
// ID. It returns PCollection<KV<string, []Run>> grouped by split, and the
// token histogram of the kept records for budget sampling (a singleton
// PCollection<TokenHistogram>; empty without a budget).
//
// With keepDuplicates every record is kept (evaluation sets keep their
// official pairs, duplicates included).
func DedupeAndSplit(s beam.Scope, buckets beam.PCollection, dir string, symmetric, keepDuplicates bool, split SplitConfig, budget BudgetConfig) (runs, hist beam.PCollection) {
	s = s.Scope("transforms.DedupeAndSplit")
	runs, hists := beam.ParDo2(s, &dedupeFn{Dir: filepath.Join(dir, "runs"), Symmetric: symmetric, KeepDuplicates: keepDuplicates, Split: split, Budget: budget}, buckets)
	return beam.GroupByKey(s, runs), sumHistograms(s, hists)
}

type dedupeFn struct {
	Dir            string
	Symmetric      bool
	KeepDuplicates bool
	Split          SplitConfig
	Budget         BudgetConfig
	c              counters
}

func (fn *dedupeFn) ProcessElement(ctx context.Context, bucket int, paths func(*string) bool, emit func(string, Run), emitHist func(TokenHistogram)) error {
	bySplit := make(map[string][]shards.Row)
	hist := TokenHistogram{Cells: map[uint32]int64{}}
	keep := func(r shards.Row) {
		r.Split = fn.Split.split(&r)
		bySplit[r.Split] = append(bySplit[r.Split], r)
		if fn.Budget.Tokens > 0 {
			hist.Cells[fn.Budget.cell(r.ID)] += rowTokens(&r)
		}
	}
	var st DedupeStats
	if fn.KeepDuplicates {
		if err := readBucket(ctx, paths, func(r *shards.Row) error {
			if r.Split != externalSplit {
				keep(*r)
				st.Kept++
			}
			return nil
		}); err != nil {
			return err
		}
	} else {
		d := NewDeduper(fn.Symmetric)
		if err := readBucket(ctx, paths, func(r *shards.Row) error {
			d.Add(*r, r.Split == externalSplit)
			return nil
		}); err != nil {
			return err
		}
		st = d.Each(keep)
	}
	fn.c.add("dedupe_exact", st.Exact)
	fn.c.add("dedupe_normalized", st.Normalized)
	fn.c.add("dedupe_external", st.External)
	for split, rows := range bySplit {
		slices.SortFunc(rows, func(a, b shards.Row) int { return strings.Compare(a.ID, b.ID) })
		path := filepath.Join(fn.Dir, split, fmt.Sprintf("b%05d.spill", bucket))
		w, err := CreateSpill(ctx, path)
		if err != nil {
			return err
		}
		for i := range rows {
			if err := w.Write(&rows[i]); err != nil {
				w.Close()
				return err
			}
		}
		if err := w.Close(); err != nil {
			return err
		}
		emit(split, Run{Split: split, Bucket: bucket, Path: path, Rows: int64(len(rows))})
	}
	if len(hist.Cells) > 0 {
		emitHist(hist)
	}
	LocalProgress.add("deduplicated", st.Kept)
	fn.c.flush(ctx)
	return nil
}

// Receipt is what the shard writer leaves for the driver: the shards of one
// split, to go into the manifest.
type Receipt struct {
	Corpus string
	Split  string
	Shards []shards.ShardInfo
}

// ReceiptPath is where WriteShards leaves the receipt of a split.
func ReceiptPath(dir, split string) string {
	return filepath.Join(dir, "receipts", split+".json")
}

// WriteShards writes each split's runs (the output of DedupeAndSplit), in
// bucket order, as the split's shards under out/<corpus>/<split>/, and
// leaves a Receipt per split under dir. It returns
// PCollection<shards.ShardInfo>. With a budget, only the records of the
// priority cells within it are written (hist is DedupeAndSplit's).
func WriteShards(s beam.Scope, runs, hist beam.PCollection, out, corpus, dir string, opts shards.WriterOptions, budget BudgetConfig) beam.PCollection {
	s = s.Scope("transforms.WriteShards")
	return beam.ParDo(s, &writeShardsFn{Out: out, Corpus: corpus, Dir: dir, Options: opts, Budget: budget}, runs, beam.SideInput{Input: hist})
}

type writeShardsFn struct {
	Out     string
	Corpus  string
	Dir     string
	Options shards.WriterOptions
	Budget  BudgetConfig
	c       counters
}

func (fn *writeShardsFn) ProcessElement(ctx context.Context, split string, runs func(*Run) bool, hist TokenHistogram, emit func(shards.ShardInfo)) error {
	cut, kept := hist.cut(fn.Budget.Tokens)
	if fn.Budget.Tokens > 0 && split == "train" {
		// Reported once, by the writer of the train split.
		fn.c.add("budget_tokens_kept", kept)
	}
	var all []Run
	var r Run
	for runs(&r) {
		all = append(all, r)
	}
	slices.SortFunc(all, func(a, b Run) int { return a.Bucket - b.Bucket })
	opts := fn.Options
	opts.Overwrite = true
	w, err := shards.NewWriter(fn.Out, fn.Corpus, split, opts)
	if err != nil {
		return err
	}
	var n int64
	for _, run := range all {
		err := ReadSpillFiles(ctx, []string{run.Path}, func(row *shards.Row) error {
			if fn.Budget.Tokens > 0 && uint64(fn.Budget.cell(row.ID)) >= cut {
				fn.c.inc("budget_dropped")
				return nil
			}
			n++
			if n%(1<<16) == 0 {
				LocalProgress.add("written", 1<<16)
			}
			return w.Write(*row)
		})
		if err != nil {
			w.Abort()
			return fmt.Errorf("writing split %s: %w", split, err)
		}
	}
	infos, err := w.Close()
	if err != nil {
		return err
	}
	LocalProgress.add("written", n%(1<<16))
	fn.c.add("written_"+split, n)
	fn.c.flush(ctx)
	rec, err := json.MarshalIndent(Receipt{Corpus: fn.Corpus, Split: split, Shards: infos}, "", "  ")
	if err != nil {
		return err
	}
	if err := atomicfile.WriteFile(ReceiptPath(fn.Dir, split), rec); err != nil {
		return err
	}
	for _, info := range infos {
		emit(info)
	}
	return nil
}

// WriteRejects writes the malformed records (PCollection<corpora.Reject>)
// as JSON lines under dir/rejects/, a file per bundle; the driver merges
// them (see MergeRejects).
func WriteRejects(s beam.Scope, rejects beam.PCollection, dir string) {
	s = s.Scope("transforms.WriteRejects")
	beam.ParDo0(s, &rejectsFn{Dir: filepath.Join(dir, "rejects")}, rejects)
}

type rejectsFn struct {
	Dir string
	f   *atomicfile.File
	enc *json.Encoder
}

func (fn *rejectsFn) ProcessElement(r corpora.Reject) error {
	if fn.f == nil {
		f, err := atomicfile.Create(filepath.Join(fn.Dir, randomName()+".jsonl"))
		if err != nil {
			return err
		}
		fn.f, fn.enc = f, json.NewEncoder(f)
		fn.enc.SetEscapeHTML(false)
	}
	return fn.enc.Encode(r)
}

func (fn *rejectsFn) FinishBundle() error {
	if fn.f == nil {
		return nil
	}
	f := fn.f
	fn.f, fn.enc = nil, nil
	return f.Commit()
}

// MergeRejects merges the rejects files of a run's work directory into one
// file at path, sorted by file, line and offset so that two runs over the
// same input give the same file. It returns the number of rejects.
func MergeRejects(dir, path string) (int64, error) {
	parts, err := filepath.Glob(filepath.Join(dir, "rejects", "*.jsonl"))
	if err != nil {
		return 0, err
	}
	var all []corpora.Reject
	for _, p := range parts {
		b, err := os.ReadFile(p)
		if err != nil {
			return 0, err
		}
		dec := json.NewDecoder(strings.NewReader(string(b)))
		for dec.More() {
			var r corpora.Reject
			if err := dec.Decode(&r); err != nil {
				return 0, fmt.Errorf("reading rejects part %s: %w", p, err)
			}
			all = append(all, r)
		}
	}
	slices.SortFunc(all, func(a, b corpora.Reject) int {
		if c := strings.Compare(a.File, b.File); c != 0 {
			return c
		}
		if a.Offset != b.Offset {
			if a.Offset < b.Offset {
				return -1
			}
			return 1
		}
		return strings.Compare(string(a.Reason), string(b.Reason))
	})
	f, err := atomicfile.Create(path)
	if err != nil {
		return 0, err
	}
	defer f.Abort()
	enc := json.NewEncoder(f)
	enc.SetEscapeHTML(false)
	for _, r := range all {
		if err := enc.Encode(r); err != nil {
			return 0, err
		}
	}
	return int64(len(all)), f.Commit()
}

func init() {
	beam.RegisterType(reflect.TypeOf((*Run)(nil)).Elem())
	beam.RegisterType(reflect.TypeOf((*shards.ShardInfo)(nil)).Elem())
	register.DoFn3x1[context.Context, shards.Row, func(int, string), error](&scatterFn{})
	register.DoFn4x1[context.Context, int, func(*string) bool, func(shards.Row), error](&pairFn{})
	register.DoFn5x1[context.Context, int, func(*string) bool, func(string, Run), func(TokenHistogram), error](&dedupeFn{})
	register.DoFn5x1[context.Context, string, func(*Run) bool, TokenHistogram, func(shards.ShardInfo), error](&writeShardsFn{})
	register.Emitter1[TokenHistogram]()
	register.DoFn1x1[corpora.Reject, error](&rejectsFn{})
	register.Emitter2[int, string]()
	register.Emitter2[string, Run]()
	register.Emitter1[shards.ShardInfo]()
	register.Iter1[string]()
	register.Iter1[Run]()
}
