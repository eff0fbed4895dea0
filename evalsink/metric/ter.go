package metric

import (
	"math"
	"slices"
)

// TER is corpus translation edit rate ×100 (Snover et al. 2006) as
// tercom and sacrebleu 2.x compute it (TER(case_sensitive=True) on the
// tokens joined by spaces): the edits of every sentence summed, over the
// sum of each sentence's average reference length. A sentence's edits are
// those to its closest reference (fewest edits): word shifts, found by
// tercom's greedy heuristic, then insertions, deletions and substitutions
// (Levenshtein distance), each edit costing 1. 0 is a perfect match; TER
// exceeds 100 when the hypotheses need more edits than the references have
// words. References of no token at all: 100 when the hypotheses have
// words, else 0.
//
// The shift heuristic, as tercom's: repeatedly apply the shift that most
// reduces the edit distance (ties: the longest phrase, then the earliest
// in the hypothesis, then the earliest destination), among shifts of a
// phrase of at most 10 words that occurs in the reference at most 50
// positions away, is wrong where it is (not matched in the current
// alignment) and goes where the reference's copy is not matched; stop when
// no shift helps or 1,000 candidate shifts have been tried for the
// sentence. The edit distance is computed in a band of 25 words either
// side of the length-scaled diagonal, as sacrebleu does. Tokens are
// compared as given.
func TER(hyps [][]string, refs [][][]string) (float64, error) {
	if err := checkCorpus("TER", hyps, refs); err != nil {
		return 0, err
	}
	var edits, refLen float64
	for i, hyp := range hyps {
		best := -1
		sum := 0
		for _, ref := range refs[i] {
			e := terEdits(hyp, ref)
			if best < 0 || e < best {
				best = e
			}
			sum += len(ref)
		}
		edits += float64(best)
		refLen += float64(sum) / float64(len(refs[i]))
	}
	switch {
	case refLen > 0:
		return 100 * (edits / refLen), nil // sacrebleu's order of operations
	case edits > 0:
		return 100, nil
	}
	return 0, nil
}

// Limits of the shift search (tercom's, and sacrebleu's candidate cap).
const (
	terMaxShiftSize       = 10
	terMaxShiftDist       = 50
	terBeamWidth          = 25
	terMaxShiftCandidates = 1000
	terInfinity           = int64(1e16)
)

// Edit operations of an alignment of a hypothesis to a reference.
const (
	terUndefined = iota
	terMatch     // hypothesis word equals reference word
	terSub       // substituted
	terHypOnly   // a hypothesis word with no reference word (deleted)
	terRefOnly   // a reference word with no hypothesis word (inserted)
)

// terEdits is the number of shifts and edits turning hyp into ref.
func terEdits(hyp, ref []string) int {
	if len(ref) == 0 {
		return len(hyp)
	}
	words := hyp
	shifts, tried := 0, 0
	var m terMatrix
	for {
		gain, shifted, n := m.bestShift(words, ref, tried)
		tried = n
		if tried >= terMaxShiftCandidates || gain <= 0 {
			break
		}
		shifts++
		words = shifted
	}
	d, _ := m.distance(words, ref, false)
	return shifts + d
}

// terMatrix is the edit-distance matrix, its buffers kept from one
// distance to the next of a sentence.
type terMatrix struct {
	cost []int64
	op   []byte
}

// distance is the banded Levenshtein distance of hyp to ref and, with
// trace, its operations in order (one per hypothesis or reference word
// step). On equal cost it prefers a match or substitution, then a
// hypothesis-only word, then a reference-only word, as tercom.
func (m *terMatrix) distance(hyp, ref []string, trace bool) (int, []byte) {
	nh, nr := len(hyp), len(ref)
	w := nr + 1
	if n := (nh + 1) * w; cap(m.cost) < n {
		m.cost, m.op = make([]int64, n), make([]byte, n)
	} else {
		m.cost, m.op = m.cost[:n], m.op[:n]
	}
	cost := func(i, j int) *int64 { return &m.cost[i*w+j] }
	op := func(i, j int) *byte { return &m.op[i*w+j] }
	for j := 0; j <= nr; j++ {
		*cost(0, j), *op(0, j) = int64(j), terRefOnly
	}
	for k := w; k < len(m.cost); k++ {
		m.cost[k], m.op[k] = terInfinity, terUndefined
	}
	ratio := 1.0
	if nh > 0 {
		ratio = float64(nr) / float64(nh)
	}
	beam := terBeamWidth
	if float64(terBeamWidth) < ratio/2 {
		beam = int(math.Ceil(ratio/2 + terBeamWidth))
	}
	for i := 1; i <= nh; i++ {
		diag := int(math.Floor(float64(i) * ratio))
		lo, hi := max(0, diag-beam), min(nr+1, diag+beam)
		if i == nh {
			hi = nr + 1
		}
		up, row := m.cost[(i-1)*w:i*w], m.cost[i*w:(i+1)*w]
		ops := m.op[i*w : (i+1)*w]
		for j := lo; j < hi; j++ {
			if j == 0 {
				row[0], ops[0] = up[0]+1, terHypOnly
				continue
			}
			c, o := up[j-1], byte(terMatch)
			if hyp[i-1] != ref[j-1] {
				c, o = c+1, terSub
			}
			if c < row[j] {
				row[j], ops[j] = c, o
			}
			if c := up[j] + 1; c < row[j] {
				row[j], ops[j] = c, terHypOnly
			}
			if c := row[j-1] + 1; c < row[j] {
				row[j], ops[j] = c, terRefOnly
			}
		}
	}
	d := int(*cost(nh, nr))
	if !trace {
		return d, nil
	}
	var steps []byte
	for i, j := nh, nr; i > 0 || j > 0; {
		o := *op(i, j)
		steps = append(steps, o)
		switch o {
		case terMatch, terSub:
			i, j = i-1, j-1
		case terHypOnly:
			i--
		case terRefOnly:
			j--
		default:
			panic("metric: TER alignment reached a cell outside the band")
		}
	}
	slices.Reverse(steps)
	return d, steps
}

