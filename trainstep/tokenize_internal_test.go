package trainstep

import "testing"

// TestTokenizeOf: the tokenisation comes from the words the texts hold: a
// special <s> with no count says nothing, a cased word seen makes it cased,
// one unseen does not; without counts every word counts.
func TestTokenizeOf(t *testing.T) {
	specials := []string{"<pad>", "<unk>", "<s>", "</s>"}
	for _, tc := range []struct {
		name   string
		words  []string
		counts []int64
		want   Tokenize
	}{
		{"lowercased, no tags", append(specials, "the", "cat"), []int64{0, 0, 0, 0, 5, 2}, Tokenize{Lower: true}},
		{"tags", append(specials, "the", "cat"), []int64{0, 0, 7, 7, 5, 2}, Tokenize{Lower: true, StartEnd: true}},
		{"cased", append(specials, "The", "cat"), []int64{0, 0, 0, 0, 5, 2}, Tokenize{}},
		{"cased word unseen", append(specials, "the", "Cat"), []int64{0, 0, 0, 0, 5, 0}, Tokenize{Lower: true}},
		{"no counts", []string{"<pad>", "w0", "W1"}, nil, Tokenize{}},
		{"no counts, tags", []string{"<s>", "w0"}, nil, Tokenize{Lower: true, StartEnd: true}},
	} {
		if got := tokenizeOf(tc.words, tc.counts); got != tc.want {
			t.Errorf("%s: tokenizeOf = %+v, want %+v", tc.name, got, tc.want)
		}
	}
}
