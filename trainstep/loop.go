package trainstep

import (
	"bytes"
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
	"strconv"
	"strings"
	"time"
	"unicode"

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

// RunPosition is the position Run saves in checkpoints (trainer.json's
// position): the run and the consumer's exact stream position; for a mix of
// datasets (Dataset then names them, joined by commas), Mix holds each
// one's and Stream is empty.
type RunPosition struct {
	Run     string          `json:"run"`
	Dataset string          `json:"dataset"`
	Split   string          `json:"split"`
	Stream  stream.Position `json:"stream"`
	Mix     *MixPosition    `json:"mix,omitempty"`
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

// LatestCheckpoint resolves dir to a checkpoint: dir itself when it is one
// (not checked: reading it says what is wrong with it), or else its newest
// good step-N subdirectory (FindCheckpoint), passing over corrupt newer
// ones silently.
func LatestCheckpoint(dir string) (string, error) {
	return FindCheckpoint(dir, nil)
}

// FindCheckpoint resolves dir to a checkpoint as LatestCheckpoint does,
// and calls passed (when not nil) for each step-N checkpoint newer than
// the one it returns that it passed over, with what is wrong with it: a
// file whose sha256 is not the one sha256sums.txt lists, a file missing,
// unreadable or truncated (ReadCheckpoint checks every file). It fails
// when dir holds no good checkpoint, naming the ones it passed over.
func FindCheckpoint(dir string, passed func(bad string, err error)) (string, error) {
	if _, err := os.Stat(filepath.Join(dir, FileTrainer)); err == nil {
		return dir, nil
	}
	cks, err := stepCheckpoints(dir)
	if err != nil {
		return "", fmt.Errorf("finding a checkpoint in %s: %w", dir, err)
	}
	var bad []error
	for _, c := range cks { // newest first
		path := filepath.Join(dir, c.name)
		err := checkCheckpoint(path)
		if err == nil {
			return path, nil
		}
		bad = append(bad, err)
		if passed != nil {
			passed(path, err)
		}
	}
	if len(bad) > 0 {
		return "", fmt.Errorf("%s holds no good checkpoint: %w", dir, errors.Join(bad...))
	}
	return "", fmt.Errorf("%s is not a checkpoint and holds no step-N checkpoint", dir)
}

// checkCheckpoint checks a checkpoint directory without building its
// model: the sha256 of its files when it lists them (sha256sums.txt), or
// else every file read and parsed (ReadCheckpoint).
func checkCheckpoint(dir string) error {
	if _, err := os.Stat(filepath.Join(dir, FileTrainer)); err != nil {
		return err
	}
	if _, err := os.Stat(filepath.Join(dir, FileSums)); err != nil {
		_, err := ReadCheckpoint(dir)
		return err
	}
	return verifySums(dir)
}

// loop is one Run.
type loop struct {
	cfg   RunConfig
	tr    *Trainer
	c     *mixer
	log   *slog.Logger
	info  RunInfo
	trace *os.File

	// tokenizeSeen counts the rows looked at to infer info.Tokenize (-1:
	// none yet; MaxInt: known from the resumed checkpoint).
	tokenizeSeen int
	// lastDir and lastStep are the last durable checkpoint (written, or
	// resumed from; lastStep -1: none); ckStep the step of the last one
	// begun, pending its write while it is in flight.
	lastDir  string
	lastStep int64
	ckStep   int64
	pending  *checkpointWrite
	// at is the consumers' state after the rows of the window being
	// trained were read; feeder runs the feed ahead of the step.
	at     *mixState
	feeder *feeder

	start, lastLine time.Time
	feedWait        time.Duration
	ckWait          time.Duration
	steps, examples int64
	skipped         int64
	filtered        int64
	lossSum         float64
	lossN           int
	// nliLossSum and nliN are lossSum and lossN of the NLI batches (a
	// multitask run), which the progress line gives apart.
	nliLossSum   float64
	nliN         int
	lineExamples int64
	lastLoss     float64
	traceBuf     bytes.Buffer
}

// errStop ends the loop normally (MaxSteps or Duration reached).
var errStop = errors.New("stop")

func (l *loop) run(ctx context.Context) (RunSummary, error) {
	l.start = time.Now()
	l.lastLine = l.start
	l.at = l.c.state(l.cfg.Split)
	err := l.train(ctx)
	l.stopFeed()
	// No write outlives the run (nor the trainer, closed after it).
	return l.summary(), errors.Join(err, l.waitCheckpoint())
}

// train runs the loop: windows of batches from the feed, a step each, and
// checkpoints.
func (l *loop) train(ctx context.Context) error {
	if l.cfg.SaveInitial && l.lastStep < 0 {
		if err := l.checkpoint(ctx, nil, false); err != nil {
			return err
		}
	}
	readCtx, cancel := ctx, context.CancelFunc(func() {})
	if l.cfg.Duration > 0 {
		readCtx, cancel = context.WithTimeout(ctx, l.cfg.Duration)
	}
	defer cancel()
	f := &feed{c: l.c, cfg: l.cfg, model: l.tr.Config(), step: l.tr.Steps(), tokenize: l.info.Tokenize, seen: l.tokenizeSeen}
	next := func() *window { return f.next(readCtx) }
	if l.cfg.FeedAhead > 0 {
		l.feeder = startFeeder(readCtx, f, l.cfg.FeedAhead)
		next = func() *window {
			w, ok := <-l.feeder.out
			if !ok { // the feed stops only after a last window, or when stopped
				return &window{err: errors.New("trainstep: the feed stopped before its last window"), at: l.at}
			}
			return w
		}
	}
	for {
		t0 := time.Now()
		w := next()
		l.feedWait += time.Since(t0)
		l.at = w.at
		l.skipped += w.skipped
		l.filtered += w.filtered
		l.info.Tokenize, l.tokenizeSeen = w.tokenize, w.tokenizeSeen
		if w.err != nil {
			return w.err
		}
		if w.pool != nil {
			return l.finish(ctx, w.readErr, w.pool)
		}
		for i, b := range w.batches {
			if err := l.step(b, w.pairs[i]); err != nil {
				return err
			}
			if err := l.pollCheckpoint(); err != nil {
				return err
			}
			if w.held != nil {
				continue // the consumer is in the next epoch: checkpoints wait for the epoch's end
			}
			rest := slices.Concat(w.batches[i+1:]...)
			if !l.at.returnable(rest) {
				continue // rows of a mixed dataset's finished pass: stops and checkpoints wait for them
			}
			if err := l.stopping(ctx); err != nil {
				return l.finish(ctx, err, rest)
			}
			if l.tr.Steps()-max(l.ckStep, 0) >= l.cfg.CheckpointEvery {
				if err := l.checkpoint(ctx, rest, false); err != nil {
					return err
				}
			}
		}
		if w.held != nil {
			l.tr.EndEpoch()
			untrained := []item{*w.held}
			if err := l.stopping(ctx); err != nil {
				return l.finish(ctx, err, untrained)
			}
			if l.tr.Steps()-max(l.ckStep, 0) >= l.cfg.CheckpointEvery {
				if err := l.checkpoint(ctx, untrained, false); err != nil {
					return err
				}
			}
		}
		if w.readErr != nil {
			return l.finish(ctx, w.readErr, nil)
		}
		if w.eof {
			l.tr.EndEpoch()
			return l.finish(ctx, errStop, nil)
		}
	}
}

// stopFeed stops the feed's goroutine, if it runs.
func (l *loop) stopFeed() {
	if l.feeder != nil {
		l.feeder.stop()
		l.feeder = nil
	}
}

// stopping returns errStop when MaxSteps or Duration is reached, ctx's
// error when it is done, nil otherwise.
func (l *loop) stopping(ctx context.Context) error {
	switch {
	case ctx.Err() != nil:
		return ctx.Err()
	case l.cfg.MaxSteps > 0 && l.steps >= l.cfg.MaxSteps, l.cfg.Duration > 0 && time.Since(l.start) >= l.cfg.Duration:
		return errStop
	}
	return nil
}

// finish writes the last checkpoint, leaving out the untrained rows, and
// returns the run's result for why: errStop (or a read that ran out of
// Duration) ends normally; ctx's error is returned after the checkpoint; any
// other error is returned as it is, after the checkpoint.
func (l *loop) finish(ctx context.Context, why error, untrained []item) error {
	l.stopFeed() // nothing more is read: the last checkpoint leaves out what the feed read ahead
	if ctx.Err() == nil && errors.Is(why, context.DeadlineExceeded) && l.cfg.Duration > 0 {
		why = errStop
	}
	if l.steps == 0 && l.info.ResumedFrom == "" {
		// A new run that trained nothing has nothing to keep: no
		// checkpoint (a step-0 one would look like a run to resume).
		if why = ignoreStop(why); why == nil {
			s := l.at.stats
			why = fmt.Errorf("trainstep: run %s trained nothing (%d rows read, %d filtered, %d skipped): no checkpoint written", l.cfg.Run, s.Rows, l.filtered, l.skipped)
		}
		return why
	}
	cctx := ctx
	if ctx.Err() != nil {
		// Cancelled: the checkpoint still commits and announces.
		var cancel context.CancelFunc
		cctx, cancel = context.WithTimeout(context.WithoutCancel(ctx), 30*time.Second)
		defer cancel()
	}
	if err := l.checkpoint(cctx, untrained, true); err != nil {
		return errors.Join(err, ignoreStop(why))
	}
	return ignoreStop(why)
}

func ignoreStop(err error) error {
	if errors.Is(err, errStop) {
		return nil
	}
	return err
}

// check refuses a row that has tokens but no ids, and infers the
// tokenisation from the first rows.
func (f *feed) check(r stream.Record) error {
	if (len(r.IDsA) == 0 && len(r.TokensA) > 0) || (len(r.IDsB) == 0 && len(r.TokensB) > 0) {
		return fmt.Errorf("%w: row %s (%s row %d) has tokens but no token ids: run `parastream featurize --in SHARDS --out FEATURIZED` and publish FEATURIZED",
			ErrNotFeaturized, r.ID, r.Shard, r.Index)
	}
	if f.seen >= 1000 {
		return nil
	}
	if f.seen < 0 && len(r.TokensA) > 0 {
		f.tokenize.StartEnd = r.TokensA[0] == "<s>"
		f.seen = 0
	}
	for _, toks := range [][]string{r.TokensA, r.TokensB} {
		for _, t := range toks {
			if t != "<s>" && t != "</s>" && strings.ContainsFunc(t, unicode.IsUpper) {
				f.tokenize.Lower = false
			}
		}
	}
	f.seen++
	return nil
}

// step trains one batch (its rows b, made into pairs) and traces its ids.
func (l *loop) step(b []item, pairs []Pair) error {
	loss, err := l.tr.Step(pairs)
	if err != nil {
		// The last durable checkpoint is named below: a write in flight
		// finishes first (or fails, and is reported too).
		if werr := l.waitCheckpoint(); werr != nil {
			return errors.Join(err, werr)
		}
		switch {
		case errors.Is(err, ErrNonFinite):
			last := "no checkpoint was written yet"
			if l.lastDir != "" {
				last = fmt.Sprintf("the last good checkpoint is %s (step %d): resume from it with a lower learning rate", l.lastDir, l.lastStep)
			}
			return fmt.Errorf("training stopped: %w; %s", err, last)
		case errors.Is(err, compute.ErrMemoryBudget):
			// Nothing is written: the stream position stays that of the
			// last checkpoint, to which alone the group's offsets are
			// committed.
			last := "no checkpoint was written yet and no offset committed: a new run starts from the beginning"
			if l.lastDir != "" {
				last = fmt.Sprintf("the stream position is that of the last checkpoint, %s (step %d): resume from it with a larger budget", l.lastDir, l.lastStep)
			}
			return fmt.Errorf("training stopped at a batch of %d pairs: %w; %s", len(b), err, last)
		}
		return err
	}
	l.steps++
	l.examples += int64(len(b))
	l.lineExamples += int64(len(b))
	if len(pairs) > 0 && pairs[0].NLI {
		l.nliLossSum += loss
		l.nliN++
	} else {
		l.lossSum += loss
		l.lossN++
	}
	if l.trace != nil {
		l.traceBuf.Reset()
		for _, r := range b {
			if len(l.c.names) > 1 {
				// A mix: the row's dataset, and the dataset's own pass.
				fmt.Fprintf(&l.traceBuf, "%d\t%d\t%s\t%s\t%d\n", l.tr.Steps(), r.epoch, r.ID, l.c.names[r.ds], r.Record.Epoch)
			} else {
				fmt.Fprintf(&l.traceBuf, "%d\t%d\t%s\n", l.tr.Steps(), r.epoch, r.ID)
			}
		}
		if _, err := l.trace.Write(l.traceBuf.Bytes()); err != nil {
			return fmt.Errorf("writing the ids trace: %w", err)
		}
		if err := l.trace.Sync(); err != nil {
			return fmt.Errorf("syncing the ids trace: %w", err)
		}
	}
	if time.Since(l.lastLine) >= l.cfg.ProgressEvery {
		l.progress("")
	}
	return nil
}

// progress writes a progress line: examples/s, loss and lag since the last
// line.
func (l *loop) progress(note string) {
	now := time.Now()
	if l.lossN > 0 {
		l.lastLoss = l.lossSum / float64(l.lossN)
	} else if l.nliN > 0 {
		l.lastLoss = l.nliLossSum / float64(l.nliN) // an NLI-only run
	}
	if l.cfg.Progress != nil {
		s := l.at.stats
		rate := float64(l.lineExamples) / max(now.Sub(l.lastLine).Seconds(), 1e-9)
		nli := ""
		if l.nliN > 0 {
			nli = fmt.Sprintf(" nli loss %.4f (%d steps)", l.nliLossSum/float64(l.nliN), l.nliN)
		}
		fmt.Fprintf(l.cfg.Progress, "train %s: step %d epoch %d rows %s %.0f examples/s loss %.4f%s lag %d messages on %s%s%s\n",
			l.cfg.Run, l.tr.Steps(), s.Epoch, l.at.rows, rate, l.lastLoss, nli, s.Lag, l.tr.ShortDevice(), memoryNote(l.tr.Model()), note)
	}
	l.lastLine, l.lineExamples, l.lossSum, l.lossN, l.nliLossSum, l.nliN = now, 0, 0, 0, 0, 0
}

// memoryNote is the progress line's part on the model's memory, for a
// model that accounts for it: its graphs, the bytes they hold between
// steps, the most one takes while it runs, and the budget.
func memoryNote(m compute.Model) string {
	r, ok := m.(compute.MemoryReporter)
	if !ok {
		return ""
	}
	mem := r.Memory()
	s := fmt.Sprintf(", graphs %d holding %s, largest run %s", mem.Graphs, compute.FormatBytes(mem.Held), compute.FormatBytes(mem.Run))
	if mem.Budget > 0 {
		s += fmt.Sprintf(", %s of a %s budget", compute.FormatBytes(mem.Peak()), compute.FormatBytes(mem.Budget))
	}
	return s
}

// checkpoint writes a checkpoint at the position of the window being
// trained less the rows read and not trained, then commits the group's
// offsets to it and announces it. Unless the run writes checkpoints
// synchronously (CheckpointSync) or this is the run's last (final), the
// files are written, and the offsets committed, by a goroutine while
// training goes on (see checkpointWrite); a write still in flight from the
// checkpoint before is waited for first.
func (l *loop) checkpoint(ctx context.Context, untrained []item, final bool) error {
	defer func(t0 time.Time) { l.ckWait += time.Since(t0) }(time.Now())
	if l.tr.Steps() == l.ckStep {
		return l.waitCheckpoint() // nothing trained since the checkpoint resumed from or begun last
	}
	// At most one write in flight: the next waits (backpressure).
	if err := l.waitCheckpoint(); err != nil {
		return err
	}
	pos, mix := l.at.positions(untrained)
	rp := RunPosition{Run: l.cfg.Run, Dataset: l.cfg.datasetName(), Split: l.cfg.Split, Mix: mix}
	if mix == nil {
		rp.Stream = pos[0]
	}
	raw, err := json.Marshal(rp)
	if err != nil {
		return err
	}
	info, err := json.MarshalIndent(l.info, "", "  ")
	if err != nil {
		return err
	}
	dir, err := filepath.Abs(filepath.Join(l.cfg.CheckpointDir, fmt.Sprintf("step-%08d", l.tr.Steps())))
	if err != nil {
		return err
	}
	var extra map[string][]byte
	if l.tr.Config().Context != "" {
		extra = map[string][]byte{}
		for name, data := range l.cfg.Featurize {
			extra[filepath.Join(DirFeaturize, name)] = data
		}
	}
	p, err := l.tr.beginSave(dir, raw, append(info, '\n'), extra)
	if err != nil {
		return err
	}
	p.failpoint = l.cfg.checkpointFailpoint
	epoch := pos[0].Epoch
	if mix != nil {
		epoch = mix.Epoch
	}
	w := &checkpointWrite{save: p, pos: pos, step: l.tr.Steps(), done: make(chan struct{}),
		event: stream.CheckpointEvent{Run: l.cfg.Run, Model: l.tr.Config().Encoder, Dataset: l.cfg.datasetName(), Step: l.tr.Steps(),
			Epoch: epoch, Dir: dir, Final: final}}
	l.ckStep, l.pending = w.step, w
	if l.cfg.CheckpointSync || final {
		w.run(ctx, l)
		return l.waitCheckpoint()
	}
	// The commit and the announcement outlive a cancelled ctx, as the last
	// checkpoint's do (finish): the files they cover are durable.
	go w.run(context.WithoutCancel(ctx), l)
	return nil
}

// checkpointWrite is a checkpoint being written: its files, then the
// group's offsets committed to its position, its announcement and the
// removal of old checkpoints. run does it all and closes done; the loop
// reads the outcome (finishCheckpoint) after done.
type checkpointWrite struct {
	save  *pendingSave
	pos   []stream.Position
	step  int64 // the trainer's steps when it was taken
	event stream.CheckpointEvent
	done  chan struct{}

	// Outcome: what writing cost, how many old checkpoints were removed
	// (and what failed removing them), and the error that fails the run.
	saved    SaveStats
	removed  int
	pruneErr error
	err      error
}

// run writes the checkpoint, and once its files are durable (synced and
// renamed) commits the group's offsets to its position and announces it.
// It reads only the loop's configuration and its consumers' Commit, which
// may run beside the feed's reading.
func (w *checkpointWrite) run(ctx context.Context, l *loop) {
	defer close(w.done)
	dir := w.save.dir
	if w.saved, w.err = w.save.write(); w.err != nil {
		return
	}
	// The checkpoint is durable: the group may move past its rows.
	if err := l.c.Commit(ctx, w.pos); err != nil {
		w.err = fmt.Errorf("checkpoint %s is written, but %w", dir, err)
		return
	}
	w.event.Time = time.Now().UTC()
	if err := stream.AnnounceCheckpoint(ctx, l.cfg.Client, l.cfg.Prefix, w.event); err != nil {
		w.err = fmt.Errorf("checkpoint %s is written, but %w", dir, err)
		return
	}
	if l.cfg.KeepCheckpoints > 0 {
		w.removed, w.pruneErr = pruneCheckpoints(l.cfg.CheckpointDir, l.cfg.KeepCheckpoints)
	}
}

// pollCheckpoint takes the outcome of a write in flight that is done; it
// does not wait.
func (l *loop) pollCheckpoint() error {
	if l.pending == nil {
		return nil
	}
	select {
	case <-l.pending.done:
		return l.waitCheckpoint()
	default:
		return nil
	}
}

// waitCheckpoint waits for the write in flight, if any, and takes its
// outcome: the checkpoint is the last durable one, and a progress line
// says so; a failed write fails the run.
func (l *loop) waitCheckpoint() error {
	w := l.pending
	if w == nil {
		return nil
	}
	<-w.done
	l.pending = nil
	dir := w.save.dir
	if w.save.sums != nil {
		// Written: the next checkpoint links its unchanged files.
		l.tr.noteSaved(w.save)
		l.lastDir, l.lastStep = dir, w.step
	}
	if w.err != nil {
		return w.err
	}
	note := fmt.Sprintf(" checkpoint %s (%s", dir, w.saved)
	if trained := l.tr.Steps() - w.step; trained > 0 {
		note += fmt.Sprintf(", in the background of %d steps", trained)
	}
	note += ")"
	if w.pruneErr != nil {
		// The new checkpoint is whole: an old one left behind loses nothing.
		l.cfg.Logger.Warn("removing old checkpoints", "dir", l.cfg.CheckpointDir, "err", w.pruneErr)
	}
	if w.removed > 0 {
		note += fmt.Sprintf(", %d older removed (--keep-checkpoints %d)", w.removed, l.cfg.KeepCheckpoints)
	}
	l.progress(note)
	return nil
}

// stepCheckpoint is a step-N directory of a checkpoint directory.
type stepCheckpoint struct {
	name string
	step int64
}

// stepCheckpoints lists dir's step-N directories, newest (highest N) first.
func stepCheckpoints(dir string) ([]stepCheckpoint, error) {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return nil, err
	}
	var cks []stepCheckpoint
	for _, e := range entries {
		n, ok := strings.CutPrefix(e.Name(), "step-")
		step, err := strconv.ParseInt(n, 10, 64)
		if e.IsDir() && ok && err == nil {
			cks = append(cks, stepCheckpoint{e.Name(), step})
		}
	}
	slices.SortFunc(cks, func(a, b stepCheckpoint) int { return cmp.Compare(b.step, a.step) })
	return cks, nil
}

// pruneCheckpoints removes the step-N checkpoints of dir but the newest
// keep. It returns how many it removed.
func pruneCheckpoints(dir string, keep int) (int, error) {
	cks, err := stepCheckpoints(dir)
	if err != nil || len(cks) <= keep {
		return 0, err
	}
	var errs []error
	removed := 0
	for _, c := range cks[keep:] {
		if err := os.RemoveAll(filepath.Join(dir, c.name)); err != nil {
			errs = append(errs, err)
			continue
		}
		removed++
	}
	return removed, errors.Join(errs...)
}

func (l *loop) summary() RunSummary {
	return RunSummary{Run: l.cfg.Run, Steps: l.steps, TotalSteps: l.tr.Steps(), Examples: l.examples, Skipped: l.skipped, Filtered: l.filtered,
		Epoch: l.at.stats.Epoch, Checkpoint: l.lastDir, Loss: l.lastLoss, Elapsed: time.Since(l.start), Stream: l.at.stats,
		Device: l.tr.Device(), FeedWait: l.feedWait, CheckpointWait: l.ckWait}
}

// WithoutRecords returns pos less the given rows, which a consumer at pos
// has handed out: a consumer started at the result hands them out again
// (and every other row pos had not handed out), so that rows read but not
// trained at a checkpoint are trained after a resume. The rows must be of
// pos's epoch.
func WithoutRecords(pos stream.Position, recs []stream.Record) stream.Position {
	if len(recs) == 0 {
		return pos
	}
	pos.Partitions = slices.Clone(pos.Partitions)
	byShard := map[string][]int64{}
	for _, r := range recs {
		if r.Epoch != pos.Epoch {
			panic(fmt.Sprintf("trainstep: a row of epoch %d taken out of a position in epoch %d", r.Epoch, pos.Epoch))
		}
		byShard[r.Shard] = append(byShard[r.Shard], r.Index)
		for i := range pos.Partitions {
			if p := &pos.Partitions[i]; p.Partition == r.Partition {
				// Read again from the row's message on: the rows there that
				// were handed out and trained are in Delivered, and skipped.
				p.Offset = min(p.Offset, r.Offset)
			}
		}
	}
	delivered := make(map[string][]stream.Range, len(pos.Delivered))
	for shard, rs := range pos.Delivered {
		delivered[shard] = rs
	}
	for shard, idx := range byShard {
		slices.Sort(idx)
		var out []stream.Range
		k := 0
		for _, r := range delivered[shard] {
			for ; k < len(idx) && idx[k] < r.End; k++ {
				if idx[k] < r.First {
					continue
				}
				if idx[k] > r.First {
					out = append(out, stream.Range{First: r.First, End: idx[k]})
				}
				r.First = idx[k] + 1
			}
			if r.First < r.End {
				out = append(out, r)
			}
		}
		if len(out) == 0 {
			delete(delivered, shard)
		} else {
			delivered[shard] = out
		}
	}
	pos.Delivered = delivered
	return pos
}
