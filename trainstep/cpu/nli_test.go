package cpu

import (
	"math"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/parastream/parastream/trainstep/compute"
)

// nliBatch is tinyBatch's pairs as an NLI batch with classes 0, 1, 2, 0.
func nliBatch(t *testing.T, cfg compute.Config, seed uint64) *compute.Batch {
	t.Helper()
	b := tinyBatch(t, cfg, seed)
	rng := rand.New(rand.NewPCG(seed, 2))
	bt, err := compute.NewContextBatch(cfg, compute.Pairs{A: b.A, B: b.B, Labels: []float32{0, 1, 2, 0}, NLI: true,
		CtxA: b.CtxA, CtxB: b.CtxB}, rng)
	if err != nil {
		t.Fatal(err)
	}
	return bt
}

// TestGradientNLI checks the NLI head's loss against central differences
// for every parameter, with encoders of each family, the pairs loss's own
// head present (softmax's response tower, outside the NLI graph: gradient
// 0), and with regularisation.
func TestGradientNLI(t *testing.T) {
	cases := []struct {
		enc, loss string
		reg       bool
	}{
		{compute.EncAvg, compute.LossMargin, false},
		{compute.EncAvg, compute.LossSoftmax, false},
		{compute.EncAvg, compute.LossSoftmax, true},
		{compute.EncGRAN, compute.LossMargin, false},
		{compute.EncDAN, compute.LossMargin, true},
		{compute.EncTransformer, compute.LossMargin, false},
	}
	for _, tc := range cases {
		t.Run(tc.enc+"/"+tc.loss, func(t *testing.T) {
			cfg := tinyConfig(tc.enc, tc.loss)
			cfg.NLIHidden = 5
			if tc.reg {
				cfg.LambdaC, cfg.Dropout = 0.03, 0.2
			}
			m := buildF64(t, cfg)
			b := nliBatch(t, cfg, 5)
			gradCheck(t, m, b)
			if tc.loss == compute.LossSoftmax && !tc.reg {
				// A pairs batch gives the response tower a gradient; the
				// NLI batch after it gives it none.
				towerGrad := func() (nonzero int) {
					for name, g := range m.grad {
						if strings.HasPrefix(name, "resp.") {
							for _, v := range g {
								if v != 0 {
									nonzero++
								}
							}
						}
					}
					return nonzero
				}
				for _, bt := range []*compute.Batch{tinyBatch(t, cfg, 5), b} {
					if _, err := m.ForwardBackward(bt); err != nil {
						t.Fatal(err)
					}
					if n := towerGrad(); (n > 0) == bt.NLI {
						t.Fatalf("NLI batch %v: %d nonzero gradient values of the response tower", bt.NLI, n)
					}
				}
			}
		})
	}
}

// TestNLILossMatchesHead checks that the graph's NLI loss is the mean
// cross-entropy of compute.NLIHead's logits (the head evaluation runs)
// on the model's own embeddings.
func TestNLILossMatchesHead(t *testing.T) {
	cfg := tinyConfig(compute.EncGRAN, compute.LossMargin)
	cfg.NLIHidden = 6
	m := buildF64(t, cfg)
	b := nliBatch(t, cfg, 9)
	loss, err := m.ForwardBackward(b)
	if err != nil {
		t.Fatal(err)
	}
	head, err := compute.NewNLIHead(cfg, m.Params())
	if err != nil {
		t.Fatal(err)
	}
	u, err := m.Embed(b.A)
	if err != nil {
		t.Fatal(err)
	}
	v, err := m.Embed(b.B)
	if err != nil {
		t.Fatal(err)
	}
	var want float64
	for i := range u {
		l := head.Logits(u[i], v[i])
		mx := math.Max(l[0], math.Max(l[1], l[2]))
		z := math.Exp(l[0]-mx) + math.Exp(l[1]-mx) + math.Exp(l[2]-mx)
		want -= l[int(b.Labels[i])] - mx - math.Log(z)
	}
	want /= float64(len(u))
	if math.Abs(loss-want) > 1e-5*max(1, want) {
		t.Fatalf("graph loss %.9g, head's cross-entropy %.9g", loss, want)
	}
}

// TestNLIStepsOnlyItsGraph: a pairs batch leaves the NLI head as it is
// (no gradient, no step, no moments), an NLI batch the pairs loss's head.
func TestNLIStepsOnlyItsGraph(t *testing.T) {
	cfg := tinyConfig(compute.EncAvg, compute.LossSoftmax)
	cfg.NLIHidden = 5
	m := buildF64(t, cfg)
	snap := func(prefix string) []float64 {
		var out []float64
		for _, s := range m.specs {
			if len(s.Name) >= len(prefix) && s.Name[:len(prefix)] == prefix {
				out = append(out, m.w[s.Name]...)
			}
		}
		return out
	}
	same := func(a, b []float64) bool {
		for i := range a {
			if a[i] != b[i] {
				return false
			}
		}
		return len(a) > 0 && len(a) == len(b)
	}
	nli0, resp0 := snap("nli."), snap("resp.")
	if _, err := m.ForwardBackward(tinyBatch(t, cfg, 3)); err != nil {
		t.Fatal(err)
	}
	if err := m.Update(1, 0.01); err != nil {
		t.Fatal(err)
	}
	if !same(nli0, snap("nli.")) || same(resp0, snap("resp.")) {
		t.Fatal("a pairs step: the NLI head moved, or the response tower did not")
	}
	resp1 := snap("resp.")
	if _, err := m.ForwardBackward(nliBatch(t, cfg, 3)); err != nil {
		t.Fatal(err)
	}
	if err := m.Update(2, 0.01); err != nil {
		t.Fatal(err)
	}
	if same(nli0, snap("nli.")) || !same(resp1, snap("resp.")) {
		t.Fatal("an NLI step: the head did not move, or the response tower did")
	}
}
