package trainstep

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"
	"unicode"

	"github.com/parastream/parastream/shards"
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
//
// It is also what a checkpoint's run.json holds (ReadRunConfig reads it
// back): the fields with a JSON name, as Run completed them (defaults
// applied, a mix's weights resolved); the credentials are never written
// (stream.ClientConfig is kept as its broker list). run.json files written
// before RunConfig was the file read back the same.
type RunConfig struct {
	// Run names the training run: it is the consumer group, the run in the
	// checkpoint events, and is saved in checkpoints. Default for a new
	// run: <datasets joined by +>-<encoder>-<UTC time>; a resumed run
	// keeps its checkpoint's unless one is given.
	Run string `json:"run"`
	// Dataset and Split name the stream to train on (Split "" means
	// "train"). Datasets, instead of Dataset, mixes several datasets in
	// one run (see mix.go for the epochs of a mix): they must have been
	// featurized together (one vocabulary); Run then sets Dataset to their
	// names joined by commas, as --dataset takes them. Mix weighs them
	// (default: their sizes; Run sets the weights it used).
	Dataset  string             `json:"dataset"`
	Datasets []string           `json:"datasets,omitempty"`
	Mix      map[string]float64 `json:"mix,omitempty"`
	Split    string             `json:"split"`
	// Prefix is the topics' prefix ("": the stream's default) and Client
	// how to reach the brokers (run.json keeps the brokers alone).
	Prefix string              `json:"prefix"`
	Client stream.ClientConfig `json:"brokers"`
	// GroupSession is the session timeout of the trainer's membership of
	// the run's consumer group (stream.JoinGroup): a trainer killed without
	// leaving holds the run that long after its last heartbeat. 0 means
	// stream.DefaultGroupSession.
	GroupSession time.Duration `json:"-"`
	// Epochs is the number of passes; 0 follows new data for ever.
	Epochs int `json:"epochs"`
	// ShuffleBuffer is the consumer's shuffle buffer in rows; 0 means the
	// stream's default.
	ShuffleBuffer int `json:"shuffle_buffer"`
	// Window is how many batches of rows are read before they are sorted
	// into length buckets and trained; 0 means DefaultWindow.
	Window int `json:"window"`
	// CheckpointEvery is the number of steps between checkpoints; 0 means
	// DefaultCheckpointEvery. A checkpoint is also written at the end.
	CheckpointEvery int64 `json:"checkpoint_every"`
	// KeepCheckpoints, when positive, keeps only the newest that many
	// step-N checkpoints in CheckpointDir: older ones are removed once a
	// newer one is durable, its offsets committed and announced, so the
	// directory grows with the model, not with the run. 0 keeps them all.
	KeepCheckpoints int `json:"keep_checkpoints,omitempty"`
	// KeepOptimizer is how many of the newest step-N checkpoints keep the
	// optimiser state a run resumes from; older ones keep the model only
	// (FileModelOnly), a third of a checkpoint with Adam's two moments.
	// 0 means DefaultKeepOptimizer.
	KeepOptimizer int `json:"keep_optimizer,omitempty"`
	// Resume, when set, is a checkpoint directory (or a CheckpointDir, for
	// its latest good checkpoint) to continue from, exactly at its
	// position; Run sets it to the checkpoint it resumed from.
	Resume string `json:"resumed_from,omitempty"`
	// Tokenize is how the dataset's texts were tokenised, as Run infers it
	// from the rows (a resumed run keeps its checkpoint's), for embed: Run
	// sets it, and ignores a value given.
	Tokenize Tokenize `json:"tokenize"`
	// Version is the program's version run.json records ("": its build
	// info's; see shards.ProgramVersion); a resumed run records the
	// version that resumed it.
	Version string `json:"version,omitempty"`
	// Flags are the command line's flags of the run, by name (as
	// flag.Value's String gives them): Run saves them in run.json for a
	// resume to restore (`parastream train --resume`); it does not read
	// them. Absent in checkpoints written before they were kept.
	Flags map[string]string `json:"flags,omitempty"`

	// Model is the model, loss and optimiser configuration of a new run
	// (Vocab is set from Vocab and Model.OOVBuckets, which must be the
	// dataset's featurize oov_buckets: its ids reach V + OOVBuckets). A
	// resumed run keeps its checkpoint's: once Run has its trainer, Model
	// is the trainer's configuration (checkpoints keep it in config.json).
	Model Config `json:"-"`
	// Vocab are the dataset's words (id = index). Default for a new run:
	// the vocabulary of the dataset's featurize model, as published (with
	// Model's OOVBuckets and OOVHash, and, for a model with a topic
	// context, Model.Topics and Featurize).
	Vocab []string `json:"-"`
	// VocabCounts are the words' counts in the featurized texts
	// (stream.DatasetVocab.Counts), from which a new run takes its
	// Tokenize (tokenizeOf); nil: every word counts as seen. Set with
	// Vocab; a run that reads its vocabulary from the manifest sets both.
	VocabCounts []int64 `json:"-"`
	// Vectors, when set, initialise the embeddings of a new run;
	// VectorsFile, when set, is a GloVe or word2vec text file (.gz read)
	// that Run loads into Vectors (LoadVectors).
	Vectors     *Vectors `json:"-"`
	VectorsFile string   `json:"-"`
	// InitFrom, when set, is a checkpoint whose parameters of the same
	// names and shapes start a new run (Trainer.WarmStart): a pretraining
	// run's, such as the csae's reconstruction before a pair loss.
	InitFrom string `json:"-"`
	// Backend computes; nil means the gorgonia CPU backend.
	Backend compute.Backend `json:"-"`
	// CheckpointDir receives the checkpoints, as step-NNNNNNNN
	// directories. Default: checkpoints/<Run> for a new run, the directory
	// holding the resumed checkpoint when resuming.
	CheckpointDir string `json:"-"`
	// CheckpointSync writes each checkpoint before the next step, as
	// before asynchronous checkpoints. By default (false) a checkpoint step
	// takes a snapshot of the parameters and optimiser state (on a GPU,
	// copies to pinned host memory on a second stream) and training goes
	// on while a goroutine writes the files; the group's offsets are
	// committed and the checkpoint announced only once they are durable.
	// At most one write is in flight: the next checkpoint step waits for
	// it, and so does the end of the run. See docs/gpu.md, "Asynchronous
	// checkpoints and the feed".
	CheckpointSync bool `json:"-"`
	// FeedAhead is how many windows of ready batches (read, bucketed,
	// shuffled, paired) the feed prepares ahead of the step, in a
	// goroutine of its own; 0 means DefaultFeedAhead, a negative value
	// reads each window between steps (the serial feed). The batches and
	// their order are the same either way.
	FeedAhead int `json:"-"`
	// MaxSteps and Duration, when set, stop the run (with a checkpoint)
	// after that many steps of this run, or that long.
	MaxSteps int64         `json:"-"`
	Duration time.Duration `json:"-"`
	// Progress receives a line every ProgressEvery (default
	// DefaultProgressEvery) and one per checkpoint; nil means none.
	Progress io.Writer `json:"-"`
	// ProgressDetail adds to each progress line the consumer's lag, the
	// device, and the model's graphs and memory budget.
	ProgressDetail bool          `json:"-"`
	ProgressEvery  time.Duration `json:"-"`
	// TraceIDs, when set, is a file to which every trained example is
	// appended, as "<step>\t<epoch>\t<id>" lines, synced after each step:
	// a debugging aid (see docs/trainstep.md, "Exactly once").
	TraceIDs string `json:"-"`
	// Featurize are the files of the featurize model the data was
	// featurized with, by name (vocab.tsv, topics.safetensors,
	// featurize.json, as the artifacts topic carries them). A model with a
	// topic context (Config.Context) needs them: its checkpoints keep them
	// in DirFeaturize, so that evaluation computes the topic vectors of new
	// sentences as featurize did. A resumed run keeps its checkpoint's.
	Featurize map[string][]byte `json:"-"`
	// MinLabel, when set, trains only the rows whose label is at least
	// *MinLabel (Quora's is_duplicate: 1 keeps the duplicate pairs, the
	// paraphrases); rows without a label are trained. The rows left out
	// are counted (RunSummary.Filtered).
	MinLabel *float64 `json:"-"`
	// AllPairs trains every row as a paraphrase, whatever its label says
	// (what runs did before the labels were read). By default each
	// dataset trains as pairs only the rows its labels call paraphrases
	// (pairRules: Quora's and MSRP's 1s, SNLI's entailments, PPDB human
	// ratings of at least 3, STS scores of at least 4); the others are
	// left out, or become hard negatives. MinLabel, when set, replaces
	// the rules with one threshold for every dataset.
	AllPairs bool `json:"all_pairs,omitempty"`
	// HardNegatives gives each positive of the mnrl loss a labelled
	// non-paraphrase that shares a text or the group with it (Quora's and
	// MSRP's 0s, SNLI's contradictions of the same premise, PPDB ratings
	// of at most 2: pairRules) as an extra candidate of every anchor; the
	// positives without one train in batches of in-batch negatives alone.
	// With it an NLI dataset trains as pairs (entailment the positive,
	// contradiction the negative, as SimCSE does), not the NLI head.
	HardNegatives bool `json:"hard_negatives,omitempty"`
	// SaveInitial, for a new run, writes the checkpoint of step 0 (the
	// initial parameters, at the stream's start) before the first step:
	// the untrained baseline for eval, and the start a reference trainer
	// can load (scripts/parity.py --init).
	SaveInitial bool `json:"-"`
	// Logger receives warnings; nil discards them.
	Logger *slog.Logger `json:"-"`

	// checkpointFailpoint, when set (by tests: WithCheckpointFailpoint),
	// is called before each file of a checkpoint is written, with the
	// checkpoint's directory and the file's name; an error fails the
	// write.
	checkpointFailpoint func(dir, file string) error
	// readManifest reads a dataset's manifest (nil: stream.ReadManifest);
	// tests count its calls (WithManifestReader).
	readManifest func(ctx context.Context, cc stream.ClientConfig, prefix, dataset string) (*shards.Manifest, error)
}

