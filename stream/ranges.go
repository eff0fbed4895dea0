package stream

import "sort"

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
