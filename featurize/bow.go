package featurize

import (
	"fmt"
	"math"
	"slices"
	"strings"
	"unicode"
)

func isWordRune(r rune) bool { return unicode.IsLetter(r) || unicode.IsDigit(r) }

// Weighting says how a bag-of-words weighs each word of a text.
type Weighting string

// The weightings.
//
// TFIDF (the default) is the count of the word in the text times its
// smoothed inverse document frequency ln((1+n)/(1+df)) + 1 over the n
// counted training texts, and the text's vector is then scaled to unit
// Euclidean length. Raw counts let the most frequent function words ("the",
// "i", "to") carry the largest entries of nearly every text, so NMF spends
// its first topics on them; tf-idf weighs them down, and unit length puts a
// three-word question and a 300-character comment on one scale, which gives
// the L1 penalty the same meaning for both.
//
// Count is the raw count of each word, unscaled, for those who want it.
const (
	TFIDF Weighting = "tfidf"
	Count Weighting = "count"
)

// Validate reports an unknown weighting.
func (w Weighting) Validate() error {
	switch w {
	case TFIDF, Count:
		return nil
	}
	return fmt.Errorf("unknown weighting %q: use %q or %q", string(w), TFIDF, Count)
}

// BoW turns the token ids of a text into its sparse bag-of-words vector over
// the vocabulary. The special tokens (padding, unknown, sentence tags),
// tokens without a letter or digit (punctuation: ",", "?", "...") and ids
// beyond the vocabulary (the out-of-vocabulary buckets, see
// lexicon.Lexicon) get no weight: they say nothing of a text's topic. A BoW
// is safe for concurrent use; Vector takes the scratch.
type BoW struct {
	Weighting Weighting
	idf       []float32 // by id; nil for Count
	skip      []bool    // by id: no weight
	terms     int
}

// NewBoW returns the bag-of-words of the vocabulary under w, with the
// inverse document frequencies taken from the vocabulary's counts.
func NewBoW(v *Vocabulary, w Weighting) (*BoW, error) {
	if err := w.Validate(); err != nil {
		return nil, err
	}
	b := &BoW{Weighting: w, terms: v.Len(), skip: make([]bool, v.Len())}
	for id := range b.skip {
		b.skip[id] = id < NumSpecial || !strings.ContainsFunc(v.entries[id].Token, isWordRune)
	}
	if w == TFIDF {
		b.idf = make([]float32, v.Len())
		n := float64(v.Texts)
		for id := NumSpecial; id < v.Len(); id++ {
			df := float64(v.entries[id].Docs)
			b.idf[id] = float32(math.Log((1+n)/(1+df)) + 1)
		}
	}
	return b, nil
}

// Terms is the number of columns of the vectors: the vocabulary's size.
func (b *BoW) Terms() int { return b.terms }

// BoWScratch is the reusable memory of Vector.
type BoWScratch struct {
	ids     []int32
	Indices []int32
	Values  []float32
}

// Vector computes the vector of a text from its token ids into sc.Indices
// (increasing) and sc.Values, and returns them; they alias sc until the
// next call. A text with no known word has an empty vector. Ids outside
// [0, Terms()) are ignored.
func (b *BoW) Vector(sc *BoWScratch, ids []int32) ([]int32, []float32) {
	sc.ids = append(sc.ids[:0], ids...)
	slices.Sort(sc.ids)
	sc.Indices, sc.Values = sc.Indices[:0], sc.Values[:0]
	for i := 0; i < len(sc.ids); {
		id := sc.ids[i]
		j := i + 1
		for j < len(sc.ids) && sc.ids[j] == id {
			j++
		}
		if id >= 0 && int(id) < b.terms && !b.skip[id] {
			sc.Indices = append(sc.Indices, id)
			sc.Values = append(sc.Values, float32(j-i))
		}
		i = j
	}
	if b.Weighting == TFIDF {
		var norm float64
		for k, id := range sc.Indices {
			sc.Values[k] *= b.idf[id]
			norm += float64(sc.Values[k]) * float64(sc.Values[k])
		}
		if norm > 0 {
			inv := float32(1 / math.Sqrt(norm))
			for k := range sc.Values {
				sc.Values[k] *= inv
			}
		}
	}
	return sc.Indices, sc.Values
}
