package pipelines

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime/debug"
	"slices"
	"time"

	"github.com/apache/beam/sdks/v2/go/pkg/beam"

	"github.com/parastream/parastream/featurize"
	"github.com/parastream/parastream/featurize/lexicon"
	"github.com/parastream/parastream/shards"
)

// FeaturizeConfig configures RunFeaturize. NewFeaturizeConfig gives the
// CLI's defaults.
type FeaturizeConfig struct {
	// In is a directory of shards with its manifest.json (extract's
	// output); Out is where the featurized shards, their manifest and the
	// model (Out/featurize/<version>/) go, committed as Out's next version
	// (see shards.Commit). Out may be In: the input's shards are then
	// superseded by the featurized ones, and removed once the new manifest
	// is in place.
	In, Out string
	// WorkDir holds temporary files while running (default
	// Out/.work-featurize-*, removed at the end, or by the next run into Out
	// if this one dies). On a cluster every worker must reach it.
	WorkDir string
	// Model, when set, is a saved model (a featurize/ directory, or shards
	// featurized before): its vocabulary and topics are applied as they
	// are, so that new data gets the same ids and topics, and nothing is
	// fitted.
	Model string
	// Corpora are the corpora whose training splits the vocabulary and the
	// topics are fitted on; empty means every corpus of In.
	Corpora []string
	// Vocab bounds the vocabulary. Every corpus of Corpora shares it: the
	// vocabulary is counted on all their training splits together.
	Vocab featurize.VocabConfig
	// OOVBuckets is N, the number of hashed out-of-vocabulary buckets of a
	// fitted model: a token outside the V entries of the vocabulary gets
	// the id V + lexicon.Bucket(token, N) instead of featurize.UnkID, so
	// that unseen words do not all share one embedding. 0 keeps the single
	// <unk>. A saved model (Model) brings its own.
	OOVBuckets int
	// Weighting is the bag-of-words weighting (default tf-idf).
	Weighting featurize.Weighting
	// Topics is k; 0 chooses k among Candidates by reconstruction error
	// (featurize.ChooseK).
	Topics     int
	Candidates []int
	// L1 is λ of the codes' L1 penalty (see featurize.NMFConfig.L1).
	L1 float64
	// Sample is the most training texts the topics are fitted on: a seeded
	// sample of distinct texts where there are more (0: every text).
	Sample int
	// Seed seeds the sample and the NMF initialisation.
	Seed uint64
	// MaxIter and Tol bound the NMF fit (featurize.NMFConfig).
	MaxIter int
	Tol     float64
	// Command is the command line, for the manifest.
	Command []string
}

// DefaultOOVBuckets is the number of out-of-vocabulary buckets of
// NewFeaturizeConfig.
const DefaultOOVBuckets = 100_000

// NewFeaturizeConfig returns the defaults: words seen at least twice,
// 100,000 out-of-vocabulary buckets, tf-idf, 50 topics (candidates 10, 20,
// 50, 100, 200 for auto), λ = 0.01, a sample of 50,000 texts, seed 1, at
// most 200 iterations.
func NewFeaturizeConfig(in, out string) FeaturizeConfig {
	return FeaturizeConfig{
		In: in, Out: out,
		Vocab:      featurize.VocabConfig{MinCount: 2},
		OOVBuckets: DefaultOOVBuckets,
		Weighting:  featurize.TFIDF,
		Topics:     50,
		Candidates: []int{10, 20, 50, 100, 200},
		L1:         0.01,
		Sample:     50_000,
		Seed:       1,
		MaxIter:    featurize.DefaultNMFMaxIter,
		Tol:        featurize.DefaultNMFTol,
	}
}

// Validate says what is wrong with the configuration and how to fix it.
func (c FeaturizeConfig) Validate() error {
	switch {
	case c.In == "":
		return errors.New("featurize: no input: set --in to a directory of shards (extract's --out)")
	case c.Out == "":
		return errors.New("featurize: no output: set --out (it may be --in, to featurize in place)")
	case c.Sample < 0:
		return fmt.Errorf("featurize: --sample %d is negative; use 0 for every text", c.Sample)
	case c.Topics < 0:
		return fmt.Errorf("featurize: --topics %d is negative; use a count or auto", c.Topics)
	case c.OOVBuckets < 0:
		return fmt.Errorf("featurize: --oov-buckets %d is negative; use 0 to map unseen words to the single <unk>", c.OOVBuckets)
	case c.Topics == 0 && c.Model == "" && len(c.Candidates) == 0:
		return errors.New("featurize: --topics auto needs candidate values of k")
	}
	for _, k := range c.Candidates {
		if k < 1 {
			return fmt.Errorf("featurize: candidate k = %d; each must be 1 or more", k)
		}
	}
	if err := c.Vocab.Validate(); err != nil {
		return err
	}
	if err := c.Weighting.Validate(); err != nil {
		return err
	}
	return c.nmf(1).Validate()
}

