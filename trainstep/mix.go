package trainstep

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"math"
	"math/rand/v2"
	"slices"
	"strconv"
	"strings"

	"github.com/parastream/parastream/shards"
	"github.com/parastream/parastream/stream"
	"github.com/parastream/parastream/trainstep/compute"
)

// A run reads one dataset, or several mixed (RunConfig.Datasets). A mix is
// read through one consumer per dataset (all in the run's consumer group),
// and its epochs are defined by quotas:
//
//   - Each dataset d has a weight w_d (RunConfig.Mix; default its training
//     rows, as the manifest counts them) and size n_d (its rows). The anchor
//     a is the dataset of the smallest w_d/n_d: the one that needs the most
//     draws to pass over its rows once.
//   - An epoch of the mix trains quota_d = round(w_d·n_a/w_a) rows of each
//     dataset d: one pass over the anchor, and for the others their share
//     of the weights, which is at least one pass (a dataset weighted above
//     its size is read again from its next pass: oversampled).
//   - Within an epoch each row is drawn from dataset d with probability
//     proportional to the rows of d's quota left, so that every dataset's
//     quota runs out together at the epoch's end: with the default weights
//     an epoch is one pass over every dataset, in the order of a uniform
//     shuffle of their union.
//
// Each dataset's own passes are its consumer's epochs: every row of a
// dataset is trained exactly once in each of its passes, across kills and
// resumes, as for a single dataset.

// item is a row handed to the loop, with its dataset and the run's epoch.
type item struct {
	stream.Record
	// ds indexes mixer.names.
	ds int
	// epoch is the run's epoch: the consumer's for a single dataset, the
	// mix's for several.
	epoch int
	// neg is the row's hard negative (RunConfig.HardNegatives), or nil.
	neg []int32
}

// MixPosition is the position of a mixed run (RunPosition.Mix): the mix's
// epoch and, per dataset, the rows of its quota left in that epoch and its
// consumer's exact stream position.
type MixPosition struct {
	Epoch    int          `json:"epoch"`
	Datasets []MixDataset `json:"datasets"`
}

// MixDataset is one dataset of a MixPosition.
type MixDataset struct {
	Dataset string          `json:"dataset"`
	Weight  float64         `json:"weight"`
	Quota   int64           `json:"quota"`
	Left    int64           `json:"left"`
	Stream  stream.Position `json:"stream"`
}

// mixer draws rows from its datasets' consumers.
type mixer struct {
	names []string
	// nli marks the NLI datasets (IsNLIDataset), trained by the model's
	// NLI head.
	nli []bool
	cs  []*stream.Consumer
	// weights, quota (rows per epoch) and left (rows of the epoch's quota
	// not yet drawn) are those of a mix of two or more datasets.
	weights     []float64
	quota, left []int64
	epoch       int // the mix's epoch, from 1
	epochs      int // mix epochs to run
	seed        uint64
	rng         *rand.Rand
	log         *slog.Logger
}

// ParseMix reads the weights of --mix: "name=w,name=w", each weight a
// positive number.
func ParseMix(s string) (map[string]float64, error) {
	out := map[string]float64{}
	for _, part := range strings.Split(s, ",") {
		part = strings.TrimSpace(part)
		if part == "" {
			continue
		}
		name, ws, ok := strings.Cut(part, "=")
		w, err := strconv.ParseFloat(strings.TrimSpace(ws), 64)
		name = strings.TrimSpace(name)
		if !ok || name == "" || err != nil || !(w > 0) || math.IsInf(w, 0) {
			return nil, fmt.Errorf("mix %q: want dataset=weight with a positive weight, as in ppdb=2,quora=1", part)
		}
		if _, dup := out[name]; dup {
			return nil, fmt.Errorf("mix: %s weighted twice", name)
		}
		out[name] = w
	}
	return out, nil
}

