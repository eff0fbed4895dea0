package cpu

import (
	"fmt"

	G "gorgonia.org/gorgonia"

	"github.com/parastream/parastream/trainstep/compute"
)

// encoderGraph holds the encoder part of a graph: inputs and the sentence
// embeddings of its R rows.
type encoderGraph struct {
	*ops
	cfg    compute.Config
	T, R   int
	params map[string]*G.Node
	x, xb  *G.Node         // (T, R, Dim) gathered words; DAN bigrams
	ctx    *G.Node         // (R, Topics) topic vectors (Config.Context topics)
	masks  map[int]*G.Node // (T, R, dim): 1 where t < len
	invs   map[int]*G.Node // (R, dim): 1/len (DAN: 1/sqrt(len))
	lens   *G.Node         // (R): len, made on first use
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
	return n
}

// mask is the (T, R, dim) mask input, made on first use.
func (e *encoderGraph) mask(dim int) *G.Node {
	if m, ok := e.masks[dim]; ok {
		return m
	}
	m := e.input(fmt.Sprintf("mask%d", dim), e.T, e.R, dim)
	e.masks[dim] = m
	return m
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
	return e.lstmNode(xw, e.p(prefix+"lstm.wh"), e.p(prefix+"lstm.b"), e.p(prefix+"lstm.pi"), e.p(prefix+"lstm.pf"), e.p(prefix+"lstm.po"),
		e.lengths(), backward, zeroPad)
}

// lstm is lstmAll step by step: h_t (R, H) for every t.
func (e *encoderGraph) lstm(prefix string, backward bool) []*G.Node {
	h := e.lstmAll(prefix, backward, false)
	hs := make([]*G.Node, e.T)
	for t := range e.T {
		hs[t] = e.at(h, t)
	}
	return hs
}

// lstmMean is the mean of h_t over each sentence's words: Σ_t h_t / len.
func (e *encoderGraph) lstmMean(prefix string, backward bool) *G.Node {
	return e.prod(e.sum(e.lstmAll(prefix, backward, true), 0), e.inv(e.cfg.Hidden))
}

// average is Σ_t m_t⊙v_t / len over per-step (R, dim) values.
func (e *encoderGraph) average(vs []*G.Node, dim int) *G.Node {
	m := e.mask(dim)
	var s *G.Node
	for t, v := range vs {
		v = e.prod(e.at(m, t), v)
		if s == nil {
			s = v
		} else {
			s = e.add(s, v)
		}
	}
	return e.prod(s, e.inv(dim))
}

// gate is σ(x_t·Wx + h_t·Wh [+ a_{t-1}·Wa] + b) for every t, with the x
// projection done for all steps at once.
type gate struct {
	xw     *G.Node // (T, R, out), bias included
	wh, wa *G.Node
}

func (e *encoderGraph) newGate(prefix, i string) gate {
	g := gate{xw: e.project(e.x, e.p(prefix+"gran.wx"+i), e.p(prefix+"gran.b"+i)), wh: e.p(prefix + "gran.wh" + i)}
	if n, ok := e.params[prefix+"gran.wa"+i]; ok {
		g.wa = n
	}
	return g
}

func (e *encoderGraph) gateAt(g gate, t int, h, aPrev *G.Node) *G.Node {
	z := e.add(e.at(g.xw, t), e.mul(h, g.wh))
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
	g := e.encodeWords()
	if e.ctx == nil {
		return g
	}
	return e.add(g, e.tanh(e.linear(e.ctx, e.p(compute.ParamContextW), e.p(compute.ParamContextB))))
}

// encodeWords is the encoder of the words alone.
func (e *encoderGraph) encodeWords() *G.Node {
	cfg := e.cfg
	d := cfg.Dim
	switch cfg.Encoder {
	case compute.EncAvg:
		// Padded and dropped words are zero rows of x.
		return e.prod(e.sum(e.x, 0), e.inv(d))
	case compute.EncLSTM:
		return e.lstm("", false)[e.T-1]
	case compute.EncLSTMAvg:
		return e.lstmMean("", false)
	case compute.EncBiLSTMAvg:
		return e.add(e.lstmMean("fwd.", false), e.lstmMean("bwd.", true))
	case compute.EncGRAN:
		return e.gran("", false)
	case compute.EncBiGRAN:
		return e.add(e.gran("fwd.", false), e.gran("bwd.", true))
	case compute.EncGRAN2:
		// The gate applies to h_t instead of x_t.
		hs := e.lstm("", false)
		g := e.newGate("", "")
		as := make([]*G.Node, e.T)
		for t := range e.T {
			as[t] = e.prod(hs[t], e.gateAt(g, t, hs[t], nil))
		}
		return e.average(as, cfg.Hidden)
	case compute.EncGRAN3, compute.EncGRAN4:
		// a_t = x_t⊙g1 + a_{t-1}⊙g2, a running sum kept through padding;
		// the embedding is a_{-1}/len.
		hs := e.lstm("", false)
		g1, g2 := e.newGate("", "1"), e.newGate("", "2")
		a := e.zeros(d)
		m := e.mask(d)
		for t := range e.T {
			xt := e.at(e.x, t)
			an := e.add(e.prod(xt, e.gateAt(g1, t, hs[t], a)), e.prod(a, e.gateAt(g2, t, hs[t], a)))
			a = e.carry(a, an, e.at(m, t))
		}
		return e.prod(a, e.inv(d))
	case compute.EncGRAN5:
		hs := e.lstm("", false)
		g1, g2 := e.newGate("", "1"), e.newGate("", "2")
		as := make([]*G.Node, e.T)
		for t := range e.T {
			as[t] = e.add(e.prod(e.at(e.x, t), e.gateAt(g1, t, hs[t], nil)), e.prod(hs[t], e.gateAt(g2, t, hs[t], nil)))
		}
		return e.average(as, d)
	case compute.EncDAN:
		// (Σ words + Σ bigrams)/sqrt(len), then tanh layers.
		s := e.prod(e.add(e.sum(e.x, 0), e.sum(e.xb, 0)), e.inv(d))
		for i := range cfg.DANLayers {
			s = e.tanh(e.linear(s, e.p(fmt.Sprintf("dan.w%d", i)), e.p(fmt.Sprintf("dan.b%d", i))))
		}
		return s
	}
	panic("cpu: unknown encoder " + cfg.Encoder)
}
