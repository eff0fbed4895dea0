package metric

import (
	"math"
	"slices"
)

// Parameters of METEOR (Banerjee & Lavie 2005; Lavie & Agarwal 2007's
// α = 0.9, β = 3, γ = 0.5).
const (
	MeteorAlpha = 0.9
	MeteorBeta  = 3.0
	MeteorGamma = 0.5
	// meteorSearchBudget bounds the alignment search of one stage of one
	// sentence pair (nodes visited, about 1 ms per 2,000); past it the best
	// alignment found so far is kept. Sentences without many repeats of
	// one word finish far below it, and their alignment is then the exact
	// optimum.
	meteorSearchBudget = 20_000
)

// METEOR is the mean over sentences of sentence METEOR ×100 (0-100), each
// sentence scored against each of its references and given the best.
//
// A sentence's alignment is built in two stages, as Banerjee & Lavie
// (2005): exact matches (equal tokens), then, among the words still
// unmatched, stem matches (equal PorterStem). Each stage maps words one to
// one with as many matches as it can make and, among such mappings, the
// fewest chunks (runs of matches adjacent and in the same order in both
// sentences) of the alignment so far, then the smallest sum of |hypothesis
// position − reference position| (Denkowski & Lavie's tie-break). With m
// matches, P = m/|hyp|, R = m/|ref|, Fmean = P·R/(α·P + (1−α)·R), Penalty
// = γ·(chunks/m)^β and the score is Fmean·(1 − Penalty); 0 without a match
// (an empty hypothesis or reference included).
//
// Left out: the synonym (WordNet) and paraphrase-table stages of METEOR
// 1.0-1.5, the function-word weighting (δ) and per-module weights of
// METEOR 1.5, and its language-specific tuned parameters; tokens are
// compared as given (no lowercasing, no normalisation). The alignment
// search is exhaustive within meteorSearchBudget nodes a stage, which only
// sentences with many repeats of a word exceed.
func METEOR(hyps [][]string, refs [][][]string) (float64, error) {
	if err := checkCorpus("METEOR", hyps, refs); err != nil {
		return 0, err
	}
	sum := 0.0
	for i, hyp := range hyps {
		best := 0.0
		for _, ref := range refs[i] {
			best = max(best, SentenceMETEOR(hyp, ref))
		}
		sum += best
	}
	return 100 * sum / float64(len(hyps)), nil
}

// SentenceMETEOR is the METEOR score (0-1) of hyp against one reference,
// as METEOR defines it.
func SentenceMETEOR(hyp, ref []string) float64 {
	m, chunks := MeteorAlign(hyp, ref)
	return meteorScore(m, chunks, len(hyp), len(ref))
}

// meteorScore is Fmean·(1 − Penalty) of m matches in chunks.
func meteorScore(m, chunks, hypLen, refLen int) float64 {
	if m == 0 {
		return 0
	}
	p, r := float64(m)/float64(hypLen), float64(m)/float64(refLen)
	fmean := p * r / (MeteorAlpha*p + (1-MeteorAlpha)*r)
	penalty := MeteorGamma * math.Pow(float64(chunks)/float64(m), MeteorBeta)
	return fmean * (1 - penalty)
}

// MeteorAlign aligns hyp to ref as METEOR does (exact, then stem matches;
// see METEOR) and returns the matches and the chunks they form.
func MeteorAlign(hyp, ref []string) (matches, chunks int) {
	a := meteorAligner{hypTo: make([]int, len(hyp)), refUsed: make([]bool, len(ref))}
	for i := range a.hypTo {
		a.hypTo[i] = -1
	}
	a.stage(hyp, ref)
	hs, rs := make([]string, len(hyp)), make([]string, len(ref))
	for i, w := range hyp {
		hs[i] = PorterStem(w)
	}
	for j, w := range ref {
		rs[j] = PorterStem(w)
	}
	a.stage(hs, rs)
	prev := -2
	for _, j := range a.hypTo {
		if j >= 0 {
			matches++
			if j != prev+1 || prev < 0 {
				chunks++
			}
		}
		prev = j
	}
	return matches, chunks
}

