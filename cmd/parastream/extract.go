package main

import (
	"context"
	"fmt"
	"path/filepath"
	"strings"

	"github.com/parastream/parastream/cmd/parastream/internal/cli"
	"github.com/parastream/parastream/cmd/parastream/internal/outdir"
	"github.com/parastream/parastream/cmd/parastream/internal/report"
	"github.com/parastream/parastream/corpora"
	"github.com/parastream/parastream/pipelines"
	"github.com/parastream/parastream/transforms"
	"github.com/parastream/parastream/transforms/text"
)

const extractUsage = "parastream extract --corpus NAME --input GLOB [--input-b GLOB] --out DIR [--runner prism|flink|spark|dataflow ...]"

func runExtract(ctx context.Context, e *env, args []string) (err error) {
	fs := newFlags(e, "extract", extractUsage)
	cfg := pipelines.NewExtractConfig("", "", "")
	fs.StringVar(&cfg.Corpus, "corpus", "", "corpus: "+strings.Join(pipelines.Corpora(), ", "))
	fs.StringVar(&cfg.Input, "input", "", "glob of the input files (any compression), or a directory of them")
	fs.StringVar(&cfg.InputB, "input-b", "", "glob of the second files of two-file formats, paired with --input's in sorted order")
	fs.StringVar(&cfg.Submissions, "submissions", "", "reddit: glob of submission files (RS_*), for (title, top-level comment) pairs with --titles")
	fs.StringVar(&cfg.Out, "out", "", "output directory, or s3://bucket/prefix (gs:// in the dataflow build): <out>/<corpus>/<split>/part-*.parquet, rejects/, manifest.json")
	fs.StringVar(&cfg.WorkDir, "work-dir", "", "local directory for spill files and shards while running (default <out>/.work-*, or a temporary directory when --out is a bucket; removed at the end); on a cluster, one all workers share, or none when --out is a bucket")
	split := fs.String("split", "0.9,0.05,0.05", "train,dev,test ratios of the hashed split (evaluation sets keep their official splits)")
	fs.Uint64Var(&cfg.Seed, "seed", cfg.Seed, "seed of the split hash")
	fs.IntVar(&cfg.Buckets, "buckets", 0, "spill buckets; each holds about 1/buckets of the data in memory (0: one per 4 MiB of input)")
	fs.StringVar(&cfg.SpillCompression, "spill-compression", transforms.SpillAuto, "spill files' blocks: auto (stored on a local --work-dir, S2 on a bucket), s2 (about 1.5 times less temporary disk, about 7% more CPU time) or none")
	fs.IntVar(&cfg.Pair.Context, "context", 0, "reddit: earlier turns kept with each pair")
	fs.BoolVar(&cfg.Pair.Titles, "titles", false, "reddit: also pair submission titles with top-level comments (needs --submissions)")
	fs.BoolVar(&cfg.Prepare.Tokenize.Lower, "lower", cfg.Prepare.Tokenize.Lower, "lowercase the tokens")
	fs.BoolVar(&cfg.Prepare.Tokenize.StartEnd, "start-end", false, "add <s> and </s> tokens around each text")
	fs.IntVar(&cfg.Prepare.Length.MinTokens, "min-tokens", cfg.Prepare.Length.MinTokens, "drop a pair with a side of fewer tokens (0: no bound)")
	fs.IntVar(&cfg.Prepare.Length.MaxTokens, "max-tokens", 0, "drop a pair with a side of more tokens (0: no bound)")
	redditRules := fs.Bool("reddit-rules", true, "reddit: apply the conversational research's comment filters")
	rr := *cfg.Prepare.RedditRules
	fs.IntVar(&rr.MaxChars, "max-chars", rr.MaxChars, "reddit: drop a comment of this many characters or more")
	fs.Float64Var(&rr.MinAlpha, "min-alpha", rr.MinAlpha, "reddit: drop a comment whose share of letters is this or less")
	mosesMin := fs.Float64("moses-min-prob", 0, "moses: drop a pair whose direct phrase probability φ(e|f) is below this")
	ppdbMaxTier := fs.String("ppdb-max-tier", "", "ppdb: keep records of this size tier and smaller (s, m, l, xl, xxl, xxxl)")
	ppdbTiers := fs.String("ppdb-tiers", "", "ppdb: comma-separated tiers to keep whatever --ppdb-max-tier says (such as tldr)")
	ppdbMin := fs.Float64("ppdb-min-score", 0, "ppdb: drop a record whose score is below this")
	fs.Int64Var(&cfg.Budget.Tokens, "token-budget", 0, "sample the corpus down to this many tokens (both sides of each pair), seeded (0: no sampling)")
	fs.Uint64Var(&cfg.Budget.Seed, "budget-seed", 1, "seed of --token-budget's sample")
	fs.BoolVar(&cfg.KeepDuplicates, "keep-duplicates", false, "do not remove duplicate pairs (evaluation sets never are)")
	against := fs.String("dedupe-against", "", "comma-separated output directories of earlier extractions whose pairs this run drops (the evaluation sets, say)")
	fs.BoolVar(&cfg.SkipBadFiles, "skip-bad-files", false, "count a truncated or unreadable file as a reject and go on, instead of failing")
	fs.StringVar(&cfg.Reader.Encoding, "encoding", "", "text encoding of the inputs: utf-8 (default) or latin1")
	fs.StringVar(&cfg.Reader.Dataset, "dataset", "", "override the dataset name derived from the file names")
	fs.StringVar(&cfg.Reader.Tier, "tier", "", "ppdb: the size tier, where the file name does not say")
	fs.IntVar(&cfg.Reader.Limits.MaxLineBytes, "max-line-bytes", corpora.DefaultMaxLineBytes, "longest line or record accepted")
	fs.Int64Var(&cfg.Shards.MaxRows, "shard-rows", 0, "most rows per shard (0: 1,000,000)")
	fs.Int64Var(&cfg.Shards.MaxBytes, "shard-bytes", 0, "about the most bytes per shard (0: 256 MiB)")
	run := addPipelineFlags(fs)
	cpuProfile := fs.String("cpuprofile", "", "write a CPU profile of the run to this file")
	cli.AddBeamFlags(fs, e.stdout)
	cli.Describe(fs, e.stdout, extractUsage, extractExample,
		cli.FlagGroup{Title: "input", Names: []string{"corpus", "input", "input-b", "submissions", "encoding", "dataset", "tier", "max-line-bytes", "skip-bad-files"}},
		cli.FlagGroup{Title: "pairs and filters", Names: []string{"lower", "start-end", "min-tokens", "max-tokens", "reddit-rules", "max-chars", "min-alpha", "context", "titles",
			"moses-min-prob", "ppdb-max-tier", "ppdb-tiers", "ppdb-min-score", "keep-duplicates", "dedupe-against", "token-budget", "budget-seed"}},
		cli.FlagGroup{Title: "output", Names: []string{"out", "split", "seed", "shard-rows", "shard-bytes"}},
		cli.FlagGroup{Title: "run", Names: []string{"work-dir", "buckets", "spill-compression", "gc-percent", "quiet", "verbose", "cpuprofile", "help-beam"}})
	if err := cli.Parse(fs, args); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return fmt.Errorf("%w: unexpected arguments %q: give the files with --input GLOB", cli.ErrUsage, fs.Args())
	}
	if cfg.Split, err = text.ParseSplitRatios(*split); err != nil {
		return fmt.Errorf("%w: --split: %v", cli.ErrUsage, err)
	}
	cfg.Prepare.RedditRules = nil
	if *redditRules {
		cfg.Prepare.RedditRules = &rr
	}
	if *mosesMin > 0 {
		cfg.Prepare.Moses = &text.MosesRule{MinProb: *mosesMin}
	}
	if *ppdbMaxTier != "" || *ppdbTiers != "" || *ppdbMin != 0 {
		cfg.Prepare.PPDB = &text.PPDBRule{MaxTier: *ppdbMaxTier, Tiers: cli.SplitList(*ppdbTiers), MinScore: *ppdbMin}
	}
	cfg.DedupeAgainst = cli.SplitList(*against)
	cfg.Command, cfg.Version = append([]string{"parastream", "extract"}, args...), cli.BuildVersion(version)
	if err := cfg.Validate(); err != nil {
		return fmt.Errorf("%w: %v", cli.ErrUsage, err)
	}
	created, err := outdir.Prepare(cfg.Out)
	if err != nil {
		return fmt.Errorf("%w: --out: %v", cli.ErrUsage, err)
	}
	keepOut := false
	defer func() { created(err != nil && !keepOut) }()
	if err := cfg.ResolveInputs(); err != nil {
		return err
	}
	opts, log, err := run.start(e, "extract")
	if err != nil {
		return err
	}
	defer log.Close()
	if opts.Progress != nil {
		fmt.Fprintf(e.stderr, "extracting %s from %s into %s (runner %s)\n", cfg.Corpus, cfg.Input, cfg.Out, cli.RunnerName(opts.Runner))
	}
	if *cpuProfile != "" {
		stop, err := cli.StartCPUProfile(*cpuProfile)
		if err != nil {
			return err
		}
		defer stop()
	}
	sum, err := pipelines.RunExtract(ctx, cfg, opts)
	if err != nil {
		return log.Failed(err)
	}
	report.Extract(e.stdout, sum, cfg.Out)
	if c := sum.Counters; c["read"] > 0 && c["parsed"] == 0 {
		// Every record rejected: the format is wrong. The rejects stay,
		// to be read.
		keepOut = true
		return fmt.Errorf("no pairs kept: all %d records were rejected as %s (rejects in %s): give the --corpus of the input ('parastream formats' lists them)",
			c["read"], cfg.Corpus, filepath.Join(cfg.Out, sum.Rejects))
	}
	return nil
}

const extractExample = `parastream extract --corpus sts --input testdata/sts --out /tmp/shards
parastream extract --corpus moses --input fr-en.phrase-table.gz --encoding latin1 --out shards`
