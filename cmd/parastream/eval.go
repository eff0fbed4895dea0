package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"path/filepath"

	"github.com/parastream/parastream/cmd/parastream/internal/cli"
	"github.com/parastream/parastream/cmd/parastream/internal/outdir"
	"github.com/parastream/parastream/cmd/parastream/internal/report"
	"github.com/parastream/parastream/evalsink"
	"github.com/parastream/parastream/stream"
)

const evalUsage = "parastream eval run --checkpoint DIR|--vectors FILE --eval SHARDS [--out RESULTS] [--truncate-dim N,...] [--format results|mteb] | " +
	"parastream eval watch --brokers ADDR [--topic-prefix P] [--group G] --eval SHARDS --out RESULTS | " +
	"parastream eval compare [--eval SHARDS] --out RESULTS A B " +
	"[--sql-dsn DSN] [--scale cosine|angular] [--scatter SET] [--candidates N] [--seed S] [--run NAME] [--model NAME] [--adapt] [--headline FIGURE]"

const compareUsage = "parastream eval compare [--eval SHARDS] [--out RESULTS] [flags] A B   (B against A; each a checkpoint directory or an eval_id)"

func runEval(ctx context.Context, e *env, args []string) error {
	if len(args) == 0 {
		return fmt.Errorf("%w: give run, watch or compare", cli.ErrUsage)
	}
	switch args[0] {
	case "run":
		return runEvalRun(ctx, e, args[1:])
	case "watch":
		return runEvalWatch(ctx, e, args[1:])
	case "compare":
		return runEvalCompare(ctx, e, args[1:])
	case "-h", "-help", "--help":
		fmt.Fprintf(e.stdout, "usage: %s\n\nevaluate checkpoints, write result tables and compare checkpoints; parastream eval run --help, eval watch --help and eval compare --help list the flags.\n", evalUsage)
		return nil
	}
	return fmt.Errorf("%w: unknown eval subcommand %q: give run, watch or compare", cli.ErrUsage, args[0])
}

// evalFlags are the flags run, watch and compare share; cfg parses args
// and builds the evaluator's configuration from them, a usage error when
// --headline or --out is wrong.
func evalFlags(e *env, fs *flag.FlagSet) (cfg func(args []string) (evalsink.Config, error)) {
	eval := fs.String("eval", "", "directory of evaluation shards (parastream extract --corpus sts|stsb|sick, and reddit or quora for retrieval) (required)")
	out := fs.String("out", "results", "results directory: parts/ (Parquet), results.csv, report.md, plots/, comparisons/")
	run := fs.String("run", "", "run name where the checkpoint gives none (default: run.json's, else the checkpoint directory's parent)")
	model := fs.String("model", "", "model name (default: the checkpoint's encoder)")
	scale := fs.String("scale", evalsink.ScaleCosine, "similarity scale Pearson's r is taken on: cosine, or angular for 5(1 − arccos(cos)/π)")
	scatter := fs.String("scatter", evalsink.DefaultScatter, "set whose predictions are plotted against the gold scores")
	candidates := fs.Int("candidates", evalsink.DefaultCandidates, "responses each retrieval query ranks (1 true, the rest random)")
	seed := fs.Uint64("seed", evalsink.DefaultSeed, "seed of the random retrieval candidates and of the bootstrap (intervals, comparisons)")
	dsn := fs.String("sql-dsn", "", "also write the rows to PostgreSQL (e.g. postgres://user@host/db); the table is created when missing")
	adapt := fs.Bool("adapt", false, "apply the checkpoint's STS adaptation (parastream adapt) to every embedding: rows marked adaptation sts-linear")
	headline := fs.String("headline", "", "watch, compare: the figure a run's best is picked by and read first, DATASET[:KIND]:COLUMN, e.g. stsb/dev:pearson (default all:average:pearson, else stsb/dev:pearson)")
	verbose := fs.Bool("v", false, "log progress")
	return func(args []string) (evalsink.Config, error) {
		if err := cli.Parse(fs, args); err != nil {
			return evalsink.Config{}, err
		}
		if _, err := evalsink.ParseFigureRef(*headline); *headline != "" && err != nil {
			return evalsink.Config{}, fmt.Errorf("%w: --headline: %v", cli.ErrUsage, err)
		}
		if err := outdir.Check(*out); err != nil {
			return evalsink.Config{}, fmt.Errorf("%w: --out: %v", cli.ErrUsage, err)
		}
		return evalsink.Config{Eval: *eval, Version: cli.BuildVersion(version), Out: *out, Run: *run, Model: *model, Scale: *scale, Scatter: *scatter,
			Candidates: *candidates, Seed: *seed, SQLDSN: *dsn, ContextFor: topicContext, Adapt: *adapt, Headline: *headline,
			Logger: cli.Logger(e.stderr, *verbose)}, nil
	}
}

