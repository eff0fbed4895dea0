package compute

import (
	"cmp"
	"fmt"
	"math"
)

// The transformer encoder (EncTransformer; Yang et al. 2018, §2.3.2, the
// encoder of Vaswani et al. 2017 as tensor2tensor runs it: pre-norm blocks
// and a final norm). With D = Dim, H = TFHeads, d_k = D/H, F = TFFilter and
// a sentence of n words e_0..e_{n-1} (rows of "embeddings"):
//
//	x_t   = sqrt(D)·e_t + PE(t)                      (TimingSignal)
//	per block l = 0..TFLayers-1, prefix "tf.l.":
//	  a   = LN(x; ln1.g, ln1.b)
//	  [q k v] = a·wqkv + bqkv                        (wqkv (D, 3D): q, k, v column blocks)
//	  head h (columns h·d_k ... (h+1)·d_k−1 of q, k, v):
//	    S   = q_h·k_hᵀ/sqrt(d_k), S[t][u] = −∞ for u ≥ n (padding keys)
//	    o_h = softmax_rows(S)·v_h
//	  x   = x + [o_0 … o_{H−1}]·wo + bo
//	  a2  = LN(x; ln2.g, ln2.b)
//	  x   = x + relu(a2·w1 + b1)·w2 + b2
//	y = LN(x; tf.lnf.g, tf.lnf.b);  g(s) = (1/n) Σ_{t<n} y_t
//
// LN(x; g, b) = g ⊙ (x − μ)/sqrt(σ² + LayerNormEps) + b over each
// position's D values (σ² the biased variance). Padded positions (t ≥ n)
// are computed as any other query but are never attended to and never
// averaged, so a sentence's embedding does not depend on the padding.

// LayerNormEps is the ε of the transformer's layer norms (tensor2tensor's).
const LayerNormEps = 1e-6

// TransformerLayout lists the transformer's parameters after
// "embeddings": per block ln1.g, ln1.b, wqkv, bqkv, wo, bo, ln2.g, ln2.b,
// w1, b1, w2, b2 under "tf.<l>.", then tf.lnf.g and tf.lnf.b. Layer-norm
// gains start at 1, biases at 0, matrices Glorot-uniform (wqkv as three
// (D, D) matrices would be: its bound uses fan_out D, InitParams's
// special case).
func TransformerLayout(cfg Config) []ParamSpec {
	d, f := cfg.Dim, cfg.TFFilter
	var ps []ParamSpec
	add := func(name string, init Init, shape ...int) {
		ps = append(ps, ParamSpec{Name: name, Shape: shape, Init: init, Compositional: true})
	}
	for l := range cfg.TFLayers {
		p := fmt.Sprintf("tf.%d.", l)
		add(p+"ln1.g", InitOne, d)
		add(p+"ln1.b", InitZero, d)
		add(p+"wqkv", InitGlorot, d, 3*d)
		add(p+"bqkv", InitZero, 3*d)
		add(p+"wo", InitGlorot, d, d)
		add(p+"bo", InitZero, d)
		add(p+"ln2.g", InitOne, d)
		add(p+"ln2.b", InitZero, d)
		add(p+"w1", InitGlorot, d, f)
		add(p+"b1", InitZero, f)
		add(p+"w2", InitGlorot, f, d)
		add(p+"b2", InitZero, d)
	}
	add("tf.lnf.g", InitOne, d)
	add("tf.lnf.b", InitZero, d)
	return ps
}

// transformerDefaults fills the transformer's zero fields: 6 blocks of 8
// heads, a feed-forward of 4·Dim.
func transformerDefaults(c Config) Config {
	c.TFLayers = cmp.Or(c.TFLayers, 6)
	c.TFHeads = cmp.Or(c.TFHeads, 8)
	c.TFFilter = cmp.Or(c.TFFilter, 4*c.Dim)
	return c
}

// transformerValidate reports the transformer's problems through bad.
func transformerValidate(c Config, bad func(string, ...any)) {
	if c.TFLayers <= 0 || c.TFHeads <= 0 || c.TFFilter <= 0 {
		bad("tf_layers %d, tf_heads %d, tf_filter %d: all must be positive for transformer", c.TFLayers, c.TFHeads, c.TFFilter)
	} else if c.Dim%c.TFHeads != 0 || c.Dim%2 != 0 {
		bad("transformer: dim %d must be even (the timing signal's sines and cosines) and a multiple of tf_heads %d", c.Dim, c.TFHeads)
	}
}

// TimingSignal returns PE for T positions of D (even) units, (T, D)
// row-major: PE(t, i) = sin(t·ω_i) and PE(t, D/2+i) = cos(t·ω_i) for
// i < D/2, with ω_i = 10000^(−2i/D) (sines in the first half and cosines
// in the second, as tensor2tensor lays them out).
func TimingSignal(T, D int) []float64 {
	pe := make([]float64, T*D)
	h := D / 2
	for i := range h {
		w := math.Pow(10000, -2*float64(i)/float64(D))
		for t := range T {
			pe[t*D+i] = math.Sin(float64(t) * w)
			pe[t*D+h+i] = math.Cos(float64(t) * w)
		}
	}
	return pe
}
