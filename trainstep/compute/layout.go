package compute

import (
	"fmt"
	"math"
	"math/rand/v2"
	"strings"
)

// Parameter names shared by all backends and written to checkpoints.
const (
	ParamEmbeddings = "embeddings" // (Vocab, Dim) word embeddings W_w
	ParamBigrams    = "bigrams"    // (BigramBuckets, Dim) DAN bigram embeddings
	ParamContextW   = "ctx.w"      // (Topics, EmbedDim) W_θ of the topic context
	ParamContextB   = "ctx.b"      // (EmbedDim) b_θ of the topic context
)

// Init says how a parameter starts.
type Init int

const (
	InitEmbedding Init = iota // Config.EmbedInit (or pretrained vectors)
	InitGlorot                // uniform in ±sqrt(6/(fan_in+fan_out))
	InitZero
	InitOne
)

// ParamSpec describes one parameter.
type ParamSpec struct {
	Name  string
	Shape []int
	Init  Init
	// Compositional parameters are all but the word and bigram embeddings:
	// W_c of the λc term.
	Compositional bool
}

// Layout lists the parameters of cfg in a fixed order. Matrices multiply
// from the right (y = x·W + b), so W has shape (in, out). An LSTM packs its
// four gates (input, forget, cell, output) along the columns: wx (in, 4H),
// wh (H, 4H), b (4H); peepholes (Gers et al. 2003) are diagonal: pi, pf, po
// (H).
func Layout(cfg Config) []ParamSpec {
	e := cfg.EmbedDim()
	ps := []ParamSpec{{Name: ParamEmbeddings, Shape: []int{cfg.Vocab, cfg.Dim}, Init: InitEmbedding}}
	add := func(name string, init Init, shape ...int) { ps = append(ps, compositional(name, init, shape...)) }
	spec, _ := cfg.Spec()
	if spec.Layout != nil {
		ps = append(ps, spec.Layout(cfg)...)
	}
	if cfg.Context == ContextTopics && !spec.OwnContext {
		add(ParamContextW, InitZero, cfg.Topics, e)
		add(ParamContextB, InitZero, e)
	}
	switch cfg.Loss {
	case LossSoftmax:
		in := e
		for i, n := range cfg.RespHidden {
			add(fmt.Sprintf("resp.w%d", i), InitGlorot, in, n)
			add(fmt.Sprintf("resp.b%d", i), InitZero, n)
			in = n
		}
		add("resp.wout", InitGlorot, in, e)
		add("resp.bout", InitZero, e)
	case LossSim:
		add("sim.wmul", InitGlorot, e, cfg.SimHidden)
		add("sim.wabs", InitGlorot, e, cfg.SimHidden)
		add("sim.bh", InitZero, cfg.SimHidden)
		add("sim.wp", InitGlorot, cfg.SimHidden, cfg.SimK)
		add("sim.bp", InitZero, cfg.SimK)
	}
	return append(ps, nliLayout(cfg)...)
}

// InitParams draws the initial parameters of cfg from rng, in Layout
// order. LSTM forget-gate biases start at 1 (RecurrentInitGlorot;
// RecurrentInitAvg starts the recurrent encoders as startAsAverage says). Callers replace rows of
// "embeddings" with pretrained vectors afterwards (see trainstep.InitEmbeddings).
func InitParams(cfg Config, rng *rand.Rand) []Tensor {
	specs := Layout(cfg)
	out := make([]Tensor, len(specs))
	def := cfg.Defaults()
	spec, _ := def.Spec()
	kind, scale, err := ParseEmbedInit(def.EmbedInit)
	if err != nil {
		panic("compute: " + err.Error()) // Validate refuses it first
	}
	for i, s := range specs {
		t := NewTensor(s.Name, s.Shape...)
		switch s.Init {
		case InitEmbedding:
			for j := range t.Data {
				if kind == "normal" {
					t.Data[j] = float32(scale * rng.NormFloat64())
				} else {
					t.Data[j] = float32(scale * (2*rng.Float64() - 1))
				}
			}
		case InitGlorot:
			fanOut := s.Shape[1]
			if strings.HasSuffix(s.Name, ".wqkv") {
				fanOut /= 3 // three (D, D) matrices side by side
			}
			a := math.Sqrt(6 / float64(s.Shape[0]+fanOut))
			for j := range t.Data {
				t.Data[j] = float32(a * (2*rng.Float64() - 1))
			}
		case InitOne:
			for j := range t.Data {
				t.Data[j] = 1
			}
		}
		if strings.HasSuffix(s.Name, "lstm.b") {
			h := s.Shape[0] / 4
			for j := h; j < 2*h; j++ {
				t.Data[j] = 1
			}
		}
		if def.RecurrentInit == RecurrentInitAvg {
			startAsAverage(spec, s.Name, t)
		}
		out[i] = t
	}
	return out
}

