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
	// if this one dies; a local temporary directory for an Out on an object
	// store). On a cluster every worker must reach it, unless Out is on an
	// object store: the workers then write there (the model, fitted on the
	// launching machine, stays in WorkDir).
	WorkDir string
	// Model, when set, is a saved model (a featurize/ directory, or shards
	// featurized before): its vocabulary and topics are applied as they
	// are, so that new data gets the same ids and topics, and nothing is
	// fitted.
	Model string
	// FitConfig says what the vocabulary and topics are fitted on, and
	// how (see featurize.Fit); a saved Model brings its own.
	featurize.FitConfig
	// Command is the command line, for the manifest.
	Command []string
	// Version is the program's version the manifest records ("": its
	// build info's; see shards.ProgramVersion).
	Version string
}

// DefaultOOVBuckets is the number of out-of-vocabulary buckets of
// NewFeaturizeConfig.
const DefaultOOVBuckets = 100_000

// NewFeaturizeConfig returns the defaults: words seen at least twice,
// 100,000 out-of-vocabulary buckets, tf-idf, 50 topics (candidates 10, 20,
// 50, 100, 200 for auto), λ = 0.01, a sample of 50,000 texts, seed 1, at
// most 200 iterations.
func NewFeaturizeConfig(in, out string) FeaturizeConfig {
	return FeaturizeConfig{In: in, Out: out, FitConfig: featurize.FitConfig{
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
	}}
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
	if fi, err := os.Stat(c.In); err == nil && !fi.IsDir() {
		return fmt.Errorf("featurize: --in %s is a file: give the directory extract wrote (it holds %s)", c.In, shards.ManifestName)
	}
	for _, in := range []struct{ flag, loc string }{{"--in", c.In}, {"--model", c.Model}} {
		if err := shards.CheckLocation(in.loc); err != nil {
			return fmt.Errorf("featurize: %s: %w", in.flag, err)
		}
	}
	if err := c.Vocab.Validate(); err != nil {
		return err
	}
	if err := c.Weighting.Validate(); err != nil {
		return err
	}
	return c.NMF(1).Validate()
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
	// Shards on an object store are read from a local copy, checked
	// against their manifest; the workers read the objects themselves.
	src := cfg.In
	inDir, doneIn, err := shards.LocalCopy(ctx, cfg.In)
	if err != nil {
		return nil, fmt.Errorf("reading %s: %w", cfg.In, err)
	}
	defer doneIn()
	cfg.In = inDir
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
		if shards.Scheme(src) != "" {
			tasks[i].Path, tasks[i].SHA256 = shards.JoinPath(src, f.Path), f.SHA256
		}
	}
	if cfg.WorkDir, err = out.WorkDir(cfg.WorkDir, "featurize"); err != nil {
		return nil, err
	}
	defer out.RemoveWorkDir(cfg.WorkDir)
	// What the workers write (the counts, the shards, their receipts) goes
	// to a staging prefix of an Out on an object store (see
	// shards.Output.Staging), or else to the work directory.
	workers := cfg.WorkDir
	if stage := out.Staging("featurize"); stage != "" {
		defer out.RemoveStaging(context.Background(), stage)
		workers = stage
	}

	sum := &FeaturizeSummary{}
	if cfg.Model != "" {
		model, doneModel, err := shards.LocalCopy(ctx, cfg.Model) // featurized shards on a store
		if err != nil {
			return nil, fmt.Errorf("reading the model of %s: %w", cfg.Model, err)
		}
		defer doneModel()
		if sum.Model, err = featurize.LoadModel(model); err != nil {
			return nil, err
		}
		logf("featurize: applying the model of %s (%d words, %d out-of-vocabulary buckets, %d topics)", cfg.Model, sum.Model.Vocab.Len(), sum.Model.Lex.Buckets(), sum.Model.NMF.K)
	} else {
		run := featurize.FitRun{In: cfg.In, WorkDir: workers, Runner: runnerOrPrism(opts.Runner), Logf: logf}
		if sum.Model, err = featurize.Fit(ctx, cfg.FitConfig, m, tasks, run); err != nil {
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
	featurize.Apply(s, beam.Reshuffle(s, beam.CreateList(s, tasks)), beam.Create(s, enc), workers)
	stop := watchReceipts(workers, len(tasks), sum.Model.Lex.Buckets(), opts, logf)
	_, err = beam.Run(ctx, runnerOrPrism(opts.Runner), p)
	stop()
	if err != nil {
		return nil, fmt.Errorf("running the featurize pipeline: %w", err)
	}
	receipts, err := shards.ReadReceipts[featurize.Receipt](workers)
	if err != nil {
		return nil, err
	}
	slices.SortFunc(receipts, func(a, b featurize.Receipt) int { return a.Task.Index - b.Task.Index })
	if len(receipts) != len(tasks) {
		return nil, fmt.Errorf("featurize: %d of %d shards reported done", len(receipts), len(tasks))
	}
	if opts.Failpoint != nil {
		if err := opts.Failpoint("workers done"); err != nil {
			return nil, err
		}
	}
	if err := commitFeaturized(out, cfg, m, featurized{receipts, modelDir, files}, sum); err != nil {
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

// sameDir says whether a and b name the same directory.
func sameDir(a, b string) bool {
	if filepath.Clean(a) == filepath.Clean(b) {
		return true
	}
	sa, errA := os.Stat(a)
	sb, errB := os.Stat(b)
	return errA == nil && errB == nil && os.SameFile(sa, sb)
}

// featurized is what the featurize pipeline left to commit: a receipt for
// each featurized shard, and the model's files (modelFiles, in modelDir).
type featurized struct {
	receipts   []featurize.Receipt
	modelDir   string
	modelFiles []string
}

// commitFeaturized commits Out's next version: the input's manifest with
// each shard replaced by its featurized copy (same rows, same logical
// name), the model's files (under featurize/<version>/) as its artifacts,
// the input's rejects files (copied when Out is not In) and the featurize
// stats.
func commitFeaturized(out *shards.Output, cfg FeaturizeConfig, in *shards.Manifest, done featurized, sum *FeaturizeSummary) error {
	receipts, modelDir, modelFiles := done.receipts, done.modelDir, done.modelFiles
	c, err := out.Begin(in, cfg.Command)
	if err != nil {
		return err
	}
	defer c.Abort()
	c.Manifest().CreatedBy.Version = shards.ProgramVersion(cfg.Version)
	m := c.Manifest()
	for _, rec := range receipts {
		f := in.Files[rec.Task.Index]
		if rec.Shard.Path == "" {
			return fmt.Errorf("featurize: shard %s came out empty, its input has %d rows", f.Path, f.Rows)
		}
		if err := c.ReplaceShard(f.Path, shards.Staged(rec.Root, rec.Shard)); err != nil {
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