func (c FeaturizeConfig) nmf(k int) featurize.NMFConfig {
	return featurize.NMFConfig{K: k, L1: c.L1, MaxIter: c.MaxIter, Tol: c.Tol, Seed: c.Seed}
}

// FeaturizeSummary is what a featurize run did.
type FeaturizeSummary struct {
	// Model is the model applied; Fitted says whether this run fitted it.
	Model  *featurize.Model
	Fitted bool
	// Shards and Rows count what was featurized; Stats sums the texts.
	Shards, Rows int64
	Stats        featurize.TextStats
	Elapsed      time.Duration
}

// RunFeaturize featurizes the shards of cfg.In into cfg.Out: it counts the
// training texts and samples them (a Beam pipeline), builds the vocabulary
// and fits the topic model (unless cfg.Model gives one), saves the model
// into the work directory, then writes every shard again with token ids and
// topic vectors (a second Beam pipeline, the model a side input), and
// commits the featurized shards, the model and the manifest as Out's next
// version. It locks Out (and In, shared, where it is another directory)
// for its duration.
func RunFeaturize(ctx context.Context, cfg FeaturizeConfig, opts RunOptions) (*FeaturizeSummary, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	start := time.Now()
	if opts.GCPercent > 0 {
		defer debug.SetGCPercent(debug.SetGCPercent(opts.GCPercent))
	}
	logf := func(format string, args ...any) {
		if opts.Progress != nil {
			fmt.Fprintf(opts.Progress, format+"\n", args...)
		}
	}
	out, err := shards.OpenOutput(cfg.Out, opts.outputOptions())
	if err != nil {
		return nil, err
	}
	defer out.Close()
	var m *shards.Manifest
	if sameDir(cfg.In, cfg.Out) {
		m, err = out.Manifest()
		if err == nil && m == nil {
			err = fmt.Errorf("%s has no %s: featurize reads extract's output", cfg.In, shards.ManifestName)
		}
	} else {
		// No run may write the input while it is read.
		var in *shards.Lock
		if in, err = shards.LockShared(cfg.In); err != nil {
			return nil, err
		}
		defer in.Unlock()
		m, err = shards.ReadManifest(cfg.In)
	}
	if err != nil {
		return nil, fmt.Errorf("reading the manifest of %s: %w", cfg.In, err)
	}
	if err := m.Verify(cfg.In); err != nil {
		return nil, fmt.Errorf("checking the shards of %s against their manifest: %w", cfg.In, err)
	}
	tasks := make([]featurize.ShardTask, len(m.Files))
	for i, f := range m.Files {
		tasks[i] = featurize.ShardTask{Index: i, Path: filepath.Join(cfg.In, filepath.FromSlash(f.Path)), Corpus: f.Corpus, Split: f.Split}
	}
	if cfg.WorkDir, err = out.WorkDir(cfg.WorkDir, "featurize"); err != nil {
		return nil, err
	}
	defer out.RemoveWorkDir(cfg.WorkDir)

	sum := &FeaturizeSummary{}
	if cfg.Model != "" {
		if sum.Model, err = featurize.LoadModel(cfg.Model); err != nil {
			return nil, err
		}
		logf("featurize: applying the model of %s (%d words, %d out-of-vocabulary buckets, %d topics)", cfg.Model, sum.Model.Vocab.Len(), sum.Model.Lex.Buckets(), sum.Model.NMF.K)
	} else {
		if sum.Model, err = fitModel(ctx, cfg, m, tasks, opts.Runner, logf); err != nil {
			return nil, err
		}
		sum.Fitted = true
	}
	modelDir := filepath.Join(cfg.WorkDir, "model")
	files, err := sum.Model.Save(modelDir)
	if err != nil {
		return nil, err
	}
	enc, err := sum.Model.MarshalBinary()
	if err != nil {
		return nil, err
	}

	logf("featurize: writing ids and topic vectors into %d shards", len(tasks))
	p, s := beam.NewPipelineWithRoot()
	featurize.Apply(s, beam.Reshuffle(s, beam.CreateList(s, tasks)), beam.Create(s, enc), cfg.WorkDir)
	stop := watchReceipts(cfg.WorkDir, len(tasks), sum.Model.Lex.Buckets(), opts, logf)
	_, err = beam.Run(ctx, runnerOrPrism(opts.Runner), p)
	stop()
	if err != nil {
		return nil, fmt.Errorf("running the featurize pipeline: %w", err)
	}
	receipts, err := shards.ReadReceipts[featurize.Receipt](cfg.WorkDir)
	if err != nil {
		return nil, err
	}
	if len(receipts) != len(tasks) {
		return nil, fmt.Errorf("featurize: %d of %d shards reported done", len(receipts), len(tasks))
	}
	if err := commitFeaturized(out, cfg, m, receipts, modelDir, files, sum); err != nil {
		return nil, err
	}
	sum.Elapsed = time.Since(start)
	return sum, nil
}

