package cuda

import (
	"context"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"strings"

	"github.com/parastream/parastream/trainstep/compute"
)

// The self-check: one forward-backward-update of a tiny model on the
// device and on the emulator (the kernels' Go twins, cublasSgemm's
// contract in Go), from the same parameters and batch, compared value by
// value. `parastream device check` runs it for every encoder and loss the
// backend has, eagerly and replayed from a CUDA graph; a training run on
// the GPU runs it for its own model before its first step
// (Options.SelfCheck, in Build) and refuses to train when it fails.

// DefaultCheckTolerance is the largest relative difference a self-check
// accepts: |device − emulator| over 1e-2 + max|emulator| of the tensor
// (float32 rounding of a few hundred operations, summed in another order
// on the device, stays two orders of magnitude below it).
const DefaultCheckTolerance = 1e-3

// checkSteps are the steps of a case replayed from a CUDA graph: each of
// the two upload buffers runs eagerly once (sizing the workspace), is
// captured once, and the fifth step replays the first's graph; the update
// is captured at the second step and replayed from the third. The steps
// before the last train with a learning rate of 0, so that the compared
// step starts from the same parameters on both.
const checkSteps = 5

// CheckCase is one case of a self-check: an encoder and a loss, run
// eagerly (every kernel launched one by one) or replayed from a CUDA
// graph.
type CheckCase struct {
	Encoder, Loss string
	Graphs        bool
}

func (c CheckCase) String() string {
	mode := "eager"
	if c.Graphs {
		mode = "graph"
	}
	return fmt.Sprintf("%s/%s %s", c.Encoder, c.Loss, mode)
}

// CheckCases are every encoder × loss the CUDA backend has (its encoder
// table in the order of compute.EncoderSpecs, its losses), each eager and
// replayed from a CUDA graph.
func CheckCases() []CheckCase {
	var out []CheckCase
	for _, enc := range supportedEncoders() {
		for _, loss := range supportedLosses() {
			out = append(out, CheckCase{enc, loss, false}, CheckCase{enc, loss, true})
		}
	}
	return out
}

// CheckConfig configures a self-check. The zero value checks every case
// of CheckCases with the default settings.
type CheckConfig struct {
	// Cases to run (nil: CheckCases()).
	Cases []CheckCase
	// Train is the run's model configuration: each case keeps its
	// negatives, regularisers, optimiser and embedding update, on a tiny
	// model of the case's encoder and loss (checkModel). Zero: the
	// defaults.
	Train compute.Config
	// Tolerance is the largest relative difference accepted (0:
	// DefaultCheckTolerance).
	Tolerance float64
	// Seed draws the parameters and batches (0: 1).
	Seed uint64
}

// DeviceCheck is the configuration of `parastream device check`: every
// case, with dropout, word dropout, λc, λw and mix negatives on, and the
// mnrl loss symmetric with Matryoshka prefixes, so that the noise,
// regularisers' and prefixes' kernels run too.
func DeviceCheck() CheckConfig {
	return CheckConfig{Train: compute.Config{Dropout: 0.1, WordDropout: 0.1, LambdaC: 0.01, LambdaW: 0.02, Negatives: compute.NegMix,
		Symmetric: true, Matryoshka: []int{2}}}
}

// Validate says what is wrong with c and how to fix it.
func (c CheckConfig) Validate() error {
	if c.Tolerance < 0 || math.IsNaN(c.Tolerance) {
		return fmt.Errorf("self-check tolerance %v: give a positive relative difference, or 0 for %g", c.Tolerance, DefaultCheckTolerance)
	}
	for _, cs := range c.Cases {
		if err := Supports(compute.Config{Encoder: cs.Encoder, Loss: cs.Loss}); err != nil {
			return fmt.Errorf("self-check case %s: %w", cs, err)
		}
	}
	if c.Train.Context != "" || c.Train.NLIHidden > 0 {
		return Supports(c.Train)
	}
	return nil
}

func (c CheckConfig) tolerance() float64 {
	if c.Tolerance == 0 {
		return DefaultCheckTolerance
	}
	return c.Tolerance
}

// CaseResult is what one case found.
type CaseResult struct {
	Case CheckCase
	// MaxRelDiff is the largest relative difference between the device
	// and the emulator (Inf for a non-finite value), at Worst ("loss",
	// "gradient of lstm.Wx", "lstm.Wx after the update").
	MaxRelDiff float64
	Worst      string
	// Compared counts the tensors compared (losses, gradients, updates).
	Compared int
	// Captures and Replays count the CUDA graphs of the case (Graphs).
	Captures, Replays int
	// Err is why the case failed: a difference over the tolerance, a
	// capture refused, or an error of the device.
	Err error
}

