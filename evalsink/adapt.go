package evalsink

import (
	"bytes"
	"cmp"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"time"

	"github.com/parastream/parastream/evalsink/metric"
	"github.com/parastream/parastream/internal/atomicfile"
	"github.com/parastream/parastream/trainstep"
	"github.com/parastream/parastream/trainstep/compute"
)

// STS adaptation (Yang et al. 2018, section 4.4, "tuned"): a linear map W
// of the frozen sentence embeddings, u* = W u, trained on the STS
// Benchmark train pairs so that the paper's angular similarity of the
// mapped pair, sim(u*, v*) = 1 − arccos(cos(u*, v*))/π, matches the gold
// score scaled to [0, 1] (gold/5). The paper says only that "the matrix is
// parameterized using the STS training data" and gives no objective; we
// minimise the mean squared error (the paper's Eq. 2 scores on the 0-5
// scale; the squared error there is 25 times this one), plus λ‖W − I‖²
// toward the identity. W starts at the identity, so epoch 0 is the model
// out of the box; Adam on minibatches, the learning rate, λ and the epoch
// chosen on the STS Benchmark dev Pearson. No bias: a linear map keeps the
// zero vector (an empty text) zero, and the identity reproduces the
// out-of-the-box embeddings bit for bit.

// AdaptationLinear names the STS linear adaptation in Result.Adaptation.
const AdaptationLinear = "sts-linear"

// Files of the adaptation, beside the checkpoint's model.
const (
	// AdaptFile holds W (tensor "w", shape [D, D], F32) and, in its
	// metadata, the adaptation's name and the model hash it was trained
	// for.
	AdaptFile = "adapt-sts.safetensors"
	// AdaptInfoFile is what it was trained on and how (AdaptInfo).
	AdaptInfoFile = "adapt-sts.json"
)

// Sets the adaptation trains and is chosen on.
const (
	AdaptTrainSet = "stsb/train"
	AdaptDevSet   = "stsb/dev"
)

// Defaults of AdaptConfig.
const (
	DefaultAdaptEpochs = 20
	DefaultAdaptBatch  = 64
)

// adaptGoldMax is the top of the STS Benchmark's gold scale.
const adaptGoldMax = 5

// ErrNoAdaptation is returned for a checkpoint without an adaptation.
var ErrNoAdaptation = errors.New("evalsink: no STS adaptation")

// AdaptConfig configures Adapt. Zero values give the defaults.
type AdaptConfig struct {
	// Checkpoint is the checkpoint directory; the adaptation is written
	// into it. Required.
	Checkpoint string
	// Eval is the evaluation shards holding stsb/train and stsb/dev
	// (parastream extract --corpus stsb). Required.
	Eval string
	// Seed seeds the minibatch order; 0 means DefaultSeed.
	Seed uint64
	// Epochs is the most passes over the train pairs of each trial; 0
	// means DefaultAdaptEpochs.
	Epochs int
	// Batch is the pairs per Adam step; 0 means DefaultAdaptBatch.
	Batch int
	// LearningRates and Lambdas are the grid searched (every pair); nil
	// means DefaultAdaptLearningRates, DefaultAdaptLambdas.
	LearningRates, Lambdas []float64
	// ContextFor: see Config.ContextFor.
	ContextFor ContextFunc
	// Logger receives progress; nil discards it.
	Logger *slog.Logger
}

// DefaultAdaptLearningRates are the Adam learning rates tried.
func DefaultAdaptLearningRates() []float64 { return []float64{1e-3, 3e-3, 1e-2} }

// DefaultAdaptLambdas are the weights of ‖W − I‖² tried.
func DefaultAdaptLambdas() []float64 { return []float64{0, 1e-3, 1e-2} }

