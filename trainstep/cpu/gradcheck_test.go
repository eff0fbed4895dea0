package cpu

import (
	"math"
	"math/rand/v2"
	"testing"

	"github.com/parastream/parastream/trainstep/compute"
)

// tinyConfig is a small float64-checkable model.
func tinyConfig(enc, loss string) compute.Config {
	cfg := compute.Config{Encoder: enc, Loss: loss, Dim: 4, Hidden: 3, Vocab: 12,
		DANLayers: []int{5, 3}, BigramBuckets: 7, RespHidden: []int{3}, SimHidden: 4, SimK: 5, SimMin: 1,
		HingeK: 2, BatchSize: 4, BucketWidth: 4, Seed: 7, TFLayers: 2, TFHeads: 2, TFFilter: 6}
	if enc == compute.EncGRAN5 {
		cfg.Hidden = cfg.Dim
	}
	return cfg.Defaults()
}

// tinyBatch is 4 pairs of lengths 1 to 3 (padded to 4), drawn from seed.
func tinyBatch(t *testing.T, cfg compute.Config, seed uint64) *compute.Batch {
	t.Helper()
	rng := rand.New(rand.NewPCG(seed, 1))
	var a, b [][]int32
	var labels []float32
	for i := range 4 {
		sa, sb := make([]int32, 1+i%3), make([]int32, 3-i%3)
		for j := range sa {
			sa[j] = rng.Int32N(int32(cfg.Vocab))
		}
		for j := range sb {
			sb[j] = rng.Int32N(int32(cfg.Vocab))
		}
		a, b = append(a, sa), append(b, sb)
		labels = append(labels, float32(1+4*rng.Float64()))
	}
	var ctxA, ctxB [][]float32
	if cfg.Context != "" {
		for i := range 4 {
			ca, cb := make([]float32, cfg.Topics), make([]float32, cfg.Topics)
			for j := range ca {
				ca[j], cb[j] = float32(rng.Float64()), float32(rng.Float64())
			}
			if i == 3 {
				cb = nil // a text with no known word: zeros
			}
			ctxA, ctxB = append(ctxA, ca), append(ctxB, cb)
		}
	}
	bt, err := compute.NewContextBatch(cfg, compute.Pairs{A: a, B: b, Labels: labels, CtxA: ctxA, CtxB: ctxB}, rng)
	if err != nil {
		t.Fatal(err)
	}
	return bt
}

func buildF64(t *testing.T, cfg compute.Config) *model[float64] {
	t.Helper()
	params := compute.InitParams(cfg, rand.New(rand.NewPCG(cfg.Seed, 2)))
	// Larger than the default ±0.1 so that recurrent gates and cosines
	// are far from their linear regime.
	for i := range params {
		for j := range params[i].Data {
			params[i].Data[j] *= 3
		}
	}
	mdl, err := (&Backend{Float64: true}).Build(cfg, params)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { mdl.Close() })
	return mdl.(*model[float64])
}

// gradCheck compares the analytic gradient of every parameter with central
// differences (h = 1e-6) at up to 8 entries per parameter, in float64:
// |analytic - numeric| ≤ 1e-6 + 1e-5·|numeric|.
func gradCheck(t *testing.T, m *model[float64], b *compute.Batch) {
	t.Helper()
	loss, err := m.ForwardBackward(b)
	if err != nil {
		t.Fatal(err)
	}
	if loss <= 0 {
		t.Fatalf("loss %g: the check needs active hinge terms", loss)
	}
	grads := map[string][]float64{}
	for _, s := range m.specs {
		grads[s.Name] = append([]float64(nil), m.fullGrad(s)...)
	}
	rng := rand.New(rand.NewPCG(3, 4))
	const h = 1e-6
	checked := 0
	for _, s := range m.specs {
		w, g := m.w[s.Name], grads[s.Name]
		idx := rng.Perm(len(w))[:min(8, len(w))]
		if s.Name == compute.ParamEmbeddings || s.Name == compute.ParamBigrams {
			// Only rows the batch touches have a data gradient; pick those.
			idx = idx[:0]
			for i, v := range g {
				if v != 0 && len(idx) < 8 {
					idx = append(idx, i)
				}
			}
			if len(idx) == 0 {
				t.Fatalf("%s: no nonzero gradient", s.Name)
			}
		}
		for _, i := range idx {
			orig := w[i]
			w[i] = orig + h
			lp, err := m.ForwardBackward(b)
			if err != nil {
				t.Fatal(err)
			}
			w[i] = orig - h
			lm, err := m.ForwardBackward(b)
			if err != nil {
				t.Fatal(err)
			}
			w[i] = orig
			num := (lp - lm) / (2 * h)
			if diff := math.Abs(num - g[i]); diff > 1e-6+1e-5*math.Abs(num) {
				t.Errorf("%s[%d]: analytic %.9g, numeric %.9g (diff %.3g)", s.Name, i, g[i], num, diff)
			}
			checked++
		}
	}
	if checked == 0 {
		t.Fatal("nothing checked")
	}
}

