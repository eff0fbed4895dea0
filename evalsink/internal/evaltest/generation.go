package evaltest

import "strings"

// Tokens splits a sentence on spaces (the tests' tokeniser: the metrics take
// tokens, tokenisation is the caller's).
func Tokens(s string) []string { return strings.Fields(s) }

// Corpus builds hypotheses and references from sentences.
func Corpus(hyps []string, refs [][]string) ([][]string, [][][]string) {
	h := make([][]string, len(hyps))
	r := make([][][]string, len(refs))
	for i, s := range hyps {
		h[i] = Tokens(s)
	}
	for i, rs := range refs {
		for _, s := range rs {
			r[i] = append(r[i], Tokens(s))
		}
	}
	return h, r
}

// BLEUCorpus is the fixed corpus of metric's TestBLEUAgainstSacrebleu: 8
// sentences, 4 with two references.
func BLEUCorpus() ([][]string, [][][]string) {
	return Corpus([]string{
		"the cat sat on the mat",
		"a quick brown fox jumps over the lazy dog",
		"how do i learn to code",
		"what is the capital of france",
		"he said that he would come tomorrow",
		"it is raining",
		"the the the the",
		"why do people hate mondays",
	}, [][]string{
		{"the cat is on the mat", "there is a cat on the mat"},
		{"the quick brown fox jumped over the lazy dog"},
		{"how can i learn programming", "what is the best way to learn to code"},
		{"what is the capital city of france"},
		{"he said he would come tomorrow", "he told us that he will arrive tomorrow"},
		{"it rains heavily today"},
		{"the cat on the mat"},
		{"why does everyone dislike monday", "why are mondays so hated"},
	})
}
