package evalsink

import (
	"math/rand/v2"
	"testing"

	"github.com/parastream/parastream/evalsink/metric"
)

// noisyFigure is a Pearson figure of n items whose Pred is Gold plus
// seeded noise.
func noisyFigure(n int) metric.Figure {
	rng := rand.New(rand.NewPCG(2, 1))
	f := metric.Figure{Column: "pearson", Metric: metric.MetricPearson}
	for i := range n {
		gold := rng.Float64() * 5
		f.Items = append(f.Items, metric.Item{ID: string(rune('a' + i)), Pred: gold + rng.NormFloat64(), Gold: gold})
	}
	return f
}

// TestWithIntervalsChecksFigures: a row's figure must be what its items
// give; the interval brackets it.
func TestWithIntervalsChecksFigures(t *testing.T) {
	f := noisyFigure(200)
	row := Result{Corpus: "stsb", Dataset: "stsb/dev", Kind: KindDataset}
	rows, err := withIntervals([]RowFigures{{row, []metric.Figure{f}}}, metric.Bootstrap{Seed: 1, Resamples: 200})
	if err != nil {
		t.Fatal(err)
	}
	r := rows[0]
	if r.Pearson == nil || r.CILow["pearson"] > *r.Pearson || r.CIHigh["pearson"] < *r.Pearson {
		t.Errorf("pearson %v, interval [%v, %v]", r.Pearson, r.CILow["pearson"], r.CIHigh["pearson"])
	}
	row.Pearson = ptr(*r.Pearson + 1)
	if _, err := withIntervals([]RowFigures{{row, []metric.Figure{f}}}, metric.Bootstrap{Seed: 1, Resamples: 10}); err == nil {
		t.Error("a figure that disagrees with its items was accepted")
	}
}
