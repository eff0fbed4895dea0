package transforms

import (
	"crypto/sha256"
	"slices"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/parastream/parastream/shards"
	"github.com/parastream/parastream/transforms/internal/spill"
)

// Dedupe keys. Two records are exact duplicates when their texts are equal
// byte for byte, and normalised duplicates when their token sequences are
// equal after lowercasing and dropping tokens made only of punctuation
// ("Hello, world!" and "hello world" are normalised duplicates). For
// paraphrase corpora the pair is unordered (symmetric): (A, B) and (B, A)
// are the same pair; for Reddit's input-response pairs the order counts.

// ExactKey is the key of exact duplicates.
func ExactKey(r *shards.Row, symmetric bool) string {
	return pairKey(r.A, r.B, symmetric)
}

// NormalizedKey is the key of normalised duplicates, from the tokens (or
// from the text, lowercased and split on white space, where a side has no
// tokens).
func NormalizedKey(r *shards.Row, symmetric bool) string {
	return string(appendNormalizedKey(nil, r, symmetric))
}

// appendNormalizedKey appends NormalizedKey(r, symmetric) to dst, so that
// the hot path can build the key in a buffer it reuses.
func appendNormalizedKey(dst []byte, r *shards.Row, symmetric bool) []byte {
	start := len(dst)
	dst = appendNormalizedText(dst, r.A, r.TokensA)
	mid := len(dst)
	dst = append(dst, 0)
	dst = appendNormalizedText(dst, r.B, r.TokensB)
	if symmetric && string(dst[mid+1:]) < string(dst[start:mid]) {
		// a \x00 b becomes b \x00 a, as pairKey orders them: reverse the
		// whole key, then each side back.
		key := dst[start:]
		slices.Reverse(key)
		nb := len(key) - (mid - start) - 1
		slices.Reverse(key[:nb])
		slices.Reverse(key[nb+1:])
	}
	return dst
}

func pairKey(a, b string, symmetric bool) string {
	if symmetric && b < a {
		a, b = b, a
	}
	return a + "\x00" + b
}

// appendNormalizedText appends the tokens (or the text's fields where there
// are none) lowercased, without the sentence tags and the tokens made of
// punctuation alone, separated by spaces.
func appendNormalizedText(dst []byte, text string, tokens []string) []byte {
	start := len(dst)
	word := func(t string) {
		if t == "<s>" || t == "</s>" {
			return
		}
		// Most tokens are ASCII: one pass over the bytes decides
		// punctuationOnly, and lowercasing is done in place, without
		// strings.ToLower's new string for a token with capitals.
		ascii, punct := true, true
		for i := 0; i < len(t); i++ {
			c := t[i]
			if c >= utf8.RuneSelf {
				ascii = false
				break
			}
			punct = punct && asciiPunctOrSymbol(c)
		}
		if ascii && punct || !ascii && punctuationOnly(t) {
			return
		}
		if len(dst) > start {
			dst = append(dst, ' ')
		}
		if !ascii {
			dst = append(dst, strings.ToLower(t)...)
			return
		}
		n := len(dst)
		dst = append(dst, t...)
		for i := n; i < len(dst); i++ {
			if 'A' <= dst[i] && dst[i] <= 'Z' {
				dst[i] += 'a' - 'A'
			}
		}
	}
	if len(tokens) == 0 {
		for t := range strings.FieldsSeq(text) {
			word(t)
		}
		return dst
	}
	for _, t := range tokens {
		word(t)
	}
	return dst
}

// asciiPunctOrSymbol is unicode.IsPunct(c) || unicode.IsSymbol(c) for an
// ASCII byte: the printable characters other than letters, digits and space.
func asciiPunctOrSymbol(c byte) bool {
	return '!' <= c && c <= '/' || ':' <= c && c <= '@' || '[' <= c && c <= '`' || '{' <= c && c <= '~'
}

func punctuationOnly(t string) bool {
	for _, r := range t {
		if !unicode.IsPunct(r) && !unicode.IsSymbol(r) {
			return false
		}
	}
	return true
}

// DedupeStats counts what deduplication dropped.
type DedupeStats struct {
	Kept, Exact, Normalized, External int64
}

func (s *DedupeStats) add(o DedupeStats) {
	s.Kept += o.Kept
	s.Exact += o.Exact
	s.Normalized += o.Normalized
	s.External += o.External
}

// progress adds the kept and dropped records to p, under the
// names of the counters: "deduplicated" (kept) and dedupe_*.
func (s DedupeStats) progress(p *Progress) {
	p.add("deduplicated", s.Kept)
	p.add("dedupe_exact", s.Exact)
	p.add("dedupe_normalized", s.Normalized)
	p.add("dedupe_external", s.External)
}

// count adds the dropped records to the dedupe_* counters.
func (s DedupeStats) count(c *counters) {
	c.add("dedupe_exact", s.Exact)
	c.add("dedupe_normalized", s.Normalized)
	c.add("dedupe_external", s.External)
}