// meteorAligner holds an alignment built stage by stage.
type meteorAligner struct {
	// hypTo maps each hypothesis word to its reference word, -1 when
	// unmatched; refUsed marks the matched reference words.
	hypTo   []int
	refUsed []bool

	// The search of one stage.
	cands     [][]int // per hypothesis word: the free reference words it may match
	group     []int   // per hypothesis word: its key's index, -1 when not in the stage
	need      []int   // per key: the matches the stage makes
	made      []int   // per key: the matches made so far
	left      []int   // per hypothesis word: its key's stage words at or after it
	cur       []int   // the stage's mapping under construction
	best      []int
	bestChunk int
	bestDist  int
	nodes     int
	order     [][]int // per hypothesis word: a buffer for its choices
}

// stage adds the matches of one stage: hypothesis word i and reference
// word j match when h[i] == r[j] and neither is matched yet. It makes as
// many matches as possible, then the fewest chunks, then the smallest
// distance.
func (a *meteorAligner) stage(h, r []string) {
	keys := map[string]int{}
	var hypCount, refCount []int
	refsOf := map[string][]int{}
	for j, w := range r {
		if a.refUsed[j] {
			continue
		}
		refsOf[w] = append(refsOf[w], j)
	}
	a.group = make([]int, len(h))
	for i, w := range h {
		a.group[i] = -1
		if a.hypTo[i] >= 0 || len(refsOf[w]) == 0 {
			continue
		}
		k, ok := keys[w]
		if !ok {
			k = len(keys)
			keys[w] = k
			hypCount = append(hypCount, 0)
			refCount = append(refCount, len(refsOf[w]))
		}
		a.group[i] = k
		hypCount[k]++
	}
	if len(keys) == 0 {
		return
	}
	a.need, a.made = make([]int, len(keys)), make([]int, len(keys))
	for k := range a.need {
		a.need[k] = min(hypCount[k], refCount[k])
	}
	a.left = make([]int, len(h))
	seen := make([]int, len(keys))
	for i := len(h) - 1; i >= 0; i-- {
		if k := a.group[i]; k >= 0 {
			seen[k]++
			a.left[i] = seen[k]
		}
	}
	a.cands = make([][]int, len(h))
	for i, w := range h {
		if a.group[i] >= 0 {
			a.cands[i] = refsOf[w]
		}
	}
	a.cur = slices.Clone(a.hypTo)
	a.order = make([][]int, len(h))
	a.best, a.bestChunk, a.bestDist, a.nodes = nil, math.MaxInt, math.MaxInt, 0
	a.search(0, 0, 0)
	for i, j := range a.best {
		if j >= 0 && a.hypTo[i] < 0 {
			a.hypTo[i] = j
			a.refUsed[j] = true
		}
	}
}

// search extends the mapping from hypothesis word i, with chunks and
// dist so far, depth first: the match continuing the previous word's
// chunk first, then the others nearest first, then no match.
func (a *meteorAligner) search(i, chunks, dist int) {
	if chunks > a.bestChunk || (chunks == a.bestChunk && dist >= a.bestDist) {
		return
	}
	if a.nodes >= meteorSearchBudget && a.best != nil {
		return
	}
	a.nodes++
	if i == len(a.cur) {
		a.best, a.bestChunk, a.bestDist = slices.Clone(a.cur), chunks, dist
		return
	}
	// A chunk starts at a match unless the previous word matches the
	// reference word just before.
	opens := func(j int) int {
		if i > 0 && j > 0 && a.cur[i-1] == j-1 {
			return 0
		}
		return 1
	}
	k := a.group[i]
	if k < 0 {
		c := chunks
		if j := a.cur[i]; j >= 0 {
			c += opens(j)
		}
		a.search(i+1, c, dist)
		return
	}
	if a.made[k] < a.need[k] {
		order := a.order[i][:0]
		for _, j := range a.cands[i] {
			if !a.refUsed[j] {
				order = append(order, j)
			}
		}
		slices.SortStableFunc(order, func(x, y int) int {
			if ox, oy := opens(x), opens(y); ox != oy {
				return ox - oy
			}
			return abs(x-i) - abs(y-i)
		})
		a.order[i] = order
		for _, j := range order {
			a.cur[i], a.refUsed[j] = j, true
			a.made[k]++
			a.search(i+1, chunks+opens(j), dist+abs(j-i))
			a.made[k]--
			a.cur[i], a.refUsed[j] = -1, false
		}
	}
	if a.made[k]+a.left[i]-1 >= a.need[k] {
		a.search(i+1, chunks, dist)
	}
}