// terAlignment reads an alignment off trace: for each reference word the
// hypothesis position it aligns to (a reference-only word: the last
// hypothesis word before it, -1 at the start), and which words of each
// side are not matched.
func terAlignment(trace []byte, nh, nr int) (align []int, hypErr, refErr []bool) {
	align, hypErr, refErr = make([]int, nr), make([]bool, nh), make([]bool, nr)
	h, r := -1, -1
	for _, o := range trace {
		switch o {
		case terMatch, terSub:
			h, r = h+1, r+1
			align[r] = h
			hypErr[h], refErr[r] = o == terSub, o == terSub
		case terHypOnly:
			h++
			hypErr[h] = true
		case terRefOnly:
			r++
			align[r] = h
			refErr[r] = true
		}
	}
	return align, hypErr, refErr
}

// terShift moves words[start:start+n] to before position to (tercom's
// three cases, the third a shift onto or just past itself), returning a
// new slice.
func terShift(words []string, start, n, to int) []string {
	seg := func(a, b int) []string {
		a, b = min(max(a, 0), len(words)), min(max(b, 0), len(words))
		if a >= b {
			return nil
		}
		return words[a:b]
	}
	out := make([]string, 0, len(words))
	switch {
	case to < start:
		out = append(out, seg(0, to)...)
		out = append(out, seg(start, start+n)...)
		out = append(out, seg(to, start)...)
		out = append(out, seg(start+n, len(words))...)
	case to > start+n:
		out = append(out, seg(0, start)...)
		out = append(out, seg(start+n, to)...)
		out = append(out, seg(start, start+n)...)
		out = append(out, seg(to, len(words))...)
	default:
		out = append(out, seg(0, start)...)
		out = append(out, seg(start+n, n+to)...)
		out = append(out, seg(start, start+n)...)
		out = append(out, seg(n+to, len(words))...)
	}
	return out
}

// bestShift tries the candidate shifts of words against ref and
// returns the best one's reduction of the edit distance (which may be 0
// or negative: no shift helps), the shifted words, and the candidates
// tried so far (tried counts those of earlier calls for the sentence).
func (m *terMatrix) bestShift(words, ref []string, tried int) (int, []string, int) {
	before, trace := m.distance(words, ref, true)
	align, hypErr, refErr := terAlignment(trace, len(words), len(ref))
	type shift struct {
		gain, n, start, to int
		words              []string
	}
	var best *shift
	better := func(c shift) bool {
		switch {
		case best == nil:
			return true
		case c.gain != best.gain:
			return c.gain > best.gain
		case c.n != best.n:
			return c.n > best.n
		case c.start != best.start:
			return c.start < best.start
		}
		return c.to < best.to
	}
	anyTrue := func(b []bool) bool {
		for _, x := range b {
			if x {
				return true
			}
		}
		return false
	}
	nh, nr := len(words), len(ref)
outer:
	for sh := 0; sh < nh; sh++ {
		for sr := 0; sr < nr; sr++ {
			if abs(sr-sh) > terMaxShiftDist {
				continue
			}
			for n := 0; n < terMaxShiftSize && words[sh+n] == ref[sr+n]; {
				n++
				// A phrase words[sh:sh+n] that equals ref[sr:sr+n]: shift
				// it only where some of it is wrong in the hypothesis and
				// the reference's copy is not all matched, and not into
				// itself.
				if anyTrue(hypErr[sh:sh+n]) && anyTrue(refErr[sr:sr+n]) && (align[sr] < sh || align[sr] >= sh+n) {
					prev := -1
					for off := -1; off < n; off++ {
						to := 0
						if sr+off >= 0 {
							to = align[sr+off] + 1
						}
						if to == prev {
							continue
						}
						prev = to
						shifted := terShift(words, sh, n, to)
						d, _ := m.distance(shifted, ref, false)
						tried++
						if c := (shift{before - d, n, sh, to, shifted}); better(c) {
							best = &c
						}
					}
					if tried >= terMaxShiftCandidates {
						break outer
					}
				}
				if sh+n == nh || sr+n == nr {
					break
				}
			}
		}
	}
	if best == nil {
		return 0, words, tried
	}
	return best.gain, best.words, tried
}
