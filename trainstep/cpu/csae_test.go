package cpu

import (
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/parastream/parastream/trainstep/compute"
)

// csaeConfig is a small csae with a 3-layer stack and a reconstruction
// over 8 of the 12 ids.
func csaeConfig(loss string, context bool) compute.Config {
	cfg := tinyConfig(compute.EncCSAE, loss)
	cfg.CSAELayers, cfg.CSAETopK, cfg.CSAELambda = []int{5, 3}, 8, 0.7
	if context {
		cfg.Context, cfg.Topics = compute.ContextTopics, 3
	}
	return cfg.Defaults()
}

// TestGradientCSAE checks the csae's reconstruction loss (Eq. 7 and the
// DAE-0 term) with and without the topic context, with word dropout (the
// denoising), and a pair loss with the reconstruction added.
func TestGradientCSAE(t *testing.T) {
	cases := []struct {
		name string
		cfg  compute.Config
	}{
		{"recon", csaeConfig(compute.LossRecon, false)},
		{"recon-context", csaeConfig(compute.LossRecon, true)},
		{"recon-context-denoising", func() compute.Config {
			c := csaeConfig(compute.LossRecon, true)
			c.WordDropout = 0.3
			return c
		}()},
		{"recon-zero-context", func() compute.Config {
			c := csaeConfig(compute.LossRecon, true)
			c.CSAEZeroContext = true
			return c
		}()},
		{"margin+recon-context", func() compute.Config {
			c := csaeConfig(compute.LossMargin, true)
			c.Margin, c.CSAEReconWeight = 1.5, 0.3
			return c
		}()},
		{"sim+recon-context", func() compute.Config {
			c := csaeConfig(compute.LossSim, true)
			c.CSAEReconWeight = 0.3
			return c.Defaults()
		}()},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			m := buildF64(t, tc.cfg)
			// The biases start at zero: move them off it.
			rng := rand.New(rand.NewPCG(9, 9))
			for _, s := range m.specs {
				if s.Init == compute.InitZero {
					for i := range m.w[s.Name] {
						m.w[s.Name][i] = rng.Float64() - 0.5
					}
				}
			}
			gradCheck(t, m, tinyBatch(t, tc.cfg, 11))
		})
	}
}

// TestCSAEZeroContext: the ablation's model has the context's parameters
// but its embeddings do not depend on the topic vectors, while the full
// model's do.
func TestCSAEZeroContext(t *testing.T) {
	seqs := [][]int32{{1, 2, 3}, {4, 5}}
	ctxA := [][]float32{{1, 0, 0}, {0, 0.5, 0.5}}
	ctxB := [][]float32{{0, 1, 0}, {0.2, 0, 0.9}}
	for _, zero := range []bool{false, true} {
		cfg := csaeConfig(compute.LossRecon, true)
		cfg.CSAEZeroContext = zero
		params := compute.InitParams(cfg, rand.New(rand.NewPCG(1, 2)))
		// V_i starts at zero (the stack starts context-free): move it.
		for i, p := range params {
			if strings.HasPrefix(p.Name, "csae.v") {
				for j := range p.Data {
					params[i].Data[j] = float32(j%7)/7 - 0.4
				}
			}
		}
		m, err := New().Build(cfg, params)
		if err != nil {
			t.Fatal(err)
		}
		defer m.Close()
		ce := m.(compute.ContextEmbedder)
		a, err := ce.EmbedContext(seqs, ctxA)
		if err != nil {
			t.Fatal(err)
		}
		b, err := ce.EmbedContext(seqs, ctxB)
		if err != nil {
			t.Fatal(err)
		}
		same := true
		for i := range a {
			for u := range a[i] {
				same = same && a[i][u] == b[i][u]
			}
		}
		if same != zero {
			t.Errorf("csae_zero_context %v: embeddings equal under other topic vectors: %v", zero, same)
		}
	}
}

// TestCSAEOverfitsBatch trains the csae's reconstruction on one batch:
// the loss must fall near its floor of 0 (each sentence's words and
// context reconstructed).
func TestCSAEOverfitsBatch(t *testing.T) {
	for _, context := range []bool{false, true} {
		cfg := csaeConfig(compute.LossRecon, context)
		cfg.Dim, cfg.CSAELayers, cfg.LR = 16, []int{16, 16}, 0.01
		cfg.Vocab, cfg.CSAETopK = 40, 30
		cfg = cfg.Defaults()
		params := compute.InitParams(cfg, rand.New(rand.NewPCG(3, 3)))
		m, err := New().Build(cfg, params)
		if err != nil {
			t.Fatal(err)
		}
		defer m.Close()
		b := tinyBatch(t, cfg, 21)
		first, loss := 0.0, 0.0
		for step := range 400 {
			if loss, err = m.ForwardBackward(b); err != nil {
				t.Fatal(err)
			}
			if step == 0 {
				first = loss
			}
			if err := m.Update(int64(step+1), cfg.LR); err != nil {
				t.Fatal(err)
			}
		}
		t.Logf("context %v: loss %.4f -> %.5f", context, first, loss)
		if loss > 0.01*first || loss > 0.05 {
			t.Errorf("context %v: loss %.4f -> %.4f after 400 steps on one batch, want under 1%% of the first and 0.05", context, first, loss)
		}
	}
}
