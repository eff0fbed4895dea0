package cuda

import (
	"fmt"
	"math"

	"github.com/parastream/parastream/trainstep/compute"
)

// The transformer encoder (compute/transformer.go has the formulas): the
// input sqrt(D)·e_t + PE(t) (tf_input), pre-norm blocks of masked
// multi-head self-attention and a relu feed-forward layer, a final layer
// norm and the mean over each sentence's words (masked_mean). Every
// position-wise product is one GEMM over all T·R positions (rows (t, r),
// time-major as x); the attention of each sentence and head is
// attn_scores, attn_softmax and attn_pv over the columns of its head.
// Padded positions are computed as any other query and never attended to,
// so their rows carry no gradient.

// tfBlock is what one block keeps for its backward pass: its input x, the
// attention's input a (LN1) with LN1's statistics, qkv, the attention
// probabilities, the heads' outputs o, the stream after the attention xm,
// the feed-forward layer's input a2 (LN2) with its statistics and its
// relu output h.
type tfBlock struct {
	x, a, mean1, rstd1, qkv, prob, o ptr
	xm, a2, mean2, rstd2, h          ptr
}

// tfState is what the transformer keeps for its backward pass: the
// blocks, then the final norm's input (the last block's output), its
// output and statistics.
type tfState struct {
	blocks            []tfBlock
	x, y, mean, rstd  ptr
	heads, dk, filter int
}

// tfName is the name of block l's parameter (or workspace) s.
func tfName(l int, s string) string { return fmt.Sprintf("tf.%d.%s", l, s) }

// attnScale is 1/sqrt(d_k).
func (st *tfState) attnScale() float32 { return float32(1 / math.Sqrt(float64(st.dk))) }

// tfForward runs the transformer over p.x, leaving p.emb (R, Dim).
func (m *model) tfForward(s *seq, p *pass) {
	c := m.cfg
	R, T, d := p.R, p.T, c.Dim
	N := T * R
	st := &p.enc.tf
	*st = tfState{heads: c.TFHeads, dk: d / c.TFHeads, filter: c.TFFilter}
	F := st.filter
	x := s.work("tf.0.x", N*d)
	s.launch(kTFInput, argN(R), argN(T), argN(d), argS(float32(math.Sqrt(float64(d)))), argP(p.x), argP(x))
	for l := range c.TFLayers {
		w := func(n string) ptr { return m.w[tfName(l, n)] }
		b := tfBlock{x: x,
			a: s.work(tfName(l, "a"), N*d), mean1: s.work(tfName(l, "mean1"), N), rstd1: s.work(tfName(l, "rstd1"), N),
			qkv: s.work(tfName(l, "qkv"), N*3*d), prob: s.work(tfName(l, "prob"), R*st.heads*T*T), o: s.work(tfName(l, "o"), N*d),
			xm: s.work(tfName(l, "xm"), N*d), a2: s.work(tfName(l, "a2"), N*d), mean2: s.work(tfName(l, "mean2"), N),
			rstd2: s.work(tfName(l, "rstd2"), N), h: s.work(tfName(l, "h"), N*F)}
		// Attention: x + [o_0 … o_{H−1}]·wo + bo.
		m.layerNorm(s, lnRun{x: x, mean: b.mean1, rstd: b.rstd1, param: tfName(l, "ln1.")}, N, b.a)
		s.launch(kFillRows, argN(N), argN(3*d), argP(w("bqkv")), argP(b.qkv))
		s.mm(mmDims{false, false, N, 3 * d, d}, matrix{b.a, d}, matrix{w("wqkv"), 3 * d}, 1, matrix{b.qkv, 3 * d})
		s.launch(kAttnScores, argN(R), argN(T), argN(d), argN(st.heads), argI(p.lens), argS(st.attnScale()), argP(b.qkv), argP(b.prob))
		s.launch(kAttnSoftmax, argN(R), argN(T), argN(st.heads), argI(p.lens), argP(b.prob))
		s.launch(kAttnPV, argN(R), argN(T), argN(d), argN(st.heads), argI(p.lens), argP(b.prob), argP(b.qkv), argP(b.o))
		s.launch(kBiasResidual, argN(N), argN(d), argP(x), argP(w("bo")), argP(b.xm))
		s.mm(mmDims{false, false, N, d, d}, matrix{b.o, d}, matrix{w("wo"), d}, 1, matrix{b.xm, d})
		// Feed-forward: xm + relu(a2·w1 + b1)·w2 + b2.
		m.layerNorm(s, lnRun{x: b.xm, mean: b.mean2, rstd: b.rstd2, param: tfName(l, "ln2.")}, N, b.a2)
		s.launch(kFillRows, argN(N), argN(F), argP(w("b1")), argP(b.h))
		s.mm(mmDims{false, false, N, F, d}, matrix{b.a2, d}, matrix{w("w1"), F}, 1, matrix{b.h, F})
		s.launch(kReluFwd, argN(N*F), argP(b.h))
		x = s.work(tfName(l+1, "x"), N*d)
		s.launch(kBiasResidual, argN(N), argN(d), argP(b.xm), argP(w("b2")), argP(x))
		s.mm(mmDims{false, false, N, d, F}, matrix{b.h, F}, matrix{w("w2"), d}, 1, matrix{x, d})
		st.blocks = append(st.blocks, b)
	}
	st.x, st.y = x, s.work("tf.y", N*d)
	st.mean, st.rstd = s.work("tf.mean", N), s.work("tf.rstd", N)
	m.layerNorm(s, lnRun{x: x, mean: st.mean, rstd: st.rstd, param: "tf.lnf."}, N, st.y)
	p.emb = s.work("emb", R*d)
	s.launch(kMaskedMean, argN(R), argN(T), argN(d), argI(p.lens), argP(st.y), argP(p.emb))
}