// watchReceipts prints how many shards are done and the share of their
// tokens outside the vocabulary (bucketed, or <unk> without buckets), from
// the receipts the featurizing DoFn leaves, every ProgressEvery (default
// 5 s).
func watchReceipts(dir string, total, buckets int, opts RunOptions, logf func(string, ...any)) (stop func()) {
	return everyTick(opts, 5*time.Second, func(elapsed time.Duration) {
		recs, _ := shards.ReadReceipts[featurize.Receipt](dir)
		var st featurize.TextStats
		for _, r := range recs {
			st.Add(r.Stats)
		}
		logf("  %6s  featurized %d of %d shards: %d tokens, %s", elapsed.Round(time.Second), len(recs), total, st.Tokens, OOVShare(st, buckets))
	})
}

// OOVShare says which share of the tokens of st fell outside the
// vocabulary, and where they went: "9.70% of tokens to the 100000
// out-of-vocabulary buckets", or "9.70% of tokens to <unk>" without
// buckets.
func OOVShare(st featurize.TextStats, buckets int) string {
	share := 0.0
	if st.Tokens > 0 {
		share = 100 * float64(st.Unknown) / float64(st.Tokens)
	}
	to := featurize.UnkToken
	if buckets > 0 {
		to = fmt.Sprintf("the %d out-of-vocabulary buckets", buckets)
	}
	return fmt.Sprintf("%.2f%% of tokens to %s", share, to)
}

func runnerOrPrism(r string) string {
	if r == "" {
		return "prism"
	}
	return r
}

// fitModel counts and samples the training texts, then builds the
// vocabulary and fits the topics.
func fitModel(ctx context.Context, cfg FeaturizeConfig, m *shards.Manifest, tasks []featurize.ShardTask, runner string, logf func(string, ...any)) (*featurize.Model, error) {
	corpora := cfg.Corpora
	if len(corpora) == 0 {
		for _, sp := range m.Splits {
			corpora = append(corpora, sp.Corpus)
		}
	}
	slices.Sort(corpora)
	corpora = slices.Compact(corpora)
	var train []featurize.ShardTask
	for _, t := range tasks {
		if t.Split == "train" && slices.Contains(corpora, t.Corpus) {
			train = append(train, t)
		}
	}
	if len(train) == 0 {
		return nil, fmt.Errorf("featurize: no training shards of %v in %s to fit the vocabulary and topics on (set --corpora, or --model to apply a saved model)", corpora, cfg.In)
	}
	logf("featurize: counting the training texts of %d shards (%v)", len(train), corpora)
	sampleSize := cfg.Sample
	if sampleSize == 0 {
		sampleSize = 1 << 62
	}
	countsPath := filepath.Join(cfg.WorkDir, "counts.gob")
	p, s := beam.NewPipelineWithRoot()
	featurize.CountTraining(s, beam.Reshuffle(s, beam.CreateList(s, train)), sampleSize, cfg.Seed, countsPath)
	if _, err := beam.Run(ctx, runnerOrPrism(runner), p); err != nil {
		return nil, fmt.Errorf("running the counting pipeline: %w", err)
	}
	counts, err := featurize.ReadCounts(countsPath)
	if err != nil {
		return nil, err
	}
	vocab, err := featurize.BuildVocabulary(counts.TokenCounts(), counts.Texts, cfg.Vocab)
	if err != nil {
		return nil, err
	}
	logf("featurize: %d texts, %d distinct tokens, vocabulary of %d entries (min count %d) shared by %v, %d out-of-vocabulary buckets",
		counts.Texts, len(counts.Tokens), vocab.Len(), cfg.Vocab.MinCount, corpora, cfg.OOVBuckets)
	bow, err := featurize.NewBoW(vocab, cfg.Weighting)
	if err != nil {
		return nil, err
	}
	X := featurize.NewCSR(vocab.Len())
	var sc featurize.BoWScratch
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
	info := featurize.Info{
		Weighting: cfg.Weighting, Vocabulary: cfg.Vocab, Corpora: corpora, L1: cfg.L1, Sample: cfg.Sample,
		FitTexts: X.Rows, Seed: cfg.Seed, MaxIter: cfg.MaxIter, Tol: cfg.Tol, OOVBuckets: cfg.OOVBuckets,
	}
	if cfg.OOVBuckets > 0 {
		info.OOVHash = lexicon.Hash
	}
	k := cfg.Topics
	if k == 0 {
		logf("featurize: choosing k among %v by reconstruction error on %d texts", cfg.Candidates, X.Rows)
		var curve []featurize.KError
		if k, curve, err = featurize.ChooseK(ctx, X, cfg.Candidates, cfg.nmf(1)); err != nil {
			return nil, err
		}
		for _, c := range curve {
			logf("  k %4d  relative error %.4f  objective %.6g  iterations %d", c.K, c.RelError, c.Objective, c.Iters)
		}
		logf("featurize: chose k = %d", k)
		info.Curve = curve
	}
	nc := cfg.nmf(k)
	last := time.Now()
	nc.Progress = func(iter int, obj float64) {
		if time.Since(last) >= 2*time.Second {
			logf("  nmf iteration %d: objective %.6g", iter, obj)
			last = time.Now()
		}
	}
	logf("featurize: fitting %d topics on %d texts × %d terms (%d non-zeros), λ = %g", k, X.Rows, X.Cols, X.NNZ(), cfg.L1)
	nmf, res, err := featurize.FitNMF(ctx, X, nc)
	if err != nil {
		return nil, err
	}
	info.RelError, info.Iters = res.RelError, res.Iters
	logf("featurize: fitted in %d iterations, relative reconstruction error %.4f", res.Iters, res.RelError)
	return featurize.NewModel(vocab, nmf, info)
}