func (c AdaptConfig) withDefaults() AdaptConfig {
	c.Seed = cmp.Or(c.Seed, DefaultSeed)
	c.Epochs = cmp.Or(c.Epochs, DefaultAdaptEpochs)
	c.Batch = cmp.Or(c.Batch, DefaultAdaptBatch)
	if len(c.LearningRates) == 0 {
		c.LearningRates = DefaultAdaptLearningRates()
	}
	if len(c.Lambdas) == 0 {
		c.Lambdas = DefaultAdaptLambdas()
	}
	if c.Logger == nil {
		c.Logger = slog.New(slog.DiscardHandler)
	}
	return c
}

// AdaptPairs are the frozen embeddings of graded pairs, gold in [0, 1].
type AdaptPairs struct {
	A, B [][]float32
	Gold []float64
}

// AdaptHyper is one setting of the search.
type AdaptHyper struct {
	LearningRate float64 `json:"learning_rate"`
	Lambda       float64 `json:"lambda"`
	// Epochs is the epoch whose W is kept (0: the identity).
	Epochs int `json:"epochs"`
	Batch  int `json:"batch"`
}

// AdaptTrial is one setting's best dev Pearson (angular, ×100) and the
// epoch it was reached at.
type AdaptTrial struct {
	AdaptHyper
	DevPearson float64 `json:"dev_pearson"`
}

// AdaptFigures are the STS Benchmark dev Pearson ×100 on the angular scale
// (Yang et al.'s, the one the search maximises) and on the cosine.
type AdaptFigures struct {
	Angular float64 `json:"pearson_angular"`
	Cosine  float64 `json:"pearson_cosine"`
}

// AdaptInfo is adapt-sts.json: what the adaptation was trained on and how.
type AdaptInfo struct {
	Adaptation string `json:"adaptation"`
	Objective  string `json:"objective"`
	Checkpoint string `json:"checkpoint"`
	ModelHash  string `json:"model_hash"`
	// DataHash is the evaluation shards' (Sets.DataHash).
	DataHash   string `json:"data_hash"`
	Train      string `json:"train"`
	Dev        string `json:"dev"`
	TrainPairs int    `json:"train_pairs"`
	DevPairs   int    `json:"dev_pairs"`
	Dim        int    `json:"dim"`
	Seed       uint64 `json:"seed"`
	// DevBefore is the dev figure out of the box, DevAfter adapted (W as
	// stored, in float32).
	DevBefore AdaptFigures `json:"dev_before"`
	DevAfter  AdaptFigures `json:"dev_after"`
	Chosen    AdaptHyper   `json:"chosen"`
	Trials    []AdaptTrial `json:"trials"`
	TrainedAt time.Time    `json:"trained_at"`
}

// Adaptation is a linear map of sentence embeddings: u* = W u.
type Adaptation struct {
	// Name is AdaptationLinear.
	Name string
	Dim  int
	// W is D×D, row-major.
	W []float32
	// ModelHash is the sha256 of the model.safetensors it was trained on;
	// Hash the sha256 of its AdaptFile (what an evaluation's EvalID
	// covers).
	ModelHash, Hash string
	// Info is adapt-sts.json where it was read.
	Info AdaptInfo
}

// Apply returns W v (a new slice).
func (a *Adaptation) Apply(v []float32) []float32 {
	d := a.Dim
	out := make([]float32, d)
	for k := range d {
		row := a.W[k*d : (k+1)*d]
		var s float64
		for j, x := range v {
			s += float64(row[j]) * float64(x)
		}
		out[k] = float32(s)
	}
	return out
}

// name is the Result.Adaptation of evaluations with a (nil: none).
func (a *Adaptation) name() string {
	if a == nil {
		return ""
	}
	return a.Name
}

// displayRun is the name of a row's run in the report's columns and the
// learning curves: an adapted evaluation is shown apart from, and beside,
// the run's out-of-the-box one, as "<run> adapted (<adaptation>)".
func displayRun(r Result) string {
	if r.Adaptation == "" {
		return r.Run
	}
	return r.Run + " adapted (" + r.Adaptation + ")"
}