// TestGradientEncoders checks every encoder on gonum's BLAS and on the
// machine's CBLAS.
func TestGradientEncoders(t *testing.T) {
	forEachBLAS(t, func(t *testing.T) {
		for _, enc := range compute.Encoders() {
			t.Run(enc, func(t *testing.T) {
				cfg := tinyConfig(enc, compute.LossMargin)
				cfg.Margin = 1.5 // every hinge term active
				m := buildF64(t, cfg)
				gradCheck(t, m, tinyBatch(t, cfg, 11))
			})
		}
	})
}

func TestGradientLosses(t *testing.T) {
	cases := []struct {
		name string
		edit func(*compute.Config)
		negs bool // the batch has hard negatives
	}{
		{"margin-max", func(c *compute.Config) { c.Margin = 1.5 }, false},
		{"margin-mix", func(c *compute.Config) { c.Margin = 1.5; c.Negatives = compute.NegMix }, false},
		{"margin-rand", func(c *compute.Config) { c.Margin = 1.5; c.Negatives = compute.NegRand }, false},
		{"hinge", func(c *compute.Config) { c.Loss = compute.LossHinge; c.Margin = 10 }, false},
		{"softmax", func(c *compute.Config) { c.Loss = compute.LossSoftmax }, false},
		{"sim", func(c *compute.Config) { c.Loss = compute.LossSim }, false},
		{"mnrl", func(c *compute.Config) { c.Loss = compute.LossMNRL }, false},
		{"mnrl-symmetric-scale", func(c *compute.Config) { c.Loss, c.Symmetric, c.Scale = compute.LossMNRL, true, 3 }, false},
		{"mnrl-matryoshka-negatives", func(c *compute.Config) {
			c.Loss, c.Symmetric, c.Matryoshka = compute.LossMNRL, true, []int{c.EmbedDim(), 2}
			c.Dropout = 0.3
		}, true},
		{"regularised", func(c *compute.Config) {
			c.Margin = 1.5
			c.LambdaC, c.LambdaW = 0.03, 0.05
			c.Dropout, c.WordDropout = 0.3, 0.2
		}, false},
	}
	for _, enc := range []string{compute.EncAvg, compute.EncGRAN} {
		for _, tc := range cases {
			t.Run(enc+"/"+tc.name, func(t *testing.T) {
				cfg := tinyConfig(enc, "")
				tc.edit(&cfg)
				cfg = cfg.Defaults()
				m := buildF64(t, cfg)
				if cfg.LambdaW > 0 {
					for i := range m.init {
						m.init[i] += 0.01 * float64(i%5)
					}
				}
				bt := tinyBatch(t, cfg, 5)
				if tc.negs {
					rng := rand.New(rand.NewPCG(6, 1))
					bt.Neg = make([][]int32, bt.N())
					for i := range bt.Neg {
						bt.Neg[i] = []int32{rng.Int32N(int32(cfg.Vocab)), rng.Int32N(int32(cfg.Vocab))}
					}
				}
				gradCheck(t, m, bt)
			})
		}
	}
}

// TestGradientContext checks the topic context's projection and its effect
// on the word parameters, under the margin loss.
func TestGradientContext(t *testing.T) {
	for _, enc := range []string{compute.EncAvg, compute.EncLSTMAvg, compute.EncGRAN, compute.EncDAN} {
		t.Run(enc, func(t *testing.T) {
			cfg := tinyConfig(enc, compute.LossMargin)
			cfg.Margin, cfg.Context, cfg.Topics = 1.5, compute.ContextTopics, 3
			m := buildF64(t, cfg)
			// W_θ and b_θ start at zero: move them off it.
			rng := rand.New(rand.NewPCG(9, 9))
			for _, name := range []string{compute.ParamContextW, compute.ParamContextB} {
				for i := range m.w[name] {
					m.w[name][i] = rng.Float64() - 0.5
				}
			}
			gradCheck(t, m, tinyBatch(t, cfg, 11))
		})
	}
}
