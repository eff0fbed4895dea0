package trainstep

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/parastream/parastream/stream"
	"github.com/parastream/parastream/trainstep/compute"
)

// Defaults of RunConfig.
const (
	DefaultCheckpointEvery = 1000
	DefaultWindow          = 20
	DefaultProgressEvery   = 5 * time.Second
)

// ErrNotFeaturized reports rows without token ids: the dataset was
// published before `parastream featurize` gave it a vocabulary.
var ErrNotFeaturized = stream.ErrNotFeaturized // one sentinel for the trainer and the stream

// RunConfig configures Run. Zero fields take the documented defaults.
type RunConfig struct {
	// Client, Prefix, Dataset and Split name the stream to train on
	// (Split "" means "train", Prefix "" the stream's default).
	Client  stream.ClientConfig
	Prefix  string
	Dataset string
	Split   string
	// Datasets, instead of Dataset, mixes several datasets in one run
	// (see mix.go for the epochs of a mix): they must have been featurized
	// together (one vocabulary). Mix weighs them (default: their sizes).
	Datasets []string
	Mix      map[string]float64
	// Run names the training run: it is the consumer group, the run in the
	// checkpoint events, and is saved in checkpoints. Required for a new
	// run; a resumed run keeps its checkpoint's unless one is given.
	Run string
	// Model is the model, loss and optimiser configuration of a new run
	// (Vocab is set from Vocab and Model.OOVBuckets, which must be the
	// dataset's featurize oov_buckets: its ids reach V + OOVBuckets). A
	// resumed run keeps its checkpoint's.
	Model Config
	// Vocab are the dataset's words (id = index); required for a new run.
	Vocab []string
	// Vectors, when set, initialise the embeddings of a new run.
	Vectors *Vectors
	// InitFrom, when set, is a checkpoint whose parameters of the same
	// names and shapes start a new run (Trainer.WarmStart): a pretraining
	// run's, such as the csae's reconstruction before a pair loss.
	InitFrom string
	// Backend computes; nil means the gorgonia CPU backend.
	Backend compute.Backend
	// Epochs is the number of passes; 0 follows new data for ever.
	Epochs int
	// ShuffleBuffer is the consumer's shuffle buffer in rows; 0 means the
	// stream's default.
	ShuffleBuffer int
	// Window is how many batches of rows are read before they are sorted
	// into length buckets and trained; 0 means DefaultWindow.
	Window int
	// CheckpointDir receives the checkpoints, as step-NNNNNNNN
	// directories. Required, except when resuming: it then defaults to
	// the directory holding the resumed checkpoint.
	CheckpointDir string
	// CheckpointEvery is the number of steps between checkpoints; 0 means
	// DefaultCheckpointEvery. A checkpoint is also written at the end.
	CheckpointEvery int64
	// CheckpointSync writes each checkpoint before the next step, as
	// before asynchronous checkpoints. By default (false) a checkpoint step
	// takes a snapshot of the parameters and optimiser state (on a GPU,
	// copies to pinned host memory on a second stream) and training goes
	// on while a goroutine writes the files; the group's offsets are
	// committed and the checkpoint announced only once they are durable.
	// At most one write is in flight: the next checkpoint step waits for
	// it, and so does the end of the run. See docs/gpu.md, "Asynchronous
	// checkpoints and the feed".
	CheckpointSync bool
	// FeedAhead is how many windows of ready batches (read, bucketed,
	// shuffled, paired) the feed prepares ahead of the step, in a
	// goroutine of its own; 0 means DefaultFeedAhead, a negative value
	// reads each window between steps (the serial feed). The batches and
	// their order are the same either way.
	FeedAhead int
	// KeepCheckpoints, when positive, keeps only the newest that many
	// step-N checkpoints in CheckpointDir: older ones are removed once a
	// newer one is durable, its offsets committed and announced, so the
	// directory grows with the model, not with the run. 0 keeps them all.
	KeepCheckpoints int
	// Resume, when set, is a checkpoint directory (or a CheckpointDir, for
	// its latest checkpoint) to continue from, exactly at its position.
	Resume string
	// MaxSteps and Duration, when set, stop the run (with a checkpoint)
	// after that many steps of this run, or that long.
	MaxSteps int64
	Duration time.Duration
	// Progress receives a line every ProgressEvery (default
	// DefaultProgressEvery) and one per checkpoint; nil means none.
	Progress      io.Writer
	ProgressEvery time.Duration
	// TraceIDs, when set, is a file to which every trained example is
	// appended, as "<step>\t<epoch>\t<id>" lines, synced after each step:
	// a debugging aid (see docs/trainstep.md, "Exactly once").
	TraceIDs string
	// Featurize are the files of the featurize model the data was
	// featurized with, by name (vocab.tsv, topics.safetensors,
	// featurize.json, as the artifacts topic carries them). A model with a
	// topic context (Config.Context) needs them: its checkpoints keep them
	// in DirFeaturize, so that evaluation computes the topic vectors of new
	// sentences as featurize did. A resumed run keeps its checkpoint's.
	Featurize map[string][]byte
	// MinLabel, when set, trains only the rows whose label is at least
	// *MinLabel (Quora's is_duplicate: 1 keeps the duplicate pairs, the
	// paraphrases); rows without a label are trained. The rows left out
	// are counted (RunSummary.Filtered).
	MinLabel *float64
	// SaveInitial, for a new run, writes the checkpoint of step 0 (the
	// initial parameters, at the stream's start) before the first step:
	// the untrained baseline for eval, and the start a reference trainer
	// can load (scripts/parity.py --init).
	SaveInitial bool
	// Flags are the command line's flags of the run, by name (as
	// flag.Value's String gives them): Run saves them in run.json
	// (RunInfo.Flags) for a resume to restore; it does not read them.
	Flags map[string]string
	// Logger receives warnings; nil discards them.
	Logger *slog.Logger

	// checkpointFailpoint, when set (by tests: WithCheckpointFailpoint),
	// is called before each file of a checkpoint is written, with the
	// checkpoint's directory and the file's name; an error fails the
	// write.
	checkpointFailpoint func(dir, file string) error
}