// sameDir says whether a and b name the same directory.
func sameDir(a, b string) bool {
	if filepath.Clean(a) == filepath.Clean(b) {
		return true
	}
	sa, errA := os.Stat(a)
	sb, errB := os.Stat(b)
	return errA == nil && errB == nil && os.SameFile(sa, sb)
}

// commitFeaturized commits Out's next version: the input's manifest with
// each shard replaced by its featurized copy (same rows, same logical
// name), the model's files (under featurize/<version>/) as its artifacts,
// the input's rejects files (copied when Out is not In) and the featurize
// stats.
func commitFeaturized(out *shards.Output, cfg FeaturizeConfig, in *shards.Manifest, receipts []featurize.Receipt, modelDir string, modelFiles []string, sum *FeaturizeSummary) error {
	c, err := out.Begin(in, cfg.Command)
	if err != nil {
		return err
	}
	defer c.Abort()
	m := c.Manifest()
	for _, rec := range receipts {
		f := in.Files[rec.Task.Index]
		if rec.Shard.Path == "" {
			return fmt.Errorf("featurize: shard %s came out empty, its input has %d rows", f.Path, f.Rows)
		}
		staged := shards.StagedShard{Path: filepath.Join(rec.Root, filepath.FromSlash(rec.Shard.Path)), Info: rec.Shard}
		if err := c.ReplaceShard(f.Path, staged); err != nil {
			return fmt.Errorf("featurize: %w", err)
		}
		sum.Shards++
		sum.Rows += f.Rows
		sum.Stats.Add(rec.Stats)
	}
	arts, err := c.PutGroup("featurize", modelDir, modelFiles)
	if err != nil {
		return err
	}
	for i, name := range modelFiles {
		a := arts[i]
		switch name {
		case featurize.VocabularyFile:
			a.Records = int64(sum.Model.Vocab.Len())
			m.Vocabulary = &a
		case featurize.TopicsFile:
			m.Topics = &a
		case featurize.InfoFile:
			m.Featurize = &a
		}
	}
	// The rejects files travel with the shards.
	if err := c.Carry(cfg.In); err != nil {
		return err
	}
	if m.Stats == nil {
		m.Stats = map[string]int64{}
	}
	for k, v := range map[string]int64{"texts": sum.Stats.Texts, "tokens": sum.Stats.Tokens, "unknown_tokens": sum.Stats.Unknown,
		"bucketed_tokens": sum.Stats.Bucketed, "empty_texts": sum.Stats.Empty} {
		m.Stats["featurize/"+k] = v
	}
	return c.Done()
}