// Pass reports whether the case passed.
func (r CaseResult) Pass() bool { return r.Err == nil }

// Versions are the libraries a backend runs on (zero for the emulator).
type Versions struct {
	Driver    int    // CUDA driver API version, e.g. 13000
	NVRTC     string // e.g. "13.0"
	CUBLAS    int    // e.g. 130100 (cublasGetVersion)
	Arch      int    // the virtual architecture the kernels were compiled for
	PTXCached bool   // the kernels' PTX came from the cache
	Kernels   int    // kernels loaded
}

// Report is a self-check's outcome: the backend, its libraries, one result
// a case.
type Report struct {
	Backend   string
	Device    DeviceInfo
	Versions  Versions
	Tolerance float64
	Results   []CaseResult
}

// Failed are the cases that failed.
func (r Report) Failed() []CaseResult {
	var out []CaseResult
	for _, c := range r.Results {
		if !c.Pass() {
			out = append(out, c)
		}
	}
	return out
}

// SelfCheck runs cfg's cases on b against the emulator and reports one
// result a case; the error is a setting that is wrong or ctx's. A case's
// failure is in its result (Report.Failed), not in the error.
func (b *Backend) SelfCheck(ctx context.Context, cfg CheckConfig) (Report, error) {
	rep := Report{Backend: b.Name(), Device: b.info, Versions: b.dev.versions(), Tolerance: cfg.tolerance()}
	if err := cfg.Validate(); err != nil {
		return rep, err
	}
	cases := cfg.Cases
	if cases == nil {
		cases = CheckCases()
	}
	for _, cs := range cases {
		if err := ctx.Err(); err != nil {
			return rep, err
		}
		rep.Results = append(rep.Results, b.checkCase(cs, cfg))
	}
	return rep, nil
}

// checkModel is a tiny model of encoder enc and loss with train's
// negatives, regularisers, optimiser and embedding update (and the mnrl
// loss's options), not yet
// defaulted: dimension 6 and hidden 5 (sizes that differ, so that a
// transposed product cannot line up by accident), 23 words, batches of 5
// pairs, and the smallest layers of each encoder and loss. The recurrent
// encoders start from Glorot's initialisation, whose gates are not
// saturated: a wrong term would hide behind σ' ≈ 0.
func checkModel(train compute.Config, enc, loss string) compute.Config {
	c := compute.Config{Encoder: enc, Loss: loss, Dim: 6, Hidden: 5, Vocab: 23, BatchSize: 5, BucketWidth: 4, Seed: 3,
		Dropout: train.Dropout, WordDropout: train.WordDropout, Scramble: train.Scramble,
		LambdaC: train.LambdaC, LambdaW: train.LambdaW, Optimizer: train.Optimizer,
		EmbeddingUpdate: train.EmbeddingUpdate, TrainCellBias: train.TrainCellBias}
	if loss == compute.LossMargin {
		c.Negatives = train.Negatives
	}
	if enc != compute.EncAvg && enc != compute.EncDAN {
		c.RecurrentInit = compute.RecurrentInitGlorot
	}
	switch enc {
	case compute.EncGRAN5:
		c.Hidden = c.Dim
	case compute.EncDAN:
		c.DANLayers, c.BigramBuckets = []int{7, 4}, 11
	case compute.EncTransformer:
		c.TFLayers, c.TFHeads, c.TFFilter = 2, 2, 7
	}
	switch loss {
	case compute.LossHinge:
		c.HingeK = 2
	case compute.LossSoftmax:
		c.RespHidden = []int{4}
	case compute.LossSim:
		c.SimHidden = 4
	case compute.LossMNRL:
		// train's scale and symmetric loss; with Matryoshka prefixes, two
		// on the tiny model: its whole embedding and one unit less.
		c.Scale, c.Symmetric = train.Scale, train.Symmetric
		if len(train.Matryoshka) > 0 {
			e := c.Defaults().EmbedDim()
			c.Matryoshka = []int{e, e - 1}
		}
	}
	return c
}