// avgGateBias is the size of the gate biases of RecurrentInitAvg: σ(3) = 0.95.
const avgGateBias = 3

// startAsAverage sets t, a parameter of the encoder spec drawn as
// RecurrentInitGlorot, to RecurrentInitAvg's start, under which every
// recurrent encoder starts as (a multiple of) the mean of its words:
//   - the LSTM: W_x's cell-input block is the identity (on the first
//     min(Dim, Hidden) units), W_h is 0, and the input and output gates'
//     biases are +avgGateBias. The forget gate's is −avgGateBias where the
//     states are averaged (h_t ≈ 0.9·x_t, with the embeddings' small
//     values) and +avgGateBias where the embedding is the last state
//     (EncoderSpec.LastState: lstm), which then carries the sum of the
//     words (h_n ≈ tanh(Σ_t 0.95^(n−t)·x_t)).
//   - the GRAN gates' biases are +avgGateBias, so a_t ≈ 0.95·x_t (gran)
//     or 0.95·h_t (gran2), and gran3 and gran4 carry a running sum
//     (a_t ≈ 0.95·(x_t + a_{t−1})); gran5's gate on h_t is −avgGateBias,
//     the reduction to word averaging of W&G 2017 §3.1.
//
// edd's encoder starts as lstm's; its decoder ("dec.") stays Glorot.
func startAsAverage(spec EncoderSpec, name string, t Tensor) {
	if strings.HasPrefix(name, "dec.") {
		return
	}
	switch {
	case strings.HasSuffix(name, "lstm.wx"):
		in, h := t.Shape[0], t.Shape[1]/4
		for r := range in {
			cell := t.Data[r*4*h+2*h : r*4*h+3*h]
			clear(cell)
			if r < h {
				cell[r] = 1
			}
		}
	case strings.HasSuffix(name, "lstm.wh"):
		clear(t.Data)
	case strings.HasSuffix(name, "lstm.b"):
		h := t.Shape[0] / 4
		forget := float32(-avgGateBias)
		if spec.LastState {
			forget = avgGateBias
		}
		for j := range h {
			t.Data[j] = avgGateBias
			t.Data[h+j] = forget
			t.Data[3*h+j] = avgGateBias
		}
	case strings.Contains(name, "gran.b"):
		b := float32(avgGateBias)
		if spec.Name == EncGRAN5 && strings.HasSuffix(name, "gran.b2") {
			b = -avgGateBias
		}
		for j := range t.Data {
			t.Data[j] = b
		}
	}
}

// HeldCellBias reports, for parameter name of cfg, the span [lo, hi) of
// its values held at their initial value by the optimiser: the cell-input
// slice of an LSTM bias unless cfg.TrainCellBias. ok is false for every
// other parameter.
func HeldCellBias(cfg Config, name string, numel int) (lo, hi int, ok bool) {
	if cfg.TrainCellBias || !strings.HasSuffix(name, "lstm.b") {
		return 0, 0, false
	}
	h := numel / 4
	return 2 * h, 3 * h, true
}

// CheckParams reports params that do not match Layout(cfg).
func CheckParams(cfg Config, params []Tensor) error {
	specs := Layout(cfg)
	byName := make(map[string]Tensor, len(params))
	for _, p := range params {
		if err := p.Check(); err != nil {
			return err
		}
		byName[p.Name] = p
	}
	for _, s := range specs {
		p, ok := byName[s.Name]
		if !ok {
			return fmt.Errorf("parameter %s missing (encoder %s, loss %s)", s.Name, cfg.Encoder, cfg.Loss)
		}
		if !SameShape(p.Shape, s.Shape) {
			return fmt.Errorf("parameter %s: shape %v, want %v", s.Name, p.Shape, s.Shape)
		}
	}
	if len(byName) != len(specs) {
		return fmt.Errorf("%d parameters given, the model has %d", len(byName), len(specs))
	}
	return nil
}
