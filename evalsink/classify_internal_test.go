package evalsink

import (
	"slices"
	"testing"
)

// TestFoldsStratified: the folds hold every item once, in increasing
// order; fold sizes differ by one at most, and so do each class's counts
// in them; the same seed and stream give the same folds, another seed
// others; fewer items than folds give one fold per item.
func TestFoldsStratified(t *testing.T) {
	var y []int
	for i := range 1003 {
		y = append(y, []int{0, 0, 0, 1, 2, 2}[i%6]) // classes of 502, 167 and 334 items
	}
	c := cv{folds: 10, seed: 1, stream: "t"}
	folds := c.assign(y)
	if len(folds) != 10 {
		t.Fatalf("%d folds", len(folds))
	}
	seen := make([]int, len(y))
	for f, idx := range folds {
		if !slices.IsSorted(idx) {
			t.Errorf("fold %d not in increasing order", f)
		}
		for _, i := range idx {
			seen[i]++
		}
	}
	for i, n := range seen {
		if n != 1 {
			t.Fatalf("item %d in %d folds", i, n)
		}
	}
	spread := func(count func(idx []int) int) int {
		lo, hi := len(y), 0
		for _, idx := range folds {
			lo, hi = min(lo, count(idx)), max(hi, count(idx))
		}
		return hi - lo
	}
	if s := spread(func(idx []int) int { return len(idx) }); s > 1 {
		t.Errorf("fold sizes differ by %d", s)
	}
	for class := range 3 {
		s := spread(func(idx []int) int {
			n := 0
			for _, i := range idx {
				if y[i] == class {
					n++
				}
			}
			return n
		})
		if s > 1 {
			t.Errorf("class %d: its counts in the folds differ by %d", class, s)
		}
	}
	again := c.assign(y)
	other := cv{folds: 10, seed: 2, stream: "t"}.assign(y)
	if !slices.EqualFunc(folds, again, slices.Equal) || slices.EqualFunc(folds, other, slices.Equal) {
		t.Error("the folds do not follow the seed")
	}
	if small := c.assign([]int{0, 1, 1}); len(small) != 3 || len(small[0]) != 1 {
		t.Errorf("3 items: folds %v", small)
	}
	if got := complement([]int{0, 2, 5}, 7); !slices.Equal(got, []int{1, 3, 4, 6}) {
		t.Errorf("complement %v", got)
	}
}