// Validate reports settings that cannot work, saying how to fix them.
func (c RunConfig) Validate() error {
	errs := []error{c.Client.Validate()}
	bad := func(format string, a ...any) { errs = append(errs, fmt.Errorf("trainstep: "+format, a...)) }
	switch {
	case c.Dataset == "" && len(c.Datasets) == 0:
		bad("no dataset: name the published dataset to train on")
	case c.Dataset != "" && len(c.Datasets) > 0:
		bad("both Dataset (%s) and Datasets (%s): give one", c.Dataset, strings.Join(c.Datasets, ","))
	}
	for i, d := range c.Datasets {
		if d == "" || slices.Contains(c.Datasets[:i], d) {
			bad("datasets %q: each must be named once", c.Datasets)
			break
		}
	}
	if len(c.Mix) > 0 && len(c.datasets()) < 2 {
		bad("mix weights given for one dataset: --mix weighs the datasets of a mix (--dataset a,b)")
	}
	if c.Resume == "" {
		if c.Run == "" {
			bad("no run name: give one per training run (it is the consumer group)")
		}
		if c.CheckpointDir == "" {
			bad("no checkpoint directory: give where checkpoints go")
		}
		if len(c.Vocab) == 0 {
			bad("no vocabulary: a new run needs the dataset's words (stream.ReadArtifact reads them)")
		}
	}
	for _, f := range []struct {
		name string
		v    int64
	}{{"Epochs", int64(c.Epochs)}, {"ShuffleBuffer", int64(c.ShuffleBuffer)}, {"Window", int64(c.Window)},
		{"CheckpointEvery", c.CheckpointEvery}, {"MaxSteps", c.MaxSteps}, {"Duration", int64(c.Duration)}, {"ProgressEvery", int64(c.ProgressEvery)},
		{"KeepCheckpoints", int64(c.KeepCheckpoints)}} {
		if f.v < 0 {
			bad("%s is %d: give a positive value or 0 for the default", f.name, f.v)
		}
	}
	return errors.Join(errs...)
}

// datasets lists the run's datasets: Datasets, or Dataset alone.
func (c RunConfig) datasets() []string {
	if len(c.Datasets) > 0 {
		return c.Datasets
	}
	return []string{c.Dataset}
}

// nli reports whether one of the run's datasets is an NLI dataset
// (IsNLIDataset).
func (c RunConfig) nli() bool { return slices.ContainsFunc(c.datasets(), IsNLIDataset) }

// datasetName is the datasets joined by commas, as --dataset takes them.
func (c RunConfig) datasetName() string { return strings.Join(c.datasets(), ",") }

// RunInfo is run.json in a checkpoint written by Run: the loop's
// configuration, and how the dataset's texts were tokenised (for embed).
type RunInfo struct {
	Run     string `json:"run"`
	Dataset string `json:"dataset"`
	// Datasets and Mix are those of a mix (RunConfig).
	Datasets        []string           `json:"datasets,omitempty"`
	Mix             map[string]float64 `json:"mix,omitempty"`
	Split           string             `json:"split"`
	Prefix          string             `json:"prefix"`
	Brokers         []string           `json:"brokers"`
	Epochs          int                `json:"epochs"`
	ShuffleBuffer   int                `json:"shuffle_buffer"`
	Window          int                `json:"window"`
	CheckpointEvery int64              `json:"checkpoint_every"`
	KeepCheckpoints int                `json:"keep_checkpoints,omitempty"`
	ResumedFrom     string             `json:"resumed_from,omitempty"`
	Tokenize        Tokenize           `json:"tokenize"`
	// Flags are the command line's flags of the run (RunConfig.Flags):
	// `parastream train --resume` restores them. Absent in checkpoints
	// written before they were kept.
	Flags map[string]string `json:"flags,omitempty"`
}

