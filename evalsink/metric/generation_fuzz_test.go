package metric_test

import (
	"math"
	"strings"
	"testing"

	"github.com/parastream/parastream/evalsink/metric"
)

// parseGeneration reads a fuzz input as a corpus: a sentence a line,
// "hypothesis|reference|reference...", tokens split on spaces, at most 40
// tokens a sentence (the alignment searches are exponential in the worst
// case and bounded, not fast).
func parseGeneration(data string) ([][]string, [][][]string) {
	var hyps [][]string
	var refs [][][]string
	cut := func(s string) []string {
		f := strings.Fields(s)
		return f[:min(len(f), 40)]
	}
	for line := range strings.SplitSeq(data, "\n") {
		parts := strings.Split(line, "|")
		hyps = append(hyps, cut(parts[0]))
		var rs [][]string
		for _, p := range parts[1:] {
			rs = append(rs, cut(p))
		}
		refs = append(refs, rs)
	}
	return hyps, refs
}

// FuzzGenerationMetrics feeds random corpora to BLEU, METEOR and TER: no
// panic; an error exactly when a sentence has no reference; BLEU and
// METEOR in [0, 100]; TER ≥ 0 and, with one reference a sentence, no
// more edits than Levenshtein's bound max(|hyp|, |ref|); each sentence's
// METEOR alignment as large as any (Σ over stems of the smaller count)
// with no more chunks than matches.
func FuzzGenerationMetrics(f *testing.F) {
	f.Add("the cat sat on the mat|the cat is on the mat|there is a cat on the mat\nthe the the the|the cat on the mat")
	f.Add("on the mat the cat sat|the cat sat on the mat")
	f.Add("the cat and the dog|the dog and the cat\nrun runs|runs\n|")
	f.Add("a b c d|a b x d\n|a b\na b|")
	f.Add("a a a a a a a a a a a a|a a a a a a a a\nb a b a b a b a|a b a b a b a b")
	f.Add("x")
	f.Fuzz(func(t *testing.T, data string) {
		hyps, refs := parseGeneration(data)
		noRef := false
		for _, r := range refs {
			noRef = noRef || len(r) == 0
		}
		b, errB := metric.BLEU(hyps, refs)
		m, errM := metric.METEOR(hyps, refs)
		ter, errT := metric.TER(hyps, refs)
		if noRef {
			if errB == nil || errM == nil || errT == nil {
				t.Fatalf("a sentence without references: errors %v, %v, %v", errB, errM, errT)
			}
			return
		}
		if errB != nil || errM != nil || errT != nil {
			t.Fatalf("errors %v, %v, %v", errB, errM, errT)
		}
		for n, v := range []float64{b.B1, b.B2, b.B3, b.B4, m} {
			if math.IsNaN(v) || v < 0 || v > 100+1e-9 {
				t.Fatalf("figure %d = %v outside [0, 100]", n, v)
			}
		}
		if math.IsNaN(ter) || ter < 0 {
			t.Fatalf("TER %v", ter)
		}
		bound, refLen := 0, 0
		single := true
		for i, h := range hyps {
			single = single && len(refs[i]) == 1
			r := refs[i][0]
			bound += max(len(h), len(r))
			refLen += len(r)
			stems := map[string][2]int{}
			for _, w := range h {
				c := stems[metric.PorterStem(w)]
				stems[metric.PorterStem(w)] = [2]int{c[0] + 1, c[1]}
			}
			for _, w := range r {
				c := stems[metric.PorterStem(w)]
				stems[metric.PorterStem(w)] = [2]int{c[0], c[1] + 1}
			}
			most := 0
			for _, c := range stems {
				most += min(c[0], c[1])
			}
			matches, chunks := metric.MeteorAlign(h, r)
			if matches != most || chunks > matches || (matches > 0 && chunks == 0) {
				t.Fatalf("%v against %v: %d matches in %d chunks, want %d matches", h, r, matches, chunks, most)
			}
		}
		if single && refLen > 0 && ter*float64(refLen)/100 > float64(bound)+1e-9 {
			t.Fatalf("TER %v: %v edits, more than Levenshtein's bound %d", ter, ter*float64(refLen)/100, bound)
		}
	})
}
