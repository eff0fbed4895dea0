// Command parastream turns raw text corpora into training streams for
// paraphrastic sentence-embedding models, trains those models from the
// stream, and measures them. Run "parastream help" for the subcommands.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/signal"
	"slices"
	"strings"
	"syscall"

	"github.com/apache/beam/sdks/v2/go/pkg/beam"
)

// command is one subcommand. run is nil for a subcommand not built yet.
type command struct {
	name    string
	summary string
	usage   string
	// issue names the work that builds a command not built yet.
	issue string
	run   func(ctx context.Context, env *env, args []string) error
}

// env is what a subcommand writes to.
type env struct {
	stdout, stderr io.Writer
}

// errUsage marks a command-line mistake: exit status 2.
var errUsage = errors.New("usage")

func commands() []command {
	return []command{
		{name: "read", summary: "read raw corpus files with one reader and report counts, rejects and examples",
			usage: "parastream read --format NAME [--rejects FILE] [--show N] FILE [FILE2]", run: runRead},
		{name: "formats", summary: "list the corpus formats and how each maps to an Example",
			usage: "parastream formats", run: runFormats},
		{name: "extract", summary: "run the Beam extraction pipeline: raw corpora to Parquet shards",
			usage: extractUsage, run: runExtract},
		{name: "featurize", summary: "add token ids and NMF topic vectors to shards",
			usage: featurizeUsage, run: runFeaturize},
		{name: "publish", summary: "publish shards to Kafka topics",
			usage: publishUsage, run: runPublish},
		{name: "consume", summary: "print rows of a dataset from Kafka as JSON lines (with token ids and topic vectors), for debugging and the parity harness",
			usage: consumeUsage, run: runConsume},
		{name: "broker", summary: "run the embedded Kafka-protocol broker for local runs",
			usage: brokerUsage, run: runBroker},
		{name: "train", summary: "train a sentence encoder from a Kafka dataset",
			usage: trainUsage, run: runTrain},
		{name: "embed", summary: "embed sentences read on stdin with a checkpoint's model",
			usage: embedUsage, run: runEmbed},
		{name: "export", summary: "export a checkpoint's embeddings as GloVe text, or its parameters as safetensors",
			usage: exportUsage, run: runExport},
		{name: "eval", summary: "evaluate checkpoints and write result tables",
			usage: evalUsage, run: runEval},
		{name: "gen", summary: "generate realistic synthetic corpora in the real formats",
			usage: "parastream gen reddit|europarl|ppdb|quora|simpwiki --rows N --out FILE [--compress zstd|gz|bz2]", run: runGen},
		{name: "demo", summary: "run the main job on the embedded defaults (the project's fixtures)",
			usage: "parastream demo [--data DIR] [--show N]", run: runDemo},
		{name: "version", summary: "print the version and the versions of the key dependencies",
			usage: "parastream version", run: runVersion},
	}
}

func main() {
	// A portable runner (Flink, Spark, Dataflow) starts this binary as its
	// Go worker, with --worker and the harness's flags instead of a
	// subcommand: hand over to Beam's harness.
	if len(os.Args) > 1 && strings.HasPrefix(os.Args[1], "-") && slices.ContainsFunc(os.Args[1:], isWorkerFlag) {
		flag.Parse()
		beam.Init()
		return
	}
	// Prism logs every job's lifecycle at INFO; keep warnings and errors.
	slog.SetDefault(slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelWarn})))
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	code := run(ctx, os.Args[1:], &env{stdout: os.Stdout, stderr: os.Stderr})
	stop()
	os.Exit(code)
}

// run dispatches to a subcommand and returns the exit status.
func run(ctx context.Context, args []string, e *env) int {
	if len(args) == 0 || isHelp(args[0]) || args[0] == "help" {
		if len(args) > 1 && args[0] == "help" {
			return run(ctx, []string{args[1], "--help"}, e)
		}
		printHelp(e.stdout)
		if len(args) == 0 {
			return 2
		}
		return 0
	}
	for _, c := range commands() {
		if c.name != args[0] {
			continue
		}
		if c.run == nil {
			if len(args) > 1 && isHelp(args[1]) {
				fmt.Fprintf(e.stdout, "usage: %s\n\n%s.\n\nNot built yet: %s.\n", c.usage, c.summary, c.issue)
				return 0
			}
			fmt.Fprintf(e.stderr, "parastream %s: not built yet (%s)\n", c.name, c.issue)
			return 3
		}
		err := c.run(ctx, e, args[1:])
		switch {
		case err == nil, errors.Is(err, flag.ErrHelp):
			return 0
		case errors.Is(err, errUsage):
			fmt.Fprintf(e.stderr, "parastream %s: %v\nusage: %s\n", c.name, err, c.usage)
			return 2
		default:
			fmt.Fprintf(e.stderr, "parastream %s: %v\n", c.name, err)
			return 1
		}
	}
	fmt.Fprintf(e.stderr, "parastream: unknown command %q; run 'parastream help'\n", args[0])
	return 2
}

func isWorkerFlag(s string) bool {
	return s == "--worker" || s == "-worker" || strings.HasPrefix(s, "--worker=") || strings.HasPrefix(s, "-worker=")
}

func isHelp(s string) bool { return s == "-h" || s == "--help" || s == "-help" }

func printHelp(w io.Writer) {
	fmt.Fprintln(w, "parastream: raw text corpora to training streams for paraphrastic sentence embeddings")
	fmt.Fprintln(w, "\nusage: parastream <command> [flags]   (parastream <command> --help for its flags)")
	fmt.Fprintln(w, "\ncommands:")
	for _, c := range commands() {
		status := ""
		if c.run == nil {
			status = " [not built yet]"
		}
		fmt.Fprintf(w, "  %-10s %s%s\n", c.name, c.summary, status)
	}
}

// newFlags makes a subcommand's flag set, printing usage and defaults on
// --help.
func newFlags(e *env, name, usage string) *flag.FlagSet {
	fs := flag.NewFlagSet(name, flag.ContinueOnError)
	fs.SetOutput(e.stderr)
	fs.Usage = func() {
		fmt.Fprintf(e.stdout, "usage: %s\n\nflags:\n", usage)
		fs.SetOutput(e.stdout)
		fs.PrintDefaults()
		fs.SetOutput(e.stderr)
	}
	return fs
}

// parseFlags parses args, turning a bad flag into errUsage.
func parseFlags(fs *flag.FlagSet, args []string) error {
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return err
		}
		return fmt.Errorf("%w: %v", errUsage, err)
	}
	return nil
}