// ReadRunInfo reads run.json of checkpoint dir; nil when it has none (a
// checkpoint not written by Run).
func ReadRunInfo(dir string) (*RunInfo, error) {
	data, err := os.ReadFile(filepath.Join(dir, FileRun))
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("reading checkpoint %s: %w", dir, err)
	}
	info := new(RunInfo)
	if err := json.Unmarshal(data, info); err != nil {
		return nil, fmt.Errorf("reading checkpoint %s: %s: %w", dir, FileRun, err)
	}
	return info, nil
}

// Tokenize is how the dataset's texts were tokenised, as seen in its rows:
// lowercased (no token holds an upper-case letter), and with the <s> and
// </s> tags around each text.
type Tokenize struct {
	Lower    bool `json:"lower"`
	StartEnd bool `json:"start_end"`
}

// RunSummary is what Run did.
type RunSummary struct {
	Run string
	// Steps and Examples count what this run trained; TotalSteps counts
	// from the start of training, across resumes.
	Steps, TotalSteps, Examples int64
	// Skipped counts rows that could not be trained (an empty side, or a
	// lone row at the end of an epoch, which has no in-batch negative);
	// Filtered those left out by MinLabel.
	Skipped, Filtered int64
	// Epoch is the consumer's epoch at the end.
	Epoch int
	// Checkpoint is the last checkpoint written (or resumed from).
	Checkpoint string
	// Loss is the mean loss of the last steps (those since the last
	// progress line).
	Loss    float64
	Elapsed time.Duration
	Stream  stream.Stats
	// Device is what trained (Trainer.Device): the backend and, on the
	// CPU, the BLAS of its products.
	Device string
	// FeedWait is how long the loop waited for windows of batches (the
	// whole reading and bucketing with the serial feed; only what the feed
	// ahead could not hide otherwise), CheckpointWait how long it spent in
	// checkpoints (the whole writes when synchronous; the snapshots, and
	// waits for the write before, when in the background).
	FeedWait, CheckpointWait time.Duration
}

