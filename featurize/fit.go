package featurize

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/apache/beam/sdks/v2/go/pkg/beam"

	"github.com/parastream/parastream/featurize/lexicon"
	"github.com/parastream/parastream/shards"
)

// FitConfig configures Fit: what the vocabulary and the topics are fitted
// on, and how.
type FitConfig struct {
	// Corpora are the corpora whose training splits the vocabulary and the
	// topics are fitted on; empty means every corpus of the input.
	Corpora []string
	// Vocab bounds the vocabulary. Every corpus of Corpora shares it: the
	// vocabulary is counted on all their training splits together.
	Vocab VocabConfig
	// OOVBuckets is N, the number of hashed out-of-vocabulary buckets of a
	// fitted model: a token outside the V entries of the vocabulary gets
	// the id V + lexicon.Bucket(token, N) instead of UnkID, so that unseen
	// words do not all share one embedding. 0 keeps the single <unk>.
	OOVBuckets int
	// Weighting is the bag-of-words weighting (default tf-idf).
	Weighting Weighting
	// Topics is k; 0 chooses k among Candidates by reconstruction error
	// (ChooseK).
	Topics     int
	Candidates []int
	// L1 is λ of the codes' L1 penalty (see NMFConfig.L1).
	L1 float64
	// Sample is the most training texts the topics are fitted on: a seeded
	// sample of distinct texts where there are more (0: every text).
	Sample int
	// Seed seeds the sample and the NMF initialisation.
	Seed uint64
	// MaxIter and Tol bound the NMF fit (NMFConfig).
	MaxIter int
	Tol     float64
}

// NMF is the configuration of the NMF fit of k topics.
func (c FitConfig) NMF(k int) NMFConfig {
	return NMFConfig{K: k, L1: c.L1, MaxIter: c.MaxIter, Tol: c.Tol, Seed: c.Seed}
}

// FitRun is where and how Fit runs.
type FitRun struct {
	// In names the input in errors.
	In string
	// WorkDir holds the counts of the training texts while Fit runs; on a
	// cluster every worker must reach it (a mount, or a staging prefix on
	// an object store).
	WorkDir string
	// Runner is the Beam runner of the counting pipeline; "" is Prism.
	Runner string
	// Logf receives the progress lines; nil for none.
	Logf func(format string, args ...any)
}

func (r FitRun) logf(format string, args ...any) {
	if r.Logf != nil {
		r.Logf(format, args...)
	}
}

// Fit is the fitting driver: it counts and samples the training texts of
// tasks (the training splits of cfg.Corpora, every corpus of the manifest m
// when empty) with a Beam pipeline (CountTraining), builds the vocabulary,
// and fits the topics on the sample's bags of words (choosing k by
// reconstruction error where cfg.Topics is 0), and returns the model.
func Fit(ctx context.Context, cfg FitConfig, m *shards.Manifest, tasks []ShardTask, run FitRun) (*Model, error) {
	runner := run.Runner
	if runner == "" {
		runner = "prism"
	}
	corpora := cfg.Corpora
	if len(corpora) == 0 {
		for _, sp := range m.Splits {
			corpora = append(corpora, sp.Corpus)
		}
	}
	slices.Sort(corpora)
	corpora = slices.Compact(corpora)
	var train []ShardTask
	for _, t := range tasks {
		if t.Split == "train" && slices.Contains(corpora, t.Corpus) {
			train = append(train, t)
		}
	}
	if len(train) == 0 {
		return nil, fmt.Errorf("featurize: no training shards of %v in %s to fit the vocabulary and topics on (set --corpora, or --model to apply a saved model)", corpora, run.In)
	}
	run.logf("featurize: counting the training texts of %d shards (%v)", len(train), corpora)
	sampleSize := cfg.Sample
	if sampleSize == 0 {
		sampleSize = 1 << 62
	}
	countsPath := shards.JoinPath(run.WorkDir, "counts.gob")
	p, s := beam.NewPipelineWithRoot()
	CountTraining(s, beam.Reshuffle(s, beam.CreateList(s, train)), sampleSize, cfg.Seed, countsPath)
	if _, err := beam.Run(ctx, runner, p); err != nil {
		return nil, fmt.Errorf("running the counting pipeline: %w", err)
	}
	counts, err := ReadCounts(ctx, countsPath)
	if err != nil {
		return nil, err
	}
	vocab, err := BuildVocabulary(counts.TokenCounts(), counts.Texts, cfg.Vocab)
	if err != nil {
		return nil, err
	}
	run.logf("featurize: %d texts, %d distinct tokens, vocabulary of %d entries (min count %d) shared by %v, %d out-of-vocabulary buckets",
		counts.Texts, len(counts.Tokens), vocab.Len(), cfg.Vocab.MinCount, corpora, cfg.OOVBuckets)
	bow, err := NewBoW(vocab, cfg.Weighting)
	if err != nil {
		return nil, err
	}
	X := NewCSR(vocab.Len())
	var sc BoWScratch
	var ids []int32
	for _, t := range counts.Sample {
		ids, _ = vocab.AppendIDs(ids[:0], t.Tokens)
		idx, val := bow.Vector(&sc, ids)
		if len(idx) == 0 {
			continue // no word of the vocabulary: nothing to fit
		}
		if err := X.AppendRow(idx, val); err != nil {
			return nil, err
		}
	}
	if X.Rows == 0 {
		return nil, errors.New("featurize: no sampled text has a word of the vocabulary; lower --min-count")
	}
	info := Info{
		Weighting: cfg.Weighting, Vocabulary: cfg.Vocab, Corpora: corpora, L1: cfg.L1, Sample: cfg.Sample,
		FitTexts: X.Rows, Seed: cfg.Seed, MaxIter: cfg.MaxIter, Tol: cfg.Tol, OOVBuckets: cfg.OOVBuckets,
	}
	if cfg.OOVBuckets > 0 {
		info.OOVHash = lexicon.Hash
	}
	k := cfg.Topics
	if k == 0 {
		run.logf("featurize: choosing k among %v by reconstruction error on %d texts", cfg.Candidates, X.Rows)
		var curve []KError
		if k, curve, err = ChooseK(ctx, X, cfg.Candidates, cfg.NMF(1)); err != nil {
			return nil, err
		}
		for _, c := range curve {
			run.logf("  k %4d  relative error %.4f  objective %.6g  iterations %d", c.K, c.RelError, c.Objective, c.Iters)
		}
		run.logf("featurize: chose k = %d", k)
		info.Curve = curve
	}
	nc := cfg.NMF(k)
	last := time.Now()
	nc.Progress = func(iter int, obj float64) {
		if time.Since(last) >= 2*time.Second {
			run.logf("  nmf iteration %d: objective %.6g", iter, obj)
			last = time.Now()
		}
	}
	run.logf("featurize: fitting %d topics on %d texts × %d terms (%d non-zeros), λ = %g", k, X.Rows, X.Cols, X.NNZ(), cfg.L1)
	nmf, res, err := FitNMF(ctx, X, nc)
	if err != nil {
		return nil, err
	}
	info.RelError, info.Iters = res.RelError, res.Iters
	run.logf("featurize: fitted in %d iterations, relative reconstruction error %.4f", res.Iters, res.RelError)
	return NewModel(vocab, nmf, info)
}