// SetAdaptation makes the embedder return W u for every embedding u
// (nil: the model's own). It empties the embedder's cache.
func (e *Embedder) SetAdaptation(a *Adaptation) error {
	if a != nil && a.Dim != e.dim {
		return fmt.Errorf("evalsink: the adaptation maps %d components, the model gives %d", a.Dim, e.dim)
	}
	e.adapt = a
	clear(e.cache)
	return nil
}

// UseAdaptation loads the adaptation stored in the checkpoint directory
// dir (LoadAdaptation) and sets it (SetAdaptation).
func (e *Embedder) UseAdaptation(dir string) error {
	a, err := LoadAdaptation(dir)
	if err != nil {
		return err
	}
	return e.SetAdaptation(a)
}

// LoadAdaptation reads the adaptation stored in the checkpoint directory
// dir, refusing one trained for another model than the checkpoint's.
func LoadAdaptation(dir string) (*Adaptation, error) {
	h, err := hashFiles(filepath.Join(dir, trainstep.FileModel))
	if err != nil {
		return nil, fmt.Errorf("reading checkpoint %s: %w", dir, err)
	}
	return loadAdaptation(dir, h)
}

func loadAdaptation(dir, modelHash string) (*Adaptation, error) {
	path := filepath.Join(dir, AdaptFile)
	data, err := os.ReadFile(path)
	if errors.Is(err, os.ErrNotExist) {
		return nil, fmt.Errorf("%w: checkpoint %s has no %s: train one with `parastream adapt --checkpoint %s --eval SHARDS` (SHARDS: evaluation shards with stsb/train and stsb/dev)", ErrNoAdaptation, dir, AdaptFile, dir)
	}
	if err != nil {
		return nil, fmt.Errorf("reading the STS adaptation: %w", err)
	}
	ts, meta, err := trainstep.ReadSafetensors(data)
	if err != nil {
		return nil, fmt.Errorf("reading the STS adaptation %s: %w", path, err)
	}
	if len(ts) != 1 || ts[0].Name != "w" || len(ts[0].Shape) != 2 || ts[0].Shape[0] != ts[0].Shape[1] {
		return nil, fmt.Errorf("reading the STS adaptation %s: want one square tensor \"w\"", path)
	}
	if meta["adaptation"] != AdaptationLinear {
		return nil, fmt.Errorf("reading the STS adaptation %s: adaptation %q, want %q", path, meta["adaptation"], AdaptationLinear)
	}
	if meta["model_hash"] != modelHash {
		return nil, fmt.Errorf("the STS adaptation %s was trained for another model (model hash %.12s; the checkpoint's is %.12s): the checkpoint was rewritten since; run `parastream adapt --checkpoint %s --eval SHARDS` again", path, meta["model_hash"], modelHash, dir)
	}
	sum := sha256.Sum256(data)
	a := &Adaptation{Name: AdaptationLinear, Dim: ts[0].Shape[0], W: ts[0].Data, ModelHash: modelHash, Hash: hex.EncodeToString(sum[:])}
	if info, err := os.ReadFile(filepath.Join(dir, AdaptInfoFile)); err == nil {
		if err := json.Unmarshal(info, &a.Info); err != nil {
			return nil, fmt.Errorf("reading %s: %w", filepath.Join(dir, AdaptInfoFile), err)
		}
	}
	return a, nil
}

