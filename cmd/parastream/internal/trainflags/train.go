package trainflags

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/parastream/parastream/cmd/parastream/internal/cli"
	"github.com/parastream/parastream/stream"
	"github.com/parastream/parastream/trainstep"
	"github.com/parastream/parastream/trainstep/compute"
	"github.com/parastream/parastream/trainstep/device"
)

// Train is the train command's flags, declared on one flag set: parsed,
// they are the RunConfig (Config) and the Device that trains it.
type Train struct {
	fs     *flag.FlagSet
	client func() (stream.ClientConfig, error)
	rc     trainstep.RunConfig
	// Device is where to train (--device and the flags beside it).
	Device device.Config
	// Quiet is --quiet: no progress lines.
	Quiet bool
	// CPUProfile is --cpuprofile: a file for a CPU profile of the run.
	CPUProfile string

	dataset, mix, minLabel string
	async                  bool
}

// Usage is the train command's synopsis.
const Usage = "parastream train --brokers ADDR --dataset NAME [flags] | parastream train --resume DIR [flags that override the run's]"

// example is the help's example.
const example = "parastream train --brokers 127.0.0.1:9092 --dataset quora --model lstmavg --epochs 2 --run quora-lstmavg\n" +
	"parastream train --resume checkpoints/quora-lstmavg --epochs 4   # go on where it stopped"

// New makes the train command's flag set (cli.NewFlags), its --help on
// stdout grouped by Groups.
func New(stdout, stderr io.Writer) *Train {
	fs := cli.NewFlags(stdout, stderr, "parastream train", Usage)
	t := Declare(fs)
	cli.Describe(fs, stdout, Usage, example, t.Groups()...)
	return t
}

// Parse parses the command line (cli.Parse), then, with --resume, makes
// the flags those of the run it continues (Resume).
func (t *Train) Parse(args []string) error {
	if err := cli.Parse(t.fs, args); err != nil {
		return err
	}
	return t.Resume(t.fs.Output())
}

// FlagSet is the flags' set.
func (t *Train) FlagSet() *flag.FlagSet { return t.fs }