// checkParams are cfg's initial parameters, scaled by 4 so that gates and
// cosines are away from their linear regime and the hinge is active, and
// moved by up to ±0.25, so that biases and peepholes are not zero, where a
// wrong gradient term would go unseen. The transformer's are not scaled:
// it has no gates to saturate, and scaled by 4 its first attention's
// softmax saturates and its gradients are float32's rounding (the CPU
// backend's own float32 run is as far from its float64 run as the
// tolerance).
func checkParams(cfg compute.Config, rng *rand.Rand) []compute.Tensor {
	ps := compute.InitParams(cfg, rng)
	for i := range ps {
		scale := float32(4)
		if strings.HasPrefix(ps[i].Name, "tf.") {
			scale = 1
		}
		for j := range ps[i].Data {
			ps[i].Data[j] = scale*ps[i].Data[j] + float32(rng.Float64()-0.5)/2
		}
	}
	return ps
}

// checkBatch draws cfg.BatchSize pairs of lengths 1 to 5: the same shape
// at every step, with new words, noise, negatives and labels, and a word
// in both sides of each pair (its gradient is a sum).
func checkBatch(cfg compute.Config, rng *rand.Rand) (*compute.Batch, error) {
	var a, b [][]int32
	var labels []float32
	for i := range cfg.BatchSize {
		sa, sb := make([]int32, 1+(i*3)%5), make([]int32, 1+(i*2+2)%5)
		for j := range sa {
			sa[j] = rng.Int32N(int32(cfg.Vocab))
		}
		for j := range sb {
			sb[j] = rng.Int32N(int32(cfg.Vocab))
		}
		sb[0] = sa[0]
		a, b = append(a, sa), append(b, sb)
		if cfg.Loss == compute.LossSim {
			labels = append(labels, float32(rng.IntN(51))/10)
		}
	}
	return compute.NewBatch(cfg, a, b, labels, rng)
}

// checkCase runs one case: the same steps on b and on a fresh emulator
// (with b's TF32 setting), compared at the last step.
func (b *Backend) checkCase(cs CheckCase, cc CheckConfig) (res CaseResult) {
	res.Case = cs
	cfg := checkModel(cc.Train, cs.Encoder, cs.Loss).Defaults()
	if err := cfg.Validate(); err != nil {
		res.Err = err
		return res
	}
	seed := cc.Seed
	if seed == 0 {
		seed = 1
	}
	ps := checkParams(cfg, rand.New(rand.NewPCG(seed, 5)))
	opts := b.opts
	opts.NoGraphs, opts.MaxGraphs = !cs.Graphs, 0
	ref := EmulatorWith(Options{NoGraphs: true, TF32: b.opts.TF32})
	want, err := ref.build(cfg, ps, ref.opts)
	if err != nil {
		res.Err = fmt.Errorf("building on the emulator: %w", err)
		return res
	}
	defer want.Close()
	got, err := b.build(cfg, ps, opts)
	if err != nil {
		res.Err = err
		return res
	}
	defer got.Close()
	steps := 1
	if cs.Graphs {
		steps = checkSteps
	}
	cmp := comparison{tol: cc.tolerance()}
	rng := rand.New(rand.NewPCG(seed, 11))
	for step := 1; step <= steps; step++ {
		bt, err := checkBatch(cfg, rng)
		if err != nil {
			res.Err = err
			return res
		}
		last := step == steps
		if res.Err = cmp.step(got, want, bt, int64(step), last); res.Err != nil {
			return res
		}
	}
	res.MaxRelDiff, res.Worst, res.Compared = cmp.worst, cmp.where, cmp.n
	if c := got.graphs; c != nil {
		res.Captures, res.Replays = c.captures, c.replays
		if c.replays == 0 || len(c.refused) > 0 {
			res.Err = errors.New("no step was replayed from a CUDA graph")
			for key, why := range c.refused {
				res.Err = fmt.Errorf("the capture of the step of %v was refused: %w", key, why)
			}
			return res
		}
	}
	if cmp.worst > cmp.tol {
		res.Err = fmt.Errorf("%s differs from the emulator's by %.2g: %w %.0g", cmp.where, cmp.worst, errOverTolerance, cmp.tol)
	}
	return res
}

// build is Build with opts in place of b's.
func (b *Backend) build(cfg compute.Config, ps []compute.Tensor, opts Options) (*model, error) {
	if err := b.dev.enter(); err != nil {
		return nil, err
	}
	defer b.dev.exit()
	m, err := newModel(b.dev, cfg, ps, opts)
	if err != nil {
		return nil, fmt.Errorf("building %s model on %s: %w", cfg.Encoder, b.dev.name(), err)
	}
	return m, nil
}