// SaveAdaptation writes a's AdaptFile and AdaptInfoFile into dir,
// atomically each, and sets a.Hash.
func SaveAdaptation(dir string, a *Adaptation) error {
	var buf bytes.Buffer
	t := compute.Tensor{Name: "w", Shape: []int{a.Dim, a.Dim}, Data: a.W}
	if err := trainstep.WriteSafetensors(&buf, []compute.Tensor{t}, map[string]string{
		"adaptation": a.Name, "model_hash": a.ModelHash, "map": "u* = W u"}); err != nil {
		return err
	}
	if err := atomicfile.WriteFile(filepath.Join(dir, AdaptFile), buf.Bytes()); err != nil {
		return fmt.Errorf("writing the STS adaptation: %w", err)
	}
	sum := sha256.Sum256(buf.Bytes())
	a.Hash = hex.EncodeToString(sum[:])
	info, err := json.MarshalIndent(a.Info, "", "  ")
	if err != nil {
		return err
	}
	if err := atomicfile.WriteFile(filepath.Join(dir, AdaptInfoFile), append(info, '\n')); err != nil {
		return fmt.Errorf("writing the STS adaptation: %w", err)
	}
	return nil
}

// IdentityAdaptation is the adaptation that changes nothing.
func IdentityAdaptation(dim int) *Adaptation {
	w := make([]float32, dim*dim)
	for k := range dim {
		w[k*dim+k] = 1
	}
	return &Adaptation{Name: AdaptationLinear, Dim: dim, W: w}
}

// AdaptPearson is the figures of pairs mapped by a (nil: as they are),
// computed as the evaluator does (float32 vectors, Cosine).
func AdaptPearson(p AdaptPairs, a *Adaptation) AdaptFigures {
	cos, ang := make([]float64, len(p.Gold)), make([]float64, len(p.Gold))
	for i := range p.Gold {
		u, v := p.A[i], p.B[i]
		if a != nil {
			u, v = a.Apply(u), a.Apply(v)
		}
		cos[i] = metric.Cosine(u, v)
		ang[i] = metric.Angular(cos[i])
	}
	return AdaptFigures{Angular: 100 * metric.Pearson(ang, p.Gold), Cosine: 100 * metric.Pearson(cos, p.Gold)}
}

// TrainAdaptation searches cfg's grid (learning rate × λ, each trial
// from the identity for up to cfg.Epochs epochs of Adam on minibatches
// drawn from cfg.Seed) and returns the W of the best dev Pearson (angular)
// over every trial and epoch, epoch 0 (the identity) included, with the
// trials. Deterministic given the data and cfg.
func TrainAdaptation(ctx context.Context, train, dev AdaptPairs, cfg AdaptConfig) (*Adaptation, []AdaptTrial, AdaptHyper, error) {
	cfg = cfg.withDefaults()
	if len(train.Gold) == 0 || len(dev.Gold) == 0 {
		return nil, nil, AdaptHyper{}, errors.New("evalsink: adaptation: no train or no dev pairs")
	}
	d := len(train.A[0])
	tr, dv := toAdaptData(train, d), toAdaptData(dev, d)
	identity := make([]float64, d*d)
	for k := range d {
		identity[k*d+k] = 1
	}
	best := slicesClone(identity)
	identityScore := devPearson(identity, d, dv)
	bestScore := identityScore
	chosen := AdaptHyper{Batch: cfg.Batch}
	var trials []AdaptTrial
	for ti, lr := range cfg.LearningRates {
		for tj, lambda := range cfg.Lambdas {
			w := slicesClone(identity)
			opt := newAdam(len(w), lr)
			rng := rand.New(rand.NewPCG(cfg.Seed, uint64(ti*len(cfg.Lambdas)+tj)))
			order := make([]int, len(tr.gold))
			for i := range order {
				order[i] = i
			}
			grad := make([]float64, len(w))
			trial := AdaptTrial{AdaptHyper: AdaptHyper{LearningRate: lr, Lambda: lambda, Batch: cfg.Batch}, DevPearson: identityScore}
			for epoch := 1; epoch <= cfg.Epochs; epoch++ {
				if err := ctx.Err(); err != nil {
					return nil, nil, AdaptHyper{}, err
				}
				rng.Shuffle(len(order), func(i, j int) { order[i], order[j] = order[j], order[i] })
				var loss float64
				for lo := 0; lo < len(order); lo += cfg.Batch {
					idx := order[lo:min(lo+cfg.Batch, len(order))]
					loss += adaptLoss(w, d, tr, idx, lambda, grad) * float64(len(idx))
					opt.step(w, grad)
				}
				score := devPearson(w, d, dv)
				cfg.Logger.Debug("adaptation epoch", "lr", lr, "lambda", lambda, "epoch", epoch, "train_loss", loss/float64(len(order)), "dev_pearson", score)
				if score > trial.DevPearson {
					trial.DevPearson, trial.Epochs = score, epoch
				}
				if score > bestScore {
					bestScore = score
					copy(best, w)
					chosen = AdaptHyper{LearningRate: lr, Lambda: lambda, Epochs: epoch, Batch: cfg.Batch}
				}
			}
			cfg.Logger.Info("adaptation trial", "lr", lr, "lambda", lambda, "best_epoch", trial.Epochs, "dev_pearson", trial.DevPearson)
			trials = append(trials, trial)
		}
	}
	a := &Adaptation{Name: AdaptationLinear, Dim: d, W: make([]float32, d*d)}
	for i, x := range best {
		a.W[i] = float32(x)
	}
	return a, trials, chosen, nil
}