// Declare declares the train command's flags on fs.
func Declare(fs *flag.FlagSet) *Train {
	t := &Train{fs: fs, client: cli.ClientFlags(fs)}
	rc, cfg := &t.rc, &t.rc.Model
	fs.StringVar(&rc.Prefix, "topic-prefix", stream.DefaultPrefix, "prefix of the topic names")
	fs.StringVar(&t.dataset, "dataset", "", "dataset (corpus) to train on, as published (required); several, comma-separated, are mixed in one run (featurized together: one vocabulary)")
	fs.StringVar(&t.mix, "mix", "", "weights of a mix of datasets, as ppdb=2,quora=1 (default: their sizes, so an epoch is one pass over each)")
	fs.StringVar(&rc.Split, "split", stream.DefaultSplit, "split to train on")
	fs.StringVar(&rc.Run, "run", "", "name of the run: its consumer group and the name in checkpoint events (default: <dataset>-<model>-<UTC time>; when resuming, the checkpoint's)")
	modelFlags(fs, cfg)
	fs.StringVar(&cfg.Context, "context", "", "topics: add each sentence's NMF topic vector to its embedding through a learned projection (Amiri et al. 2016); evaluation computes it with the featurize model kept in the checkpoint")
	fs.IntVar(&cfg.BatchSize, "batch", 100, "pairs per batch")
	fs.IntVar(&cfg.MaxLen, "max-len", 0, "longer sentences are truncated (0: 64)")
	fs.IntVar(&cfg.BucketWidth, "bucket-width", 0, "padded lengths are multiples of this (0: 8)")
	fs.StringVar(&cfg.Optimizer, "optimizer", "adam", "adam, sgd or rmsprop")
	fs.StringVar(&cfg.EmbeddingUpdate, "embedding-update", "", "sparse: a step updates only the embedding rows of its batch's words (lazy, as PyTorch's SparseAdam; the default); dense: every row")
	fs.Float64Var(&cfg.LR, "lr", 0, "learning rate (0: 0.001 adam, 0.01 sgd and rmsprop)")
	fs.Float64Var(&cfg.Decay, "decay", 0, "learning rate multiplier per finished epoch (0: none)")
	fs.Uint64Var(&cfg.Seed, "seed", 1, "seed of the initialisation, the noise and the shuffle")
	csaeFlags(fs, cfg)
	fs.IntVar(&rc.Epochs, "epochs", 1, "passes over the data (0: follow new data for ever)")
	fs.StringVar(&rc.CheckpointDir, "checkpoint-dir", "", "directory of the checkpoints, step-N subdirectories (default: checkpoints/<run>; when resuming, the resumed checkpoint's directory)")
	fs.Int64Var(&rc.CheckpointEvery, "checkpoint-every", trainstep.DefaultCheckpointEvery, "steps between checkpoints (one is also written at the end)")
	fs.IntVar(&rc.KeepCheckpoints, "keep-checkpoints", 0, "keep only the newest N checkpoints, removing older ones once a newer one is committed (0: keep all)")
	fs.IntVar(&rc.KeepOptimizer, "keep-optimizer", trainstep.DefaultKeepOptimizer, "the newest N checkpoints keep the optimiser state a run resumes from; older ones keep the model only (evaluate, embed, export; about a third of the size with Adam)")
	fs.BoolVar(&t.async, "checkpoint-async", true, "write checkpoints in the background: a checkpoint step snapshots the model (on a GPU, into pinned host memory on a copy stream) and training goes on while the files are written; the offsets are committed once they are durable, one write at a time (false: write before the next step)")
	fs.IntVar(&rc.FeedAhead, "feed-ahead", trainstep.DefaultFeedAhead, "windows of batches read, bucketed and paired ahead of the step in a goroutine of their own (0: read between steps); the batches and their order are the same")
	fs.StringVar(&rc.Resume, "resume", "", "continue from this checkpoint, or from the newest good one in this checkpoint directory (a corrupt newer one is passed over with a warning), exactly at its stream position and with the run's flags (run.json): a flag given again overrides the run's value with a line saying so (--epochs, --duration, --max-steps, --checkpoint-every, --brokers, ...) or is refused where it would change the model or its data (--model, --lr, --dim, --dataset, ...)")
	fs.StringVar(&rc.VectorsFile, "vectors", "", "GloVe or word2vec text file initialising the word embeddings (.gz read)")
	fs.StringVar(&rc.InitFrom, "init-from", "", "checkpoint whose parameters of the same names and shapes start this new run (a pretraining run's, as the csae's --loss recon before a pair loss); the same vocabulary")
	fs.IntVar(&rc.ShuffleBuffer, "shuffle-buffer", 0, "rows the consumer shuffles among (0: 10,000; 1: topic order)")
	fs.IntVar(&rc.Window, "window", trainstep.DefaultWindow, "batches of rows read before sorting them into length buckets")
	fs.Int64Var(&rc.MaxSteps, "max-steps", 0, "stop after this many steps of this run, with a checkpoint (0: none)")
	fs.DurationVar(&rc.Duration, "duration", 0, "stop after this long, with a checkpoint (0: none)")
	fs.DurationVar(&rc.ProgressEvery, "progress-every", trainstep.DefaultProgressEvery, "interval of the progress lines")
	fs.StringVar(&rc.TraceIDs, "trace-ids", "", "debugging aid: append '<step>\\t<epoch>\\t<row id>' for every trained example to this file, synced each step")
	fs.StringVar(&t.minLabel, "min-label", "", "train only rows whose label is at least this, in every dataset (replaces each corpus's own rule); rows without a label are trained")
	fs.BoolVar(&rc.AllPairs, "all-pairs", false, "train every row as a paraphrase, whatever its label (by default each corpus trains only what its labels call paraphrases: Quora's and MSRP's 1s, SNLI's entailments, PPDB human ratings of at least 3, STS scores of at least 4)")
	fs.BoolVar(&rc.HardNegatives, "hard-negatives", false, "mnrl loss: each paraphrase takes a labelled non-paraphrase sharing a text or the group with it (Quora's and MSRP's 0s, SNLI's contradictions, PPDB ratings of at most 2) as a hard negative; SNLI then trains as pairs, not the NLI head")
	fs.BoolVar(&rc.SaveInitial, "save-initial", false, "also write the checkpoint of step 0 (the initial parameters) before training")
	fs.BoolVar(&t.Quiet, "quiet", false, "no progress lines")
	fs.StringVar(&t.CPUProfile, "cpuprofile", "", "write a CPU profile of the run to this file (go tool pprof)")
	fs.BoolVar(&rc.ProgressDetail, "v", false, "progress lines with their details: the consumer's lag, the device, the graphs held and the memory budget")
	fs.DurationVar(&rc.GroupSession, "group-session", stream.DefaultGroupSession, "session timeout of the trainer's membership of the run's consumer group (6s to 5m): a second trainer of the run fails while the group has a live member; a trainer killed without leaving holds the run this long")
	Device(fs, &t.Device)
	return t
}

// Groups are the help's groups of the flags.
func (t *Train) Groups() []cli.FlagGroup {
	return []cli.FlagGroup{
		{Title: "input", Names: []string{"dataset", "split", "mix", "min-label", "all-pairs", "hard-negatives", "topic-prefix", "vectors", "init-from", "context", "max-len", "shuffle-buffer", "window", "bucket-width", "feed-ahead"}},
		{Title: "model", Names: modelFlagNames()},
		{Title: "csae (--model csae)", Names: csaeFlagNames()},
		{Title: "optimisation", Names: []string{"optimizer", "lr", "decay", "batch", "epochs", "embedding-update", "seed"}},
		{Title: "output", Names: []string{"run", "checkpoint-dir", "checkpoint-every", "keep-checkpoints", "keep-optimizer", "checkpoint-async", "save-initial", "resume"}},
		{Title: "run", Names: []string{"max-steps", "duration", "progress-every", "quiet", "v", "trace-ids", "group-session", "cpuprofile"}},
		{Title: "device", Names: DeviceFlagNames()},
		cli.ConnectionGroup(),
	}
}

