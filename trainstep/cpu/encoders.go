package cpu

import (
	"fmt"

	G "gorgonia.org/gorgonia"

	"github.com/parastream/parastream/trainstep/compute"
)

// encoderGraph holds the encoder part of a graph: inputs and the sentence
// embeddings of its R rows.
//
// The words come as one (T, R, Dim) input x, except for gran3 and gran4
// (stepwise), whose a_t depends on a_{t-1}: T inputs xs[t] of (R, Dim),
// with their masks one (R, dim) input a step. The LSTM of the other
// recurrent encoders is one fused node over all steps (lstm.go), and the
// GRAN gate another (gate.go). No graph slices a (T, ...) tensor per step:
// gorgonia's gradient of a slice is a zero tensor of the whole sliced shape
// with the slice's gradient added, so T slices of one (T, R, ·) tensor cost
// T² × R × · values (lstmavg at batch 100, dimension 300, 32 steps: 1.2 GB
// of its 1.7 GB; docs/trainstep.md, "Memory"); lstm takes one slice, its
// last step.
type encoderGraph struct {
	*ops
	cfg    compute.Config
	T, R   int
	params map[string]*G.Node
	// used are the parameters the graph reads (through p): those it
	// differentiates, and the only ones its step updates.
	used  map[string]bool
	x, xb *G.Node           // (T, R, Dim) gathered words; DAN bigrams
	xs    []*G.Node         // stepwise encoders: (R, Dim) words of step t
	ctx   *G.Node           // (R, Topics) topic vectors (Config.Context topics)
	masks map[int][]*G.Node // per step, (R, dim): 1 where t < len
	invs  map[int]*G.Node   // (R, dim): 1/len (DAN: 1/sqrt(len))
	lens  *G.Node           // (R): len, made on first use
	csaeN *csaeNodes        // the csae's context layer and target (csae.go)
	// builder builds the encoder's own part (encoderBuilders).
	builder encoderBuilder
}

// lengths is the (R) input of the rows' lengths, made on first use.
func (e *encoderGraph) lengths() *G.Node {
	if e.lens == nil {
		e.lens = e.input("lens", e.R)
	}
	return e.lens
}

func (e *encoderGraph) p(name string) *G.Node {
	n, ok := e.params[name]
	if !ok {
		panic("cpu: parameter " + name + " not in the graph")
	}
	e.used[name] = true
	return n
}

// mask is the (R, dim) mask input of step t, the T of them made on first
// use.
func (e *encoderGraph) mask(dim, t int) *G.Node {
	ms, ok := e.masks[dim]
	if !ok {
		ms = make([]*G.Node, e.T)
		for k := range ms {
			ms[k] = e.input(fmt.Sprintf("mask%d.%d", dim, k), e.R, dim)
		}
		e.masks[dim] = ms
	}
	return ms[t]
}

// inv is the (R, dim) 1/len input, made on first use.
func (e *encoderGraph) inv(dim int) *G.Node {
	if m, ok := e.invs[dim]; ok {
		return m
	}
	m := e.input(fmt.Sprintf("inv%d", dim), e.R, dim)
	e.invs[dim] = m
	return m
}

// zeros is a zero state of shape (R, dim): an input bound once, so that it
// belongs to the graph (a free constant cannot be broadcast against).
func (e *encoderGraph) zeros(dim int) *G.Node {
	return G.NewMatrix(e.g, e.dt, G.WithShape(e.R, dim), G.WithValue(e.zeroValue(e.R, dim)),
		G.WithName(fmt.Sprintf("zeros%d.%d", dim, e.g.AllNodes().Len())))
}

// carry keeps prev where the step is padding: prev + m⊙(next-prev).
func (e *encoderGraph) carry(prev, next, m *G.Node) *G.Node {
	return e.add(prev, e.prod(m, e.sub(next, prev)))
}

// lstmAll runs the peephole LSTM of Gers et al. (2003) with prefix over x
// (T, R, Dim), forward or backward in time, as one fused node (lstm.go),
// and returns h (T, R, H), index t being time t in either direction. At
// padded steps the state is carried unchanged, so a forward run's last h
// is that of the last word and a backward run starts at each sentence's
// own last word; zeroPad makes the output 0 there instead.
//
//	z = x_t·Wx + h_{t-1}·Wh + b, split into zi zf zg zo
//	i = σ(zi + pi⊙c_{t-1}), f = σ(zf + pf⊙c_{t-1}), g = tanh(zg)
//	c_t = f⊙c_{t-1} + i⊙g, o = σ(zo + po⊙c_t), h_t = o⊙tanh(c_t)
func (e *encoderGraph) lstmAll(prefix string, backward, zeroPad bool) *G.Node {
	xw := e.project(e.x, e.p(prefix+"lstm.wx"), nil)
	p := lstmWeights{wh: e.p(prefix + "lstm.wh"), b: e.p(prefix + "lstm.b"),
		pi: e.p(prefix + "lstm.pi"), pf: e.p(prefix + "lstm.pf"), po: e.p(prefix + "lstm.po")}
	return e.lstmNode(xw, p, e.lengths(), backward, zeroPad)
}