func slicesClone(x []float64) []float64 { return append([]float64(nil), x...) }

// adaptData is AdaptPairs in float64.
type adaptData struct {
	a, b [][]float64
	gold []float64
}

func toAdaptData(p AdaptPairs, d int) adaptData {
	f := func(v []float32) []float64 {
		out := make([]float64, d)
		for i, x := range v {
			out[i] = float64(x)
		}
		return out
	}
	out := adaptData{a: make([][]float64, len(p.Gold)), b: make([][]float64, len(p.Gold)), gold: p.Gold}
	for i := range p.Gold {
		out.a[i], out.b[i] = f(p.A[i]), f(p.B[i])
	}
	return out
}

// matVec sets x = W u.
func matVec(x, w []float64, d int, u []float64) {
	for k := range d {
		row := w[k*d : (k+1)*d]
		var s float64
		for j, uj := range u {
			s += row[j] * uj
		}
		x[k] = s
	}
}

func dot(x, y []float64) float64 {
	var s float64
	for i := range x {
		s += x[i] * y[i]
	}
	return s
}

// adaptCosLimit keeps arccos's derivative finite: a cosine beyond it (a
// pair mapped to the same direction, such as a text paired with itself,
// whose cosine stays 1 whatever W) counts as ±1 and contributes no
// gradient.
const adaptCosLimit = 1 - 1e-9

// angularSim is 1 − arccos(c)/π for c clamped to [−1, 1].
func angularSim(c float64) float64 { return 1 - math.Acos(max(-1, min(1, c)))/math.Pi }

// adaptLoss is the objective on the pairs idx, (1/n) Σ (sim(Wa, Wb) −
// gold)² + λ‖W − I‖², and sets grad to its gradient in W.
func adaptLoss(w []float64, d int, p adaptData, idx []int, lambda float64, grad []float64) float64 {
	clear(grad)
	x, y := make([]float64, d), make([]float64, d)
	n := float64(len(idx))
	var loss float64
	for _, i := range idx {
		a, b := p.a[i], p.b[i]
		matVec(x, w, d, a)
		matVec(y, w, d, b)
		nx, ny := math.Sqrt(dot(x, x)), math.Sqrt(dot(y, y))
		if nx == 0 || ny == 0 {
			r := angularSim(0) - p.gold[i]
			loss += r * r / n
			continue
		}
		c := dot(x, y) / (nx * ny)
		if math.Abs(c) >= adaptCosLimit {
			// Taken as ±1 exactly: rounding near 1 would otherwise be
			// magnified by arccos's infinite slope.
			r := angularSim(math.Copysign(1, c)) - p.gold[i]
			loss += r * r / n
			continue
		}
		r := angularSim(c) - p.gold[i]
		loss += r * r / n
		// d loss / d c = 2r/n · 1/(π√(1−c²)); dc/dx = y/(|x||y|) − c x/|x|².
		coef := 2 * r / n / (math.Pi * math.Sqrt(1-c*c))
		for k := range d {
			gx := coef * (y[k]/(nx*ny) - c*x[k]/(nx*nx))
			gy := coef * (x[k]/(nx*ny) - c*y[k]/(ny*ny))
			row := grad[k*d : (k+1)*d]
			for j := range d {
				row[j] += gx*a[j] + gy*b[j]
			}
		}
	}
	for i := range w {
		diff := w[i]
		if i%(d+1) == 0 { // the diagonal
			diff--
		}
		loss += lambda * diff * diff
		grad[i] += 2 * lambda * diff
	}
	return loss
}

