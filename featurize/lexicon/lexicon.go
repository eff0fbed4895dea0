package lexicon

import (
	"errors"
	"fmt"
	"hash/crc32"
	"math"
)

// UnknownToken is the vocabulary entry that tokens outside the vocabulary
// map to in a model without buckets (featurize's vocabularies have it at
// id 1).
const UnknownToken = "<unk>"

// Hash names the hash of Bucket, as models record it (featurize.json's
// oov_hash, a checkpoint configuration's oov_hash).
const Hash = "crc32-ieee"

// Bucket is the bucket, in [0, n), of a token outside the vocabulary: the
// CRC-32 (IEEE polynomial, as in zlib, gzip and PNG) of the token's UTF-8
// bytes, modulo n. Python gives the same number with
// zlib.crc32(tok.encode("utf-8")) % n. It panics when n is not positive.
func Bucket(tok string, n int) int32 {
	if n <= 0 || n > math.MaxInt32 {
		panic(fmt.Sprintf("lexicon: Bucket with %d buckets; want 1 to %d", n, math.MaxInt32))
	}
	return int32(crc32.ChecksumIEEE([]byte(tok)) % uint32(n))
}

// CheckHash reports whether a model that records buckets out-of-vocabulary
// buckets hashed by hash can be mapped by this package: buckets must not be
// negative, and with buckets the hash must be Hash.
func CheckHash(hash string, buckets int) error {
	if buckets < 0 {
		return fmt.Errorf("oov_buckets %d is negative; use 0 for the single %s", buckets, UnknownToken)
	}
	if buckets > 0 && hash != Hash {
		return fmt.Errorf("oov_hash %q: the out-of-vocabulary buckets need the hash %q (the only one known)", hash, Hash)
	}
	return nil
}

// Lexicon maps tokens to the rows of an embedding table: V words, then N
// buckets. It is safe for concurrent use.
type Lexicon struct {
	index   map[string]int32
	words   int
	buckets int
	unk     int32 // the id of UnknownToken, or -1
}

// New returns the lexicon of words (id = index) with buckets
// out-of-vocabulary buckets. A word repeated keeps the id of its first
// occurrence. It fails when buckets is negative or the table would have
// more than math.MaxInt32 rows.
func New(words []string, buckets int) (*Lexicon, error) {
	if buckets < 0 {
		return nil, fmt.Errorf("lexicon: %d buckets; want 0 or more", buckets)
	}
	if len(words) > math.MaxInt32-buckets {
		return nil, fmt.Errorf("lexicon: %d words and %d buckets do not fit int32 ids", len(words), buckets)
	}
	l := &Lexicon{index: make(map[string]int32, len(words)), words: len(words), buckets: buckets, unk: -1}
	for i, w := range words {
		if _, dup := l.index[w]; !dup {
			l.index[w] = int32(i)
		}
	}
	if id, ok := l.index[UnknownToken]; ok {
		l.unk = id
	}
	return l, nil
}

// WithBuckets returns a lexicon of the same words with n buckets; the two
// share their index.
func (l *Lexicon) WithBuckets(n int) (*Lexicon, error) {
	if n < 0 {
		return nil, fmt.Errorf("lexicon: %d buckets; want 0 or more", n)
	}
	if l.words > math.MaxInt32-n {
		return nil, errors.New("lexicon: words and buckets do not fit int32 ids")
	}
	c := *l
	c.buckets = n
	return &c, nil
}

// ID returns the id of tok and whether tok is a word of the vocabulary. A
// word gets its index; any other token gets V + Bucket(tok, N) when the
// lexicon has N > 0 buckets, else the id of UnknownToken when the words
// hold it, else -1, which means: leave the token out.
func (l *Lexicon) ID(tok string) (id int32, known bool) {
	if id, ok := l.index[tok]; ok {
		return id, true
	}
	if l.buckets > 0 {
		return int32(l.words) + Bucket(tok, l.buckets), false
	}
	return l.unk, false
}

// AppendIDs appends the ids of tokens to dst and returns it, with the
// number of tokens outside the vocabulary. Tokens whose id is -1 (no
// buckets, no UnknownToken) are left out.
func (l *Lexicon) AppendIDs(dst []int32, tokens []string) (ids []int32, unknown int) {
	for _, t := range tokens {
		id, known := l.ID(t)
		if !known {
			unknown++
			if id < 0 {
				continue
			}
		}
		dst = append(dst, id)
	}
	return dst, unknown
}

// Words is V, the number of vocabulary words (ids 0 to V−1).
func (l *Lexicon) Words() int { return l.words }

// Buckets is N, the number of out-of-vocabulary buckets (ids V to V+N−1).
func (l *Lexicon) Buckets() int { return l.buckets }

// Rows is V + N, the rows an embedding table needs for these ids.
func (l *Lexicon) Rows() int { return l.words + l.buckets }

// UnknownID is the id of UnknownToken among the words, or -1.
func (l *Lexicon) UnknownID() int32 { return l.unk }
