package metric_test

import (
	"math"
	"strings"
	"testing"

	"github.com/parastream/parastream/evalsink/internal/evaltest"
	"github.com/parastream/parastream/evalsink/metric"
)

// toks and corpus: see evaltest.Tokens and evaltest.Corpus.
var toks, corpus = evaltest.Tokens, evaltest.Corpus

func near(got, want, tol float64) bool { return math.Abs(got-want) <= tol }

// bleuCorpus: see evaltest.BLEUCorpus.
var bleuCorpus = evaltest.BLEUCorpus

// TestBLEUAgainstSacrebleu checks corpus BLEU-1 to 4 of a fixed corpus
// against sacrebleu's figures and against the same figures recomputed by
// hand from the corpus counts.
//
// Source of the figures: sacrebleu 2.6.0 (its source at tag v2.6.0, run
// with Debian bookworm's python3 3.11 and its python3-regex, -tabulate,
// -portalocker, -numpy, -lxml, -colorama), on these sentences as strings
// with tokenize='none', the second reference stream None where a sentence
// has one reference:
//
//	BLEU(tokenize='none', max_ngram_order=n).corpus_score(hyps, [refs1, refs2]).score
//
// sacrebleu prints for n = 4 "BLEU = 35.01 76.1/52.6/30.0/13.6 (BP = 0.978
// ratio = 0.979 hyp_len = 46 ref_len = 47)". By hand: hypothesis n-grams
// 46, 38, 30, 22 (lengths 6, 9, 6, 6, 7, 3, 4, 5); clipped matches 35, 20,
// 9, 3 ("the the the the" counts "the" twice, the most any one reference
// has); closest reference lengths 6+9+5+7+6+4+5+5 = 47 (sentence 3: 5 and
// 9 against 6, the 5; sentence 8: 5 and 5); BP = exp(1 − 47/46).
//
// NLTK 3.8's corpus_bleu (Debian python3-nltk 3.8-1) gives the same
// BLEU-1 to 3 (74.45074163168157, 61.92088024152127, 48.28194656772041)
// but 34.61996598986471 for BLEU-4: it counts at least one n-gram for
// every sentence ("it is raining" has no 4-gram, NLTK's denominator is 23
// not 22), where sacrebleu and the by-hand figure do not.
func TestBLEUAgainstSacrebleu(t *testing.T) {
	hyps, refs := bleuCorpus()
	got, err := metric.BLEU(hyps, refs)
	if err != nil {
		t.Fatal(err)
	}
	sacrebleu := [4]float64{74.45074163168154, 61.92088024152127, 48.28194656772041, 35.00684129662144}
	bp := math.Exp(1 - 47.0/46)
	p := [4]float64{35.0 / 46, 20.0 / 38, 9.0 / 30, 3.0 / 22}
	for n, g := range [4]float64{got.B1, got.B2, got.B3, got.B4} {
		logSum := 0.0
		for k := 0; k <= n; k++ {
			logSum += math.Log(p[k])
		}
		hand := 100 * bp * math.Exp(logSum/float64(n+1))
		if !near(g, sacrebleu[n], 1e-9) || !near(g, hand, 1e-9) {
			t.Errorf("BLEU-%d = %.15g, want sacrebleu's %.15g (by hand %.15g)", n+1, g, sacrebleu[n], hand)
		}
	}
}

// TestBLEUSmoothingAndBrevity checks the corner cases against sacrebleu
// 2.6.0 (as above) and by hand: 'exp' smoothing of an order without a
// match, the brevity penalty, an order without n-grams, an empty
// hypothesis.
func TestBLEUSmoothingAndBrevity(t *testing.T) {
	for _, c := range []struct {
		name string
		hyp  string
		refs []string
		want [4]float64
	}{
		// p = 3/4, 1/3, 0/2, 0/1: the orders without a match get 1/(2·2)
		// and 1/(4·1) ('exp': the k-th such order 1/(2^k · total)).
		// BLEU-3 = (75 · 33.3 · 25)^(1/3), BLEU-4 = (75 · 33.3 · 25 · 25)^(1/4).
		{"exp smoothing", "a b c d", []string{"a b x d"},
			[4]float64{74.99999999999997, 49.99999999999999, 39.68502629920498, 35.35533905932737}},
		// 2 words against 6: BP = exp(1 − 6/2) = e^-2; no trigram at all: 0.
		{"brevity and no trigram", "the cat", []string{"the cat sat on the mat"},
			[4]float64{13.533528323661276, 13.533528323661276, 0, 0}},
		{"empty hypothesis", "", []string{"a b"}, [4]float64{}},
	} {
		hyps, refs := corpus([]string{c.hyp}, [][]string{c.refs})
		got, err := metric.BLEU(hyps, refs)
		if err != nil {
			t.Fatal(err)
		}
		for n, g := range [4]float64{got.B1, got.B2, got.B3, got.B4} {
			if !near(g, c.want[n], 1e-9) {
				t.Errorf("%s: BLEU-%d = %.15g, want %.15g", c.name, n+1, g, c.want[n])
			}
		}
	}
}