// mixQuotas computes each dataset's rows per epoch from the weights and
// sizes (see above); weights nil means the sizes.
func mixQuotas(names []string, sizes []int64, weights map[string]float64) (ws []float64, quota []int64, err error) {
	ws = make([]float64, len(names))
	for i, n := range names {
		if sizes[i] <= 0 {
			return nil, nil, fmt.Errorf("dataset %s has no rows in its split: nothing to mix", n)
		}
		ws[i] = float64(sizes[i])
		if weights != nil {
			w, ok := weights[n]
			if !ok {
				return nil, nil, fmt.Errorf("--mix gives no weight to dataset %s: weigh every dataset of --dataset, or none", n)
			}
			ws[i] = w
		}
	}
	for n := range weights {
		if !slices.Contains(names, n) {
			return nil, nil, fmt.Errorf("--mix weighs %s, which is not one of the datasets (%s)", n, strings.Join(names, ", "))
		}
	}
	anchor := 0
	for i := range names {
		if ws[i]/float64(sizes[i]) < ws[anchor]/float64(sizes[anchor]) {
			anchor = i
		}
	}
	quota = make([]int64, len(names))
	for i := range names {
		quota[i] = max(int64(math.Round(ws[i]*float64(sizes[anchor])/ws[anchor])), sizes[i])
	}
	return ws, quota, nil
}

// passes is how many passes over a dataset of size rows the consumer must
// make for epochs mix epochs of quota rows.
func passes(epochs int, quota, size int64) int {
	return int((int64(epochs)*quota + size - 1) / size)
}

// openMixer opens one consumer per dataset of cfg, handing each its
// dataset's manifest (as RunConfig.manifests read them), at the positions
// of start when resuming (start nil: a new run, or a single dataset
// resumed at single), committing as member of the run's group.
// cfg.Model is the trainer's.
func openMixer(ctx context.Context, cfg RunConfig, manifests []*shards.Manifest, single *stream.Position, start *MixPosition, member *stream.Member) (*mixer, error) {
	names, model, seed := cfg.datasets(), cfg.Model, cfg.Model.Seed
	mx := &mixer{names: names, seed: seed, log: cfg.Logger, epochs: cfg.Epochs}
	for _, n := range names {
		mx.nli = append(mx.nli, IsNLIDataset(n) && cfg.nli())
	}
	cc := stream.ConsumerConfig{Client: cfg.Client, Prefix: cfg.Prefix, Split: cfg.Split, Group: cfg.Run, Epochs: cfg.Epochs,
		Seed: seed, ShuffleBuffer: cfg.ShuffleBuffer, Logger: cfg.Logger, Member: member,
		// What the loop reads of a row: ids and label to train, id to
		// trace (the tokenisation comes from the vocabulary: tokenizeOf).
		Columns: []string{"id", "label", "ids_a", "ids_b"}}
	if model.Context == compute.ContextTopics {
		cc.Columns = append(cc.Columns, "topics_a", "topics_b")
	}
	if len(names) == 1 {
		cc.Dataset, cc.Start, cc.Manifest = names[0], single, manifests[0]
		c, err := stream.NewConsumer(ctx, cc)
		if err != nil {
			return nil, err
		}
		mx.cs = []*stream.Consumer{c}
		return mx, nil
	}
	// The sizes, weights and quotas: from the manifests for a new run, as
	// saved for a resumed one (the same rows stay the same quota).
	sizes := make([]int64, len(names))
	for i, n := range names {
		si, ok := manifests[i].Splits[shards.SplitKey(n, cfg.Split)]
		if !ok {
			return nil, fmt.Errorf("%w: the manifest of %s has no split %q", stream.ErrNoManifest, n, cfg.Split)
		}
		sizes[i] = si.Rows
	}
	var err error
	if start == nil {
		mx.weights, mx.quota, err = mixQuotas(names, sizes, cfg.Mix)
		if err != nil {
			return nil, err
		}
		mx.left = slices.Clone(mx.quota)
		mx.epoch = 1
	} else {
		if len(start.Datasets) != len(names) {
			return nil, fmt.Errorf("resuming: the checkpoint mixed %d datasets, not %d", len(start.Datasets), len(names))
		}
		mx.epoch = start.Epoch
		for i, d := range start.Datasets {
			if d.Dataset != names[i] || d.Quota < 1 || d.Left < 0 || d.Left > d.Quota {
				return nil, fmt.Errorf("resuming: the checkpoint's mix entry %d is %s (quota %d, left %d), want dataset %s", i, d.Dataset, d.Quota, d.Left, names[i])
			}
			mx.weights, mx.quota, mx.left = append(mx.weights, d.Weight), append(mx.quota, d.Quota), append(mx.left, d.Left)
		}
	}
	mx.rng = mx.newRNG()
	for i, n := range names {
		c := cc
		c.Dataset, c.Epochs, c.Manifest = n, passes(cfg.Epochs, mx.quota[i], sizes[i]), manifests[i]
		if start != nil {
			c.Start = &start.Datasets[i].Stream
		}
		cons, err := stream.NewConsumer(ctx, c)
		if err != nil {
			mx.Close()
			return nil, err
		}
		mx.cs = append(mx.cs, cons)
	}
	return mx, nil
}

