package cpu

import (
	"fmt"
	"math"

	"github.com/parastream/parastream/trainstep/compute"
)

// Generation runs the edd decoder on the host, step by step, with the
// graph's formulas (compute/edd.go): f is the encoder's embedding (Embed),
// the decoder takes f·dec.wf at its first step, then <s>, then each word
// it emitted, and stops at </s> or after MaxLen words.

// decoderState is the decoder LSTM's state of one hypothesis.
type decoderState struct{ h, c []float64 }

// decoder holds the edd decoder's parameters as float64.
type decoder struct {
	H, D, K                       int
	wx, wh, b, pi, pf, po, wf, ow []float64
	ob                            []float64
	emb                           func(id int32) []float64 // a row of the embeddings
}

func (m *model[T]) decoder() *decoder {
	f := func(name string) []float64 {
		w := m.w[name]
		out := make([]float64, len(w))
		for i, v := range w {
			out[i] = float64(v)
		}
		return out
	}
	K, D := m.cfg.OutClasses(), m.cfg.Dim
	emb := m.w[compute.ParamEmbeddings]
	d := &decoder{H: m.cfg.Hidden, D: D, K: K,
		wx: f("dec.lstm.wx"), wh: f("dec.lstm.wh"), b: f("dec.lstm.b"),
		pi: f("dec.lstm.pi"), pf: f("dec.lstm.pf"), po: f("dec.lstm.po"),
		wf: f("dec.wf"), ow: f("out.w"), ob: f("out.b")}
	d.emb = func(id int32) []float64 {
		out := make([]float64, D)
		for u, v := range emb[int(id)*D : int(id+1)*D] {
			out[u] = float64(v)
		}
		return out
	}
	return d
}

// vecMat is x·W for W (len(x), n) row-major, added to dst (n).
func vecMat(dst, x, w []float64) {
	n := len(dst)
	for i, xi := range x {
		if xi == 0 {
			continue
		}
		row := w[i*n : (i+1)*n]
		for j, v := range row {
			dst[j] += xi * v
		}
	}
}

// cell runs one LSTM step of the decoder from s with the input
// projection xw (4H), as lstmWork.forward does.
func (d *decoder) cell(s decoderState, xw []float64) decoderState {
	H := d.H
	z := make([]float64, 4*H)
	for j := range z {
		z[j] = xw[j] + d.b[j]
	}
	vecMat(z, s.h, d.wh)
	n := decoderState{h: make([]float64, H), c: make([]float64, H)}
	sg := func(x float64) float64 { return 1 / (1 + math.Exp(-x)) }
	for j := range H {
		c0 := s.c[j]
		i := sg(z[j] + d.pi[j]*c0)
		f := sg(z[H+j] + d.pf[j]*c0)
		g := math.Tanh(z[2*H+j])
		c := f*c0 + i*g
		o := sg(z[3*H+j] + d.po[j]*c)
		n.c[j], n.h[j] = c, o*math.Tanh(c)
	}
	return n
}

// start is the state after the decoder's first step, which takes f.
func (d *decoder) start(f []float32) decoderState {
	x := make([]float64, len(f))
	for i, v := range f {
		x[i] = float64(v)
	}
	xw := make([]float64, 4*d.H)
	vecMat(xw, x, d.wf)
	zero := decoderState{h: make([]float64, d.H), c: make([]float64, d.H)}
	return d.cell(zero, xw)
}

// step feeds token to the decoder in state s and returns the
// log-probabilities of the next token over the K classes and the new
// state.
func (d *decoder) step(s decoderState, token int32) ([]float64, decoderState) {
	xw := make([]float64, 4*d.H)
	vecMat(xw, d.emb(token), d.wx)
	n := d.cell(s, xw)
	logits := append([]float64(nil), d.ob...)
	vecMat(logits, n.h, d.ow)
	mx := math.Inf(-1)
	for _, v := range logits {
		mx = max(mx, v)
	}
	var sum float64
	for _, v := range logits {
		sum += math.Exp(v - mx)
	}
	lse := mx + math.Log(sum)
	for j := range logits {
		logits[j] -= lse
	}
	return logits, n
}

// Generate implements compute.Generator: greedy search (Beam ≤ 1) or
// beam search (compute.BeamSearch) from each sequence's embedding.
func (m *model[T]) Generate(seqs [][]int32, opts compute.GenerateOptions) ([][]int32, error) {
	if !m.cfg.IsEDD() {
		return nil, fmt.Errorf("the %s model does not generate: train --model %s", m.cfg.Encoder, compute.EncEDD)
	}
	if opts.Beam < 0 || opts.MaxLen < 0 {
		return nil, fmt.Errorf("generate: beam %d, max length %d: must not be negative", opts.Beam, opts.MaxLen)
	}
	maxLen := opts.MaxLen
	if maxLen == 0 {
		maxLen = m.cfg.MaxLen
	}
	f, err := m.Embed(seqs)
	if err != nil {
		return nil, err
	}
	d := m.decoder()
	out := make([][]int32, len(seqs))
	for i := range seqs {
		s := d.start(f[i])
		if opts.Beam > 1 {
			out[i] = compute.BeamSearch(d.step, s, compute.EDDStartID, compute.EDDEndID, opts.Beam, maxLen).Tokens
			continue
		}
		out[i] = d.greedy(s, maxLen)
	}
	return out, nil
}

// greedy emits the most probable token at each step.
func (d *decoder) greedy(s decoderState, maxLen int) []int32 {
	var out []int32
	tok := compute.EDDStartID
	for len(out) < maxLen {
		logp, next := d.step(s, tok)
		best := 0
		for j, v := range logp {
			if v > logp[best] {
				best = j
			}
		}
		if int32(best) == compute.EDDEndID {
			break
		}
		tok, s = int32(best), next
		out = append(out, tok)
	}
	return out
}

// LogLikelihood is the log-probability of target (with its end id) given
// the embedding of src, teacher-forced: the host twin of the graph's local
// loss, for tests and scoring.
func (m *model[T]) LogLikelihood(src, target []int32) (float64, error) {
	f, err := m.Embed([][]int32{src})
	if err != nil {
		return 0, err
	}
	d := m.decoder()
	s := d.start(f[0])
	tok := compute.EDDStartID
	var ll float64
	for t := 0; t <= len(target); t++ {
		logp, next := d.step(s, tok)
		if t == len(target) {
			ll += logp[compute.EDDEndID]
			break
		}
		ll += logp[compute.EDDClass(target[t], d.K)]
		tok, s = target[t], next
	}
	return ll, nil
}
