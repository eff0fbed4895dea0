package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"log/slog"

	"github.com/parastream/parastream/evalsink"
	"github.com/parastream/parastream/internal/cli"
	"github.com/parastream/parastream/internal/outdir"
	"github.com/parastream/parastream/internal/report"
	"github.com/parastream/parastream/stream"
)

const evalUsage = "parastream eval run --checkpoint DIR --eval SHARDS [--out RESULTS] | " +
	"parastream eval watch --brokers ADDR [--topic-prefix P] [--group G] --eval SHARDS --out RESULTS " +
	"[--sql-dsn DSN] [--scale cosine|angular] [--scatter SET] [--candidates N] [--seed S] [--run NAME] [--model NAME] [--adapt]"

func runEval(ctx context.Context, e *env, args []string) error {
	if len(args) == 0 {
		return fmt.Errorf("%w: give run or watch", cli.ErrUsage)
	}
	switch args[0] {
	case "run":
		return runEvalRun(ctx, e, args[1:])
	case "watch":
		return runEvalWatch(ctx, e, args[1:])
	case "-h", "-help", "--help":
		fmt.Fprintf(e.stdout, "usage: %s\n\nevaluate checkpoints and write result tables; parastream eval run --help and eval watch --help list the flags.\n", evalUsage)
		return nil
	}
	return fmt.Errorf("%w: unknown eval subcommand %q: give run or watch", cli.ErrUsage, args[0])
}

// evalFlags are the flags run and watch share; cfg builds the
// evaluator's configuration from them.
func evalFlags(e *env, fs *flag.FlagSet) (cfg func() evalsink.Config, verbose *bool) {
	eval := fs.String("eval", "", "directory of evaluation shards (parastream extract --corpus sts|stsb|sick, and reddit or quora for retrieval) (required)")
	out := fs.String("out", "results", "results directory: parts/ (Parquet), results.csv, report.md, plots/")
	run := fs.String("run", "", "run name where the checkpoint gives none (default: run.json's, else the checkpoint directory's parent)")
	model := fs.String("model", "", "model name (default: the checkpoint's encoder)")
	scale := fs.String("scale", evalsink.ScaleCosine, "similarity scale Pearson's r is taken on: cosine, or angular for 5(1 − arccos(cos)/π)")
	scatter := fs.String("scatter", evalsink.DefaultScatter, "set whose predictions are plotted against the gold scores")
	candidates := fs.Int("candidates", evalsink.DefaultCandidates, "responses each retrieval query ranks (1 true, the rest random)")
	seed := fs.Uint64("seed", evalsink.DefaultSeed, "seed of the random retrieval candidates")
	dsn := fs.String("sql-dsn", "", "also write the rows to PostgreSQL (e.g. postgres://user@host/db); the table is created when missing")
	adapt := fs.Bool("adapt", false, "apply the checkpoint's STS adaptation (parastream adapt) to every embedding: rows marked adaptation sts-linear")
	verbose = fs.Bool("v", false, "log progress")
	return func() evalsink.Config {
		level := slog.LevelWarn
		if *verbose {
			level = slog.LevelInfo
		}
		return evalsink.Config{Eval: *eval, Out: *out, Run: *run, Model: *model, Scale: *scale, Scatter: *scatter,
			Candidates: *candidates, Seed: *seed, SQLDSN: *dsn, ContextFor: topicContext, Adapt: *adapt,
			Logger: slog.New(slog.NewTextHandler(e.stderr, &slog.HandlerOptions{Level: level}))}
	}, verbose
}

func runEvalRun(ctx context.Context, e *env, args []string) error {
	fs := newFlags(e, "eval run", evalUsage)
	checkpoint := fs.String("checkpoint", "", "checkpoint directory (required)")
	cfgOf, _ := evalFlags(e, fs)
	if err := cli.Parse(fs, args); err != nil {
		return err
	}
	cfg := cfgOf()
	if *checkpoint == "" || cfg.Eval == "" || fs.NArg() > 0 {
		return fmt.Errorf("%w: --checkpoint and --eval are required, and nothing else", cli.ErrUsage)
	}
	if err := outdir.Check(cfg.Out); err != nil {
		return fmt.Errorf("%w: --out: %v", cli.ErrUsage, err)
	}
	ev, err := evalsink.NewEvaluator(ctx, cfg)
	if err != nil {
		return err
	}
	defer ev.Close()
	sum, err := ev.Evaluate(ctx, evalsink.Target{Dir: *checkpoint})
	if err != nil {
		return err
	}
	return report.Eval(e.stdout, sum)
}

func runEvalWatch(ctx context.Context, e *env, args []string) error {
	fs := newFlags(e, "eval watch", evalUsage)
	client := cli.ClientFlags(fs)
	prefix := fs.String("topic-prefix", stream.DefaultPrefix, "prefix of the topic names (checkpoints on <prefix>.checkpoints)")
	group := fs.String("group", "parastream-eval", "consumer group: its committed offset is where a restarted watcher resumes")
	cfgOf, _ := evalFlags(e, fs)
	if err := cli.Parse(fs, args); err != nil {
		return err
	}
	cfg := cfgOf()
	if cfg.Eval == "" || fs.NArg() > 0 {
		return fmt.Errorf("%w: --brokers, --eval and --out are required, and nothing else", cli.ErrUsage)
	}
	cc, err := client()
	if err != nil {
		return err
	}
	if err := outdir.Check(cfg.Out); err != nil {
		return fmt.Errorf("%w: --out: %v", cli.ErrUsage, err)
	}
	ev, err := evalsink.NewEvaluator(ctx, cfg)
	if err != nil {
		return err
	}
	defer ev.Close()
	fmt.Fprintf(e.stdout, "watching %s as group %s; results in %s\n", stream.CheckpointTopic(*prefix), *group, cfg.Out)
	err = evalsink.Watch(ctx, ev, cc, *prefix, *group, cfg.Logger)
	if err == nil || errors.Is(err, context.Canceled) {
		fmt.Fprintln(e.stdout, "stopped")
		return nil
	}
	return err
}