// IsNLIDataset reports whether a dataset is one of natural language
// inference (a corpus whose rows are premise, hypothesis and a class:
// snli, multinli): a run trains its batches by the model's NLI head
// (multitask training, Yang et al. 2018 §2.4) instead of the pairs loss.
func IsNLIDataset(name string) bool { return name == "snli" || name == "multinli" }

// sameVocabulary refuses datasets not featurized (ErrNotFeaturized: the
// one place a run checks it), or featurized with different vocabularies
// (their token ids mean different words).
func sameVocabulary(names []string, ms []*shards.Manifest) error {
	for i, m := range ms {
		if m.Vocabulary == nil {
			return fmt.Errorf("%w: the manifest of %s names no vocabulary: run `parastream featurize --in SHARDS --out FEATURIZED`, then publish FEATURIZED", ErrNotFeaturized, names[i])
		}
		if i > 0 && m.Vocabulary.SHA256 != ms[0].Vocabulary.SHA256 {
			return fmt.Errorf("%w: %s and %s were featurized with different vocabularies (sha256 %.12s… and %.12s…), so their token ids mean different words: featurize them together (one `parastream featurize --in` over a directory holding both), publish again, and train on that",
				ErrVocabularyMismatch, names[0], names[i], ms[0].Vocabulary.SHA256, m.Vocabulary.SHA256)
		}
	}
	return nil
}

// ErrVocabularyMismatch reports datasets of a mix featurized with
// different vocabularies.
var ErrVocabularyMismatch = errors.New("datasets featurized apart")

// newRNG seeds the draws of the current epoch from where it stands, so that
// a resumed run draws afresh but reproducibly.
func (mx *mixer) newRNG() *rand.Rand {
	var left int64
	for _, l := range mx.left {
		left += l
	}
	return rand.New(rand.NewPCG(mx.seed^0x6a09e667f3bcc909, uint64(mx.epoch)<<40|uint64(left)))
}

// Next returns the next row: io.EOF after the last epoch.
func (mx *mixer) Next(ctx context.Context) (item, error) {
	if len(mx.cs) == 1 {
		rec, err := mx.cs[0].Next(ctx)
		return item{Record: rec, epoch: rec.Epoch}, err
	}
	for {
		var total int64
		for _, l := range mx.left {
			total += l
		}
		if total == 0 {
			if mx.epoch >= mx.epochs {
				return item{}, io.EOF
			}
			mx.epoch++
			copy(mx.left, mx.quota)
			mx.rng = mx.newRNG()
			continue
		}
		k := mx.rng.Int64N(total)
		d := 0
		for ; k >= mx.left[d]; d++ {
			k -= mx.left[d]
		}
		rec, err := mx.cs[d].Next(ctx)
		if errors.Is(err, io.EOF) {
			mx.log.Warn("a dataset of the mix ran out of rows before its quota: its manifest counts more rows than its topic holds",
				"dataset", mx.names[d], "epoch", mx.epoch, "rows_left", mx.left[d])
			mx.left[d] = 0
			continue
		}
		if err != nil {
			return item{}, err
		}
		mx.left[d]--
		return item{Record: rec, ds: d, epoch: mx.epoch}, nil
	}
}

// Commit commits each consumer's position.
func (mx *mixer) Commit(ctx context.Context, pos []stream.Position) error {
	for i, c := range mx.cs {
		if err := c.Commit(ctx, pos[i]); err != nil {
			return err
		}
	}
	return nil
}