// tfBackward turns dEmb (R, Dim) into the transformer's parameter
// gradients and p.dx. The gradient of the residual stream is one buffer,
// dX, taken back through the blocks in place: each layer norm's input
// gradient is added to it (the residual's own term).
func (m *model) tfBackward(s *seq, p *pass, dEmb ptr) {
	c := m.cfg
	R, T, d := p.R, p.T, c.Dim
	N := T * R
	st := &p.enc.tf
	F, H := st.filter, st.heads
	dy := s.work("tf.dy", N*d)
	dX := s.work("tf.dX", N*d)
	da := s.work("tf.da", N*d)
	dh := s.work("tf.dh", N*F)
	dqkv := s.work("tf.dqkv", N*3*d)
	ds := s.work("tf.ds", R*H*T*T)
	// Bias and gain gradients are sums over the N rows: GEMMs with a row
	// of ones (a column-per-thread loop over N would leave the GPU idle).
	sums := rowSums{ones: s.work("tf.ones", N), tmp: s.work("tf.lnterms", N*d), se: s.work("tf.lnse", N), sex: s.work("tf.lnsex", N), n: N}
	s.launch(kFillValue, argN(N), argS(1), argP(sums.ones))
	g := m.g
	// The mean over the words, then the final norm: dX written.
	s.launch(kMaskedMeanBwd, argN(R), argN(T), argN(d), argI(p.lens), argP(dEmb), argP(dy))
	m.lnBackward(s, sums, lnRun{x: st.x, mean: st.mean, rstd: st.rstd, param: "tf.lnf."}, dy, sink{dX, 0})
	for l := len(st.blocks) - 1; l >= 0; l-- {
		b := st.blocks[l]
		w := func(n string) ptr { return m.w[tfName(l, n)] }
		gr := func(n string) ptr { return g[tfName(l, n)] }
		// Feed-forward: dX is the gradient of the block's output.
		sums.into(s, dX, d, gr("b2"))
		s.mm(mmDims{true, false, F, d, N}, matrix{b.h, F}, matrix{dX, d}, 0, matrix{gr("w2"), d})
		s.mm(mmDims{false, true, N, F, d}, matrix{dX, d}, matrix{w("w2"), d}, 0, matrix{dh, F})
		s.launch(kReluBwd, argN(N*F), argP(b.h), argP(dh), argP(dh))
		sums.into(s, dh, F, gr("b1"))
		s.mm(mmDims{true, false, d, F, N}, matrix{b.a2, d}, matrix{dh, F}, 0, matrix{gr("w1"), F})
		s.mm(mmDims{false, true, N, d, F}, matrix{dh, F}, matrix{w("w1"), F}, 0, matrix{da, d})
		m.lnBackward(s, sums, lnRun{x: b.xm, mean: b.mean2, rstd: b.rstd2, param: tfName(l, "ln2.")}, da, sink{dX, 1})
		// Attention: dX is now the gradient of xm.
		sums.into(s, dX, d, gr("bo"))
		s.mm(mmDims{true, false, d, d, N}, matrix{b.o, d}, matrix{dX, d}, 0, matrix{gr("wo"), d})
		do := dy // free again: the gradient of the heads' outputs
		s.mm(mmDims{false, true, N, d, d}, matrix{dX, d}, matrix{w("wo"), d}, 0, matrix{do, d})
		s.launch(kAttnScoresBwd, argN(R), argN(T), argN(d), argN(H), argI(p.lens), argS(st.attnScale()), argP(b.prob), argP(b.qkv), argP(do), argP(ds))
		s.launch(kAttnQKVBwd, argN(R), argN(T), argN(d), argN(H), argI(p.lens), argP(b.prob), argP(ds), argP(b.qkv), argP(do), argP(dqkv))
		sums.into(s, dqkv, 3*d, gr("bqkv"))
		s.mm(mmDims{true, false, d, 3 * d, N}, matrix{b.a, d}, matrix{dqkv, 3 * d}, 0, matrix{gr("wqkv"), 3 * d})
		s.mm(mmDims{false, true, N, d, 3 * d}, matrix{dqkv, 3 * d}, matrix{w("wqkv"), 3 * d}, 0, matrix{da, d})
		m.lnBackward(s, sums, lnRun{x: b.x, mean: b.mean1, rstd: b.rstd1, param: tfName(l, "ln1.")}, da, sink{dX, 1})
	}
	// x = sqrt(D)·e + PE: the gathered words' gradient (zero at padding).
	s.launch(kScaleTo, argN(N*d), argS(float32(math.Sqrt(float64(d)))), argP(dX), argP(p.dx))
}