// Validate reports settings that cannot work, saying how to fix them.
func (c RunConfig) Validate() error {
	errs := []error{c.Client.Validate(), stream.CheckGroupSession(c.GroupSession)}
	bad := func(format string, a ...any) { errs = append(errs, fmt.Errorf("trainstep: "+format, a...)) }
	switch {
	case c.Dataset == "" && len(c.Datasets) == 0:
		bad("no dataset: name the published dataset to train on")
	case c.Dataset != "" && len(c.Datasets) > 0 && c.Dataset != strings.Join(c.Datasets, ","):
		bad("both Dataset (%s) and Datasets (%s): give one", c.Dataset, strings.Join(c.Datasets, ","))
	}
	for i, d := range c.Datasets {
		if d == "" || slices.Contains(c.Datasets[:i], d) {
			bad("datasets %q: each must be named once", c.Datasets)
			break
		}
	}
	if shards.Scheme(c.CheckpointDir) != "" {
		bad("checkpoint directory %s: checkpoints are written to a local (or mounted) directory, renamed into place, which object stores cannot do; copy them to the bucket afterwards", c.CheckpointDir)
	}
	if len(c.datasets()) > 1 && c.Epochs == 0 {
		bad("a mix of datasets needs a number of epochs (--epochs N): its epochs are defined by quotas of rows, and following new data for ever has none")
	}
	if c.HardNegatives && c.Model.Loss != "" && c.Model.Loss != compute.LossMNRL {
		bad("hard negatives train the mnrl loss: add --loss mnrl (the %s loss has no place for them)", c.Model.Loss)
	}
	if c.AllPairs && c.MinLabel != nil {
		bad("all-pairs trains every row and min-label only some: give one of them")
	}
	if c.HardNegatives && c.AllPairs {
		bad("hard negatives come from the labels that all-pairs ignores: give one of them")
	}
	if len(c.Mix) > 0 && len(c.datasets()) < 2 {
		bad("mix weights given for one dataset: --mix weighs the datasets of a mix (--dataset a,b)")
	}
	for _, f := range []struct {
		name string
		v    int64
	}{{"Epochs", int64(c.Epochs)}, {"ShuffleBuffer", int64(c.ShuffleBuffer)}, {"Window", int64(c.Window)},
		{"CheckpointEvery", c.CheckpointEvery}, {"MaxSteps", c.MaxSteps}, {"Duration", int64(c.Duration)}, {"ProgressEvery", int64(c.ProgressEvery)},
		{"KeepCheckpoints", int64(c.KeepCheckpoints)}, {"KeepOptimizer", int64(c.KeepOptimizer)}} {
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
func (c RunConfig) nli() bool {
	return !c.HardNegatives && slices.ContainsFunc(c.datasets(), IsNLIDataset)
}

// datasetName is the datasets joined by commas, as --dataset takes them.
func (c RunConfig) datasetName() string { return strings.Join(c.datasets(), ",") }

// ReadRunConfig reads run.json of checkpoint dir: the RunConfig of the
// run that wrote it, as Run completed it (the fields with a JSON name);
// nil when it has none (a checkpoint not written by Run).
func ReadRunConfig(dir string) (*RunConfig, error) {
	data, err := os.ReadFile(filepath.Join(dir, FileRun))
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("reading checkpoint %s: %w", dir, err)
	}
	cfg := new(RunConfig)
	if err := json.Unmarshal(data, cfg); err != nil {
		return nil, fmt.Errorf("reading checkpoint %s: %s: %w", dir, FileRun, err)
	}
	return cfg, nil
}

// Tokenize is how the dataset's texts were tokenised, as its vocabulary
// shows: lowercased (no word holds an upper-case letter), and with the <s>
// and </s> tags around each text (<s> is a word).
type Tokenize struct {
	Lower    bool `json:"lower"`
	StartEnd bool `json:"start_end"`
}

// tokenizeOf is the tokenisation a vocabulary shows (see Tokenize): of
// its words those the featurized texts hold (counts[i] > 0; every word when
// counts is nil). They are the rows' tokens, so they say what the rows
// would, without the trainer decoding the tokens: a run reads only the
// columns it trains on.
func tokenizeOf(vocab []string, counts []int64) Tokenize {
	t := Tokenize{Lower: true}
	for i, w := range vocab {
		if counts != nil && (i >= len(counts) || counts[i] <= 0) {
			continue
		}
		switch w {
		case "<s>":
			t.StartEnd = true
		case "</s>":
		default:
			if t.Lower && strings.ContainsFunc(w, unicode.IsUpper) {
				t.Lower = false
			}
		}
	}
	return t
}

// RunSummary is what Run did.
type RunSummary struct {
	Run string
	// Steps and Examples count what this run trained; TotalSteps counts
	// from the start of training, across resumes.
	Steps, TotalSteps, Examples int64
	// Skipped counts rows that could not be trained (an empty side, or a
	// lone row at the end of an epoch, which has no in-batch negative);
	// Filtered those left out by their labels (pairRules, MinLabel);
	// Negatives those of them that became hard negatives, and
	// WithNegative the trained pairs that had one (HardNegatives).
	Skipped, Filtered       int64
	Negatives, WithNegative int64
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
	cfg = cfg.withDefaults()
	cfg.Version = shards.ProgramVersion(cfg.Version)
	l := &loop{log: cfg.Logger}
	var (
		start     *stream.Position
		mixStart  *MixPosition
		manifests []*shards.Manifest
		err       error
	)
	var (
		lock    *shards.Lock
		created bool
	)
	if cfg.Resume != "" {
		if start, mixStart, err = l.resume(&cfg); err != nil {
			return RunSummary{}, err
		}
		if lock, created, err = lockCheckpointDir(cfg); err != nil {
			l.tr.Close()
			return RunSummary{}, err
		}
	} else {
		if lock, created, err = lockCheckpointDir(cfg); err != nil {
			return RunSummary{}, err
		}
		if manifests, err = l.open(ctx, &cfg); err != nil {
			releaseCheckpointDir(cfg.CheckpointDir, lock, created, false)
			return RunSummary{}, err
		}
	}
	defer func() { releaseCheckpointDir(cfg.CheckpointDir, lock, created, l.lastDir != "") }()
	defer l.tr.Close()
	releaseRun, err := lockRun(cfg)
	if err != nil {
		return RunSummary{}, err
	}
	defer releaseRun()
	member, err := joinRun(ctx, cfg)
	if err != nil {
		return RunSummary{}, err
	}
	defer member.Close()
	cfg.Model = l.tr.Config() // the one model configuration from here on: the trainer's
	if !l.tokenizeKnown {
		cfg.Tokenize = tokenizeOf(cfg.Vocab, cfg.VocabCounts)
	}
	if manifests == nil {
		if manifests, err = cfg.manifests(ctx); err != nil {
			return RunSummary{}, err
		}
	}
	mx, err := openMixer(ctx, cfg, manifests, start, mixStart, member)
	if err != nil {
		return RunSummary{}, err
	}
	defer mx.Close()
	l.c = mx
	if len(mx.cs) > 1 {
		cfg.Mix = map[string]float64{}
		for i, n := range mx.names {
			cfg.Mix[n] = mx.weights[i]
		}
	}
	if cfg.TraceIDs != "" {
		if l.trace, err = os.OpenFile(cfg.TraceIDs, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o644); err != nil {
			return RunSummary{}, fmt.Errorf("opening the ids trace: %w", err)
		}
		defer l.trace.Close()
	}
	l.cfg = cfg
	sum, err := l.run(ctx)
	if err == nil && cfg.Resume != "" && sum.Steps == 0 && cfg.Epochs > 0 {
		return sum, nothingTrained(cfg, sum.TotalSteps)
	}
	return sum, err
}

// withDefaults is c with the defaults of its zero fields that need no
// broker (a new run's name and checkpoint directory among them), a mix's
// datasets named by Dataset, and Tokenize unknown yet.
func (c RunConfig) withDefaults() RunConfig {
	if len(c.Datasets) == 1 {
		c.Dataset, c.Datasets = c.Datasets[0], nil
	}
	c.Dataset = c.datasetName()
	if c.Split == "" {
		c.Split = stream.DefaultSplit
	}
	if c.Prefix == "" {
		c.Prefix = stream.DefaultPrefix
	}
	if c.Window == 0 {
		c.Window = DefaultWindow
	}
	if c.CheckpointEvery == 0 {
		c.CheckpointEvery = DefaultCheckpointEvery
	}
	if c.ProgressEvery == 0 {
		c.ProgressEvery = DefaultProgressEvery
	}
	if c.FeedAhead == 0 {
		c.FeedAhead = DefaultFeedAhead
	}
	if c.KeepOptimizer == 0 {
		c.KeepOptimizer = DefaultKeepOptimizer
	}
	if c.Logger == nil {
		c.Logger = slog.New(slog.DiscardHandler)
	}
	if c.readManifest == nil {
		c.readManifest = stream.ReadManifest
	}
	if c.Resume == "" {
		if c.Run == "" {
			c.Run = fmt.Sprintf("%s-%s-%s", strings.Join(c.datasets(), "+"), c.Model.Defaults().Encoder, time.Now().UTC().Format("20060102-150405"))
		}
		if c.CheckpointDir == "" {
			c.CheckpointDir = filepath.Join("checkpoints", c.Run)
		}
	}
	c.Tokenize = Tokenize{Lower: true} // until the vocabulary or the resumed checkpoint say
	return c
}

// manifests reads the manifest of each dataset of the run once, checking
// that they were featurized, with one vocabulary.
func (c RunConfig) manifests(ctx context.Context) ([]*shards.Manifest, error) {
	names := c.datasets()
	ms := make([]*shards.Manifest, len(names))
	for i, n := range names {
		m, err := c.readManifest(ctx, c.Client, c.Prefix, n)
		if err != nil {
			return nil, err
		}
		ms[i] = m
	}
	return ms, sameVocabulary(names, ms)
}

// resume opens the trainer of the checkpoint cfg.Resume names and takes
// the run's settings kept with it, returning the stream position to start
// at: one dataset's, or a mix's.
func (l *loop) resume(cfg *RunConfig) (*stream.Position, *MixPosition, error) {
	dir, err := FindCheckpoint(cfg.Resume, func(bad string, err error) {
		cfg.Logger.Warn("passing over a corrupt checkpoint", "checkpoint", bad, "err", err)
	})
	if err != nil {
		return nil, nil, err
	}
	tr, raw, err := Resume(dir, cfg.Backend)
	if err != nil {
		return nil, nil, err
	}
	fail := func(err error) (*stream.Position, *MixPosition, error) {
		tr.Close()
		return nil, nil, err
	}
	var rp RunPosition
	if err := json.Unmarshal(raw, &rp); err != nil || (rp.Stream.Topic == "" && rp.Mix == nil) {
		return fail(fmt.Errorf("resuming %s: the checkpoint holds no stream position (it was not written by a training run)", dir))
	}
	if rp.Dataset != cfg.datasetName() || rp.Split != cfg.Split {
		return fail(fmt.Errorf("resuming %s: it trained on %s/%s, not %s/%s", dir, rp.Dataset, rp.Split, cfg.datasetName(), cfg.Split))
	}
	if was, err := ReadRunConfig(dir); err == nil && was != nil {
		cfg.Tokenize, l.tokenizeKnown = was.Tokenize, true
	}
	if cfg.Run == "" {
		cfg.Run = rp.Run
	}
	if cfg.nli() && tr.Config().NLIHidden == 0 {
		return fail(fmt.Errorf("resuming %s: its model has no NLI head, so it cannot train on the NLI dataset of %s: start a new run from it with --init-from", dir, cfg.datasetName()))
	}
	if cfg.Featurize == nil {
		if cfg.Featurize, err = ReadFeaturizeFiles(dir); err != nil {
			return fail(fmt.Errorf("resuming %s: %w", dir, err))
		}
	}
	if cfg.CheckpointDir == "" {
		cfg.CheckpointDir = filepath.Dir(filepath.Clean(dir))
	}
	l.tr, cfg.Resume = tr, dir
	l.lastDir, l.lastStep, l.ckStep = dir, tr.Steps(), tr.Steps()
	return &rp.Stream, rp.Mix, nil
}

// open makes the trainer of a new run: the vocabulary (from the
// datasets' manifests, which it returns, unless cfg.Vocab is given), the
// vectors, the NLI head of a run with an NLI dataset, and the warm start.
func (l *loop) open(ctx context.Context, cfg *RunConfig) ([]*shards.Manifest, error) {
	var manifests []*shards.Manifest
	if len(cfg.Vocab) == 0 {
		var err error
		if manifests, err = cfg.manifests(ctx); err != nil {
			return nil, err
		}
		context := cfg.Model.Context != ""
		v, err := stream.ManifestVocabulary(ctx, cfg.Client, cfg.Prefix, cfg.datasets()[0], manifests[0], context)
		if err != nil {
			return nil, err
		}
		cfg.Vocab, cfg.VocabCounts, cfg.Model.OOVBuckets, cfg.Model.OOVHash = v.Words, v.Counts, v.OOVBuckets, v.OOVHash
		if context {
			cfg.Model.Topics, cfg.Featurize = v.Topics, v.Files
		}
	}
	if cfg.VectorsFile != "" {
		v, err := LoadVectors(cfg.VectorsFile)
		if err != nil {
			return nil, fmt.Errorf("reading vectors %s: %w", cfg.VectorsFile, err)
		}
		cfg.Vectors = v
	}
	// A run with an NLI dataset trains the NLI head (multitask); one
	// without has none (nothing would train it).
	if cfg.nli() {
		cfg.Model.NLIHidden = cmp.Or(cfg.Model.NLIHidden, compute.DefaultNLIHidden)
	} else {
		cfg.Model.NLIHidden = 0
	}
	tr, err := New(cfg.Model, Options{Backend: cfg.Backend, Vocab: cfg.Vocab, Vectors: cfg.Vectors})
	if err != nil {
		return nil, err
	}
	if cfg.InitFrom != "" {
		if _, err := tr.WarmStart(cfg.InitFrom); err != nil {
			tr.Close()
			return nil, err
		}
	}
	if tr.Config().Context != "" && len(cfg.Featurize) == 0 {
		tr.Close()
		return nil, fmt.Errorf("trainstep: a model with the %s context needs the featurize model its data was featurized with (RunConfig.Featurize): its checkpoints keep it for evaluation", tr.Config().Context)
	}
	l.tr, l.lastStep, l.ckStep = tr, -1, -1
	return manifests, nil
}