// TestTER checks TER on cases computed by hand; sacrebleu 2.6.0's
// TER(case_sensitive=True) gives the same edits and reference lengths for
// each (checked when the cases were written).
func TestTER(t *testing.T) {
	for _, c := range []struct {
		name string
		hyp  string
		refs []string
		want float64
	}{
		{"identical", "a b c d", []string{"a b c d"}, 0},
		{"one substitution", "the cat sat", []string{"the cat ran"}, 100.0 / 3},
		{"one insertion", "the cat", []string{"the black cat"}, 100.0 / 3},
		// One shift of "on the mat" to the end (Levenshtein alone: 4).
		{"phrase shift", "on the mat the cat sat", []string{"the cat sat on the mat"}, 100.0 / 6},
		{"word shift", "tomorrow he will come", []string{"he will come tomorrow"}, 25},
		{"shift inside", "he will tomorrow come to the party", []string{"he will come to the party tomorrow"}, 100.0 / 7},
		// Best reference: 1 edit (delete c) to "a b", not 2 to "a b c d e";
		// over the average reference length (5+2)/2.
		{"two references", "a b c", []string{"a b c d e", "a b"}, 100 / 3.5},
		{"empty reference", "a b", []string{""}, 100},
		{"both empty", "", []string{""}, 0},
		{"empty hypothesis", "", []string{"a b c"}, 100},
	} {
		hyps, refs := corpus([]string{c.hyp}, [][]string{c.refs})
		got, err := metric.TER(hyps, refs)
		if err != nil {
			t.Fatal(err)
		}
		if !near(got, c.want, 1e-9) {
			t.Errorf("%s: TER = %.15g, want %.15g", c.name, got, c.want)
		}
	}
	// The corpus: edits summed over average reference lengths summed:
	// sacrebleu 2.6.0 gives 18 edits over 50.5 words for bleuCorpus.
	hyps, refs := bleuCorpus()
	got, err := metric.TER(hyps, refs)
	if err != nil {
		t.Fatal(err)
	}
	if want := 100 * 18 / 50.5; !near(got, want, 1e-9) {
		t.Errorf("corpus TER = %.15g, want sacrebleu's %.15g (18 edits / 50.5)", got, want)
	}
}

// TestMETEOR checks sentence METEOR on cases computed by hand (α = 0.9,
// β = 3, γ = 0.5).
func TestMETEOR(t *testing.T) {
	fmean := func(p, r float64) float64 { return p * r / (0.9*p + 0.1*r) }
	pen := func(chunks, m float64) float64 { return 1 - 0.5*math.Pow(chunks/m, 3) }
	for _, c := range []struct {
		name      string
		hyp, ref  string
		m, chunks int
		want      float64
	}{
		{"identical", "the cat sat on the mat", "the cat sat on the mat", 6, 1, pen(1, 6)},
		// cats/cat and sitting/sits share the stems cat and sit.
		{"stems", "the cats sitting", "the cat sits", 3, 1, pen(1, 3)},
		{"two chunks", "c d a b", "a b c d", 4, 2, pen(2, 4)},
		// "the" twice: mapping the first to the second and the second to
		// the first makes 3 chunks (the cat | and | the dog), the other
		// way 4: the fewest is chosen.
		{"fewest chunks", "the cat and the dog", "the dog and the cat", 5, 3, pen(3, 5)},
		{"short hypothesis", "the cat", "the cat sat on the mat", 2, 1, fmean(1, 1.0/3) * pen(1, 2)},
		// The exact match takes "runs"; "run" finds no reference word left.
		{"exact before stem", "run runs", "runs", 1, 1, fmean(0.5, 1) * pen(1, 1)},
		{"stem of a repeat", "walking walked", "walks", 1, 1, fmean(0.5, 1) * pen(1, 1)},
		{"no match", "a b", "c d", 0, 0, 0},
		{"empty hypothesis", "", "c d", 0, 0, 0},
		{"both empty", "", "", 0, 0, 0},
	} {
		m, chunks := metric.MeteorAlign(toks(c.hyp), toks(c.ref))
		got := metric.SentenceMETEOR(toks(c.hyp), toks(c.ref))
		if m != c.m || chunks != c.chunks || !near(got, c.want, 1e-12) {
			t.Errorf("%s: %d matches in %d chunks, METEOR %.15g; want %d in %d, %.15g", c.name, m, chunks, got, c.m, c.chunks, c.want)
		}
	}
	// The corpus figure: the mean of each sentence's best reference, ×100.
	hyps, refs := corpus([]string{"the cat sat", "c d a b"}, [][]string{{"a dog ran", "the cat sat"}, {"a b c d"}})
	got, err := metric.METEOR(hyps, refs)
	if err != nil {
		t.Fatal(err)
	}
	if want := 100 * (pen(1, 3) + pen(2, 4)) / 2; !near(got, want, 1e-9) {
		t.Errorf("corpus METEOR = %.15g, want %.15g", got, want)
	}
}

// TestGenerationErrors: mismatched counts, no sentence and a sentence
// without references are errors from every metric, never a panic.
func TestGenerationErrors(t *testing.T) {
	h, r := corpus([]string{"a b", "c"}, [][]string{{"a b"}})
	metrics := map[string]func([][]string, [][][]string) error{
		"BLEU":   func(h [][]string, r [][][]string) error { _, err := metric.BLEU(h, r); return err },
		"METEOR": func(h [][]string, r [][][]string) error { _, err := metric.METEOR(h, r); return err },
		"TER":    func(h [][]string, r [][][]string) error { _, err := metric.TER(h, r); return err },
	}
	for name, f := range metrics {
		if err := f(h, r); err == nil || !strings.Contains(err.Error(), "2 hypotheses but 1 reference sets") {
			t.Errorf("%s of 2 hypotheses and 1 reference set: %v", name, err)
		}
		if err := f(nil, nil); err == nil || !strings.Contains(err.Error(), "no sentence") {
			t.Errorf("%s of nothing: %v", name, err)
		}
		if err := f(h, [][][]string{{toks("a b")}, {}}); err == nil || !strings.Contains(err.Error(), "sentence 1 has no reference") {
			t.Errorf("%s with a sentence without references: %v", name, err)
		}
	}
}
