package metric

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"
)

// TestLogRegGradient checks the logistic regression's analytic gradient
// against central finite differences, for two classes (one weight vector)
// and for three and four (softmax), at random points, over more rows than
// one block (so that the blocks' sums meet), with scores large enough that
// the stable forms of the loss matter; and that any number of workers
// gives the same objective and gradient, bit for bit.
func TestLogRegGradient(t *testing.T) {
	for _, c := range []struct {
		classes, rows, cols int
		cost, scale         float64
	}{
		{2, 2500, 6, 0.5, 1},
		{2, 300, 4, 8, 30},
		{3, 2100, 5, 1, 1},
		{4, 200, 7, 0.25, 10},
	} {
		t.Run(fmt.Sprintf("%d classes, %d×%d", c.classes, c.rows, c.cols), func(t *testing.T) {
			rng := rand.New(rand.NewPCG(uint64(c.classes), uint64(c.rows)))
			x := NewFeatures(c.rows, c.cols)
			for i := range x.Data {
				x.Data[i] = rng.NormFloat64() * c.scale
			}
			y := make([]int, c.rows)
			for i := range y {
				y[i] = rng.IntN(c.classes)
			}
			l := newLogLoss(x, y, c.classes, LogRegConfig{C: c.cost})
			w := make([]float64, l.params())
			for i := range w {
				w[i] = rng.NormFloat64() * 0.3
			}
			g := make([]float64, len(w))
			f := l.eval(g, w)
			const h = 1e-6
			scratch := make([]float64, len(w))
			wp := make([]float64, len(w))
			for i := range w {
				copy(wp, w)
				wp[i] = w[i] + h
				fp := l.eval(scratch, wp)
				wp[i] = w[i] - h
				fm := l.eval(scratch, wp)
				num := (fp - fm) / (2 * h)
				if d := math.Abs(num - g[i]); d > 1e-6*max(1, math.Abs(num)) {
					t.Errorf("parameter %d: analytic %.10g, finite differences %.10g", i, g[i], num)
				}
			}
			par := newLogLoss(x, y, c.classes, LogRegConfig{C: c.cost, Workers: 3})
			g3 := make([]float64, len(w))
			if f3 := par.eval(g3, w); f3 != f {
				t.Errorf("3 workers: objective %v, one worker %v", f3, f)
			}
			for i := range g {
				if g3[i] != g[i] {
					t.Fatalf("3 workers: gradient %d is %v, one worker %v", i, g3[i], g[i])
				}
			}
		})
	}
}