// comparison keeps the largest relative difference seen and where ("" while
// every one has been 0), and counts the tensors compared.
type comparison struct {
	tol   float64
	worst float64
	where string
	n     int
}

func (c *comparison) note(d float64, where string) {
	if math.IsNaN(d) {
		d = math.Inf(1)
	}
	c.n++
	if d > c.worst {
		c.worst, c.where = d, where
	}
}

// step runs one forward-backward-update on got and want. Before the
// last step the update's learning rate is 0 (the parameters stay the
// same on both); at the last, the gradients and the update are compared
// too.
func (c *comparison) step(got, want *model, bt *compute.Batch, step int64, last bool) error {
	lg, err := got.ForwardBackward(bt)
	if err != nil {
		return fmt.Errorf("step %d on %s: %w", step, got.dev.name(), err)
	}
	lw, err := want.ForwardBackward(bt)
	if err != nil {
		return fmt.Errorf("step %d on the emulator: %w", step, err)
	}
	c.note(relDiff([]float32{float32(lg)}, []float32{float32(lw)}, 1e-2), fmt.Sprintf("the loss of step %d", step))
	if !last {
		if err := got.Update(step, 0); err != nil {
			return fmt.Errorf("update %d on %s: %w", step, got.dev.name(), err)
		}
		return want.Update(step, 0)
	}
	gw := want.Grads()
	for i, g := range got.Grads() {
		c.note(relDiff(g.Data, gw[i].Data, 1e-2), "the gradient of "+g.Name)
	}
	return c.update(got, want, gw, step)
}

// update runs the last step's update on got and want and compares what
// it changed in each parameter, relative to the largest change (at least
// 1e-2·lr): a wrong term in an update kernel shows there, where the
// parameters themselves, of order 1, would hide it. With Adam and RMSProp
// the values whose gradient is within the tolerance of 0 are left out:
// their first steps are ±lr (times a constant) whatever the gradient's
// size, and the gradients' comparison does not fix its sign on the device.
func (c *comparison) update(got, want *model, gw []compute.Tensor, step int64) error {
	lr := got.cfg.LR
	before, beforeW := got.Params(), want.Params()
	if err := got.Update(step, lr); err != nil {
		return fmt.Errorf("update %d on %s: %w", step, got.dev.name(), err)
	}
	if err := want.Update(step, lr); err != nil {
		return fmt.Errorf("update %d on the emulator: %w", step, err)
	}
	adaptive := got.cfg.Optimizer != compute.OptSGD
	after := want.Params()
	for i, p := range got.Params() {
		g, w := minus(p.Data, before[i].Data), minus(after[i].Data, beforeW[i].Data)
		if adaptive && gw[i].Name == p.Name && len(gw[i].Data) == len(w) {
			g, w = withoutSmallGrads(g, w, gw[i].Data, c.tol)
		}
		c.note(relDiff(g, w, 1e-2*lr), "the update of "+p.Name)
	}
	return nil
}

// minus is a − b.
func minus(a, b []float32) []float32 {
	out := make([]float32, len(a))
	for i := range a {
		out[i] = a[i] - b[i]
	}
	return out
}

// withoutSmallGrads are got and want less the values whose gradient is
// within tol of 0, relative to the tensor's gradient as relDiff measures.
func withoutSmallGrads(got, want, grad []float32, tol float64) ([]float32, []float32) {
	var scale float64
	for _, v := range grad {
		scale = max(scale, math.Abs(float64(v)))
	}
	var g, w []float32
	for i, v := range grad {
		if math.Abs(float64(v)) > tol*(1e-2+scale) {
			g, w = append(g, got[i]), append(w, want[i])
		}
	}
	return g, w
}

// relDiff is max|got − want| / (floor + max|want|): with floor 1e-2, at
// most 1e-3 is the float32 tolerance of the backend's tests (1e-5 +
// 1e-3·max|want|). A non-finite value or a length mismatch is +Inf.
func relDiff(got, want []float32, floor float64) float64 {
	if len(got) != len(want) {
		return math.Inf(1)
	}
	var scale, d float64
	for i := range want {
		w, g := float64(want[i]), float64(got[i])
		if math.IsNaN(g) || math.IsInf(g, 0) {
			return math.Inf(1)
		}
		scale = max(scale, math.Abs(w))
		d = max(d, math.Abs(g-w))
	}
	return d / (floor + scale)
}
