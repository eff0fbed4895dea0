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
	"path/filepath"
	"slices"
	"strings"
	"syscall"

	"github.com/apache/beam/sdks/v2/go/pkg/beam"

	"github.com/parastream/parastream/cmd/parastream/internal/cli"
	"github.com/parastream/parastream/cmd/parastream/internal/trainflags"
)

// command is one subcommand.
type command struct {
	name    string
	summary string
	usage   string
	run     func(ctx context.Context, env *env, args []string) error
}

// env is what a subcommand writes to.
type env struct {
	stdout, stderr io.Writer
}

func commands() []command {
	return []command{
		{name: "read", summary: "read raw corpus files with one reader and report counts, rejects and examples",
			usage: readUsage, run: runRead},
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
			usage: trainflags.Usage, run: runTrain},
		{name: "device", summary: "check the GPU: its libraries, the kernels, and every encoder and loss against the emulator",
			usage: deviceUsage, run: runDevice},
		{name: "embed", summary: "embed sentences read on stdin with a checkpoint's model",
			usage: embedUsage, run: runEmbed},
		{name: "generate", summary: "generate paraphrases of sentences read on stdin with an edd checkpoint, or score them on held-out pairs",
			usage: generateUsage, run: runGenerate},
		{name: "export", summary: "export a checkpoint's embeddings as GloVe text, or its parameters as safetensors",
			usage: exportUsage, run: runExport},
		{name: "eval", summary: "evaluate checkpoints and write result tables",
			usage: evalUsage, run: runEval},
		{name: "adapt", summary: "train a checkpoint's STS adaptation (a linear map of its embeddings, STS Benchmark train, chosen on dev)",
			usage: adaptUsage, run: runAdapt},
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

// Exit statuses, documented in the README and in "parastream help".
const (
	exitOK          = 0   // done
	exitFailed      = 1   // the input, the output or the run failed
	exitUsage       = 2   // a command-line mistake: unknown command or flag, bad value
	exitInterrupted = 130 // stopped by Ctrl-C or SIGTERM
)

// run dispatches to a subcommand and returns the exit status.
func run(ctx context.Context, args []string, e *env) int {
	if len(args) == 0 || cli.IsHelp(args[0]) || args[0] == "help" {
		if len(args) > 1 && args[0] == "help" {
			return run(ctx, []string{args[1], "--help"}, e)
		}
		printHelp(e.stdout)
		if len(args) == 0 {
			return exitUsage
		}
		return exitOK
	}
	if cli.IsVersion(args[0]) {
		args = append([]string{"version"}, args[1:]...)
	}
	for _, c := range commands() {
		if c.name != args[0] {
			continue
		}
		err := c.run(ctx, e, args[1:])
		switch {
		case err == nil, errors.Is(err, flag.ErrHelp):
			return exitOK
		case errors.Is(err, cli.ErrUsage):
			msg := strings.TrimPrefix(err.Error(), cli.ErrUsage.Error()+": ")
			first, _, _ := strings.Cut(c.usage, "\n")
			fmt.Fprintf(e.stderr, "parastream %s: %s\nusage: %s\n", c.name, msg, first)
			return exitUsage
		case ctx.Err() != nil && errors.Is(err, context.Canceled):
			fmt.Fprintf(e.stderr, "parastream %s: interrupted\n", c.name)
			return exitInterrupted
		default:
			fmt.Fprintf(e.stderr, "parastream %s: %v\n", c.name, err)
			return exitFailed
		}
	}
	msg := fmt.Sprintf("unknown command %q", args[0])
	if strings.HasPrefix(args[0], "-") {
		msg = fmt.Sprintf("unknown flag %s before a command", args[0])
	}
	fmt.Fprintf(e.stderr, "parastream: %s; run 'parastream help' for the commands\n", msg)
	return exitUsage
}

// selfName is the command as the user ran it, for the commands a hint
// suggests: ./parastream when run from its directory, parastream when
// found on the PATH (or under a test).
func selfName() string {
	if len(os.Args) > 0 && filepath.Base(os.Args[0]) == "parastream" {
		return os.Args[0]
	}
	return "parastream"
}

func isWorkerFlag(s string) bool {
	return s == "--worker" || s == "-worker" || strings.HasPrefix(s, "--worker=") || strings.HasPrefix(s, "-worker=")
}

func printHelp(w io.Writer) {
	fmt.Fprintln(w, "parastream: raw text corpora to training streams for paraphrastic sentence embeddings")
	fmt.Fprintln(w, "\nusage: parastream <command> [flags]   (parastream <command> --help for its flags)")
	fmt.Fprintln(w, "       parastream --version | -v")
	fmt.Fprintln(w, "\ncommands:")
	for _, c := range commands() {
		fmt.Fprintf(w, "  %-10s %s\n", c.name, c.summary)
	}
	fmt.Fprintln(w, "\nexit status: 0 done, 1 the input, output or run failed, 2 a command-line mistake,")
	fmt.Fprintln(w, "130 interrupted")
}

// newFlags makes a subcommand's flag set (cli.NewFlags), named as the user
// runs it and writing to e.
func newFlags(e *env, name, usage string) *flag.FlagSet {
	return cli.NewFlags(e.stdout, e.stderr, "parastream "+name, usage)
}
