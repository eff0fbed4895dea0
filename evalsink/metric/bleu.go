package metric

import (
	"fmt"
	"math"
)

// BLEUScores is corpus BLEU ×100 (0-100) with n-grams up to 1, 2, 3 and
// 4: B4 is the BLEU usually reported.
type BLEUScores struct {
	B1, B2, B3, B4 float64
}

// checkCorpus reports hypotheses and references that cannot be scored: a
// count that differs, no sentence, a sentence without a reference.
func checkCorpus(metric string, hyps [][]string, refs [][][]string) error {
	if len(hyps) != len(refs) {
		return fmt.Errorf("evalsink: %s: %d hypotheses but %d reference sets: give one set of references per hypothesis", metric, len(hyps), len(refs))
	}
	if len(hyps) == 0 {
		return fmt.Errorf("evalsink: %s: no sentence to score: give at least one hypothesis with its references", metric)
	}
	for i, r := range refs {
		if len(r) == 0 {
			return fmt.Errorf("evalsink: %s: sentence %d has no reference: give it at least one (an empty reference is a reference of no tokens)", metric, i)
		}
	}
	return nil
}

// BLEUMaxOrder is the longest n-gram BLEU counts.
const BLEUMaxOrder = 4

// ngramKey is an n-gram of interned tokens.
type ngramKey struct {
	n   int
	ids [BLEUMaxOrder]int
}

// ngramCounts counts the n-grams of ids, n = 1..BLEUMaxOrder.
func ngramCounts(ids []int) map[ngramKey]int {
	c := map[ngramKey]int{}
	for n := 1; n <= BLEUMaxOrder; n++ {
		for i := 0; i+n <= len(ids); i++ {
			k := ngramKey{n: n}
			copy(k.ids[:], ids[i:i+n])
			c[k]++
		}
	}
	return c
}

// BLEU is corpus BLEU (Papineni et al. 2002) as sacrebleu 2.x computes it
// (BLEU(max_ngram_order=n, smooth_method='exp', tokenize='none')), for n
// = 1..4: over the whole corpus, the clipped n-gram matches of each order
// (a hypothesis n-gram counts at most as often as it occurs in any one of
// its references) over the hypothesis n-grams, p_k; the brevity penalty BP
// = exp(1 − r/c) when the hypotheses' length c is below r, the sum of each
// sentence's reference length closest to its hypothesis's (the shorter on
// a tie), else 1; BLEU-n = BP · exp(Σ_{k≤n} log p_k / n) × 100.
//
// Smoothing as sacrebleu's default 'exp': none while every order has a
// match; an order with n-grams but no match gets p_k = 1/(2^z · total_k),
// z counting such orders from the first (the NIST mteval-v13a scheme); an
// order with no n-gram at all (every hypothesis shorter than k) makes
// BLEU-n 0, as does a corpus with no match of any order up to n.
//
// Tokens are compared as given: tokenisation and case are the caller's
// (sacrebleu's tokenize='none' on the tokens joined by spaces).
func BLEU(hyps [][]string, refs [][][]string) (BLEUScores, error) {
	if err := checkCorpus("BLEU", hyps, refs); err != nil {
		return BLEUScores{}, err
	}
	vocab := map[string]int{}
	intern := func(toks []string) []int {
		ids := make([]int, len(toks))
		for i, t := range toks {
			id, ok := vocab[t]
			if !ok {
				id = len(vocab)
				vocab[t] = id
			}
			ids[i] = id
		}
		return ids
	}
	var correct, total [BLEUMaxOrder]int
	var sysLen, refLen int
	for i, hyp := range hyps {
		maxRef := map[ngramKey]int{}
		closest := -1
		for _, ref := range refs[i] {
			for k, c := range ngramCounts(intern(ref)) {
				maxRef[k] = max(maxRef[k], c)
			}
			d, dc := abs(len(ref)-len(hyp)), abs(closest-len(hyp))
			if closest < 0 || d < dc || (d == dc && len(ref) < closest) {
				closest = len(ref)
			}
		}
		for k, c := range ngramCounts(intern(hyp)) {
			total[k.n-1] += c
			correct[k.n-1] += min(c, maxRef[k])
		}
		sysLen += len(hyp)
		refLen += closest
	}
	b := func(n int) float64 { return bleuFromCounts(correct[:n], total[:n], sysLen, refLen) }
	return BLEUScores{B1: b(1), B2: b(2), B3: b(3), B4: b(4)}, nil
}

// bleuFromCounts is BLEU ×100 from the corpus counts of orders 1..n.
func bleuFromCounts(correct, total []int, sysLen, refLen int) float64 {
	bp := 1.0
	if sysLen < refLen {
		if sysLen == 0 {
			return 0
		}
		bp = math.Exp(1 - float64(refLen)/float64(sysLen))
	}
	any := false
	for _, c := range correct {
		any = any || c > 0
	}
	if !any {
		return 0
	}
	logSum := 0.0
	smooth := 1.0
	for k := range correct {
		if total[k] == 0 {
			return 0
		}
		p := float64(correct[k]) / float64(total[k])
		if correct[k] == 0 {
			smooth *= 2
			p = 1 / (smooth * float64(total[k]))
		}
		logSum += math.Log(100 * p)
	}
	return bp * math.Exp(logSum/float64(len(correct)))
}

// GenerationScores are the generation figures of one corpus.
type GenerationScores struct {
	BLEU BLEUScores
	// METEOR is the mean sentence METEOR ×100; TER the corpus TER ×100
	// (edits per reference word, above 100 when the hypotheses need more
	// edits than the references have words).
	METEOR, TER float64
	// Sentences counts the hypotheses scored.
	Sentences int
}

// ScoreGeneration computes BLEU-1 to 4, METEOR and TER of hyps (tokens of
// each hypothesis) against refs (one or more references of each, tokens).
func ScoreGeneration(hyps [][]string, refs [][][]string) (GenerationScores, error) {
	var g GenerationScores
	var err error
	if g.BLEU, err = BLEU(hyps, refs); err != nil {
		return g, err
	}
	if g.METEOR, err = METEOR(hyps, refs); err != nil {
		return g, err
	}
	if g.TER, err = TER(hyps, refs); err != nil {
		return g, err
	}
	g.Sentences = len(hyps)
	return g, nil
}

func abs(v int) int { return max(v, -v) }
