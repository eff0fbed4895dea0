package transforms

import (
	"strings"
	"unicode"

	"github.com/parastream/parastream/shards"
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
	return pairKey(normalizedText(r.A, r.TokensA), normalizedText(r.B, r.TokensB), symmetric)
}

func pairKey(a, b string, symmetric bool) string {
	if symmetric && b < a {
		a, b = b, a
	}
	return a + "\x00" + b
}

func normalizedText(text string, tokens []string) string {
	if len(tokens) == 0 {
		tokens = strings.Fields(text)
	}
	var sb strings.Builder
	for _, t := range tokens {
		if t == "<s>" || t == "</s>" || punctuationOnly(t) {
			continue
		}
		if sb.Len() > 0 {
			sb.WriteByte(' ')
		}
		sb.WriteString(strings.ToLower(t))
	}
	return sb.String()
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
	best     shards.Row
	exact    map[string]int64 // exact key -> count
	n        int64
	external bool
}

// Deduper keeps one record of each normalised key: the one with the
// smallest ID, so that the result does not depend on input order. Add the
// records, then call Each.
type Deduper struct {
	symmetric bool
	groups    map[string]*dedupeGroup
}

// NewDeduper returns an empty Deduper.
func NewDeduper(symmetric bool) *Deduper {
	return &Deduper{symmetric: symmetric, groups: make(map[string]*dedupeGroup)}
}

// Add adds a record. external marks a record of another extraction
// (--dedupe-against): it blocks its key and is never kept itself.
func (d *Deduper) Add(r shards.Row, external bool) {
	key := NormalizedKey(&r, d.symmetric)
	g := d.groups[key]
	if g == nil {
		g = &dedupeGroup{exact: make(map[string]int64, 1)}
		d.groups[key] = g
	}
	if external {
		g.external = true
		return
	}
	g.n++
	g.exact[ExactKey(&r, d.symmetric)]++
	if g.n == 1 || r.ID < g.best.ID {
		g.best = r
	}
}

// Len is the number of keys.
func (d *Deduper) Len() int { return len(d.groups) }

// Each calls fn with each kept record, in no particular order, and returns
// the counts.
func (d *Deduper) Each(fn func(shards.Row)) DedupeStats {
	var st DedupeStats
	for _, g := range d.groups {
		if g.n == 0 {
			continue
		}
		if g.external {
			st.External += g.n
			continue
		}
		st.Kept++
		same := g.exact[ExactKey(&g.best, d.symmetric)] - 1
		st.Exact += same
		st.Normalized += g.n - 1 - same
		fn(g.best)
	}
	return st
}
