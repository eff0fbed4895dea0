package trainstep

import (
	"cmp"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"

	"github.com/parastream/parastream/trainstep/compute"
	"github.com/parastream/parastream/trainstep/cpu"
)

// Config is the model, loss, regularisation and optimiser configuration;
// see compute.Config for the fields and their defaults.
type Config = compute.Config

// ErrNonFinite is returned by a step whose loss or gradient is NaN or
// infinite; the parameters are those before the step.
var ErrNonFinite = compute.ErrNonFinite

// Pair is one training example: token ids of both sides (shards.Row's IDsA
// and IDsB) and its label (the sim loss's gold score).
type Pair struct {
	A, B  []int32
	Label float32
	// CtxA and CtxB are the sides' topic vectors (shards.Row's TopicsA and
	// TopicsB), read by a model with Config.Context topics.
	CtxA, CtxB []float32
	// NLI marks a pair of an NLI dataset: Label is its class (0
	// entailment, 1 neutral, 2 contradiction) and it trains the model's
	// NLI head (Config.NLIHidden). A batch's pairs are all NLI or none.
	NLI bool
}

// Options are the parts of a new trainer that are not configuration.
type Options struct {
	// Backend computes; nil means the gorgonia CPU backend.
	Backend compute.Backend
	// Vocab are the words of the token ids (id = index), written to
	// checkpoints; optional. When Config.Vocab is 0 it becomes
	// len(Vocab) + Config.OOVBuckets: the words' rows, then the buckets'.
	Vocab []string
	// Vectors initialise the embeddings of the vocabulary's words.
	Vectors *Vectors
}

// Trainer trains one model, step by step. It is seeded: the same
// configuration, data and batch order give the same parameters. Not safe
// for concurrent use.
type Trainer struct {
	cfg     Config
	backend compute.Backend
	model   compute.Model
	pcg     *rand.PCG
	rng     *rand.Rand
	step    int64
	epoch   int
	vocab   []string
	// saved is the checkpoint this trainer wrote last, and savedSums the
	// sha256 (hex) of each of its files: save links unchanged files from
	// it.
	saved     string
	savedSums map[string]string
	// Found and OOV count the vocabulary words that did and did not have a
	// pretrained vector.
	Found, OOV int
}

// New makes a trainer for cfg: defaults are filled, the configuration is
// validated, and parameters are drawn from cfg.Seed (then overwritten by
// opts.Vectors where they have a word; the out-of-vocabulary buckets' rows
// keep their random start, as words without a vector do).
func New(cfg Config, opts Options) (*Trainer, error) {
	if cfg.Vocab == 0 && len(opts.Vocab) > 0 {
		cfg.Vocab = len(opts.Vocab) + cfg.OOVBuckets
	}
	cfg = cfg.Defaults()
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	if opts.Vocab != nil && len(opts.Vocab)+cfg.OOVBuckets > cfg.Vocab {
		return nil, fmt.Errorf("vocabulary of %d words and %d out-of-vocabulary buckets does not fit vocab %d", len(opts.Vocab), cfg.OOVBuckets, cfg.Vocab)
	}
	t := &Trainer{cfg: cfg, backend: opts.Backend, vocab: opts.Vocab}
	if t.backend == nil {
		t.backend = cpu.New()
	}
	// Two streams from the seed: one for the initial parameters, one for
	// the per-step noise (saved in checkpoints).
	params := compute.InitParams(cfg, rand.New(rand.NewPCG(cfg.Seed, 0x9e3779b97f4a7c15)))
	if opts.Vectors != nil {
		if opts.Vocab == nil {
			return nil, errors.New("pretrained vectors need the vocabulary to map words to ids")
		}
		var err error
		if t.Found, t.OOV, err = InitEmbeddings(params, opts.Vocab, opts.Vectors); err != nil {
			return nil, err
		}
	}
	m, err := t.backend.Build(cfg, params)
	if err != nil {
		return nil, err
	}
	t.model = m
	t.pcg = rand.NewPCG(cfg.Seed, 0x2545f4914f6cdd1d)
	t.rng = rand.New(t.pcg)
	return t, nil
}

// blasNamer is a backend whose products run on a BLAS it can name (the
// CPU backend).
type blasNamer interface {
	BLAS() string
	BLASName() string
}

// Device names the backend and, when it says, the BLAS of its products:
// "gorgonia-cpu, BLAS OpenBLAS 0.3.21 ... (libopenblas.so.0, 2 threads)".
func (t *Trainer) Device() string {
	if b, ok := t.backend.(blasNamer); ok && b.BLAS() != "" {
		return t.backend.Name() + ", BLAS " + b.BLAS()
	}
	return t.backend.Name()
}

// ShortDevice is Device in a word or two, for progress lines:
// "gorgonia-cpu/openblas".
func (t *Trainer) ShortDevice() string {
	if b, ok := t.backend.(blasNamer); ok && b.BLASName() != "" {
		return t.backend.Name() + "/" + b.BLASName()
	}
	return t.backend.Name()
}

// Config returns the trainer's configuration, defaults filled.
func (t *Trainer) Config() Config { return t.cfg }