// dedupeGroup is the records of one normalised key.
type dedupeGroup struct {
	best shards.Row
	// exact counts the records of each exact key (see exactPair): the
	// first key inline, for most groups have one, the others in more.
	exact    exactCount
	more     []exactCount
	n        int64
	external bool
}

// exactCount is an exact key, as its two texts in key order, and its
// records.
type exactCount struct {
	a, b string
	n    int64
}

// exactPair is ExactKey's two texts in the key's order: the key is a,
// "\x00", b.
func exactPair(r *shards.Row, symmetric bool) (a, b string) {
	if symmetric && r.B < r.A {
		return r.B, r.A
	}
	return r.A, r.B
}

// count counts a record of the exact key (a, b).
func (g *dedupeGroup) count(a, b string) {
	if g.exact.n == 0 {
		g.exact = exactCount{a: a, b: b, n: 1}
		return
	}
	if g.exact.is(a, b) {
		g.exact.n++
		return
	}
	for i := range g.more {
		if g.more[i].is(a, b) {
			g.more[i].n++
			return
		}
	}
	g.more = append(g.more, exactCount{a: a, b: b, n: 1})
}

// records is the number of records of the exact key (a, b).
func (g *dedupeGroup) records(a, b string) int64 {
	if g.exact.is(a, b) {
		return g.exact.n
	}
	for _, e := range g.more {
		if e.is(a, b) {
			return e.n
		}
	}
	return 0
}

// is says whether e's key equals that of (a, b): whether e.a+"\x00"+e.b ==
// a+"\x00"+b, without building either.
func (e exactCount) is(a, b string) bool {
	a1, b1, a2, b2 := e.a, e.b, a, b
	if len(a1)+len(b1) != len(a2)+len(b2) {
		return false
	}
	if len(a1) == len(a2) {
		return a1 == a2 && b1 == b2
	}
	if len(a1) > len(a2) {
		a1, b1, a2, b2 = a2, b2, a1, b1
	}
	// a1 is the shorter: a2 holds a1, the separator and the start of b1.
	k, m := len(a1), len(a2)-len(a1)-1
	return a2[:k] == a1 && a2[k] == 0 && b1[:m] == a2[k+1:] && b1[m] == 0 && b1[m+1:] == b2
}

// Deduper keeps one record of each normalised key: the one with the
// smallest ID, so that the result does not depend on input order. Add the
// records, then call Each.
type Deduper struct {
	symmetric bool
	// index maps a normalised key, by its hashKey, to its group in
	// groups: groups held by value, not a pointer a key, allocate nothing
	// for a new key.
	index  map[spill.Key]int
	groups []dedupeGroup
	key    []byte // the key being hashed
}

// hashKey stands for a normalised key: the first 128 bits of its sha256.
// Two keys are taken for one when their hashes are equal; among 10^9
// distinct keys, the chance that any two are is about 10^-21. The stage
// that scatters records by key computes it and spills it with the record
// (a spill.Key), so that the dedupe stage does not build the key again.
func hashKey(key []byte) spill.Key {
	sum := sha256.Sum256(key)
	return spill.Key(sum[:16])
}

// NewDeduper returns an empty Deduper.
func NewDeduper(symmetric bool) *Deduper {
	return &Deduper{symmetric: symmetric, index: make(map[spill.Key]int)}
}

// Add adds a record. external marks a record of another extraction
// (--dedupe-against): it blocks its key and is never kept itself.
func (d *Deduper) Add(r shards.Row, external bool) { d.add(&r, external) }

// add is Add of a record it copies only when it keeps it.
func (d *Deduper) add(r *shards.Row, external bool) {
	d.key = appendNormalizedKey(d.key[:0], r, d.symmetric)
	d.addHashed(r, external, hashKey(d.key))
}

// addHashed is add of a record whose key's hash is h.
func (d *Deduper) addHashed(r *shards.Row, external bool, h spill.Key) {
	i, ok := d.index[h]
	if !ok {
		i = len(d.groups)
		d.groups = append(d.groups, dedupeGroup{})
		d.index[h] = i
	}
	g := &d.groups[i]
	if external {
		g.external = true
		return
	}
	g.n++
	g.count(exactPair(r, d.symmetric))
	if g.n == 1 || r.ID < g.best.ID {
		g.best = *r
	}
}

// Len is the number of keys.
func (d *Deduper) Len() int { return len(d.groups) }

// Each calls fn with each kept record, in no particular order, and returns
// the counts.
func (d *Deduper) Each(fn func(shards.Row)) DedupeStats {
	var st DedupeStats
	for i := range d.groups {
		g := &d.groups[i]
		if g.n == 0 {
			continue
		}
		if g.external {
			st.External += g.n
			continue
		}
		st.Kept++
		same := g.records(exactPair(&g.best, d.symmetric)) - 1
		st.Exact += same
		st.Normalized += g.n - 1 - same
		fn(g.best)
	}
	return st
}
