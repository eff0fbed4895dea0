package transforms

import (
	"context"
	"fmt"
	"io"
	"math/rand/v2"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"unicode"
	"unicode/utf8"

	"github.com/apache/beam/sdks/v2/go/pkg/beam/io/filesystem"
	_ "github.com/apache/beam/sdks/v2/go/pkg/beam/io/filesystem/memfs"

	"github.com/parastream/parastream/shards"
	"github.com/parastream/parastream/transforms/internal/spill"
	"github.com/parastream/parastream/transforms/text"
)

// referenceKey is NormalizedKey as it was first written, with a string per
// side: appendNormalizedKey, which builds the key in a reused buffer, must
// give the same bytes (the dedupe buckets and the kept pairs hang on them).
func referenceKey(r *shards.Row, symmetric bool) string {
	side := func(text string, tokens []string) string {
		if len(tokens) == 0 {
			tokens = strings.Fields(text)
		}
		var sb strings.Builder
		for _, t := range tokens {
			punct := true
			for _, c := range t {
				if !unicode.IsPunct(c) && !unicode.IsSymbol(c) {
					punct = false
				}
			}
			if t == "<s>" || t == "</s>" || punct {
				continue
			}
			if sb.Len() > 0 {
				sb.WriteByte(' ')
			}
			sb.WriteString(strings.ToLower(t))
		}
		return sb.String()
	}
	return pairKey(side(r.A, r.TokensA), side(r.B, r.TokensB), symmetric)
}

func randomText(rng *rand.Rand) (string, []string) {
	words := []string{"Hello", "world", ",", "!", "<s>", "</s>", "ÉTÉ", "x", "", "a\x00b", "İ", "--", "b", "Zz"}
	var toks []string
	for range rng.IntN(5) {
		toks = append(toks, words[rng.IntN(len(words))])
	}
	text := strings.Join(toks, " ")
	if rng.IntN(3) == 0 {
		toks = nil // the key falls back to the text's fields
	}
	return text, toks
}

func TestAppendNormalizedKey(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	var buf []byte
	for range 5000 {
		var r shards.Row
		r.A, r.TokensA = randomText(rng)
		r.B, r.TokensB = randomText(rng)
		for _, sym := range []bool{false, true} {
			want := referenceKey(&r, sym)
			if got := NormalizedKey(&r, sym); got != want {
				t.Fatalf("NormalizedKey(%q / %q, %v) = %q, want %q", r.A, r.B, sym, got, want)
			}
			buf = appendNormalizedKey(append(buf[:0], "prefix"...), &r, sym)
			if string(buf) != "prefix"+want {
				t.Fatalf("appendNormalizedKey after a prefix = %q, want %q", buf, "prefix"+want)
			}
		}
	}
}

// exactCount.is compares the exact keys a+"\x00"+b without building them,
// texts holding the separator included.
func TestExactCountIs(t *testing.T) {
	parts := []string{"", "a", "\x00", "a\x00", "\x00b", "a\x00b", "ab", "b", "a\x00\x00"}
	for _, a1 := range parts {
		for _, b1 := range parts {
			for _, a2 := range parts {
				for _, b2 := range parts {
					want := a1+"\x00"+b1 == a2+"\x00"+b2
					if got := (exactCount{a: a1, b: b1}).is(a2, b2); got != want {
						t.Errorf("(%q, %q).is(%q, %q) = %v, want %v", a1, b1, a2, b2, got, want)
					}
				}
			}
		}
	}
}

// A record whose key the Deduper has seen allocates nothing; nor does
// hashing a record to its dedupe bucket.
func TestDeduperAllocations(t *testing.T) {
	d := NewDeduper(true)
	r := shards.Row{ID: "b", A: "Hello, world!", B: "Hi.", TokensA: []string{"hello", ",", "world", "!"}, TokensB: []string{"hi", "."}}
	d.add(&r, false)
	if n := testing.AllocsPerRun(100, func() { d.add(&r, false) }); n != 0 {
		t.Errorf("Deduper.add of a seen key: %v allocations, want 0", n)
	}
	sp := newSpiller(SpillConfig{Key: ByDedupeKey, Buckets: 16, Symmetric: true})
	var key []byte
	sp.bucket(&r, &key)
	if n := testing.AllocsPerRun(100, func() { sp.bucket(&r, &key) }); n != 0 {
		t.Errorf("spiller.bucket: %v allocations, want 0", n)
	}
}

