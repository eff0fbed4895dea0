package adapt

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"math"
	"math/rand/v2"
	"path/filepath"
	"time"

	"github.com/parastream/parastream/evalsink"
	"github.com/parastream/parastream/evalsink/metric"
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

// Sets the adaptation trains and is chosen on.
const (
	TrainSet = "stsb/train"
	DevSet   = "stsb/dev"
)

// Defaults of Config.
const (
	DefaultEpochs = 20
	DefaultBatch  = 64
)

// goldMax is the top of the STS Benchmark's gold scale.
const goldMax = 5

// Config configures Fit and Run. Zero values give the defaults.
type Config struct {
	// Checkpoint is the checkpoint directory; the adaptation is written
	// into it. Required.
	Checkpoint string
	// Eval is the evaluation shards holding stsb/train and stsb/dev
	// (parastream extract --corpus stsb). Required.
	Eval string
	// Seed seeds the minibatch order; 0 means evalsink.DefaultSeed.
	Seed uint64
	// Epochs is the most passes over the train pairs of each trial; 0
	// means DefaultEpochs.
	Epochs int
	// Batch is the pairs per Adam step; 0 means DefaultBatch.
	Batch int
	// LearningRates and Lambdas are the grid searched (every pair); nil
	// means DefaultLearningRates, DefaultLambdas.
	LearningRates, Lambdas []float64
	// ContextFor: see evalsink.Config.ContextFor.
	ContextFor evalsink.ContextFunc
	// Logger receives progress; nil discards it.
	Logger *slog.Logger
}

// DefaultLearningRates are the Adam learning rates tried.
func DefaultLearningRates() []float64 { return []float64{1e-3, 3e-3, 1e-2} }

// DefaultLambdas are the weights of ‖W − I‖² tried.
func DefaultLambdas() []float64 { return []float64{0, 1e-3, 1e-2} }

// Validate says what a Fit needs that c lacks.
func (c Config) Validate() error {
	if c.Checkpoint == "" || c.Eval == "" {
		return errors.New("evalsink: adaptation: give the checkpoint and the evaluation shards")
	}
	return nil
}

func (c Config) withDefaults() Config {
	c.Seed = cmp.Or(c.Seed, evalsink.DefaultSeed)
	c.Epochs = cmp.Or(c.Epochs, DefaultEpochs)
	c.Batch = cmp.Or(c.Batch, DefaultBatch)
	if len(c.LearningRates) == 0 {
		c.LearningRates = DefaultLearningRates()
	}
	if len(c.Lambdas) == 0 {
		c.Lambdas = DefaultLambdas()
	}
	if c.Logger == nil {
		c.Logger = slog.New(slog.DiscardHandler)
	}
	return c
}

// Pairs are the frozen embeddings of graded pairs, gold in [0, 1].
type Pairs struct {
	A, B [][]float32
	Gold []float64
}

// Pearson is the figures of pairs mapped by a (nil: as they are),
// computed as the evaluator does (float32 vectors, metric.Cosine).
func Pearson(p Pairs, a *evalsink.Adaptation) evalsink.AdaptFigures {
	cos, ang := make([]float64, len(p.Gold)), make([]float64, len(p.Gold))
	for i := range p.Gold {
		u, v := p.A[i], p.B[i]
		if a != nil {
			u, v = a.Apply(u), a.Apply(v)
		}
		cos[i] = metric.Cosine(u, v)
		ang[i] = metric.Angular(cos[i])
	}
	return evalsink.AdaptFigures{Angular: 100 * metric.Pearson(ang, p.Gold), Cosine: 100 * metric.Pearson(cos, p.Gold)}
}

// Train searches cfg's grid (learning rate × λ, each trial
// from the identity for up to cfg.Epochs epochs of Adam on minibatches
// drawn from cfg.Seed) and returns the W of the best dev Pearson (angular)
// over every trial and epoch, epoch 0 (the identity) included, with the
// trials. Deterministic given the data and cfg.
func Train(ctx context.Context, train, dev Pairs, cfg Config) (*evalsink.Adaptation, []evalsink.AdaptTrial, evalsink.AdaptHyper, error) {
	cfg = cfg.withDefaults()
	if len(train.Gold) == 0 || len(dev.Gold) == 0 {
		return nil, nil, evalsink.AdaptHyper{}, errors.New("evalsink: adaptation: no train or no dev pairs")
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
	chosen := evalsink.AdaptHyper{Batch: cfg.Batch}
	var trials []evalsink.AdaptTrial
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
			trial := evalsink.AdaptTrial{AdaptHyper: evalsink.AdaptHyper{LearningRate: lr, Lambda: lambda, Batch: cfg.Batch}, DevPearson: identityScore}
			for epoch := 1; epoch <= cfg.Epochs; epoch++ {
				if err := ctx.Err(); err != nil {
					return nil, nil, evalsink.AdaptHyper{}, err
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
					chosen = evalsink.AdaptHyper{LearningRate: lr, Lambda: lambda, Epochs: epoch, Batch: cfg.Batch}
				}
			}
			cfg.Logger.Info("adaptation trial", "lr", lr, "lambda", lambda, "best_epoch", trial.Epochs, "dev_pearson", trial.DevPearson)
			trials = append(trials, trial)
		}
	}
	a := &evalsink.Adaptation{Name: evalsink.AdaptationLinear, Dim: d, W: make([]float32, d*d)}
	for i, x := range best {
		a.W[i] = float32(x)
	}
	return a, trials, chosen, nil
}

