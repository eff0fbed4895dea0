package metric_test

import (
	"math"
	"testing"

	"github.com/parastream/parastream/evalsink/metric"
)

func TestPearsonSpearman(t *testing.T) {
	for _, c := range []struct {
		name              string
		x, y              []float64
		pearson, spearman float64
	}{
		{"perfect", []float64{1, 2, 3, 4}, []float64{2, 4, 6, 8}, 1, 1},
		{"reversed", []float64{1, 2, 3}, []float64{3, 2, 1}, -1, -1},
		// Monotonic but not linear: ρ 1, r below.
		{"monotonic", []float64{1, 2, 3, 4}, []float64{1, 4, 9, 16}, 0.9843740386976972, 1}, // scipy.stats.pearsonr
		// Ties: ranks of x are 1.5 1.5 3 4 (scipy: spearmanr = 0.9486832980505138).
		{"ties", []float64{1, 1, 2, 3}, []float64{1, 2, 3, 4}, 0.9438798074485389, 0.9486832980505138},
		{"constant prediction", []float64{0.5, 0.5, 0.5}, []float64{1, 2, 3}, 0, 0},
		{"one pair", []float64{1}, []float64{2}, 0, 0},
		{"empty", nil, nil, 0, 0},
	} {
		p, s := metric.Pearson(c.x, c.y), metric.Spearman(c.x, c.y)
		if math.Abs(p-c.pearson) > 1e-12 || math.Abs(s-c.spearman) > 1e-12 {
			t.Errorf("%s: Pearson %v Spearman %v, want %v %v", c.name, p, s, c.pearson, c.spearman)
		}
	}
}

func TestRanks(t *testing.T) {
	got := metric.Ranks([]float64{10, 30, 20, 30, 10, 30})
	want := []float64{1.5, 5, 3, 5, 1.5, 5}
	for i := range want {
		if got[i] != want[i] {
			t.Fatalf("Ranks = %v, want %v", got, want)
		}
	}
}

func TestCosineAngular(t *testing.T) {
	if c := metric.Cosine([]float32{0, 0}, []float32{1, 2}); c != 0 {
		t.Errorf("cosine with a zero vector = %v, want 0", c)
	}
	if c := metric.Cosine(nil, nil); c != 0 {
		t.Errorf("cosine of empty vectors = %v, want 0", c)
	}
	if c := metric.Cosine([]float32{1, 0}, []float32{1, 1}); math.Abs(c-math.Sqrt2/2) > 1e-12 {
		t.Errorf("cosine = %v", c)
	}
	for cos, want := range map[float64]float64{1: 5, 0: 2.5, -1: 0, 1.0000001: 5, 0.5: 5 * (1 - 1.0/3)} {
		if got := metric.Angular(cos); math.Abs(got-want) > 1e-12 || math.IsNaN(got) {
			t.Errorf("Angular(%v) = %v, want %v", cos, got, want)
		}
	}
}