// TestAppendNormalizedKeyASCII: the ASCII fast path of the key (punctuation
// by byte, lowercasing in place) gives the reference's bytes for every ASCII
// character alone and within words, and for tokens mixing ASCII and not.
func TestAppendNormalizedKeyASCII(t *testing.T) {
	for c := range byte(utf8.RuneSelf) {
		if got, want := asciiPunctOrSymbol(c), unicode.IsPunct(rune(c)) || unicode.IsSymbol(rune(c)); got != want {
			t.Errorf("asciiPunctOrSymbol(%q) = %v, want %v", c, got, want)
		}
	}
	var toks []string
	for c := range byte(utf8.RuneSelf) {
		toks = append(toks, string([]byte{c}), "Ab"+string([]byte{c})+"Z", string([]byte{c, c}))
	}
	toks = append(toks, "ÀB", "!é", "«»", "Hello—", "-İ-", "$5", "A\xff", "\xff")
	for i := range toks {
		r := shards.Row{A: "text", TokensA: toks[i:], B: strings.Join(toks[:i], " ")}
		for _, sym := range []bool{false, true} {
			if got, want := NormalizedKey(&r, sym), referenceKey(&r, sym); got != want {
				t.Fatalf("NormalizedKey(%q / %q, %v) = %q, want %q", r.TokensA, r.B, sym, got, want)
			}
		}
	}
}

// TestDedupeBucketUsesSpilledKeys checks that the dedupe stage groups
// records by the key hash spilled with them (the scattering stage's) and
// falls back to building the key for records spilled without one: two
// texts that differ but carry one hash are one group; equal texts that
// carry different hashes are two.
func TestDedupeBucketUsesSpilledKeys(t *testing.T) {
	path := filepath.Join(t.TempDir(), "b00000-x.spill")
	w, err := spill.Create(context.Background(), path)
	if err != nil {
		t.Fatal(err)
	}
	row := func(id, a string) *shards.Row {
		return &shards.Row{ID: id, Corpus: "c", A: a, B: "reply", GroupKey: id}
	}
	same := spill.Key{1}
	for _, r := range []struct {
		row *shards.Row
		key *spill.Key
	}{
		{row("1", "one text"), &same},
		{row("2", "another text"), &same}, // one group with 1, by the spilled hash
		{row("3", "third"), &spill.Key{3}},
		{row("4", "third"), &spill.Key{4}}, // equal texts, hashes apart: kept
		{row("5", "fifth"), nil},
		{row("6", "Fifth !"), nil}, // no hash: the key is built, and is 5's
	} {
		if r.key == nil {
			err = w.Write(r.row)
		} else {
			err = w.WriteKeyed(r.row, *r.key)
		}
		if err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	bySplit, st, err := dedupeBucket(context.Background(), []string{path}, false, false, SplitConfig{Ratios: text.SplitRatios{Train: 1}})
	if err != nil {
		t.Fatal(err)
	}
	var ids []string
	for _, rows := range bySplit {
		for _, r := range rows {
			ids = append(ids, r.ID)
		}
	}
	slices.Sort(ids)
	if want := []string{"1", "3", "4", "5"}; !slices.Equal(ids, want) || st.Kept != 4 {
		t.Fatalf("kept %v (%+v), want %v", ids, st, want)
	}
}

// TestSpillCompression checks which spill files a spiller writes with S2
// blocks: under "auto" those on an object store (memfs:// here) and not
// local ones, under "s2" all, under "none" none.
func TestSpillCompression(t *testing.T) {
	ctx := context.Background()
	for i, c := range []struct {
		compression, dir string
		kind             byte
	}{
		{"", t.TempDir(), 'R'},
		{SpillAuto, t.TempDir(), 'R'},
		{SpillAuto, "memfs://spillcompression0", 'S'},
		{SpillS2, t.TempDir(), 'S'},
		{SpillNone, t.TempDir(), 'R'},
		{SpillNone, "memfs://spillcompression1", 'R'},
	} {
		sp := newSpiller(SpillConfig{Dir: c.dir, Key: ByGroup, Buckets: 1, Compression: c.compression})
		var key []byte
		for j := range 50 {
			r := shards.Row{ID: fmt.Sprint(j), A: strings.Repeat("words and more words ", 20), GroupKey: "t3_x"}
			if err := sp.write(ctx, &r, &key); err != nil {
				t.Fatal(err)
			}
		}
		var paths []string
		if err := sp.close(func(_ int, p string) { paths = append(paths, p) }); err != nil {
			t.Fatal(err)
		}
		fs, err := filesystem.New(ctx, paths[0])
		if err != nil {
			t.Fatal(err)
		}
		rc, err := fs.OpenRead(ctx, paths[0])
		if err != nil {
			t.Fatal(err)
		}
		data, err := io.ReadAll(rc)
		rc.Close()
		if err != nil || len(data) < 9 {
			t.Fatalf("%s: %d bytes, %v", paths[0], len(data), err)
		}
		if data[8] != c.kind {
			t.Errorf("case %d, --spill-compression %q in %s: the first block is %q, want %q", i, c.compression, c.dir, data[8], c.kind)
		}
	}
}
