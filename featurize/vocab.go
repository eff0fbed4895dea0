package featurize

import (
	"bufio"
	"cmp"
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"

	"github.com/parastream/parastream/featurize/lexicon"
	"github.com/parastream/parastream/transforms/text"
)

// The special tokens, at the first ids of every vocabulary. StartToken and
// EndToken are the sentence tags extract adds with --start-end, so texts
// tagged there get their ids here.
const (
	PadToken   = "<pad>"
	UnkToken   = lexicon.UnknownToken
	StartToken = text.StartToken
	EndToken   = text.EndToken
)

// The ids of the special tokens.
const (
	PadID   int32 = 0
	UnkID   int32 = 1
	StartID int32 = 2
	EndID   int32 = 3
	// NumSpecial is the number of special tokens; the words come after.
	NumSpecial = 4
)

// specials are the special tokens in id order.
func specials() [NumSpecial]string {
	return [NumSpecial]string{PadToken, UnkToken, StartToken, EndToken}
}

// ErrBadVocabulary is wrapped by every error of ReadVocabulary about the
// content of the file (lexicon's: the file format is read there).
var ErrBadVocabulary = lexicon.ErrBadVocabulary

// VocabConfig bounds a vocabulary. The zero value keeps every token seen.
type VocabConfig struct {
	// MinCount drops words seen fewer times in the counted texts (0 and 1
	// keep every word).
	MinCount int64
	// MaxSize is the most entries, special tokens included (0: no bound).
	// The most frequent words are kept; ties go to the smaller string.
	MaxSize int
}

// Validate reports a bound out of range.
func (c VocabConfig) Validate() error {
	if c.MinCount < 0 {
		return fmt.Errorf("vocabulary: min count %d is negative", c.MinCount)
	}
	if c.MaxSize != 0 && c.MaxSize <= NumSpecial {
		return fmt.Errorf("vocabulary: max size %d leaves no room for words after the %d special tokens; use 0 for no bound or more than %d", c.MaxSize, NumSpecial, NumSpecial)
	}
	return nil
}

// TokenCount is one token's counts over the counted texts: its occurrences
// and the number of texts it occurs in (its document frequency).
type TokenCount struct {
	Token string
	Count int64
	Docs  int64
}

// Vocabulary maps tokens to ids: the special tokens first (PadID, UnkID,
// StartID, EndID), then the words by decreasing count, ties by string. It
// keeps each entry's counts, which the bag-of-words weighting uses.
type Vocabulary struct {
	entries []TokenCount
	lex     *lexicon.Lexicon // the words, no buckets
	// Texts is the number of texts counted.
	Texts int64
}

// BuildVocabulary makes a vocabulary of counts (in any order, each token
// once) under cfg. Counts of the special tokens are kept at their ids.
func BuildVocabulary(counts []TokenCount, texts int64, cfg VocabConfig) (*Vocabulary, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	v := &Vocabulary{entries: make([]TokenCount, NumSpecial), Texts: texts}
	special := specials()
	for i, s := range special {
		v.entries[i].Token = s
	}
	words := make([]TokenCount, 0, len(counts))
	for _, c := range counts {
		if i := slices.Index(special[:], c.Token); i >= 0 {
			v.entries[i].Count += c.Count
			v.entries[i].Docs += c.Docs
			continue
		}
		if c.Count >= max(cfg.MinCount, 1) {
			words = append(words, c)
		}
	}
	slices.SortFunc(words, func(a, b TokenCount) int {
		if c := cmp.Compare(b.Count, a.Count); c != 0 {
			return c
		}
		return strings.Compare(a.Token, b.Token)
	})
	if cfg.MaxSize > 0 && len(words) > cfg.MaxSize-NumSpecial {
		words = words[:cfg.MaxSize-NumSpecial]
	}
	v.entries = append(v.entries, words...)
	if err := v.buildIndex(); err != nil {
		return nil, err
	}
	return v, nil
}

