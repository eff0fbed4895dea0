package cuda

import (
	"math/rand/v2"
	"slices"
	"testing"
)

// TestRowSet: drain lists the distinct rows added, in increasing order,
// and leaves the set empty for the next batch; ids outside the table are
// refused.
func TestRowSet(t *testing.T) {
	var s rowSet
	rng := rand.New(rand.NewPCG(1, 2))
	var dst []int32
	for round := range 3 {
		rows := 1 + rng.IntN(5000)
		want := map[int32]bool{}
		for range rng.IntN(3 * rows) {
			id := rng.Int32N(int32(rows))
			want[id] = true
			if !s.add(id, rows) {
				t.Fatalf("round %d: %d refused in a table of %d rows", round, id, rows)
			}
		}
		dst = s.drain(dst)
		keys := make([]int32, 0, len(want))
		for id := range want {
			keys = append(keys, id)
		}
		slices.Sort(keys)
		if !slices.Equal(dst, keys) {
			t.Fatalf("round %d: drained %d rows, want %d distinct in order", round, len(dst), len(keys))
		}
		if got := s.drain(nil); len(got) != 0 {
			t.Fatalf("round %d: %d rows left after drain", round, len(got))
		}
	}
	for _, id := range []int32{-1, 64, 1 << 30} {
		if s.add(id, 64) {
			t.Errorf("id %d accepted in a table of 64 rows", id)
		}
	}
}