// lstmSteps is the same LSTM built step by step from the per-step inputs
// xs, for the encoders whose later steps depend on earlier outputs of
// their own (gran3, gran4): h_t (R, H) for every t.
func (e *encoderGraph) lstmSteps(prefix string, backward bool) []*G.Node {
	H := e.cfg.Hidden
	wx, b := e.p(prefix+"lstm.wx"), e.p(prefix+"lstm.b")
	wh, pi, pf, po := e.p(prefix+"lstm.wh"), e.p(prefix+"lstm.pi"), e.p(prefix+"lstm.pf"), e.p(prefix+"lstm.po")
	h, c := e.zeros(H), e.zeros(H)
	hs := make([]*G.Node, e.T)
	for k := range e.T {
		t := k
		if backward {
			t = e.T - 1 - k
		}
		z := e.add(e.linear(e.xs[t], wx, b), e.mul(h, wh))
		i := e.sigm(e.add(e.cols(z, 0, H), e.rowScale(c, pi)))
		f := e.sigm(e.add(e.cols(z, H, 2*H), e.rowScale(c, pf)))
		g := e.tanh(e.cols(z, 2*H, 3*H))
		cn := e.add(e.prod(f, c), e.prod(i, g))
		o := e.sigm(e.add(e.cols(z, 3*H, 4*H), e.rowScale(cn, po)))
		hn := e.prod(o, e.tanh(cn))
		mt := e.mask(H, t)
		c = e.carry(c, cn, mt)
		h = e.carry(h, hn, mt)
		hs[t] = h
	}
	return hs
}

// lstmMean is the mean of h_t over each sentence's words: Σ_t h_t / len.
func (e *encoderGraph) lstmMean(prefix string, backward bool) *G.Node {
	return e.prod(e.sum(e.lstmAll(prefix, backward, true), 0), e.inv(e.cfg.Hidden))
}

// gate is σ(x_t·Wx + h_t·Wh [+ a_{t-1}·Wa] + b) for every t.
type gate struct {
	wx, b, wh, wa *G.Node
}

func (e *encoderGraph) newGate(prefix, i string) gate {
	g := gate{wx: e.p(prefix + "gran.wx" + i), b: e.p(prefix + "gran.b" + i), wh: e.p(prefix + "gran.wh" + i)}
	if _, ok := e.params[prefix+"gran.wa"+i]; ok {
		g.wa = e.p(prefix + "gran.wa" + i)
	}
	return g
}

func (e *encoderGraph) gateAt(g gate, t int, h, aPrev *G.Node) *G.Node {
	z := e.add(e.linear(e.xs[t], g.wx, g.b), e.mul(h, g.wh))
	if g.wa != nil {
		z = e.add(z, e.mul(aPrev, g.wa))
	}
	return e.sigm(z)
}

// gran is the gated recurrent averaging network of Wieting & Gimpel (2017)
// §3.1 (Eq. 1) with prefix, in one direction: a_t = x_t ⊙ σ(W_x x_t + W_h h_t
// + b), averaged over the words.
//
// Every step at once: the gate's products are two GEMMs over all T·R rows,
// the rest one fused node (gate.go); no mask is needed, x being 0 at
// padded steps.
func (e *encoderGraph) gran(prefix string, backward bool) *G.Node {
	h := e.lstmAll(prefix, backward, false)
	zx := e.project(e.x, e.p(prefix+"gran.wx"), nil)
	zh := e.project(h, e.p(prefix+"gran.wh"), nil)
	return e.prod(e.gateSumNode(e.x, zx, zh, e.p(prefix+"gran.b")), e.inv(e.cfg.Dim))
}

// encode builds g(s) for the R rows: (R, EmbedDim), with the topic
// context added when the model has one: tanh(θ·W_θ + b_θ).
func (e *encoderGraph) encode() *G.Node {
	g := e.builder.build(e)
	if e.ctx == nil || e.builder.spec.OwnContext { // the csae's context is inside it
		return g
	}
	return e.add(g, e.tanh(e.linear(e.ctx, e.p(compute.ParamContextW), e.p(compute.ParamContextB))))
}

// encoderBuilder is the CPU backend's builder of one encoder.
type encoderBuilder struct {
	// build is the encoder of the words alone: g(s) for the R rows, (R,
	// EmbedDim).
	build func(e *encoderGraph) *G.Node
	// stepwise says that the encoder takes its words step by step (xs)
	// rather than as one tensor (x): gran3 and gran4, whose a_t depends on
	// a_{t-1} through the gates. The others run their LSTM as one fused
	// node over x and never slice it per step.
	stepwise bool
	// sqrtLen says that its 1/len inputs (inv) are 1/sqrt(len) (the DAN).
	sqrtLen bool
	// spec is the encoder's entry of the list, set by the model.
	spec compute.EncoderSpec
}