// rowSums sums the n rows of a matrix by a GEMM with ones, a row of n
// ones; tmp (n·Dim values: the gain's terms), se and sex (n: the rows'
// means of layer_norm_bwd_stats) are the layer norms' backward workspace.
type rowSums struct {
	ones, tmp, se, sex ptr
	n                  int
}

// into writes the column sums of v (n, cols) to out (cols).
func (r rowSums) into(s *seq, v ptr, cols int, out ptr) {
	s.mm(mmDims{false, false, 1, cols, r.n}, matrix{r.ones, r.n}, matrix{v, cols}, 0, matrix{out, cols})
}

// lnRun is a layer norm's forward run: its input and statistics, and the
// prefix of its gain and bias ("<prefix>g", "<prefix>b").
type lnRun struct {
	x, mean, rstd ptr
	param         string
}

// lnBackward writes the gain and bias gradients of the layer norm ln from
// dy, the gradient of its output (sums over sums.n rows), and adds its
// input gradient to dx.
func (m *model) lnBackward(s *seq, sums rowSums, ln lnRun, dy ptr, dx sink) {
	d, n := m.cfg.Dim, sums.n
	s.launch(kLayerNormDyXhat, argN(n), argN(d), argP(ln.x), argP(ln.mean), argP(ln.rstd), argP(dy), argP(sums.tmp))
	sums.into(s, sums.tmp, d, m.g[ln.param+"g"])
	sums.into(s, dy, d, m.g[ln.param+"b"])
	gain := m.w[ln.param+"g"]
	s.launch(kLayerNormBwdStats, argN(n), argN(d), argP(ln.x), argP(ln.mean), argP(ln.rstd), argP(gain), argP(dy), argP(sums.se), argP(sums.sex))
	s.launch(kLayerNormBwd, argN(n), argN(d), argP(ln.x), argP(ln.mean), argP(ln.rstd), argP(gain), argP(dy), argP(sums.se), argP(sums.sex),
		argS(dx.beta), argP(dx.p))
}

// layerNorm computes y = LN(ln.x) over rows rows with ln's gain and bias,
// leaving the rows' statistics in ln.mean and ln.rstd.
func (m *model) layerNorm(s *seq, ln lnRun, rows int, y ptr) {
	d := m.cfg.Dim
	s.launch(kLayerNormStats, argN(rows), argN(d), argS(float32(compute.LayerNormEps)), argP(ln.x), argP(ln.mean), argP(ln.rstd))
	s.launch(kLayerNormApply, argN(rows), argN(d), argP(ln.x), argP(ln.mean), argP(ln.rstd), argP(m.w[ln.param+"g"]), argP(m.w[ln.param+"b"]), argP(y))
}
