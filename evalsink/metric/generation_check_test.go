package metric_test

import (
	"encoding/csv"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/parastream/parastream/evalsink/internal/evaltest"
	"github.com/parastream/parastream/evalsink/metric"
	"github.com/parastream/parastream/internal/testenv"
	"github.com/parastream/parastream/transforms/text"
)

// quoraCopy is the "copy the input" baseline of paraphrase generation on
// the Quora sample's duplicates (../shared/data): each question1, tokenised
// and lowercased by the project's tokeniser, as the output for question2,
// its one reference.
func quoraCopy(t *testing.T) ([][]string, [][][]string) {
	t.Helper()
	f, err := os.Open(testenv.SharedData(t, "corpora/quora/quora_duplicate_questions.sample.tsv"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	r := csv.NewReader(f)
	r.Comma, r.LazyQuotes, r.FieldsPerRecord = '\t', true, -1
	recs, err := r.ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	o := text.TokenizeOptions{Lower: true}
	var hyps [][]string
	var refs [][][]string
	for _, rec := range recs[1:] {
		if len(rec) == 6 && rec[5] == "1" {
			hyps = append(hyps, text.Tokenize(rec[3], o))
			refs = append(refs, [][]string{text.Tokenize(rec[4], o)})
		}
	}
	return hyps, refs
}

// generationCheck is what testdata/generation_check.py prints.
type generationCheck struct {
	Sacrebleu *struct {
		Version      string       `json:"version"`
		BLEU         []float64    `json:"bleu"`
		TER          float64      `json:"ter"`
		TERSentences [][2]float64 `json:"ter_sentences"`
	} `json:"sacrebleu"`
	NLTK *struct {
		Version string    `json:"version"`
		Stems   []string  `json:"stems"`
		Meteor  []float64 `json:"meteor"`
	} `json:"nltk"`
}

// runGenerationCheck runs testdata/generation_check.py with Debian's
// python3 (python3 from PATH when it is absent) on in.
func runGenerationCheck(t *testing.T, in any) generationCheck {
	t.Helper()
	py := "/usr/bin/python3"
	if _, err := os.Stat(py); err != nil {
		if py, err = exec.LookPath("python3"); err != nil {
			t.Skip("skipping: no python3 to run testdata/generation_check.py")
		}
	}
	var c generationCheck
	evaltest.Run(t, py, "generation_check.py", in, &c)
	return c
}

// randomCorpus draws n sentences of up to maxLen tokens over a vocabulary
// of vocab words (few words: many repeats, so clipping, ties and shifts
// are exercised), each with 1 to 3 references of up to maxLen tokens,
// some of them empty.
func randomCorpus(rng *rand.Rand, n, vocab, minLen, maxLen int) ([][]string, [][][]string) {
	sentence := func() []string {
		s := make([]string, minLen+rng.IntN(maxLen-minLen+1))
		for i := range s {
			s[i] = fmt.Sprintf("w%d", rng.IntN(vocab))
		}
		return s
	}
	hyps := make([][]string, n)
	refs := make([][][]string, n)
	for i := range hyps {
		hyps[i] = sentence()
		for range 1 + rng.IntN(3) {
			refs[i] = append(refs[i], sentence())
		}
	}
	return hyps, refs
}

// TestGenerationAgainstSacrebleu compares BLEU-1 to 4 and TER (corpus, and
// each sentence's edits) with sacrebleu's on random corpora: short
// sentences over 5 words (repeats, ties, empty sentences, many shifts) and
// long ones of 30 to 90 tokens (the edit-distance band, the cap of 1,000
// shift candidates); and on the Quora sample's 3,710 duplicates, question1
// as the output for question2 (quoraCopy). sacrebleu is not a Debian
// package: the test skips unless Debian's python3 can import it, e.g. with
// PYTHONPATH naming a checkout of sacrebleu's source (its version.py
// written by hand) and python3-regex, -tabulate, -portalocker, -numpy,
// -lxml and -colorama installed.
func TestGenerationAgainstSacrebleu(t *testing.T) {
	rng := rand.New(rand.NewPCG(19, 5))
	for _, c := range []struct {
		name                     string
		n, vocab, minLen, maxLen int
	}{
		{"short", 400, 5, 0, 12},
		{"medium", 150, 12, 5, 30},
		{"long", 8, 15, 30, 90},
		{"quora copy", 0, 0, 0, 0},
	} {
		t.Run(c.name, func(t *testing.T) {
			var hyps [][]string
			var refs [][][]string
			if c.n > 0 {
				hyps, refs = randomCorpus(rng, c.n, c.vocab, c.minLen, c.maxLen)
			} else {
				hyps, refs = quoraCopy(t)
			}
			check := runGenerationCheck(t, map[string]any{"hyps": hyps, "refs": refs})
			s := check.Sacrebleu
			if s == nil {
				t.Skip("skipping: python3 cannot import sacrebleu (see the test's comment)")
			}
			t.Logf("sacrebleu %s, %d sentences", s.Version, len(hyps))
			got, err := metric.BLEU(hyps, refs)
			if err != nil {
				t.Fatal(err)
			}
			for n, g := range [4]float64{got.B1, got.B2, got.B3, got.B4} {
				if !near(g, s.BLEU[n], 1e-9) {
					t.Errorf("BLEU-%d = %.15g, sacrebleu %.15g", n+1, g, s.BLEU[n])
				}
			}
			ter, err := metric.TER(hyps, refs)
			if err != nil {
				t.Fatal(err)
			}
			if !near(ter, s.TER, 1e-9) {
				t.Errorf("TER = %.15g, sacrebleu %.15g", ter, s.TER)
			}
			wrong := 0
			for i := range hyps {
				one, err := metric.TER(hyps[i:i+1], refs[i:i+1])
				if err != nil {
					t.Fatal(err)
				}
				edits, length := s.TERSentences[i][0], s.TERSentences[i][1]
				want := 0.0
				if length > 0 {
					want = 100 * (edits / length)
				} else if edits > 0 {
					want = 100
				}
				if !near(one, want, 1e-9) {
					if wrong++; wrong <= 5 {
						t.Errorf("sentence %d: TER %.15g, sacrebleu %v edits over %v\nhyp %v\nrefs %v", i, one, edits, length, hyps[i], refs[i])
					}
				}
			}
			if wrong > 0 {
				t.Errorf("%d of %d sentences' TER differ from sacrebleu's", wrong, len(hyps))
			}
		})
	}
}

// meteorNLTKCases are TestMETEOR's cases with NLTK 3.8's figures
// (single_meteor_score with the Porter stemmer in ORIGINAL_ALGORITHM mode,
// no synonyms, no lowercasing). NLTK aligns greedily: where it takes more
// chunks than the fewest, its figure is the METEOR formula with its
// chunks, nltkChunks.
func meteorNLTKCases() []struct {
	hyp, ref   string
	nltkChunks int
} {
	return []struct {
		hyp, ref   string
		nltkChunks int
	}{
		{"the cat sat on the mat", "the cat sat on the mat", 1},
		{"the cats sitting", "the cat sits", 1},
		{"c d a b", "a b c d", 2},
		{"the cat and the dog", "the dog and the cat", 4}, // evalsink: 3
		{"the cat", "the cat sat on the mat", 2},          // evalsink: 1 (NLTK pairs "the" with the later "the")
		{"run runs", "runs", 1},
		{"walking walked", "walks", 1},
		{"a b", "c d", 0},
	}
}

// TestMETEORAgainstNLTK compares sentence METEOR with NLTK's (Debian's
// python3-nltk; skipped without it): equal where NLTK's greedy alignment
// finds the fewest chunks, NLTK's figure the formula of its own chunk
// count where it does not.
func TestMETEORAgainstNLTK(t *testing.T) {
	cases := meteorNLTKCases()
	var pairs [][2][]string
	for _, c := range cases {
		pairs = append(pairs, [2][]string{toks(c.hyp), toks(c.ref)})
	}
	check := runGenerationCheck(t, map[string]any{"meteor": pairs})
	if check.NLTK == nil {
		t.Skip("skipping: python3 cannot import nltk (apt-get install -y python3-nltk)")
	}
	for i, c := range cases {
		h, r := toks(c.hyp), toks(c.ref)
		m, chunks := metric.MeteorAlign(h, r)
		got := metric.SentenceMETEOR(h, r)
		nltk := check.NLTK.Meteor[i]
		if chunks == c.nltkChunks {
			if !near(got, nltk, 1e-12) {
				t.Errorf("%q against %q: METEOR %.15g, NLTK %.15g", c.hyp, c.ref, got, nltk)
			}
			continue
		}
		// The same formula with NLTK's chunks.
		p, rr := float64(m)/float64(len(h)), float64(m)/float64(len(r))
		f := p * rr / (0.9*p + 0.1*rr) * (1 - 0.5*math.Pow(float64(c.nltkChunks)/float64(m), 3))
		if !near(f, nltk, 1e-12) || chunks > c.nltkChunks {
			t.Errorf("%q against %q: %d chunks (NLTK %d), NLTK %.15g, the formula with NLTK's chunks %.15g", c.hyp, c.ref, chunks, c.nltkChunks, nltk, f)
		}
	}
}

// TestPorterStemAgainstNLTK stems every distinct word of STS Benchmark and
// the Quora sample (../shared/data) and compares with NLTK's
// PorterStemmer in ORIGINAL_ALGORITHM mode (the published rules), words
// of three letters or more (NLTK's original mode stems shorter words too,
// where Porter's own implementation and PorterStem leave them).
func TestPorterStemAgainstNLTK(t *testing.T) {
	eval := testenv.SharedData(t, "eval")
	quora := testenv.SharedData(t, "corpora/quora/quora_duplicate_questions.sample.tsv")
	files, _ := filepath.Glob(filepath.Join(eval, "stsbenchmark", "sts-*.csv"))
	files = append(files, quora)
	seen := map[string]bool{}
	word := regexp.MustCompile(`[a-z]{3,}`)
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		for _, w := range word.FindAllString(strings.ToLower(string(data)), -1) {
			seen[w] = true
		}
	}
	words := make([]string, 0, len(seen))
	for w := range seen {
		words = append(words, w)
	}
	slices.Sort(words)
	check := runGenerationCheck(t, map[string]any{"words": words})
	if check.NLTK == nil {
		t.Skip("skipping: python3 cannot import nltk (apt-get install -y python3-nltk)")
	}
	wrong := 0
	for i, w := range words {
		if got := metric.PorterStem(w); got != check.NLTK.Stems[i] {
			if wrong++; wrong <= 10 {
				t.Errorf("PorterStem(%q) = %q, NLTK %q", w, got, check.NLTK.Stems[i])
			}
		}
	}
	t.Logf("%d words, %d differ from NLTK %s", len(words), wrong, check.NLTK.Version)
}
