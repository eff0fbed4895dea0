package plot_test

import (
	"image/png"
	"os"
	"path/filepath"
	"testing"

	"github.com/parastream/parastream/evalsink/plot"
)

// TestLinesAndScatter: each draws a PNG of the plot's size at its path.
func TestLinesAndScatter(t *testing.T) {
	dir := t.TempDir()
	lines, scatter := filepath.Join(dir, "lines.png"), filepath.Join(dir, "scatter.png")
	ss := []plot.Series{{Name: "a", X: []float64{0, 10, 20}, Y: []float64{50, 60, 55}}, {Name: "b", X: []float64{10}, Y: []float64{40}}}
	if err := plot.Lines(lines, plot.Labels{Title: "title", X: "step", Y: "r x100"}, ss); err != nil {
		t.Fatal(err)
	}
	pts := plot.Series{Name: "3 pairs", X: []float64{0, 2.5, 5}, Y: []float64{0.1, 0.5, 0.9}}
	if err := plot.Scatter(scatter, plot.Labels{Title: "scatter", X: "gold", Y: "cosine"}, plot.Range{X0: 0, X1: 5, Y0: 0, Y1: 1}, pts); err != nil {
		t.Fatal(err)
	}
	for _, path := range []string{lines, scatter} {
		f, err := os.Open(path)
		if err != nil {
			t.Fatal(err)
		}
		img, err := png.Decode(f)
		f.Close()
		if err != nil {
			t.Fatal(err)
		}
		if b := img.Bounds(); b.Dx() != 860 || b.Dy() != 520 {
			t.Errorf("%s: %v, want 860×520", path, b)
		}
	}
}
