package evalsink

import (
	"slices"
	"strings"
	"testing"
)

// TestTargetWord: the target word of a word-in-context pair is the
// context's token at the place of the word (after the tokens of the text
// before it), as extraction tokenised it (lowercased or not, after a
// start tag); where the context does not hold the word there, the word
// tokenised and lowercased on its own.
func TestTargetWord(t *testing.T) {
	for _, c := range []struct {
		name, context, left, word string
		want                      []string
		ok                        bool
	}{
		{"lowercased", "in brazil the philosophy", "in", "Brazil", []string{"brazil"}, true},
		{"cased", "in Brazil the philosophy", "in", "Brazil", []string{"Brazil"}, true},
		{"first", "bank rates rose .", "", "Bank", []string{"bank"}, true},
		{"after tokens the tokeniser splits", "he said , \" the bank", "He said, \"the", "bank", []string{"bank"}, true},
		{"start and end tags", "<s> the bank </s>", "the", "bank", []string{"bank"}, true},
		{"not there", "the shore was sandy", "the", "Bank", []string{"bank"}, false},
		{"past the end", "the", "the", "Bank", []string{"bank"}, false},
	} {
		t.Run(c.name, func(t *testing.T) {
			got, ok := targetWord(strings.Fields(c.context), c.left, c.word)
			if !slices.Equal(got, c.want) || ok != c.ok {
				t.Errorf("targetWord = %q, %v; want %q, %v", got, ok, c.want, c.ok)
			}
		})
	}
}