// Model is the trained model (for Embed).
func (t *Trainer) Model() compute.Model { return t.model }

// Steps is the number of optimiser steps taken.
func (t *Trainer) Steps() int64 { return t.step }

// Epoch is the number of finished epochs.
func (t *Trainer) Epoch() int { return t.epoch }

// EndEpoch marks an epoch finished: the learning rate is multiplied by
// Config.Decay from the next step on.
func (t *Trainer) EndEpoch() { t.epoch++ }

// LR is the learning rate of the next step: LR·Decay^epoch.
func (t *Trainer) LR() float64 { return t.cfg.LR * math.Pow(t.cfg.Decay, float64(t.epoch)) }

// Step trains one batch: it draws the batch's noise (scrambling, dropout,
// random negatives), runs forward and backward and applies the optimiser.
// It returns the batch's loss before the update. A non-finite loss or
// gradient returns an error wrapping ErrNonFinite and leaves the
// parameters untouched.
func (t *Trainer) Step(pairs []Pair) (float64, error) {
	a, b := make([][]int32, len(pairs)), make([][]int32, len(pairs))
	nli := len(pairs) > 0 && pairs[0].NLI
	var labels []float32
	if t.cfg.Loss == compute.LossSim || nli {
		labels = make([]float32, len(pairs))
	}
	var ctxA, ctxB [][]float32
	if t.cfg.Context != "" {
		ctxA, ctxB = make([][]float32, len(pairs)), make([][]float32, len(pairs))
	}
	for i, p := range pairs {
		if p.NLI != nli {
			return 0, fmt.Errorf("step %d: a batch mixing NLI pairs and pairs: each batch is of one kind", t.step+1)
		}
		a[i], b[i] = p.A, p.B
		if labels != nil {
			labels[i] = p.Label
		}
		if ctxA != nil {
			ctxA[i], ctxB[i] = p.CtxA, p.CtxB
		}
	}
	return t.StepPairs(compute.Pairs{A: a, B: b, Labels: labels, CtxA: ctxA, CtxB: ctxB, NLI: nli})
}

// StepPairs is Step of a batch given as the backends' compute.Pairs, as
// the training loop's feed makes it: with Labels when the loss or the NLI
// head reads them, and the topic vectors when the model has a context.
func (t *Trainer) StepPairs(p compute.Pairs) (float64, error) {
	bt, err := compute.NewContextBatch(t.cfg, p, t.rng)
	if err != nil {
		return 0, fmt.Errorf("step %d: %w", t.step+1, err)
	}
	loss, err := t.model.ForwardBackward(bt)
	if err != nil {
		if errors.Is(err, ErrNonFinite) {
			return loss, fmt.Errorf("step %d (epoch %d): %w; the parameters are those of step %d", t.step+1, t.epoch, err, t.step)
		}
		return 0, fmt.Errorf("step %d: %w", t.step+1, err)
	}
	if err := t.model.Update(t.step+1, t.LR()); err != nil {
		return 0, fmt.Errorf("step %d: %w", t.step+1, err)
	}
	t.step++
	return loss, nil
}

// Embed returns the embeddings of seqs under the current parameters.
func (t *Trainer) Embed(seqs [][]int32) ([][]float32, error) { return t.model.Embed(seqs) }

// Close releases the backend's resources.
func (t *Trainer) Close() error { return t.model.Close() }

// Batches groups pairs into batches of at most size pairs of similar
// length, so that each batch pads to a short bucket: pairs are stably
// sorted by their longer side (capped at maxLen), then cut into runs; a
// last run of one pair joins the run before it. Pairs with an empty side
// cannot be embedded: they are left out and counted in skipped.
func Batches(pairs []Pair, size, maxLen int) (batches [][]Pair, skipped int) {
	return bucket(pairs, size, maxLen, func(p Pair) (int, int) { return len(p.A), len(p.B) })
}

// bucket is Batches over any item whose side lengths lens gives.
func bucket[T any](items []T, size, maxLen int, lens func(T) (int, int)) (batches [][]T, skipped int) {
	if size < 2 {
		panic("trainstep: batch size below 2")
	}
	kept := make([]T, 0, len(items))
	for _, it := range items {
		if a, b := lens(it); a == 0 || b == 0 {
			skipped++
			continue
		}
		kept = append(kept, it)
	}
	key := func(it T) int { a, b := lens(it); return min(max(a, b), maxLen) }
	slices.SortStableFunc(kept, func(x, y T) int { return cmp.Compare(key(x), key(y)) })
	for lo := 0; lo < len(kept); lo += size {
		hi := min(lo+size, len(kept))
		if hi-lo < 2 {
			if len(batches) == 0 {
				skipped += hi - lo // a lone pair has no in-batch negative
				break
			}
			batches[len(batches)-1] = append(batches[len(batches)-1], kept[lo:hi]...)
			break
		}
		batches = append(batches, kept[lo:hi:hi])
	}
	return batches, skipped
}

// Embed embeds one token-id sequence with model m (for evaluation).
func Embed(m compute.Model, ids []int32) ([]float32, error) {
	out, err := m.Embed([][]int32{ids})
	if err != nil {
		return nil, err
	}
	return out[0], nil
}
