package evalsink_test

import (
	"bytes"
	"image/png"
	"os"
	"path/filepath"
	"testing"

	"github.com/parastream/parastream/evalsink"
)

// TestCurveOfOneCheckpoint: a run evaluated at one step gets curves whose
// single points are drawn (a marker in the plot area, not an empty plot).
func TestCurveOfOneCheckpoint(t *testing.T) {
	scores := evalsink.SimilarityScores([]*evalsink.Scored{scored("sts", "test", "2012/MSRpar", "2012", 150)})
	dir := t.TempDir()
	paths, err := evalsink.WriteCurves(dir, results("e1", "run-a", 20, scores))
	if err != nil {
		t.Fatal(err)
	}
	if len(paths) != 1 {
		t.Fatalf("curves %v, want one figure for mean, weighted mean and pooled (each year one set: the same lines)", paths)
	}
	data, err := os.ReadFile(filepath.Join(dir, "curves-run-a-mean.png"))
	if err != nil {
		t.Fatal(err)
	}
	img, err := png.Decode(bytes.NewReader(data))
	if err != nil {
		t.Fatal(err)
	}
	// Coloured pixels (not white, grey or black) inside the plot area
	// (right of the y axis, above the x axis, below the title and the
	// legend at the top right).
	marker := 0
	for y := 70; y < img.Bounds().Dy()-50; y++ {
		for x := 60; x < img.Bounds().Dx(); x++ {
			r, g, b, _ := img.At(x, y).RGBA()
			if r != g || g != b {
				marker++
			}
		}
	}
	if marker < 250 {
		t.Errorf("one-point curve: %d pixels of its colour in the plot area, want a marker and its value label, at least 250", marker)
	}
}
