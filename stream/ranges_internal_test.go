package stream

import (
	"math/rand/v2"
	"slices"
	"testing"
)

// TestRanges checks the range set against a plain set of rows, adding
// random ranges in random order.
func TestRanges(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for trial := range 200 {
		var rs ranges
		want := map[int64]bool{}
		for range rng.IntN(30) {
			first := rng.Int64N(100)
			end := first + rng.Int64N(8)
			rs.add(first, end)
			for i := first; i < end; i++ {
				want[i] = true
			}
		}
		for k := 1; k < len(rs); k++ {
			if rs[k-1].End >= rs[k].First || rs[k].First >= rs[k].End {
				t.Fatalf("trial %d: ranges not sorted, disjoint and apart: %v", trial, rs)
			}
		}
		if rs.count() != int64(len(want)) {
			t.Fatalf("trial %d: count %d, want %d", trial, rs.count(), len(want))
		}
		var inGaps int64
		for _, g := range rs.gaps(10, 90) {
			for i := g.First; i < g.End; i++ {
				if want[i] {
					t.Fatalf("trial %d: gap %v holds row %d of the set %v", trial, g, i, rs)
				}
				inGaps++
			}
		}
		for i := range int64(110) {
			if rs.contains(i) != want[i] {
				t.Fatalf("trial %d: contains(%d) = %v, want %v (%v)", trial, i, !want[i], want[i], rs)
			}
			if i >= 10 && i < 90 && !want[i] {
				inGaps--
			}
		}
		if inGaps != 0 {
			t.Fatalf("trial %d: gaps miss or repeat rows (%d)", trial, inGaps)
		}
	}
}

// TestRowSet checks the row set against ranges.add, adding rows one at a
// time in random order over several chunks, with folded ranges from a
// start.
func TestRowSet(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	for trial := range 50 {
		var want ranges
		var start []Range
		for range rng.IntN(4) {
			first := rng.Int64N(3 * rowChunkRows)
			start = append(start, Range{first, first + rng.Int64N(2*rowChunkRows)})
		}
		for _, r := range start {
			want.add(r.First, r.End)
		}
		s := rowSetOf(start)
		span := int64(4 * rowChunkRows)
		for range rng.IntN(int(2 * span)) {
			i := rng.Int64N(span)
			if s.contains(i) != want.contains(i) {
				t.Fatalf("trial %d: contains(%d) = %v, want %v", trial, i, s.contains(i), want.contains(i))
			}
			if added := s.add(i); added == want.contains(i) {
				t.Fatalf("trial %d: add(%d) = %v with the row in the set %v", trial, i, added, want.contains(i))
			}
			want.add(i, i+1)
		}
		if got := s.ranges(); !slices.Equal(got, want) {
			t.Fatalf("trial %d: ranges %v, want %v", trial, got, want)
		}
		if s.count() != want.count() {
			t.Fatalf("trial %d: count %d, want %d", trial, s.count(), want.count())
		}
	}
	// A whole chunk folds into one range.
	s := new(rowSet)
	for i := range int64(rowChunkRows) {
		s.add(rowChunkRows + i)
	}
	if len(s.chunks) != 0 || !slices.Equal(s.ranges(), []Range{{rowChunkRows, 2 * rowChunkRows}}) {
		t.Fatalf("a full chunk: %d chunks, ranges %v", len(s.chunks), s.ranges())
	}
}
