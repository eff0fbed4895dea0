package stream

import (
	"maps"
	"math/bits"
	"slices"
	"sort"
)

// Range is the half-open range of row indices First <= i < End.
type Range struct {
	First int64 `json:"first"`
	End   int64 `json:"end"`
}

// ranges is a set of row indices kept as sorted, disjoint, non-adjacent
// ranges: rows that arrive in order take one range whatever their count.
type ranges []Range

// add adds First <= i < End.
func (rs *ranges) add(first, end int64) {
	if first >= end {
		return
	}
	s := *rs
	// i: the first range that ends at or after first (it may touch).
	i := sort.Search(len(s), func(k int) bool { return s[k].End >= first })
	// j: the first range that starts after end (it does not touch).
	j := sort.Search(len(s), func(k int) bool { return s[k].First > end })
	if i == j {
		s = append(s, Range{})
		copy(s[i+1:], s[i:])
		s[i] = Range{first, end}
		*rs = s
		return
	}
	merged := Range{min(first, s[i].First), max(end, s[j-1].End)}
	s[i] = merged
	*rs = append(s[:i+1], s[j:]...)
}

// contains reports whether row i is in the set.
func (rs ranges) contains(i int64) bool {
	k := sort.Search(len(rs), func(k int) bool { return rs[k].End > i })
	return k < len(rs) && rs[k].First <= i
}

// gaps returns the parts of First <= i < End that are not in the set, in
// order.
func (rs ranges) gaps(first, end int64) []Range {
	var out []Range
	k := sort.Search(len(rs), func(k int) bool { return rs[k].End > first })
	for ; first < end; k++ {
		if k == len(rs) || rs[k].First >= end {
			out = append(out, Range{first, end})
			break
		}
		if rs[k].First > first {
			out = append(out, Range{first, rs[k].First})
		}
		first = rs[k].End
	}
	return out
}

// count is the number of rows in the set.
func (rs ranges) count() int64 {
	var n int64
	for _, r := range rs {
		n += r.End - r.First
	}
	return n
}

// rowSet is the set of rows a consumer has handed out of one shard in an
// epoch. Rows are added one at a time in shuffled order, which would cut a
// ranges into many small ranges and make each add move its tail: a rowSet
// keeps those rows as bits of chunks of rowChunkRows rows, and folds a
// chunk into its ranges once every row of it is in. Adding and testing a
// row cost a map lookup and a bit; the ranges stay few.
type rowSet struct {
	folded ranges
	chunks map[int64]*rowChunk
	bits   int64 // rows in chunks
}

const rowChunkRows = 4096

// rowChunk holds a chunk's rows as bits, and their count.
type rowChunk struct {
	words [rowChunkRows / 64]uint64
	n     int
}

// rowSetOf is the set of the rows in rs.
func rowSetOf(rs []Range) *rowSet {
	s := new(rowSet)
	for _, r := range rs {
		s.folded.add(r.First, r.End)
	}
	return s
}

// contains reports whether row i is in the set.
func (s *rowSet) contains(i int64) bool {
	if c := s.chunks[i/rowChunkRows]; c != nil {
		k := i % rowChunkRows
		if c.words[k/64]&(1<<(k%64)) != 0 {
			return true
		}
	}
	return s.folded.contains(i)
}

// add adds row i; false when the set holds it already.
func (s *rowSet) add(i int64) bool {
	key := i / rowChunkRows
	k := i % rowChunkRows
	c := s.chunks[key]
	if c != nil && c.words[k/64]&(1<<(k%64)) != 0 || s.folded.contains(i) {
		return false
	}
	if c == nil {
		if s.chunks == nil {
			s.chunks = map[int64]*rowChunk{}
		}
		c = new(rowChunk)
		s.chunks[key] = c
	}
	c.words[k/64] |= 1 << (k % 64)
	c.n++
	s.bits++
	if c.n == rowChunkRows {
		s.folded.add(key*rowChunkRows, (key+1)*rowChunkRows)
		s.bits -= rowChunkRows
		delete(s.chunks, key)
	}
	return true
}

// count is the number of rows in the set.
func (s *rowSet) count() int64 { return s.folded.count() + s.bits }

// ranges returns the set as sorted, disjoint, non-adjacent ranges, as
// ranges.add makes them.
func (s *rowSet) ranges() []Range {
	if len(s.chunks) == 0 {
		return slices.Clone(s.folded)
	}
	keys := slices.Sorted(maps.Keys(s.chunks))
	var runs ranges
	for _, key := range keys {
		c := s.chunks[key]
		base := key * rowChunkRows
		for k := int64(0); k < rowChunkRows; {
			w := c.words[k/64] >> (k % 64)
			if w == 0 {
				k += 64 - k%64
				continue
			}
			k += int64(bits.TrailingZeros64(w))
			start := k
			for k < rowChunkRows && c.words[k/64]&(1<<(k%64)) != 0 {
				k++
			}
			runs = runs.appendRun(base+start, base+k)
		}
	}
	return mergeRanges(s.folded, runs)
}

// appendRun appends first <= i < end, which comes after every range of
// rs, merged with the last range when they touch.
func (rs ranges) appendRun(first, end int64) ranges {
	if n := len(rs); n > 0 && rs[n-1].End >= first {
		rs[n-1].End = max(rs[n-1].End, end)
		return rs
	}
	return append(rs, Range{first, end})
}

// mergeRanges is the union of two sets of sorted, disjoint ranges.
func mergeRanges(a, b ranges) []Range {
	out := make(ranges, 0, len(a)+len(b))
	for len(a) > 0 || len(b) > 0 {
		var r Range
		if len(b) == 0 || len(a) > 0 && a[0].First <= b[0].First {
			r, a = a[0], a[1:]
		} else {
			r, b = b[0], b[1:]
		}
		out = out.appendRun(r.First, r.End)
	}
	return out
}