// Stats sums the consumers' counters; Epoch is the run's.
func (mx *mixer) Stats() stream.Stats {
	var s stream.Stats
	for _, c := range mx.cs {
		cs := c.Stats()
		s.Rows += cs.Rows
		s.EpochRows += cs.EpochRows
		s.Duplicates += cs.Duplicates
		s.Replayed += cs.Replayed
		s.BadMessages += cs.BadMessages
		s.Messages += cs.Messages
		s.Bytes += cs.Bytes
		s.Lag += cs.Lag
		s.Epoch = cs.Epoch
	}
	if len(mx.cs) > 1 {
		s.Epoch = mx.epoch
		s.EpochRows = 0
		for i := range mx.cs {
			s.EpochRows += mx.quota[i] - mx.left[i]
		}
	}
	return s
}

// rows describes each dataset's rows of the epoch for a progress line:
// "quora 3000/8990 ppdb 60000/181238" (a single dataset: "3000/8990").
func (mx *mixer) rows(split string) string {
	if len(mx.cs) == 1 {
		s := mx.cs[0].Stats()
		return fmt.Sprintf("%d/%d", s.EpochRows, mx.cs[0].Manifest().Splits[shards.SplitKey(mx.names[0], split)].Rows)
	}
	parts := make([]string, len(mx.names))
	for i, n := range mx.names {
		parts[i] = fmt.Sprintf("%s %d/%d", n, mx.quota[i]-mx.left[i], mx.quota[i])
	}
	return strings.Join(parts, " ")
}

// epochRows are the rows of the current epoch read so far and in all:
// one dataset's, or the sum of a mix's quotas.
func (mx *mixer) epochRows(split string) (done, total int64) {
	if len(mx.cs) == 1 {
		return mx.cs[0].Stats().EpochRows, mx.cs[0].Manifest().Splits[shards.SplitKey(mx.names[0], split)].Rows
	}
	for i := range mx.names {
		done, total = done+mx.quota[i]-mx.left[i], total+mx.quota[i]
	}
	return done, total
}

// Close closes the consumers.
func (mx *mixer) Close() error {
	var errs []error
	for _, c := range mx.cs {
		errs = append(errs, c.Close())
	}
	return errors.Join(errs...)
}

// mixState is the mixer's state at a point of the reading: each consumer's
// exact position, the mix's epoch and quotas left, and the counters for
// progress lines.
type mixState struct {
	mx    *mixer
	pos   []stream.Position
	epoch int
	left  []int64
	stats stream.Stats
	rows  string
	// done and total are the rows of this epoch read so far and in all
	// (the progress line's ETA).
	done, total int64
}

// state captures the mixer's state now; split names the rows' split for
// the progress lines.
func (mx *mixer) state(split string) *mixState {
	s := &mixState{mx: mx, epoch: mx.epoch, left: slices.Clone(mx.left), stats: mx.Stats(), rows: mx.rows(split)}
	s.done, s.total = mx.epochRows(split)
	for _, c := range mx.cs {
		s.pos = append(s.pos, c.Position())
	}
	return s
}

// returnable reports whether the untrained rows, in batches, can be left
// out of the position: each must be of its consumer's pass at s (a row of
// an earlier pass cannot be read again).
func (s *mixState) returnable(untrained ...[]item) bool {
	for _, b := range untrained {
		for _, it := range b {
			if it.Record.Epoch != s.pos[it.ds].Epoch {
				return false
			}
		}
	}
	return true
}

// positions returns each consumer's position at s less the untrained rows,
// and for a mix its epoch and quotas with those rows given back.
func (s *mixState) positions(untrained []item) ([]stream.Position, *MixPosition) {
	byDS := make([][]stream.Record, len(s.pos))
	for _, it := range untrained {
		byDS[it.ds] = append(byDS[it.ds], it.Record)
	}
	pos := make([]stream.Position, len(s.pos))
	for i := range s.pos {
		pos[i] = WithoutRecords(s.pos[i], byDS[i])
	}
	if len(pos) == 1 {
		return pos, nil
	}
	mp := &MixPosition{Epoch: s.epoch}
	for i, n := range s.mx.names {
		mp.Datasets = append(mp.Datasets, MixDataset{Dataset: n, Weight: s.mx.weights[i], Quota: s.mx.quota[i],
			Left: s.left[i] + int64(len(byDS[i])), Stream: pos[i]})
	}
	return pos, mp
}