// Resume, after the flags are parsed, makes them those of the run that
// --resume continues (RestoreFlags), writing to stderr which checkpoint
// it resumes and which flags override the run's. A refused flag is a
// usage error (cli.ErrUsage).
func (t *Train) Resume(stderr io.Writer) error {
	if t.rc.Resume == "" || t.fs.NArg() != 0 {
		return nil
	}
	dir, err := trainstep.FindCheckpoint(t.rc.Resume, func(bad string, err error) {
		fmt.Fprintf(stderr, "train: WARNING: passing over the corrupt checkpoint %s: %v\n", bad, err)
	})
	if err != nil {
		return err
	}
	fmt.Fprintf(stderr, "train: %s\n", resuming(dir))
	if err := RestoreFlags(t.fs, dir, stderr); err != nil {
		if fe := (*FlagsError)(nil); errors.As(err, &fe) {
			return fmt.Errorf("%w: %v", cli.ErrUsage, err) // a refused override: a command-line mistake
		}
		return err
	}
	t.rc.Resume = dir
	return nil
}

// resuming says what a resume continues: the run, its checkpoint and its
// step, and the epochs it was given.
func resuming(dir string) string {
	info, err := trainstep.ReadRunConfig(dir)
	if err != nil || info == nil {
		return "resuming from " + dir
	}
	line := fmt.Sprintf("resuming from %s: run %s", dir, info.Run)
	if n, ok := strings.CutPrefix(filepath.Base(dir), "step-"); ok {
		line += ", step " + cmpStep(n)
	}
	if info.Epochs > 0 {
		line += fmt.Sprintf(", trained for --epochs %d", info.Epochs)
	}
	return line
}

// cmpStep is a step-N directory's N without its leading zeros.
func cmpStep(n string) string {
	if n = strings.TrimLeft(n, "0"); n == "" {
		return "0"
	}
	return n
}

// Config is the run the parsed (and resumed) flags describe, less what
// the command adds: the backend, the logger and where progress goes. The
// run records the program's version: stamped, as cli.BuildVersion makes it.
func (t *Train) Config(stamped string) (trainstep.RunConfig, error) {
	if t.dataset == "" || t.fs.NArg() > 0 {
		return trainstep.RunConfig{}, fmt.Errorf("%w: --brokers and --dataset are required (or --resume), and nothing else", cli.ErrUsage)
	}
	rc := t.rc
	var err error
	if rc.Client, err = t.client(); err != nil {
		return rc, err
	}
	rc.Flags, rc.CheckpointSync = KeptFlags(t.fs), !t.async
	rc.Version = cli.BuildVersion(stamped)
	if rc.FeedAhead <= 0 {
		rc.FeedAhead = -1 // the serial feed (RunConfig's 0 is the default)
	}
	if names := cli.SplitList(t.dataset); len(names) > 1 {
		rc.Datasets = names
	} else {
		rc.Dataset = t.dataset
	}
	if t.mix != "" {
		if rc.Mix, err = trainstep.ParseMix(t.mix); err != nil {
			return rc, fmt.Errorf("%w: --%v", cli.ErrUsage, err)
		}
	}
	if t.minLabel != "" {
		v, err := strconv.ParseFloat(t.minLabel, 64)
		if err != nil {
			return rc, fmt.Errorf("%w: --min-label %q is not a number", cli.ErrUsage, t.minLabel)
		}
		rc.MinLabel = &v
	}
	if err := rc.Validate(); err != nil { // a value no run can take: a command-line mistake
		return rc, fmt.Errorf("%w: %v", cli.ErrUsage, err)
	}
	return rc, nil
}

// Explain adds to the error of a failed run the line that says what to
// do: a larger --memory-budget, or a smaller batch, when the CPU's graphs
// outgrow the budget; the --resume command when the broker is gone.
func (t *Train) Explain(err error, rc trainstep.RunConfig) error {
	switch {
	case errors.Is(err, compute.ErrMemoryBudget):
		budget, _, _ := t.Device.Budget()
		return fmt.Errorf("%w\ntrain: give a larger --memory-budget (now %s), or a smaller --batch (now %d) or --max-len: on the CPU a recurrent model's graph grows with both",
			err, compute.FormatBytes(budget), rc.Model.BatchSize)
	case errors.Is(err, stream.ErrUnreachable):
		return fmt.Errorf("%w\ntrain: the broker is unreachable; once it is back, carry on from the last checkpoint with: parastream train --resume %s",
			err, rc.CheckpointDir)
	}
	return err
}