// encoderBuilders is the CPU backend's encoder table, keyed by
// compute.EncoderSpec.Name: the backend builds an encoder exactly when it
// has an entry here, and the entry's spec names compute.BackendCPU (a
// test checks that the two agree). Adding an encoder adds its entry to
// compute.EncoderSpecs, here, and to the CUDA backend's table if it runs
// on the GPU.
func encoderBuilders() map[string]encoderBuilder {
	return map[string]encoderBuilder{
		compute.EncAvg: {build: func(e *encoderGraph) *G.Node {
			// Padded and dropped words are zero rows of x.
			return e.prod(e.sum(e.x, 0), e.inv(e.cfg.Dim))
		}},
		// The state carried through padding: the last word's h.
		compute.EncLSTM: {build: (*encoderGraph).lastState},
		compute.EncEDD:  {build: (*encoderGraph).lastState},
		compute.EncLSTMAvg: {build: func(e *encoderGraph) *G.Node {
			return e.lstmMean("", false)
		}},
		compute.EncBiLSTMAvg: {build: func(e *encoderGraph) *G.Node {
			return e.add(e.lstmMean("fwd.", false), e.lstmMean("bwd.", true))
		}},
		compute.EncGRAN: {build: func(e *encoderGraph) *G.Node {
			return e.gran("", false)
		}},
		compute.EncBiGRAN: {build: func(e *encoderGraph) *G.Node {
			return e.add(e.gran("fwd.", false), e.gran("bwd.", true))
		}},
		compute.EncGRAN2:       {build: (*encoderGraph).gran2},
		compute.EncGRAN3:       {build: (*encoderGraph).granRunning, stepwise: true},
		compute.EncGRAN4:       {build: (*encoderGraph).granRunning, stepwise: true},
		compute.EncGRAN5:       {build: (*encoderGraph).gran5},
		compute.EncCSAE:        {build: (*encoderGraph).csae},
		compute.EncDAN:         {build: (*encoderGraph).dan, sqrtLen: true},
		compute.EncTransformer: {build: (*encoderGraph).transformer}, // transformer.go
	}
}

// lastState is the LSTM's state after the sentence's last word (lstm,
// and edd's encoder).
func (e *encoderGraph) lastState() *G.Node {
	return e.at(e.lstmAll("", false, false), e.T-1)
}

// gran2 applies the gate to h_t instead of x_t: Σ_t h_t⊙σ(x_t·Wx + h_t·Wh
// + b) with h 0 at padded steps.
func (e *encoderGraph) gran2() *G.Node {
	h := e.lstmAll("", false, true)
	zx := e.project(e.x, e.p("gran.wx"), nil)
	zh := e.project(h, e.p("gran.wh"), nil)
	return e.prod(e.gateSumNode(h, zx, zh, e.p("gran.b")), e.inv(e.cfg.Hidden))
}

// granRunning is gran3 and gran4 (whose gates also see a_{t-1}, through
// gran.wa1 and gran.wa2): a_t = x_t⊙g1 + a_{t-1}⊙g2, a running sum kept
// through padding; the embedding is a_{-1}/len. Step by step (stepwise).
func (e *encoderGraph) granRunning() *G.Node {
	d := e.cfg.Dim
	hs := e.lstmSteps("", false)
	g1, g2 := e.newGate("", "1"), e.newGate("", "2")
	a := e.zeros(d)
	for t := range e.T {
		an := e.add(e.prod(e.xs[t], e.gateAt(g1, t, hs[t], a)), e.prod(a, e.gateAt(g2, t, hs[t], a)))
		a = e.carry(a, an, e.mask(d, t))
	}
	return e.prod(a, e.inv(d))
}

// gran5 is Σ_t x_t⊙σ(g1) + h_t⊙σ(g2), both gates of x_t and h_t; h is 0
// at padded steps, as x is.
func (e *encoderGraph) gran5() *G.Node {
	h := e.lstmAll("", false, true)
	sum := func(v *G.Node, i string) *G.Node {
		zx := e.project(e.x, e.p("gran.wx"+i), nil)
		zh := e.project(h, e.p("gran.wh"+i), nil)
		return e.gateSumNode(v, zx, zh, e.p("gran.b"+i))
	}
	return e.prod(e.add(sum(e.x, "1"), sum(h, "2")), e.inv(e.cfg.Dim))
}

// dan is (Σ words + Σ bigrams)/sqrt(len), then tanh layers.
func (e *encoderGraph) dan() *G.Node {
	s := e.prod(e.add(e.sum(e.x, 0), e.sum(e.xb, 0)), e.inv(e.cfg.Dim))
	for i := range e.cfg.DANLayers {
		s = e.tanh(e.linear(s, e.p(fmt.Sprintf("dan.w%d", i)), e.p(fmt.Sprintf("dan.b%d", i))))
	}
	return s
}