// Run trains a model on a dataset's split read from Kafka: a new model from
// cfg.Model, or the one of cfg.Resume continued exactly at its stream
// position. Rows are read a window at a time (Window batches), sorted into
// length buckets, cut into batches and trained; every CheckpointEvery
// steps, and at the end, a checkpoint is written with the consumer's exact
// position (rows read but not yet trained are left out of it), then the
// group's offsets are committed and the checkpoint is announced on the
// checkpoints topic. A NaN stops the run with an error naming the last good
// checkpoint. When ctx is cancelled the run writes a checkpoint and returns
// ctx's error.
func Run(ctx context.Context, cfg RunConfig) (RunSummary, error) {
	if err := cfg.Validate(); err != nil {
		return RunSummary{}, err
	}
	if cfg.Split == "" {
		cfg.Split = stream.DefaultSplit
	}
	if cfg.Prefix == "" {
		cfg.Prefix = stream.DefaultPrefix
	}
	if cfg.Window == 0 {
		cfg.Window = DefaultWindow
	}
	if cfg.CheckpointEvery == 0 {
		cfg.CheckpointEvery = DefaultCheckpointEvery
	}
	if cfg.ProgressEvery == 0 {
		cfg.ProgressEvery = DefaultProgressEvery
	}
	if cfg.FeedAhead == 0 {
		cfg.FeedAhead = DefaultFeedAhead
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.DiscardHandler)
	}
	l := &loop{cfg: cfg, log: cfg.Logger, tokenizeSeen: -1}
	var (
		start    *stream.Position
		mixStart *MixPosition
	)
	if cfg.Resume != "" {
		dir, err := FindCheckpoint(cfg.Resume, func(bad string, err error) {
			cfg.Logger.Warn("passing over a corrupt checkpoint", "checkpoint", bad, "err", err)
		})
		if err != nil {
			return RunSummary{}, err
		}
		tr, raw, err := Resume(dir, cfg.Backend)
		if err != nil {
			return RunSummary{}, err
		}
		l.tr = tr
		var rp RunPosition
		if err := json.Unmarshal(raw, &rp); err != nil || (rp.Stream.Topic == "" && rp.Mix == nil) {
			tr.Close()
			return RunSummary{}, fmt.Errorf("resuming %s: the checkpoint holds no stream position (it was not written by a training run)", dir)
		}
		if rp.Dataset != cfg.datasetName() || rp.Split != cfg.Split {
			tr.Close()
			return RunSummary{}, fmt.Errorf("resuming %s: it trained on %s/%s, not %s/%s", dir, rp.Dataset, rp.Split, cfg.datasetName(), cfg.Split)
		}
		if data, err := os.ReadFile(filepath.Join(dir, FileRun)); err == nil {
			var info RunInfo
			if json.Unmarshal(data, &info) == nil {
				l.info.Tokenize, l.tokenizeSeen = info.Tokenize, math.MaxInt
			}
		}
		if l.cfg.Run == "" {
			l.cfg.Run = rp.Run
		}
		if cfg.nli() && tr.Config().NLIHidden == 0 {
			tr.Close()
			return RunSummary{}, fmt.Errorf("resuming %s: its model has no NLI head, so it cannot train on the NLI dataset of %s: start a new run from it with --init-from", dir, cfg.datasetName())
		}
		if l.cfg.Featurize == nil {
			if l.cfg.Featurize, err = ReadFeaturizeFiles(dir); err != nil {
				tr.Close()
				return RunSummary{}, fmt.Errorf("resuming %s: %w", dir, err)
			}
		}
		if l.cfg.CheckpointDir == "" {
			l.cfg.CheckpointDir = filepath.Dir(filepath.Clean(dir))
		}
		start, mixStart = &rp.Stream, rp.Mix
		l.lastDir, l.lastStep, l.ckStep = dir, tr.Steps(), tr.Steps()
		l.info.ResumedFrom = dir
	} else {
		// A run with an NLI dataset trains the NLI head (multitask); one
		// without has none (nothing would train it).
		if cfg.nli() {
			cfg.Model.NLIHidden = cmp.Or(cfg.Model.NLIHidden, compute.DefaultNLIHidden)
		} else {
			cfg.Model.NLIHidden = 0
		}
		tr, err := New(cfg.Model, Options{Backend: cfg.Backend, Vocab: cfg.Vocab, Vectors: cfg.Vectors})
		if err != nil {
			return RunSummary{}, err
		}
		if cfg.InitFrom != "" {
			if _, err := tr.WarmStart(cfg.InitFrom); err != nil {
				tr.Close()
				return RunSummary{}, err
			}
		}
		if tr.Config().Context != "" && len(cfg.Featurize) == 0 {
			tr.Close()
			return RunSummary{}, fmt.Errorf("trainstep: a model with the %s context needs the featurize model its data was featurized with (RunConfig.Featurize): its checkpoints keep it for evaluation", tr.Config().Context)
		}
		l.tr, l.lastStep, l.ckStep = tr, -1, -1
	}
	defer l.tr.Close()
	l.info = RunInfo{Run: l.cfg.Run, Dataset: cfg.datasetName(), Split: cfg.Split, Prefix: cfg.Prefix, Brokers: cfg.Client.Brokers,
		Epochs: cfg.Epochs, ShuffleBuffer: cfg.ShuffleBuffer, Window: cfg.Window, CheckpointEvery: cfg.CheckpointEvery,
		KeepCheckpoints: cfg.KeepCheckpoints, ResumedFrom: l.info.ResumedFrom, Tokenize: l.info.Tokenize, Flags: cfg.Flags}
	if l.tokenizeSeen < 0 {
		l.info.Tokenize = Tokenize{Lower: true}
	}

	if len(cfg.Datasets) > 1 {
		l.info.Datasets = cfg.Datasets
	}
	mx, err := openMixer(ctx, l.cfg, l.tr.Config(), l.tr.Config().Seed, start, mixStart)
	if err != nil {
		return RunSummary{}, err
	}
	defer mx.Close()
	l.c = mx
	if len(mx.cs) == 1 && mx.cs[0].Manifest().Vocabulary == nil {
		return RunSummary{}, fmt.Errorf("%w: the manifest of %s names no vocabulary: run `parastream featurize --in SHARDS --out FEATURIZED`, then publish FEATURIZED", ErrNotFeaturized, mx.names[0])
	}
	if len(mx.cs) > 1 {
		l.info.Mix = map[string]float64{}
		for i, n := range mx.names {
			l.info.Mix[n] = mx.weights[i]
		}
	}
	if cfg.TraceIDs != "" {
		if l.trace, err = os.OpenFile(cfg.TraceIDs, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o644); err != nil {
			return RunSummary{}, fmt.Errorf("opening the ids trace: %w", err)
		}
		defer l.trace.Close()
	}
	return l.run(ctx)
}