func runEvalRun(ctx context.Context, e *env, args []string) error {
	fs := newFlags(e, "eval run", evalUsage)
	checkpoint := fs.String("checkpoint", "", "checkpoint directory, or a run's checkpoint directory for its newest good checkpoint (required, unless --vectors)")
	vectors := fs.String("vectors", "", "instead of a checkpoint, score the plain average of these word vectors (GloVe or word2vec text, .gz read; words without a vector left out): the research's GloVe baselines")
	truncate := fs.String("truncate-dim", "", "evaluate the embeddings' first N dimensions (Matryoshka prefixes), each an evaluation of its own named <model>@N, comma-separated, as 300,128,64 (default: the whole, and every prefix the model was trained with by --matryoshka)")
	format := fs.String("format", "results", "results: the results directory only; mteb: also one JSON per STS task in the layout of MTEB's results repository, under <out>/mteb/<model>/<checkpoint hash>/, with model_meta.json")
	cfg, err := evalFlags(e, fs)(args)
	if err != nil {
		return err
	}
	if cfg.Eval == "" || fs.NArg() > 0 {
		return fmt.Errorf("%w: --eval and one of --checkpoint and --vectors are required, and nothing else", cli.ErrUsage)
	}
	if *format != "results" && *format != "mteb" {
		return fmt.Errorf("%w: --format %q: give results or mteb", cli.ErrUsage, *format)
	}
	req := evalsink.RunRequest{Checkpoint: *checkpoint, Vectors: *vectors, MTEB: *format == "mteb", Version: cli.BuildVersion(version)}
	if *truncate != "" {
		if req.TruncateDims, err = cli.ParseInts(*truncate); err != nil {
			return fmt.Errorf("%w: --truncate-dim: %v", cli.ErrUsage, err)
		}
	}
	if err := req.Validate(); err != nil {
		return fmt.Errorf("%w: %v", cli.ErrUsage, err)
	}
	ev, err := evalsink.NewEvaluator(ctx, cfg)
	if err != nil {
		return err
	}
	defer ev.Close()
	return ev.Run(ctx, req, func(r evalsink.RunResult) error {
		if err := report.Eval(e.stdout, r.Summary); err != nil {
			return err
		}
		report.MTEB(e.stdout, r.MTEB)
		if len(r.MTEBFiles) > 0 {
			fmt.Fprintf(e.stdout, "MTEB result files: %d in %s\n", len(r.MTEBFiles), filepath.Dir(r.MTEBFiles[0]))
		}
		return nil
	})
}

func runEvalWatch(ctx context.Context, e *env, args []string) error {
	fs := newFlags(e, "eval watch", evalUsage)
	client := cli.ClientFlags(fs)
	prefix := fs.String("topic-prefix", stream.DefaultPrefix, "prefix of the topic names (checkpoints on <prefix>.checkpoints)")
	group := fs.String("group", "parastream-eval", "consumer group: its committed offset is where a restarted watcher resumes")
	cfg, err := evalFlags(e, fs)(args)
	if err != nil {
		return err
	}
	if cfg.Eval == "" || fs.NArg() > 0 {
		return fmt.Errorf("%w: --brokers, --eval and --out are required, and nothing else", cli.ErrUsage)
	}
	cc, err := client()
	if err != nil {
		return err
	}
	rep := report.NewWatch(e.stdout)
	cfg.Watched = rep.Checkpoint
	ev, err := evalsink.NewEvaluator(ctx, cfg)
	if err != nil {
		return err
	}
	defer ev.Close()
	fmt.Fprintf(e.stdout, "watching %s as group %s; results in %s\n", stream.CheckpointTopic(*prefix), *group, cfg.Out)
	err = evalsink.Watch(ctx, ev, cc, *prefix, *group, cfg.Logger)
	if err == nil || errors.Is(err, context.Canceled) {
		rep.Stopped(cfg.Out)
		return nil
	}
	return err
}

func runEvalCompare(ctx context.Context, e *env, args []string) error {
	fs := newFlags(e, "eval compare", compareUsage)
	cfgOf := evalFlags(e, fs)
	cli.Describe(fs, e.stdout, compareUsage, "parastream eval compare --eval eval --out results ckpt/step-00000100 ckpt/step-00000340\n"+
		"parastream eval compare --out results 3f2a9c1e 8b0d4e77   # two evaluations of results.csv, by eval_id",
		cli.FlagGroup{Title: "input and output", Names: []string{"eval", "out"}}, cli.FlagGroup{Title: "comparison", Names: []string{"headline", "seed", "v"}},
		cli.FlagGroup{Title: "evaluating a checkpoint RESULTS holds no evaluation of", Names: []string{"scale", "candidates", "adapt", "run", "model", "scatter", "sql-dsn"}})
	cfg, err := cfgOf(args)
	if err != nil {
		return err
	}
	if fs.NArg() != 2 {
		return fmt.Errorf("%w: give A and B after the flags: two checkpoint directories or eval_ids (B is compared with A)", cli.ErrUsage)
	}
	if a, b := fs.Arg(0), fs.Arg(1); cfg.Eval == "" && (evalsink.IsCheckpoint(a) || evalsink.IsCheckpoint(b)) {
		return fmt.Errorf("%w: A or B is a checkpoint: give --eval, the evaluation shards, to evaluate it", cli.ErrUsage)
	}
	_, err = evalsink.RunCompare(ctx, evalsink.CompareConfig{Config: cfg, A: fs.Arg(0), B: fs.Arg(1)}, e.stdout)
	return err
}