func (v *Vocabulary) buildIndex() error {
	seen := make(map[string]bool, len(v.entries))
	for _, e := range v.entries {
		if seen[e.Token] {
			return fmt.Errorf("%w: token %q appears twice", ErrBadVocabulary, e.Token)
		}
		seen[e.Token] = true
	}
	var err error
	v.lex, err = lexicon.New(v.Words(), 0)
	return err
}

// Words returns the entries' tokens, id = index.
func (v *Vocabulary) Words() []string {
	words := make([]string, len(v.entries))
	for i, e := range v.entries {
		words[i] = e.Token
	}
	return words
}

// Lexicon returns the mapping of tokens to ids with buckets
// out-of-vocabulary buckets (see lexicon.Lexicon.ID): the vocabulary's ids
// for its entries, then V + lexicon.Bucket(tok, buckets) for any other
// token, or UnkID with no buckets.
func (v *Vocabulary) Lexicon(buckets int) (*lexicon.Lexicon, error) {
	return v.lex.WithBuckets(buckets)
}

// Len is the number of entries, special tokens included.
func (v *Vocabulary) Len() int { return len(v.entries) }

// Entry returns the token and counts of id.
func (v *Vocabulary) Entry(id int32) TokenCount { return v.entries[id] }

// ID returns the id of tok, UnkID for a token not in the vocabulary.
func (v *Vocabulary) ID(tok string) int32 {
	id, _ := v.lex.ID(tok)
	return id
}

// AppendIDs appends the ids of tokens to dst and returns it, with the
// number of tokens that were unknown (each given UnkID). Featurizing with
// out-of-vocabulary buckets maps through Lexicon instead.
func (v *Vocabulary) AppendIDs(dst []int32, tokens []string) ([]int32, int) {
	return v.lex.AppendIDs(dst, tokens)
}

// The vocabulary file is UTF-8 text, one entry a line, the line's position
// its id (the first line is id 0):
//
//	token<TAB>count<TAB>docs
//
// count is the token's occurrences in the counted texts and docs the number
// of texts it occurs in; the first four lines are <pad>, <unk>, <s> and
// </s>. A first line "#texts<TAB>N" (before the entries) records the number
// of texts counted. Tokens hold no whitespace (the tokeniser splits on it).

// WriteTo writes the vocabulary file.
func (v *Vocabulary) WriteTo(w io.Writer) (int64, error) {
	bw := bufio.NewWriter(w)
	var n int64
	m, _ := fmt.Fprintf(bw, "#texts\t%d\n", v.Texts)
	n += int64(m)
	var line []byte
	for _, e := range v.entries {
		line = append(line[:0], e.Token...)
		line = append(line, '\t')
		line = strconv.AppendInt(line, e.Count, 10)
		line = append(line, '\t')
		line = strconv.AppendInt(line, e.Docs, 10)
		line = append(line, '\n')
		m, err := bw.Write(line)
		n += int64(m)
		if err != nil {
			return n, err
		}
	}
	return n, bw.Flush()
}

// MaxVocabularyLine bounds a line of a vocabulary file.
const MaxVocabularyLine = lexicon.MaxVocabularyLine

// ReadVocabulary reads a vocabulary file written by WriteTo
// (lexicon.ReadVocabFile) and checks that it starts with the special
// tokens. A malformed file gives an error wrapping ErrBadVocabulary that
// names the line and what is wrong.
func ReadVocabulary(r io.Reader) (*Vocabulary, error) {
	v := &Vocabulary{}
	texts, err := lexicon.ReadVocabFile(r, func(id int, tok string, count, docs int64) error {
		if want := specials(); id < NumSpecial && tok != want[id] {
			return fmt.Errorf("entry %d is %q, want the special token %q", id, tok, want[id])
		}
		v.entries = append(v.entries, TokenCount{Token: tok, Count: count, Docs: docs})
		return nil
	})
	if err != nil {
		return nil, err
	}
	v.Texts = texts
	if len(v.entries) < NumSpecial {
		return nil, fmt.Errorf("%w: %d entries, want at least the %d special tokens", ErrBadVocabulary, len(v.entries), NumSpecial)
	}
	if err := v.buildIndex(); err != nil {
		return nil, err
	}
	return v, nil
}
