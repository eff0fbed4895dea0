package main

import (
	"context"
	"fmt"
	"strconv"

	"github.com/parastream/parastream/cmd/parastream/internal/cli"
	"github.com/parastream/parastream/cmd/parastream/internal/outdir"
	"github.com/parastream/parastream/cmd/parastream/internal/report"
	"github.com/parastream/parastream/featurize"
	"github.com/parastream/parastream/pipelines"
)

const featurizeUsage = "parastream featurize --in SHARDS --out SHARDS [--oov-buckets N] [--topics K|auto] [--l1 λ] [--sample N] [--model DIR]\n" +
	"       parastream featurize topics --model DIR [--words N]"

func runFeaturize(ctx context.Context, e *env, args []string) (err error) {
	if len(args) > 0 && args[0] == "topics" {
		return runFeaturizeTopics(e, args[1:])
	}
	fs := newFlags(e, "featurize", featurizeUsage)
	def := pipelines.NewFeaturizeConfig("", "")
	cfg := def
	fs.StringVar(&cfg.In, "in", "", "directory of shards with their manifest.json (extract's --out), or s3://bucket/prefix")
	fs.StringVar(&cfg.Out, "out", "", "directory, or s3://bucket/prefix (gs:// in the dataflow build), for the featurized shards, their manifest and the model (featurize/); may be --in")
	fs.StringVar(&cfg.WorkDir, "work-dir", "", "directory for temporary files (default <out>/.work-featurize-*, removed at the end)")
	fs.StringVar(&cfg.Model, "model", "", "apply this saved model (a featurize/ directory or featurized shards) instead of fitting one")
	corpora := fs.String("corpora", "", "comma-separated corpora whose training splits the vocabulary and topics are fitted on (default: all)")
	fs.Int64Var(&cfg.Vocab.MinCount, "min-count", def.Vocab.MinCount, "drop words seen fewer times in the training texts")
	fs.IntVar(&cfg.Vocab.MaxSize, "max-vocab", 0, "most vocabulary entries, the 4 special tokens included (0: no bound)")
	fs.IntVar(&cfg.OOVBuckets, "oov-buckets", def.OOVBuckets, "hashed buckets for tokens outside the vocabulary: id V + crc32(token) mod N (0: all map to <unk>; with --model, the model's own)")
	weighting := fs.String("weighting", string(def.Weighting), "bag-of-words weighting: tfidf (unit-length tf-idf) or count")
	topics := fs.String("topics", strconv.Itoa(def.Topics), "number of topics k, or auto to choose among --candidates by reconstruction error")
	candidates := fs.String("candidates", cli.JoinInts(def.Candidates), "candidate values of k for --topics auto")
	fs.Float64Var(&cfg.L1, "l1", def.L1, "λ, the L1 penalty on the topic codes")
	fs.IntVar(&cfg.Sample, "sample", def.Sample, "fit the topics on a seeded sample of this many distinct training texts (0: all)")
	fs.Uint64Var(&cfg.Seed, "seed", def.Seed, "seed of the sample and of the NMF initialisation")
	fs.IntVar(&cfg.MaxIter, "max-iter", def.MaxIter, "most NMF iterations")
	fs.Float64Var(&cfg.Tol, "tol", def.Tol, "stop the fit once an iteration lowers the objective by less than this fraction")
	run := addPipelineFlags(fs)
	cli.AddBeamFlags(fs, e.stdout)
	cli.Describe(fs, e.stdout, featurizeUsage, featurizeExample,
		cli.FlagGroup{Title: "input", Names: []string{"in", "corpora"}},
		cli.FlagGroup{Title: "output", Names: []string{"out"}},
		cli.FlagGroup{Title: "model", Names: []string{"model", "min-count", "max-vocab", "oov-buckets", "weighting", "topics", "candidates", "l1", "sample", "seed", "max-iter", "tol"}},
		cli.FlagGroup{Title: "run", Names: []string{"work-dir", "gc-percent", "quiet", "verbose", "help-beam"}})
	if err := cli.Parse(fs, args); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return fmt.Errorf("%w: unexpected arguments %q", cli.ErrUsage, fs.Args())
	}
	cfg.Corpora = cli.SplitList(*corpora)
	cfg.Weighting = featurize.Weighting(*weighting)
	if *topics == "auto" {
		cfg.Topics = 0
	} else if k, err := strconv.Atoi(*topics); err != nil || k < 1 {
		return fmt.Errorf("%w: --topics %q: want a positive count or auto", cli.ErrUsage, *topics)
	} else {
		cfg.Topics = k
	}
	if cfg.Candidates, err = cli.ParseInts(*candidates); err != nil {
		return fmt.Errorf("%w: --candidates: %v", cli.ErrUsage, err)
	}
	cfg.Command, cfg.Version = append([]string{"parastream", "featurize"}, args...), cli.BuildVersion(version)
	if err := cfg.Validate(); err != nil {
		return fmt.Errorf("%w: %v", cli.ErrUsage, err)
	}
	created, err := outdir.Prepare(cfg.Out)
	if err != nil {
		return fmt.Errorf("%w: --out: %v", cli.ErrUsage, err)
	}
	defer func() { created(err != nil) }()
	opts, log, err := run.start(e, "featurize")
	if err != nil {
		return err
	}
	defer log.Close()
	sum, err := pipelines.RunFeaturize(ctx, cfg, opts)
	if err != nil {
		return log.Failed(err)
	}
	topicLines := 3
	if *run.quiet { // the summary alone
		topicLines = 0
	}
	report.Featurize(e.stdout, sum, cfg.Out, topicLines, 8)
	return nil
}

const featurizeExample = `parastream featurize --in shards --out shards            # fit on every corpus, in place
parastream featurize --in new --out new --model shards   # apply the fitted model`

func runFeaturizeTopics(e *env, args []string) error {
	fs := newFlags(e, "featurize topics", "parastream featurize topics --model DIR [--words N] [--topics N]")
	model := fs.String("model", "", "a saved model: a featurize/ directory, or featurized shards")
	words := fs.Int("words", 10, "words shown per topic")
	n := fs.Int("topics", 0, "topics shown (0: all)")
	if err := cli.Parse(fs, args); err != nil {
		return err
	}
	if *model == "" {
		return fmt.Errorf("%w: set --model", cli.ErrUsage)
	}
	m, err := featurize.LoadModel(*model)
	if err != nil {
		return err
	}
	k := m.NMF.K
	if *n > 0 {
		k = *n
	}
	fmt.Fprintf(e.stdout, "%d topics over %d words (λ %g, %s weighting, relative error %.4f):\n", m.NMF.K, m.Vocab.Len(), m.NMF.L1, m.Info.Weighting, m.Info.RelError)
	report.Topics(e.stdout, m, k, *words)
	return nil
}