// devPearson is the Pearson ×100 of the angular similarity of the pairs
// mapped by w (float64) with the gold scores.
func devPearson(w []float64, d int, p adaptData) float64 {
	x, y := make([]float64, d), make([]float64, d)
	sim := make([]float64, len(p.gold))
	for i := range p.gold {
		matVec(x, w, d, p.a[i])
		matVec(y, w, d, p.b[i])
		nx, ny := math.Sqrt(dot(x, x)), math.Sqrt(dot(y, y))
		c := 0.0
		if nx > 0 && ny > 0 {
			c = dot(x, y) / (nx * ny)
		}
		sim[i] = angularSim(c)
	}
	return 100 * metric.Pearson(sim, p.gold)
}

// adam is Adam (Kingma & Ba 2015) with the usual β1 0.9, β2 0.999, ε 1e-8.
type adam struct {
	lr   float64
	m, v []float64
	t    int
}

func newAdam(n int, lr float64) *adam {
	return &adam{lr: lr, m: make([]float64, n), v: make([]float64, n)}
}

func (o *adam) step(w, g []float64) {
	const b1, b2, eps = 0.9, 0.999, 1e-8
	o.t++
	c1, c2 := 1-math.Pow(b1, float64(o.t)), 1-math.Pow(b2, float64(o.t))
	for i := range w {
		o.m[i] = b1*o.m[i] + (1-b1)*g[i]
		o.v[i] = b2*o.v[i] + (1-b2)*g[i]*g[i]
		w[i] -= o.lr * (o.m[i] / c1) / (math.Sqrt(o.v[i]/c2) + eps)
	}
}

// AdaptEmbeddings embeds the pairs of set s with emb (frozen, no
// adaptation), gold scaled to [0, 1].
func AdaptEmbeddings(ctx context.Context, emb *Embedder, s *Set) (AdaptPairs, error) {
	as, bs := make([][]string, len(s.Pairs)), make([][]string, len(s.Pairs))
	p := AdaptPairs{Gold: make([]float64, len(s.Pairs))}
	for i, pr := range s.Pairs {
		as[i], bs[i] = pr.A, pr.B
		p.Gold[i] = pr.Gold / adaptGoldMax
	}
	var err error
	if p.A, err = emb.Embed(ctx, as); err != nil {
		return p, err
	}
	if p.B, err = emb.Embed(ctx, bs); err != nil {
		return p, err
	}
	return p, nil
}

