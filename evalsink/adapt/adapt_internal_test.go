package adapt

import (
	"math"
	"math/rand/v2"
	"testing"
)

// randomAdaptData is n pairs of d-dimensional Gaussian vectors with gold
// scores drawn in [0, 1].
func randomAdaptData(rng *rand.Rand, n, d int) adaptData {
	p := adaptData{a: make([][]float64, n), b: make([][]float64, n), gold: make([]float64, n)}
	for i := range n {
		p.a[i], p.b[i] = make([]float64, d), make([]float64, d)
		for k := range d {
			p.a[i][k], p.b[i][k] = rng.NormFloat64(), rng.NormFloat64()
		}
		p.gold[i] = rng.Float64()
	}
	return p
}

// TestAdaptLossGradient checks adaptLoss's analytic gradient against
// central finite differences, at the identity and at a perturbed W, with
// and without the pull toward the identity; one pair is a zero vector
// (no gradient) and one a pair mapped to the same direction (cos 1,
// clamped: no gradient, as its loss is flat in W).
func TestAdaptLossGradient(t *testing.T) {
	const d, n = 6, 9
	rng := rand.New(rand.NewPCG(3, 4))
	p := randomAdaptData(rng, n, d)
	clear(p.a[0])                              // a zero vector
	p.b[1] = append([]float64(nil), p.a[1]...) // the same text twice
	identity := make([]float64, d*d)
	for k := range d {
		identity[k*d+k] = 1
	}
	idx := make([]int, n)
	for i := range idx {
		idx[i] = i
	}
	for _, c := range []struct {
		name   string
		jitter float64
		lambda float64
	}{{"identity", 0, 0}, {"perturbed", 0.3, 0}, {"perturbed-l2", 0.3, 0.05}} {
		t.Run(c.name, func(t *testing.T) {
			w := append([]float64(nil), identity...)
			for i := range w {
				w[i] += c.jitter * rng.NormFloat64()
			}
			grad := make([]float64, len(w))
			adaptLoss(w, d, p, idx, c.lambda, grad)
			scratch := make([]float64, len(w))
			const h = 1e-6
			var worst float64
			for i := range w {
				orig := w[i]
				w[i] = orig + h
				up := adaptLoss(w, d, p, idx, c.lambda, scratch)
				w[i] = orig - h
				down := adaptLoss(w, d, p, idx, c.lambda, scratch)
				w[i] = orig
				num := (up - down) / (2 * h)
				if err := math.Abs(num-grad[i]) / max(1e-6, math.Abs(num)+math.Abs(grad[i])); err > worst {
					worst = err
				}
				if math.Abs(num-grad[i]) > 1e-7+1e-5*math.Abs(num) {
					t.Errorf("w[%d]: analytic %.10g, finite difference %.10g", i, grad[i], num)
				}
			}
			t.Logf("largest relative difference %.2g", worst)
		})
	}
}
