package compute

import (
	"fmt"
	"math"
)

// The NLI head of multitask training (Yang et al. 2018, §2.4, after
// Conneau et al. 2017): the shared encoder embeds both sentences of an NLI
// pair, u = g(premise) and v = g(hypothesis), each normalised to unit
// length ("we ... normalize sentence embeddings prior to use in subsequent
// network layers", §4); the features
//
//	f = (u, v, |u − v|, u ⊙ v)                    (4·EmbedDim values)
//
// feed one hidden layer of Config.NLIHidden ReLU units (512 in the paper)
// and a softmax over the three classes:
//
//	h = relu(f·W1 + b1),  p = softmax(h·W2 + b2)
//
// trained by the mean cross-entropy of the gold class over the batch. A
// batch of an NLI dataset (Batch.NLI) trains the head and the encoder; a
// batch of a pairs dataset trains the encoder (and its own loss's head)
// by Config.Loss. Parameters outside a step's graph are not stepped.

// NLI parameter names (Layout, when Config.NLIHidden > 0).
const (
	ParamNLIW1 = "nli.w1" // (4·EmbedDim, NLIHidden)
	ParamNLIB1 = "nli.b1" // (NLIHidden)
	ParamNLIW2 = "nli.w2" // (NLIHidden, NLIClasses)
	ParamNLIB2 = "nli.b2" // (NLIClasses)
)

// NLIClasses is the number of NLI classes: 0 entailment, 1 neutral, 2
// contradiction (the labels of corpora's snli reader).
const NLIClasses = 3

// DefaultNLIHidden is the NLI head's hidden units (Yang et al. 2018: "a
// single layer network with 512 hidden units").
const DefaultNLIHidden = 512

// NLILabels names the NLI classes by index.
func NLILabels() []string { return []string{"entailment", "neutral", "contradiction"} }

// nliLayout lists the NLI head's parameters.
func nliLayout(cfg Config) []ParamSpec {
	if cfg.NLIHidden <= 0 {
		return nil
	}
	e, h := cfg.EmbedDim(), cfg.NLIHidden
	return []ParamSpec{
		{Name: ParamNLIW1, Shape: []int{4 * e, h}, Init: InitGlorot, Compositional: true},
		{Name: ParamNLIB1, Shape: []int{h}, Init: InitZero, Compositional: true},
		{Name: ParamNLIW2, Shape: []int{h, NLIClasses}, Init: InitGlorot, Compositional: true},
		{Name: ParamNLIB2, Shape: []int{NLIClasses}, Init: InitZero, Compositional: true},
	}
}

// NLIHead is the NLI head's parameters on the host, to classify pairs of
// embeddings outside a backend (evaluation).
type NLIHead struct {
	// In is 4·EmbedDim, Hidden the hidden units.
	In, Hidden int
	W1, B1     []float32
	W2, B2     []float32
}

// NewNLIHead takes the head's parameters from a model's tensors (Params,
// or a checkpoint's); an error when cfg has no head or a tensor is missing
// or of another shape.
func NewNLIHead(cfg Config, params []Tensor) (*NLIHead, error) {
	if cfg.NLIHidden <= 0 {
		return nil, fmt.Errorf("the model has no NLI head (nli_hidden 0): it was not trained on an NLI dataset")
	}
	byName := map[string]Tensor{}
	for _, p := range params {
		byName[p.Name] = p
	}
	h := &NLIHead{In: 4 * cfg.EmbedDim(), Hidden: cfg.NLIHidden}
	for _, s := range nliLayout(cfg) {
		t, ok := byName[s.Name]
		if !ok || !SameShape(t.Shape, s.Shape) {
			return nil, fmt.Errorf("NLI head: parameter %s missing or not of shape %v", s.Name, s.Shape)
		}
		switch s.Name {
		case ParamNLIW1:
			h.W1 = t.Data
		case ParamNLIB1:
			h.B1 = t.Data
		case ParamNLIW2:
			h.W2 = t.Data
		case ParamNLIB2:
			h.B2 = t.Data
		}
	}
	return h, nil
}

// NLIFeatures writes the head's features of the pair (u, v) to dst
// (4·len(u) values): u and v normalised to unit length (a zero vector stays
// zero), then |u − v| and u ⊙ v.
func NLIFeatures(dst, u, v []float32) {
	d := len(u)
	if len(v) != d || len(dst) != 4*d {
		panic(fmt.Sprintf("compute: NLIFeatures of %d and %d values into %d", len(u), len(v), len(dst)))
	}
	nu, nv := unitScale(u), unitScale(v)
	for i := range d {
		a, b := u[i]*nu, v[i]*nv
		dst[i], dst[d+i], dst[2*d+i], dst[3*d+i] = a, b, float32(math.Abs(float64(a-b))), a*b
	}
}

// unitScale is 1/‖x‖ (the graphs' sqrt(Σx² + 1e-12)).
func unitScale(x []float32) float32 {
	var ss float64
	for _, v := range x {
		ss += float64(v) * float64(v)
	}
	return float32(1 / math.Sqrt(ss+1e-12))
}

// Logits returns the head's class scores (before the softmax) of the
// pair (u, v).
func (h *NLIHead) Logits(u, v []float32) [NLIClasses]float64 {
	f := make([]float32, 4*len(u))
	NLIFeatures(f, u, v)
	if len(f) != h.In {
		panic(fmt.Sprintf("compute: NLI head of %d inputs given embeddings of %d values", h.In, len(u)))
	}
	hid := make([]float64, h.Hidden)
	for j := range hid {
		hid[j] = float64(h.B1[j])
	}
	for i, x := range f {
		if x == 0 {
			continue
		}
		row := h.W1[i*h.Hidden : (i+1)*h.Hidden]
		for j, w := range row {
			hid[j] += float64(x) * float64(w)
		}
	}
	var out [NLIClasses]float64
	for k := range out {
		out[k] = float64(h.B2[k])
	}
	for j, a := range hid {
		if a <= 0 {
			continue
		}
		for k := range out {
			out[k] += a * float64(h.W2[j*NLIClasses+k])
		}
	}
	return out
}

// Predict returns the head's class of the pair (u, v): the largest logit
// (the lowest class on a tie).
func (h *NLIHead) Predict(u, v []float32) int {
	l := h.Logits(u, v)
	best := 0
	for k := 1; k < NLIClasses; k++ {
		if l[k] > l[best] {
			best = k
		}
	}
	return best
}