func slicesClone(x []float64) []float64 { return append([]float64(nil), x...) }

// adaptData is Pairs in float64.
type adaptData struct {
	a, b [][]float64
	gold []float64
}

func toAdaptData(p Pairs, d int) adaptData {
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

// Embeddings embeds the pairs of set s with emb (frozen, no
// adaptation), gold scaled to [0, 1].
func Embeddings(ctx context.Context, emb *evalsink.Embedder, s *evalsink.Set) (Pairs, error) {
	as, bs := make([][]string, len(s.Pairs)), make([][]string, len(s.Pairs))
	p := Pairs{Gold: make([]float64, len(s.Pairs))}
	for i, pr := range s.Pairs {
		as[i], bs[i] = pr.A, pr.B
		p.Gold[i] = pr.Gold / goldMax
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

// Fit trains the STS adaptation of the checkpoint cfg.Checkpoint on the
// stsb/train pairs of cfg.Eval, chooses it on stsb/dev, stores it in the
// checkpoint directory (evalsink.AdaptFile, evalsink.AdaptInfoFile) and
// returns it.
func Fit(ctx context.Context, cfg Config) (*evalsink.Adaptation, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	cfg = cfg.withDefaults()
	dir, modelHash, err := evalsink.CheckpointHash(cfg.Checkpoint)
	if err != nil {
		return nil, err
	}
	sets, err := evalsink.LoadSets(ctx, cfg.Eval, cfg.Logger)
	if err != nil {
		return nil, err
	}
	var train, dev *evalsink.Set
	for _, s := range sets.Sets {
		switch s.Dataset {
		case TrainSet:
			train = s
		case DevSet:
			dev = s
		}
	}
	if train == nil || dev == nil {
		return nil, fmt.Errorf("evalsink: adaptation: %s holds no %s and %s: extract the STS Benchmark's sts-train.csv and sts-dev.csv with parastream extract --corpus stsb", cfg.Eval, TrainSet, DevSet)
	}
	emb, _, err := evalsink.OpenEmbedder(dir, cfg.ContextFor)
	if err != nil {
		return nil, fmt.Errorf("adaptation: %w", err)
	}
	defer emb.Close()
	trp, err := Embeddings(ctx, emb, train)
	if err != nil {
		return nil, err
	}
	dvp, err := Embeddings(ctx, emb, dev)
	if err != nil {
		return nil, err
	}
	a, trials, chosen, err := Train(ctx, trp, dvp, cfg)
	if err != nil {
		return nil, err
	}
	a.ModelHash = modelHash
	a.Info = evalsink.AdaptInfo{
		Adaptation: evalsink.AdaptationLinear,
		Objective:  "mean squared error of 1 − arccos(cos(Wu, Wv))/π against gold/5, plus λ‖W − I‖²; W from the identity; Adam on minibatches; learning rate, λ and epoch chosen on the dev Pearson (angular)",
		Checkpoint: dir, ModelHash: modelHash, DataHash: sets.DataHash,
		Train: TrainSet, Dev: DevSet, TrainPairs: len(trp.Gold), DevPairs: len(dvp.Gold),
		Dim: a.Dim, Seed: cfg.Seed,
		DevBefore: Pearson(dvp, nil), DevAfter: Pearson(dvp, a),
		Chosen: chosen, Trials: trials, TrainedAt: time.Now().UTC().Truncate(time.Second),
	}
	if err := evalsink.SaveAdaptation(dir, a); err != nil {
		return nil, err
	}
	return a, nil
}

// Run is `parastream adapt`: Fit, then a summary on w.
func Run(ctx context.Context, cfg Config, w io.Writer) error {
	a, err := Fit(ctx, cfg)
	if err != nil {
		return err
	}
	in := a.Info
	fmt.Fprintf(w, "STS adaptation of %s (dim %d): trained on %s (%d pairs), chosen on %s (%d pairs)\n", in.Checkpoint, in.Dim, in.Train, in.TrainPairs, in.Dev, in.DevPairs)
	fmt.Fprintf(w, "  chosen: learning rate %g, lambda %g, epoch %d of %d, batch %d (%d trials)\n", in.Chosen.LearningRate, in.Chosen.Lambda, in.Chosen.Epochs, cmp.Or(cfg.Epochs, DefaultEpochs), in.Chosen.Batch, len(in.Trials))
	fmt.Fprintf(w, "  STSb dev Pearson x100, angular (Yang et al. Eq. 2): out of the box %.2f, adapted %.2f\n", in.DevBefore.Angular, in.DevAfter.Angular)
	fmt.Fprintf(w, "  STSb dev Pearson x100, cosine:                      out of the box %.2f, adapted %.2f\n", in.DevBefore.Cosine, in.DevAfter.Cosine)
	fmt.Fprintf(w, "  wrote %s and %s; evaluate with parastream eval run --adapt\n", filepath.Join(in.Checkpoint, evalsink.AdaptFile), evalsink.AdaptInfoFile)
	return nil
}
