package evalsink

import (
	"cmp"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"runtime"
	"time"

	"github.com/parastream/parastream/evalsink/metric"
	"github.com/parastream/parastream/shards"
	"github.com/parastream/parastream/trainstep"
)

// Defaults of Config.
const (
	DefaultSeed    = 1
	DefaultScatter = "stsb/dev"
)

// Config configures an Evaluator. The zero value of each field but Eval
// and Out gives its documented default.
type Config struct {
	// Eval is the directory of evaluation shards (parastream extract
	// --corpus sts|stsb|sick, and reddit or quora for retrieval), with its
	// manifest. Required.
	Eval string
	// Version is the program's version result rows record ("": its build
	// info's; see shards.ProgramVersion).
	Version string
	// Out is the results directory: parts/ (Parquet), results.csv,
	// report.md and plots/. Required.
	Out string
	// Run and Model name the checkpoint's training run and model where
	// the checkpoint does not: a Target's own names win; then run.json's
	// run, the checkpoint directory's parent's name, and the encoder.
	Run, Model string
	// Scale is ScaleCosine (default) or ScaleAngular.
	Scale string
	// Candidates is the responses a retrieval query ranks; 0 means
	// DefaultCandidates.
	Candidates int
	// Seed seeds the draw of retrieval negatives, the bootstrap and every
	// task's randomness (folds); 0 means DefaultSeed.
	Seed uint64
	// Resamples is the bootstrap's resamples for each figure's 95%
	// interval and for comparisons; 0 means metric.DefaultResamples.
	Resamples int
	// Scatter is the set whose predictions against gold scores are
	// plotted; "" means DefaultScatter, or the first similarity set when
	// there is no such set.
	Scatter string
	// ContextFor gives, for a checkpoint of a model with a topic context
	// (compute.Config.Context), the function computing a text's topic
	// vector with the featurize model the checkpoint keeps
	// (trainstep.DirFeaturize). The command line sets it (from package
	// featurize); without it such checkpoints cannot be evaluated.
	ContextFor ContextFunc
	// Adapt evaluates with the STS adaptation stored in the checkpoint
	// (parastream adapt; LoadAdaptation) applied to every embedding: its
	// rows carry Result.Adaptation and an EvalID of their own. A
	// checkpoint without one is an error.
	Adapt bool
	// Headline names the figure eval watch picks a run's best evaluation
	// by and reads first when it compares a new checkpoint with it, and
	// eval compare's headline (FigureRef syntax: DATASET[:KIND]:COLUMN);
	// "" means the average's Pearson's r, else STS Benchmark dev's, else
	// the evaluation's first figure.
	Headline string
	// SQLDSN, when set, also writes the rows to PostgreSQL (a pgx
	// connection string or URL), creating the table when missing.
	SQLDSN string
	// Logger receives progress; nil discards it.
	Logger *slog.Logger
	// Watched, when set, is called by Watch for each announced checkpoint
	// it evaluated or skipped, once its results are durable.
	Watched func(Watched)
}

