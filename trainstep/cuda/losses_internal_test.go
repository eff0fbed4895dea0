package cuda

import (
	"slices"
	"strings"
	"testing"
)

// TestHingeIndex checks the hinge loss's upload: the negatives of each
// side, then for each side the pairs' inverse lists (which (pair, slot)
// terms name pair j as a negative), and the errors for a batch whose
// negatives do not fit the model.
func TestHingeIndex(t *testing.T) {
	negB := [][]int32{{1, 2}, {2, 0}, {1, 0}}
	negA := [][]int32{{2, 2}, {0, 2}, {0, 1}}
	got, err := hingeIndex(negB, negA, 3, 2)
	if err != nil {
		t.Fatal(err)
	}
	want := []int32{
		1, 2, 2, 0, 1, 0, // negB
		2, 2, 0, 2, 0, 1, // negA
		0, 2, 4, 6, // B: pair 0 is term 3's and 5's negative, pair 1 terms 0 and 4, pair 2 terms 1 and 2
		3, 5, 0, 4, 1, 2,
		0, 2, 3, 6, // A: pair 0 in terms 2 and 4, pair 1 in 5, pair 2 in 0, 1 and 3
		2, 4, 5, 0, 1, 3,
	}
	if !slices.Equal(got, want) {
		t.Errorf("hingeIndex\n got %v\nwant %v", got, want)
	}
	for _, c := range []struct {
		negB [][]int32
		want string
	}{
		{[][]int32{{1, 2}, {2}, {1, 0}}, "pair 1 has 1 negatives, the model takes 2"},
		{[][]int32{{1, 2}, {2, 3}, {1, 0}}, "pair 1 has negative 3 outside the batch's 3 pairs"},
		{[][]int32{{1, 2}, {2, 0}}, "2 pairs' negatives for 3 pairs"},
	} {
		if _, err := hingeIndex(c.negB, negA, 3, 2); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("negB %v: error %v, want %q", c.negB, err, c.want)
		}
	}
}
