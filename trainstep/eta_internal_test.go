package trainstep

import "testing"

// TestETA: the progress line's time left counts the rows left in this
// epoch and in the epochs after it, at the line's rate, and says nothing
// where the run has no end in epochs or no rate yet.
func TestETA(t *testing.T) {
	at := &mixState{done: 250, total: 1000}
	for _, c := range []struct {
		epochs, epoch int
		at            *mixState
		rate          float64
		want          string
	}{
		{3, 1, at, 100, " ETA 28s"},  // 750 + 2×1000 rows at 100/s: 27.5 s
		{3, 3, at, 100, " ETA 8s"},   // 750 rows: 7.5 s
		{2, 1, at, 10, " ETA 2m55s"}, // 1750 rows at 10/s
		{0, 1, at, 100, ""},          // follows new data for ever
		{3, 1, at, 0, ""},            // no rate yet
		{3, 1, nil, 100, ""},         // no window read yet
		{3, 1, &mixState{}, 100, ""}, // no total known
		{1, 1, &mixState{done: 10, total: 10}, 5, " ETA 0s"},
	} {
		if got := eta(c.epochs, c.epoch, c.at, c.rate); got != c.want {
			t.Errorf("eta(%d, %d, %+v, %g) = %q, want %q", c.epochs, c.epoch, c.at, c.rate, got, c.want)
		}
	}
}