// Validate reports a setting that cannot work, saying how to fix it.
func (c Config) Validate() error {
	var errs []error
	if c.Eval == "" {
		errs = append(errs, errors.New("evalsink: no evaluation shards: give the directory parastream extract wrote the sts, stsb or sick corpus to"))
	}
	if c.Out == "" {
		errs = append(errs, errors.New("evalsink: no results directory"))
	}
	if c.Scale != "" && c.Scale != ScaleCosine && c.Scale != ScaleAngular {
		errs = append(errs, fmt.Errorf("evalsink: scale %q: give %s or %s", c.Scale, ScaleCosine, ScaleAngular))
	}
	if c.Candidates < 0 || c.Candidates == 1 {
		errs = append(errs, fmt.Errorf("evalsink: %d candidates: give at least 2, or 0 for %d", c.Candidates, DefaultCandidates))
	}
	if c.Headline != "" {
		if _, err := ParseFigureRef(c.Headline); err != nil {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}

func (c Config) withDefaults() Config {
	c.Scale = cmp.Or(c.Scale, ScaleCosine)
	c.Candidates = cmp.Or(c.Candidates, DefaultCandidates)
	c.Seed = cmp.Or(c.Seed, DefaultSeed)
	if c.Logger == nil {
		c.Logger = slog.New(slog.DiscardHandler)
	}
	return c
}

// Target is a checkpoint to evaluate, with the names a checkpoint event
// gives it (empty: see Config.Run and Config.Model).
type Target struct {
	Dir        string
	Run, Model string
	// TruncateDim evaluates the embeddings' first TruncateDim components
	// (a Matryoshka prefix, Embedder.SetTruncate): an evaluation of its
	// own, its rows' model named "<model>@<TruncateDim>"; 0: all.
	TruncateDim int
}

// Summary is what evaluating one checkpoint did.
type Summary struct {
	EvalID string
	// Rows are the evaluation's rows (read back from its part when it had
	// been evaluated before).
	Rows []Result
	// Added is true when this call wrote the part; false when the
	// checkpoint had been evaluated already (the same EvalID).
	Added bool
	Part  string
	// SQLInserted counts the rows the SQL sink did not hold yet.
	SQLInserted int64
	// Report is the Markdown report, rewritten from every part.
	Report string
	// Plots are the PNG files written.
	Plots []string
	// Embedder counts (when the model ran): tokens, unknown tokens (not in
	// the checkpoint's vocabulary), those of them mapped to the
	// checkpoint's out-of-vocabulary buckets (Buckets of them), texts that
	// embedded as the zero vector.
	Tokens, Unknown, Bucketed, Empty int64
	Buckets                          int
}

// Evaluator evaluates checkpoints on a loaded set of evaluation data and
// writes the result tables. Not safe for concurrent use.
type Evaluator struct {
	cfg  Config
	sets *Sets
	sql  *SQLSink
	log  *slog.Logger
}

// NewEvaluator loads the evaluation sets and, with an SQL DSN, connects to
// the database and creates the results table when missing.
func NewEvaluator(ctx context.Context, cfg Config) (*Evaluator, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	cfg = cfg.withDefaults()
	sets, err := LoadSets(ctx, cfg.Eval, cfg.Logger)
	if err != nil {
		return nil, err
	}
	ev := &Evaluator{cfg: cfg, sets: sets, log: cfg.Logger}
	if cfg.SQLDSN != "" {
		if ev.sql, err = OpenSQL(ctx, cfg.SQLDSN, cfg.Logger); err != nil {
			return nil, err
		}
	}
	return ev, nil
}

// Sets are the loaded evaluation sets.
func (ev *Evaluator) Sets() *Sets { return ev.sets }

// Close closes the SQL connection.
func (ev *Evaluator) Close() error {
	if ev.sql != nil {
		return ev.sql.Close()
	}
	return nil
}

// checkpointInfo is what identifies a checkpoint, read without loading
// the model.
type checkpointInfo struct {
	dir          string
	step         int64
	epoch        int
	modelHash    string
	checkpointID string
	run, encoder string
	// adapt is the adaptation evaluated with (Config.Adapt), nil: none.
	adapt *Adaptation
	// truncate is Target.TruncateDim.
	truncate int
}

func readCheckpointInfo(dir string) (checkpointInfo, error) {
	abs, err := filepath.Abs(dir)
	if err != nil {
		return checkpointInfo{}, err
	}
	info := checkpointInfo{dir: abs}
	var st trainstep.TrainerState
	if err := readJSON(filepath.Join(abs, trainstep.FileTrainer), &st); err != nil {
		return info, err
	}
	info.step, info.epoch = st.Step, st.Epoch
	var cfg trainstep.Config
	if err := readJSON(filepath.Join(abs, trainstep.FileConfig), &cfg); err != nil {
		return info, err
	}
	info.encoder = cfg.Encoder
	var run struct {
		Run string `json:"run"`
	}
	if err := readJSON(filepath.Join(abs, "run.json"), &run); err == nil {
		info.run = run.Run
	} else if !errors.Is(err, os.ErrNotExist) {
		return info, err
	}
	if info.modelHash, err = hashFiles(filepath.Join(abs, trainstep.FileModel)); err != nil {
		return info, fmt.Errorf("reading checkpoint %s: %w", abs, err)
	}
	id := sha256.Sum256(fmt.Appendf(nil, "%s\n%d\n%s", abs, info.step, info.modelHash))
	info.checkpointID = hex.EncodeToString(id[:])
	return info, nil
}

// CheckpointHash reads the checkpoint directory dir as Evaluate does and
// returns its absolute path and its model hash (the sha256 of
// model.safetensors): what an adaptation is stored for.
func CheckpointHash(dir string) (abs, modelHash string, err error) {
	ck, err := readCheckpointInfo(dir)
	if err != nil {
		return "", "", err
	}
	return ck.dir, ck.modelHash, nil
}

func readJSON(path string, v any) error {
	data, err := os.ReadFile(path)
	if err != nil {
		return fmt.Errorf("reading checkpoint: %w", err)
	}
	if err := json.Unmarshal(data, v); err != nil {
		return fmt.Errorf("reading checkpoint: %s: %w", path, err)
	}
	return nil
}

// evalID identifies an evaluation: the checkpoint, the data and the
// options that change the figures.
func (ev *Evaluator) evalID(ck checkpointInfo) string {
	key := fmt.Appendf(nil, "%s\n%s\n%s\n%d\n%d\n%d", ck.checkpointID, ev.sets.DataHash, ev.cfg.Scale, ev.cfg.Candidates, ev.cfg.Seed,
		cmp.Or(ev.cfg.Resamples, metric.DefaultResamples))
	if ck.adapt != nil {
		key = fmt.Appendf(key, "\nadaptation %s %s", ck.adapt.Name, ck.adapt.Hash)
	}
	if ck.truncate > 0 {
		key = fmt.Appendf(key, "\ntruncate %d", ck.truncate)
	}
	id := sha256.Sum256(key)
	return hex.EncodeToString(id[:16])
}

// Evaluate evaluates one checkpoint and writes its rows to every sink,
// unless its part exists already (the same checkpoint, data and options):
// then it writes nothing new to the part files, and hands the part's rows
// to the SQL sink, which adds only those it lacks. Either way it rewrites
// the CSV, the report and the learning curves from every part. The rows
// are durable in every sink when it returns nil. t.Dir is a checkpoint, or
// a training run's checkpoint directory: its newest good checkpoint.
func (ev *Evaluator) Evaluate(ctx context.Context, t Target) (*Summary, error) {
	// A training run's checkpoint directory stands for its newest good
	// checkpoint, as for embed.
	dir, err := trainstep.LatestCheckpoint(t.Dir)
	if err != nil {
		return nil, fmt.Errorf("evaluating: %w", err)
	}
	ck, err := readCheckpointInfo(dir)
	if err != nil {
		return nil, err
	}
	if ev.cfg.Adapt {
		if ck.adapt, err = loadAdaptation(ck.dir, ck.modelHash); err != nil {
			return nil, err
		}
	}
	ck.truncate = t.TruncateDim
	sum := &Summary{EvalID: ev.evalID(ck), Part: partPath(ev.cfg.Out, ev.evalID(ck))}
	if done, err := evaluated(ev.cfg.Out, sum.EvalID); err != nil {
		return nil, err
	} else if done {
		ev.log.Info("checkpoint evaluated already", "checkpoint", ck.dir, "step", ck.step, "part", sum.Part)
		if sum.Rows, err = readPart(sum.Part); err != nil {
			return nil, err
		}
	} else {
		scored, rows, err := ev.compute(ctx, t, ck, sum)
		if err != nil {
			return nil, err
		}
		sum.Rows = rows
		if _, err := writePart(ev.cfg.Out, sum.EvalID, rows); err != nil {
			return nil, err
		}
		sum.Added = true
		if len(rows) == 0 {
			ev.log.Warn("the evaluation scored nothing: none of the evaluation sets applies to this checkpoint", "checkpoint", ck.dir)
		} else if p, err := ev.scatter(scored, rows[0]); err != nil {
			return nil, err
		} else if p != "" {
			sum.Plots = append(sum.Plots, p)
		}
	}
	if ev.sql != nil {
		if sum.SQLInserted, err = ev.sql.Insert(ctx, sum.Rows); err != nil {
			return nil, err
		}
	}
	all, err := ReadResults(ev.cfg.Out)
	if err != nil {
		return nil, err
	}
	views, err := WriteViews(ev.cfg.Out, all)
	if err != nil {
		return nil, err
	}
	sum.Report = filepath.Join(ev.cfg.Out, ReportName)
	sum.Plots = append(sum.Plots, views...)
	return sum, nil
}

// evaluated says whether an evaluation's results and predictions parts
// both exist. A results part without its predictions (written before
// they were kept) is evaluated again.
func evaluated(out, evalID string) (bool, error) {
	for _, p := range []string{partPath(out, evalID), predictionsPath(out, evalID)} {
		if _, err := os.Stat(p); errors.Is(err, os.ErrNotExist) {
			return false, nil
		} else if err != nil {
			return false, fmt.Errorf("reading results: %w", err)
		}
	}
	return true, nil
}

// compute loads the model and measures it on every set.
func (ev *Evaluator) compute(ctx context.Context, t Target, ck checkpointInfo, sum *Summary) ([]*Scored, []Result, error) {
	start := time.Now()
	emb, loaded, err := OpenEmbedder(ck.dir, ev.cfg.ContextFor)
	if err != nil {
		return nil, nil, fmt.Errorf("evaluating: %w", err)
	}
	defer emb.Close()
	if err := emb.SetAdaptation(ck.adapt); err != nil {
		return nil, nil, fmt.Errorf("evaluating %s: %w", ck.dir, err)
	}
	if err := emb.SetTruncate(ck.truncate); err != nil {
		return nil, nil, fmt.Errorf("evaluating %s: %w", ck.dir, err)
	}
	model := cmp.Or(t.Model, ev.cfg.Model, ck.encoder)
	if ck.truncate > 0 {
		model = fmt.Sprintf("%s@%d", model, ck.truncate)
	}
	version := shards.ProgramVersion(ev.cfg.Version)
	base := Result{
		EvalID: sum.EvalID,
		Run:    cmp.Or(t.Run, ck.run, ev.cfg.Run, filepath.Base(filepath.Dir(ck.dir))),
		Model:  model,
		Step:   ck.step, Epoch: int64(ck.epoch), Checkpoint: ck.dir, CheckpointID: ck.checkpointID,
		Scale: ev.cfg.Scale, EvaluatedAt: time.Now().UTC().Truncate(time.Millisecond),
		Versions: fmt.Sprintf("parastream %s; %s", version, runtime.Version()),
		DataHash: ev.sets.DataHash, ModelHash: ck.modelHash,
		Adaptation: ck.adapt.name(),
	}
	var scored []*Scored
	var rets []*Retrieval
	for _, s := range ev.sets.Sets {
		switch s.Task {
		case TaskSimilarity:
			sc, err := ScoreSimilarity(ctx, emb, s, ev.cfg.Scale)
			if err != nil {
				return nil, nil, fmt.Errorf("evaluating %s on %s: %w", ck.dir, s.Dataset, err)
			}
			scored = append(scored, sc)
		case TaskRetrieval:
			r, err := RetrievalScores(ctx, emb, s, ev.cfg.Candidates, ev.cfg.Seed)
			if err != nil {
				return nil, nil, fmt.Errorf("evaluating %s on %s: %w", ck.dir, s.Dataset, err)
			}
			rets = append(rets, r)
		}
	}
	var rfs []RowFigures
	for _, sc := range SimilarityScores(scored) {
		r := base
		r.Corpus, r.Split, r.Dataset, r.Year, r.Kind, r.Pairs = sc.Corpus, sc.Split, sc.Dataset, sc.Year, sc.Kind, sc.Pairs
		r.Pearson, r.Spearman = ptr(sc.Pearson), ptr(sc.Spearman)
		rfs = append(rfs, RowFigures{r, similarityFigures(scored, sc)})
	}
	for _, x := range rets {
		retFigs, rankFigs := retrievalFigures(x)
		r := base
		r.Corpus, r.Split, r.Dataset, r.Kind, r.Pairs, r.Candidates = x.Corpus, x.Split, x.Dataset, KindRetrieval, int64(x.Queries), int64(x.Candidates)
		r.PAt1, r.PAt3, r.PAt10, r.MRR = ptr(x.P1), ptr(x.P3), ptr(x.P10), ptr(x.MRR)
		chance := r
		chance.Kind = KindRetrievalChance
		chance.PAt1, chance.PAt3, chance.PAt10, chance.MRR = ptr(x.ChanceP1), ptr(x.ChanceP3), ptr(x.ChanceP10), ptr(x.ChanceMRR)
		rfs = append(rfs, RowFigures{r, retFigs}, RowFigures{Row: chance})
		if x.RankQueries > 0 {
			r := base
			r.Corpus, r.Split, r.Dataset, r.Kind, r.Pairs, r.Candidates = x.Corpus, x.Split, x.Dataset, KindRanking, int64(x.RankQueries), int64(x.RankCandidates)
			r.MAP, r.MRR = ptr(x.MAP), ptr(x.RankMRR)
			chance := r
			chance.Kind = KindRankingChance
			chance.MAP, chance.MRR = ptr(x.ChanceMAP), ptr(x.ChanceRankMRR)
			rfs = append(rfs, RowFigures{r, rankFigs}, RowFigures{Row: chance})
		}
	}
	env := TaskEnv{Emb: emb, Sets: ev.sets, Dir: ck.dir, Model: loaded.Config, Base: base, Seed: ev.cfg.Seed, Log: ev.log}
	for _, task := range tasks() {
		trs, err := task(ctx, env)
		if err != nil {
			return nil, nil, fmt.Errorf("evaluating %s: %w", ck.dir, err)
		}
		rfs = append(rfs, trs...)
	}
	rows, err := withIntervals(rfs, metric.Bootstrap{Resamples: ev.cfg.Resamples, Seed: ev.cfg.Seed})
	if err != nil {
		return nil, nil, err
	}
	opts := evalOptions{DataHash: ev.sets.DataHash, Scale: ev.cfg.Scale, Candidates: ev.cfg.Candidates, Seed: ev.cfg.Seed, Adaptation: ck.adapt.name()}
	if err := writePredictions(ev.cfg.Out, sum.EvalID, rfs, opts); err != nil {
		return nil, nil, err
	}
	sum.Tokens, sum.Unknown, sum.Bucketed, sum.Empty, sum.Buckets = emb.Tokens, emb.Unknown, emb.Bucketed, emb.Empty, emb.Lexicon().Buckets()
	ev.log.Info("evaluated checkpoint", "checkpoint", ck.dir, "run", base.Run, "step", ck.step, "rows", len(rows),
		"tokens", emb.Tokens, "unknown", emb.Unknown, "bucketed", emb.Bucketed, "empty_texts", emb.Empty, "elapsed", time.Since(start).Round(time.Millisecond))
	return scored, rows, nil
}

func ptr(v float64) *float64 { return &v }

// scatter plots the chosen set's predictions of this evaluation.
func (ev *Evaluator) scatter(scored []*Scored, base Result) (string, error) {
	if len(scored) == 0 {
		return "", nil
	}
	want := cmp.Or(ev.cfg.Scatter, DefaultScatter)
	pick := scored[0]
	found := false
	for _, sc := range scored {
		if sc.Set.Dataset == want {
			pick, found = sc, true
			break
		}
	}
	if !found && ev.cfg.Scatter != "" {
		ev.log.Warn("no such set for the scatter plot; plotting the first", "set", ev.cfg.Scatter, "plotted", pick.Set.Dataset)
	}
	name := filepath.Join(ev.cfg.Out, PlotsDir, fmt.Sprintf("scatter-%s-step%d-%s.png", fileSafe(displayRun(base)), base.Step, fileSafe(pick.Set.Dataset)))
	return name, WriteScatter(name, pick, base)
}
