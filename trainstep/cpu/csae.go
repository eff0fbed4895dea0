package cpu

import (
	G "gorgonia.org/gorgonia"

	"github.com/parastream/parastream/trainstep/compute"
)

// csaeNodes are the parts of a csae graph its reconstruction reads: the
// context layer h_c (nil without a context) and, in a training graph that
// reconstructs, the (R, CSAETopK) bag-of-words target.
type csaeNodes struct {
	hc  *G.Node
	bag *G.Node
}

// csae is the context-sensitive stacked autoencoder's encoder (compute's
// csae.go has the formulas): h_c = tanh(c_x·W_c + b_c), h_1 = tanh(mean of
// the word embeddings + h_c·V_1 + b_1), h_i = tanh(h_{i-1}·W_i + h_c·V_i +
// b_i); it returns h_n. Padded and word-dropped words are zero rows of x,
// so the mean is over the sentence's length with dropped words counting as
// zeros: the masking noise of a denoising autoencoder, applied to whole
// words.
func (e *encoderGraph) csae() *G.Node {
	cfg := e.cfg
	e.csaeN = &csaeNodes{}
	if e.ctx != nil {
		e.csaeN.hc = e.tanh(e.linear(e.ctx, e.p(compute.ParamCSAEContextW), e.p(compute.ParamCSAEContextB)))
	}
	h := e.prod(e.sum(e.x, 0), e.inv(cfg.Dim))
	for i := range cfg.CSAESizes() {
		if i > 0 {
			h = e.mul(h, e.p(compute.CSAELayerW(i+1)))
		}
		if hc := e.csaeN.hc; hc != nil {
			h = e.add(h, e.mul(hc, e.p(compute.CSAELayerV(i+1))))
		}
		h = e.tanh(e.bias(h, e.p(compute.CSAELayerB(i+1))))
	}
	return h
}

// recon is the reconstruction loss of the csae from its embedding h
// (R, H_n), averaged over the R sentences:
//
//	‖x_K − (h·W'_x + b'_x)‖² + λ‖h_c − tanh(h·V' + b'_hc)‖² + ‖c_x − (h_c·W'_c + b'_c)‖²
//
// with x_K the input bag's 0/1 target over the ids below CSAETopK; the
// context terms only with a context.
func (e *encoderGraph) recon(h *G.Node) *G.Node {
	cfg, n := e.cfg, e.csaeN
	n.bag = e.input("bag", e.R, cfg.CSAETopK)
	sq := func(target, pred *G.Node) *G.Node { return e.sum(must(G.Square(e.sub(target, pred)))) }
	xh := e.linear(h, e.p(compute.ParamCSAEDecoderW), e.p(compute.ParamCSAEDecoderB))
	loss := sq(n.bag, xh)
	if n.hc != nil {
		hch := e.tanh(e.linear(h, e.p(compute.ParamCSAEDecoderV), e.p(compute.ParamCSAEDecoderVB)))
		loss = e.add(loss, must(G.HadamardProd(sq(n.hc, hch), e.scalar(cfg.CSAELambda))))
		ch := e.linear(n.hc, e.p(compute.ParamCSAEContextRW), e.p(compute.ParamCSAEContextRB))
		loss = e.add(loss, sq(e.ctx, ch))
	}
	return must(G.HadamardDiv(loss, e.scalar(float64(e.R))))
}

// withRecon adds CSAEReconWeight times the reconstruction loss to a pair
// loss of the csae (the recon loss alone is built by build's switch).
func (e *encoderGraph) withRecon(loss, h *G.Node) *G.Node {
	if e.cfg.Loss == compute.LossRecon || !e.cfg.CSAEDecodes() {
		return loss
	}
	return e.add(loss, must(G.HadamardProd(e.recon(h), e.scalar(e.cfg.CSAEReconWeight))))
}

// feedRecon binds the bag-of-words target of a reconstructing csae graph:
// row r (the A sides, then the B sides) is 1 at each id below CSAETopK
// that occurs in its clean (undropped) sentence.
func (m *model[T]) feedRecon(gr *graph, b *compute.Batch) error {
	n := gr.enc.csaeN
	if n == nil || n.bag == nil {
		return nil
	}
	k := m.cfg.CSAETopK
	v := make([]T, gr.enc.R*k)
	for r, s := range append(append([][]int32(nil), b.A...), b.B...) {
		for _, id := range s {
			if int(id) < k {
				v[r*k+int(id)] = 1
			}
		}
	}
	return m.let(n.bag, v, gr.enc.R, k)
}
