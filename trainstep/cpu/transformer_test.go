package cpu

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/parastream/parastream/trainstep/compute"
)

// TestGradientTransformer checks the transformer under the loss it is
// trained with (batch softmax), with dropout on its inputs, and with one
// head (d_k = Dim) and three, beside TestGradientEncoders' margin loss and
// two heads.
func TestGradientTransformer(t *testing.T) {
	for _, tc := range []struct {
		name       string
		dim, heads int
	}{{"softmax-1head", 4, 1}, {"softmax-3heads", 6, 3}} {
		t.Run(tc.name, func(t *testing.T) {
			cfg := tinyConfig(compute.EncTransformer, compute.LossSoftmax)
			cfg.Dim, cfg.TFHeads = tc.dim, tc.heads
			cfg.Dropout, cfg.WordDropout = 0.2, 0.1
			cfg = cfg.Defaults()
			gradCheck(t, buildF64(t, cfg), tinyBatch(t, cfg, 5))
		})
	}
}

// TestTransformerMatchesFormulas embeds sentences of several lengths, in
// one padded chunk, with the float64 backend and with a direct transcription
// of compute/transformer.go's formulas (per sentence, unpadded, plain
// loops): the embeddings must agree to float32 precision (Embed returns float32).
func TestTransformerMatchesFormulas(t *testing.T) {
	cfg := compute.Config{Encoder: compute.EncTransformer, Dim: 8, TFLayers: 2, TFHeads: 2, TFFilter: 12, Vocab: 20, BucketWidth: 8, Seed: 3}.Defaults()
	m := buildF64(t, cfg)
	// Biases and gains off their starts, so that every term counts.
	rng := rand.New(rand.NewPCG(4, 4))
	for _, s := range m.specs {
		if len(s.Shape) == 1 {
			for i := range m.w[s.Name] {
				m.w[s.Name][i] += rng.Float64() - 0.5
			}
		}
	}
	seqs := [][]int32{{1}, {2, 3, 4}, {5, 6, 7, 8, 9, 10, 11, 12, 13}, {14, 15}}
	got, err := m.Embed(seqs)
	if err != nil {
		t.Fatal(err)
	}
	for i, s := range seqs {
		want := referenceTransformer(cfg, m.w, s)
		for u := range want {
			if math.Abs(float64(got[i][u])-want[u]) > 1e-6*(1+math.Abs(want[u])) {
				t.Fatalf("sentence %d unit %d: backend %v, formulas %v", i, u, got[i][u], want[u])
			}
		}
	}
}

// referenceTransformer is g(s) by the formulas of compute/transformer.go.
func referenceTransformer(cfg compute.Config, w map[string][]float64, s []int32) []float64 {
	D, H, F, n := cfg.Dim, cfg.TFHeads, cfg.TFFilter, len(s)
	dk := D / H
	pe := compute.TimingSignal(n, D)
	x := make([][]float64, n)
	for t, id := range s {
		x[t] = make([]float64, D)
		for u := range D {
			x[t][u] = math.Sqrt(float64(D))*w[compute.ParamEmbeddings][int(id)*D+u] + pe[t*D+u]
		}
	}
	ln := func(v, g, b []float64) []float64 {
		var mu, va float64
		for _, a := range v {
			mu += a / float64(len(v))
		}
		for _, a := range v {
			va += (a - mu) * (a - mu) / float64(len(v))
		}
		out := make([]float64, len(v))
		for u, a := range v {
			out[u] = g[u]*(a-mu)/math.Sqrt(va+compute.LayerNormEps) + b[u]
		}
		return out
	}
	// affine is v·W + b, W (len(v), len(b)) row-major.
	affine := func(v, W, b []float64) []float64 {
		out := append([]float64(nil), b...)
		for i, a := range v {
			for j := range out {
				out[j] += a * W[i*len(b)+j]
			}
		}
		return out
	}
	for l := range cfg.TFLayers {
		p := func(name string) []float64 { return w[fmt.Sprintf("tf.%d.%s", l, name)] }
		qkv := make([][]float64, n)
		for t := range n {
			qkv[t] = affine(ln(x[t], p("ln1.g"), p("ln1.b")), p("wqkv"), p("bqkv"))
		}
		for t := range n {
			o := make([]float64, D)
			for h := range H {
				sc := make([]float64, n)
				var z float64
				for u := range n {
					for j := range dk {
						sc[u] += qkv[t][h*dk+j] * qkv[u][D+h*dk+j] / math.Sqrt(float64(dk))
					}
				}
				for u := range n {
					sc[u] = math.Exp(sc[u])
					z += sc[u]
				}
				for u := range n {
					for j := range dk {
						o[h*dk+j] += sc[u] / z * qkv[u][2*D+h*dk+j]
					}
				}
			}
			for u, v := range affine(o, p("wo"), p("bo")) {
				x[t][u] += v
			}
		}
		for t := range n {
			hid := affine(ln(x[t], p("ln2.g"), p("ln2.b")), p("w1"), p("b1"))
			for j := range F {
				hid[j] = math.Max(0, hid[j])
			}
			for u, v := range affine(hid, p("w2"), p("b2")) {
				x[t][u] += v
			}
		}
	}
	g := make([]float64, D)
	for t := range n {
		for u, v := range ln(x[t], w["tf.lnf.g"], w["tf.lnf.b"]) {
			g[u] += v / float64(n)
		}
	}
	return g
}
