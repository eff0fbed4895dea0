package compute

import (
	"fmt"
	"slices"
)

// The context-sensitive autoencoder (EncCSAE) of Amiri et al. (2016, §2),
// as both backends compute it (docs/models/csae.md has the formulas and
// where they differ from the paper). With x the sentence's bag of words
// normalised by its length (x·W_w the mean of its word embeddings), c_x
// its topic vector (Config.Context topics) and g = tanh:
//
//	h_c = g(c_x·W_c + b_c)                        DAE-0, (R, Dim)
//	h_1 = g(x·W_w + h_c·V_1 + b_1)                Eq. 4, (R, Dim)
//	h_i = g(h_{i-1}·W_i + h_c·V_i + b_i)          i = 2..n, sizes CSAELayers
//
// and the sentence embedding is h_n. The reconstruction loss (LossRecon,
// Eq. 5-7, and the DAE-0 term) decodes h_n:
//
//	x̂   = h_n·W'_x + b'_x       against 1[word k in the sentence], k < CSAETopK
//	ĥ_c = g(h_n·V' + b'_hc)     against h_c
//	ĉ_x = h_c·W'_c + b'_c       against c_x
//	l   = ‖x_K − x̂‖² + λ‖h_c − ĥ_c‖² + ‖c_x − ĉ_x‖²   averaged over the sentences
const (
	// EncCSAE names the context-sensitive stacked autoencoder.
	EncCSAE = "csae"
	// LossRecon is the CSAE's reconstruction loss, over every sentence of
	// the batch (both sides of each pair); it needs the csae encoder.
	LossRecon = "recon"
	// DefaultCSAELambda is Config.CSAELambda's default, the λ of Eq. 7 the
	// paper sets in its unsupervised experiment (§4.2).
	DefaultCSAELambda = 0.5
	// DefaultCSAETopK is Config.CSAETopK's default: the reconstruction's
	// output covers the ids below it (the vocabulary is sorted by
	// frequency, so the most frequent words), bounding the decoder to
	// (rows × H_n × K) a step.
	DefaultCSAETopK = 5000
)

// Parameter names of the CSAE (Layout order: context layer, layers,
// decoder).
const (
	ParamCSAEContextW  = "csae.wc"  // (Topics, Dim) W_c of DAE-0
	ParamCSAEContextB  = "csae.bc"  // (Dim) b_c
	ParamCSAEContextRW = "csae.wcr" // (Dim, Topics) W'_c, DAE-0's decoder
	ParamCSAEContextRB = "csae.bcr" // (Topics) b'_c
	ParamCSAEDecoderW  = "csae.wx"  // (H_n, K) W'_x
	ParamCSAEDecoderB  = "csae.bx"  // (K) b'_x
	ParamCSAEDecoderV  = "csae.vr"  // (H_n, Dim) V', reconstructing h_c
	ParamCSAEDecoderVB = "csae.bhc" // (Dim) b'_hc
)

// CSAELayerW, CSAELayerV and CSAELayerB are the names of layer i's
// parameters (i from 1; layer 1's W is the word embeddings): W_i
// (H_{i-1}, H_i), V_i (Dim, H_i) on h_c, and b_i (H_i).
func CSAELayerW(i int) string { return fmt.Sprintf("csae.w%d", i) }

// CSAELayerV is V_i (see CSAELayerW).
func CSAELayerV(i int) string { return fmt.Sprintf("csae.v%d", i) }

// CSAELayerB is b_i (see CSAELayerW).
func CSAELayerB(i int) string { return fmt.Sprintf("csae.b%d", i) }

// CSAESizes are the sizes of h_1..h_n: Dim, then CSAELayers.
func (c Config) CSAESizes() []int { return append([]int{c.Dim}, c.CSAELayers...) }

// CSAEDecodes reports whether the model computes the reconstruction: the
// recon loss, or a pair loss with CSAEReconWeight > 0.
func (c Config) CSAEDecodes() bool {
	return c.Encoder == EncCSAE && (c.Loss == LossRecon || c.CSAEReconWeight > 0)
}

// csaeDefaults fills the CSAE's zero fields.
func (c Config) csaeDefaults() Config {
	if c.Encoder != EncCSAE {
		return c
	}
	if c.CSAELayers == nil {
		// n = 3 layers of one size, as the paper's (§4.2).
		c.CSAELayers = []int{c.Dim, c.Dim}
	}
	if c.CSAELambda == 0 {
		c.CSAELambda = DefaultCSAELambda
	}
	if c.CSAETopK == 0 {
		c.CSAETopK = min(DefaultCSAETopK, c.Vocab)
	}
	return c
}

// csaeValidate reports the CSAE's problems through bad.
func (c Config) csaeValidate(bad func(format string, a ...any)) {
	if c.Encoder != EncCSAE {
		if c.Loss == LossRecon {
			bad("loss recon reconstructs the csae's bag of words: use it with --model csae")
		}
		if c.CSAEZeroContext || c.CSAEReconWeight != 0 || len(c.CSAELayers) > 0 {
			bad("csae_layers, csae_zero_context and csae_recon_weight are the csae's: use them with --model csae")
		}
		return
	}
	if slices.ContainsFunc(c.CSAELayers, func(n int) bool { return n <= 0 }) {
		bad("csae_layers %v: sizes must be positive", c.CSAELayers)
	}
	if c.CSAELambda < 0 || c.CSAELambda > 1 {
		bad("csae_lambda %g: the weight of the context's reconstruction must be in (0, 1]", c.CSAELambda)
	}
	if c.CSAETopK <= 0 || c.CSAETopK > c.Vocab {
		bad("csae_top_k %d: the reconstructed ids must number between 1 and the vocabulary's %d", c.CSAETopK, c.Vocab)
	}
	if c.CSAEReconWeight < 0 {
		bad("csae_recon_weight %g: must not be negative", c.CSAEReconWeight)
	}
	if c.CSAEZeroContext && c.Context != ContextTopics {
		bad("csae_zero_context zeroes the topic vectors of --context topics: train with --context topics")
	}
}

// csaeLayout is the CSAE's parameters after the embeddings.
func csaeLayout(cfg Config) []ParamSpec {
	var ps []ParamSpec
	add := func(name string, init Init, shape ...int) {
		ps = append(ps, ParamSpec{Name: name, Shape: shape, Init: init, Compositional: true})
	}
	d, ctx := cfg.Dim, cfg.Context == ContextTopics
	if ctx {
		add(ParamCSAEContextW, InitGlorot, cfg.Topics, d)
		add(ParamCSAEContextB, InitZero, d)
	}
	sizes := cfg.CSAESizes()
	for i, h := range sizes {
		if i > 0 {
			add(CSAELayerW(i+1), InitGlorot, sizes[i-1], h)
		}
		if ctx {
			add(CSAELayerV(i+1), InitZero, d, h) // the stack starts as the context-free autoencoder
		}
		add(CSAELayerB(i+1), InitZero, h)
	}
	if cfg.CSAEDecodes() {
		hn := sizes[len(sizes)-1]
		add(ParamCSAEDecoderW, InitGlorot, hn, cfg.CSAETopK)
		add(ParamCSAEDecoderB, InitZero, cfg.CSAETopK)
		if ctx {
			add(ParamCSAEDecoderV, InitGlorot, hn, d)
			add(ParamCSAEDecoderVB, InitZero, d)
			add(ParamCSAEContextRW, InitGlorot, d, cfg.Topics)
			add(ParamCSAEContextRB, InitZero, cfg.Topics)
		}
	}
	return ps
}