// Adapt trains the STS adaptation of the checkpoint cfg.Checkpoint on the
// stsb/train pairs of cfg.Eval, chooses it on stsb/dev, stores it in the
// checkpoint directory (AdaptFile, AdaptInfoFile) and returns it.
func Adapt(ctx context.Context, cfg AdaptConfig) (*Adaptation, error) {
	if cfg.Checkpoint == "" || cfg.Eval == "" {
		return nil, errors.New("evalsink: adaptation: give the checkpoint and the evaluation shards")
	}
	cfg = cfg.withDefaults()
	ck, err := readCheckpointInfo(cfg.Checkpoint)
	if err != nil {
		return nil, err
	}
	sets, err := LoadSets(ctx, cfg.Eval, cfg.Logger)
	if err != nil {
		return nil, err
	}
	var train, dev *Set
	for _, s := range sets.Sets {
		switch s.Dataset {
		case AdaptTrainSet:
			train = s
		case AdaptDevSet:
			dev = s
		}
	}
	if train == nil || dev == nil {
		return nil, fmt.Errorf("evalsink: adaptation: %s holds no %s and %s: extract the STS Benchmark's sts-train.csv and sts-dev.csv with parastream extract --corpus stsb", cfg.Eval, AdaptTrainSet, AdaptDevSet)
	}
	emb, _, err := OpenEmbedder(ck.dir, cfg.ContextFor)
	if err != nil {
		return nil, fmt.Errorf("adaptation: %w", err)
	}
	defer emb.Close()
	trp, err := AdaptEmbeddings(ctx, emb, train)
	if err != nil {
		return nil, err
	}
	dvp, err := AdaptEmbeddings(ctx, emb, dev)
	if err != nil {
		return nil, err
	}
	a, trials, chosen, err := TrainAdaptation(ctx, trp, dvp, cfg)
	if err != nil {
		return nil, err
	}
	a.ModelHash = ck.modelHash
	a.Info = AdaptInfo{
		Adaptation: AdaptationLinear,
		Objective:  "mean squared error of 1 − arccos(cos(Wu, Wv))/π against gold/5, plus λ‖W − I‖²; W from the identity; Adam on minibatches; learning rate, λ and epoch chosen on the dev Pearson (angular)",
		Checkpoint: ck.dir, ModelHash: ck.modelHash, DataHash: sets.DataHash,
		Train: AdaptTrainSet, Dev: AdaptDevSet, TrainPairs: len(trp.Gold), DevPairs: len(dvp.Gold),
		Dim: a.Dim, Seed: cfg.Seed,
		DevBefore: AdaptPearson(dvp, nil), DevAfter: AdaptPearson(dvp, a),
		Chosen: chosen, Trials: trials, TrainedAt: time.Now().UTC().Truncate(time.Second),
	}
	if err := SaveAdaptation(ck.dir, a); err != nil {
		return nil, err
	}
	return a, nil
}

// RunAdapt is `parastream adapt`: Adapt, then a summary on w.
func RunAdapt(ctx context.Context, cfg AdaptConfig, w io.Writer) error {
	a, err := Adapt(ctx, cfg)
	if err != nil {
		return err
	}
	in := a.Info
	fmt.Fprintf(w, "STS adaptation of %s (dim %d): trained on %s (%d pairs), chosen on %s (%d pairs)\n", in.Checkpoint, in.Dim, in.Train, in.TrainPairs, in.Dev, in.DevPairs)
	fmt.Fprintf(w, "  chosen: learning rate %g, lambda %g, epoch %d of %d, batch %d (%d trials)\n", in.Chosen.LearningRate, in.Chosen.Lambda, in.Chosen.Epochs, cmp.Or(cfg.Epochs, DefaultAdaptEpochs), in.Chosen.Batch, len(in.Trials))
	fmt.Fprintf(w, "  STSb dev Pearson x100, angular (Yang et al. Eq. 2): out of the box %.2f, adapted %.2f\n", in.DevBefore.Angular, in.DevAfter.Angular)
	fmt.Fprintf(w, "  STSb dev Pearson x100, cosine:                      out of the box %.2f, adapted %.2f\n", in.DevBefore.Cosine, in.DevAfter.Cosine)
	fmt.Fprintf(w, "  wrote %s and %s; evaluate with parastream eval run --adapt\n", filepath.Join(in.Checkpoint, AdaptFile), AdaptInfoFile)
	return nil
}
