package spill_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"maps"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/apache/beam/sdks/v2/go/pkg/beam/io/filesystem"
	_ "github.com/apache/beam/sdks/v2/go/pkg/beam/io/filesystem/memfs"

	"github.com/parastream/parastream/internal/spill"
	"github.com/parastream/parastream/shards"
)

// ---------------------------------------------------------------------------
// Helpers

func spillF64(f float64) *float64 { return &f }

// spillDiffRows describes how two rows differ, or returns "". Floats compare
// by their bits (NaN equals the same NaN, -0 differs from 0); an empty list
// or map equals nil, as DecodeRow documents.
func spillDiffRows(a, b *shards.Row) string {
	var d []string
	str := func(name, x, y string) {
		if x != y {
			d = append(d, fmt.Sprintf("%s: %.40q != %.40q", name, x, y))
		}
	}
	strs := func(name string, x, y []string) {
		if !slices.Equal(x, y) {
			d = append(d, fmt.Sprintf("%s: %.80q != %.80q", name, x, y))
		}
	}
	str("ID", a.ID, b.ID)
	str("Corpus", a.Corpus, b.Corpus)
	str("Dataset", a.Dataset, b.Dataset)
	str("Split", a.Split, b.Split)
	str("A", a.A, b.A)
	str("B", a.B, b.B)
	strs("Context", a.Context, b.Context)
	str("LangA", a.LangA, b.LangA)
	str("LangB", a.LangB, b.LangB)
	switch {
	case (a.Label == nil) != (b.Label == nil):
		d = append(d, fmt.Sprintf("Label: nil %v != nil %v", a.Label == nil, b.Label == nil))
	case a.Label != nil && math.Float64bits(*a.Label) != math.Float64bits(*b.Label):
		d = append(d, fmt.Sprintf("Label: %#x != %#x", math.Float64bits(*a.Label), math.Float64bits(*b.Label)))
	}
	str("GroupKey", a.GroupKey, b.GroupKey)
	str("SourceFile", a.SourceFile, b.SourceFile)
	if a.SourceLine != b.SourceLine || a.SourceOffset != b.SourceOffset {
		d = append(d, fmt.Sprintf("Source: %d/%d != %d/%d", a.SourceLine, a.SourceOffset, b.SourceLine, b.SourceOffset))
	}
	if !slices.EqualFunc(a.Scores, b.Scores, func(x, y float64) bool { return math.Float64bits(x) == math.Float64bits(y) }) {
		d = append(d, fmt.Sprintf("Scores: %v != %v", a.Scores, b.Scores))
	}
	if !maps.Equal(a.Meta, b.Meta) {
		d = append(d, fmt.Sprintf("Meta: %.200q != %.200q", fmt.Sprint(a.Meta), fmt.Sprint(b.Meta)))
	}
	strs("TokensA", a.TokensA, b.TokensA)
	strs("TokensB", a.TokensB, b.TokensB)
	if !slices.Equal(a.IDsA, b.IDsA) || !slices.Equal(a.IDsB, b.IDsB) {
		d = append(d, fmt.Sprintf("IDs: %v %v != %v %v", a.IDsA, a.IDsB, b.IDsA, b.IDsB))
	}
	f32 := func(x, y float32) bool { return math.Float32bits(x) == math.Float32bits(y) }
	if !slices.EqualFunc(a.TopicsA, b.TopicsA, f32) || !slices.EqualFunc(a.TopicsB, b.TopicsB, f32) {
		d = append(d, fmt.Sprintf("Topics: %v %v != %v %v", a.TopicsA, a.TopicsB, b.TopicsA, b.TopicsB))
	}
	return strings.Join(d, "; ")
}

// spillWords is a small vocabulary; spillRedditRow draws from it with a
// skewed distribution so that the texts compress like English does.
var spillWords = func() []string {
	common := strings.Fields(`the a to of and i you it that is in for this on was with but be
		not have are just like if what they so do my at can it's or an about me your would don't
		all from think one people get no there will i'm more as out up he know really good time
		them we how even when because any some only also than then why who much which lol yeah`)
	rng := rand.New(rand.NewPCG(1, 2))
	const letters = "etaoinshrdlucmfwypvbgkjqxz"
	for len(common) < 3000 {
		n := 3 + rng.IntN(7)
		var b strings.Builder
		for range n {
			b.WriteByte(letters[min(rng.IntN(len(letters)), rng.IntN(len(letters)))])
		}
		common = append(common, b.String())
	}
	return common
}()

func spillText(rng *rand.Rand, words int) string {
	var b strings.Builder
	for i := range words {
		if i > 0 {
			b.WriteByte(' ')
		}
		// Zipf-like: small indexes are much more frequent.
		j := int(float64(len(spillWords)) * math.Pow(rng.Float64(), 3))
		b.WriteString(spillWords[j])
	}
	b.WriteByte('.')
	return b.String()
}

// spillRedditRow is a realistic row of a Reddit comment pair before
// featurize: two short texts, their tokens, two turns of context and the
// pushshift metadata. It encodes to about 300 bytes.
func spillRedditRow(rng *rand.Rand, i int) shards.Row {
	a := spillText(rng, 4+rng.IntN(7))
	b := spillText(rng, 4+rng.IntN(7))
	thread := "t3_" + strconv.FormatInt(int64(1e6+rng.IntN(50000)), 36)
	return shards.Row{
		ID:           "t1_" + strconv.FormatInt(int64(3e9+i), 36),
		Corpus:       "reddit",
		Dataset:      "RC_2015-01",
		Split:        "train",
		A:            a,
		B:            b,
		Context:      []string{spillText(rng, 3+rng.IntN(6)), spillText(rng, 3+rng.IntN(6))},
		LangA:        "en",
		LangB:        "en",
		GroupKey:     thread,
		SourceFile:   "RC_2015-01.zst",
		SourceLine:   int64(i + 1),
		SourceOffset: int64(i) * 731,
		Meta: map[string]string{
			"author":      spillWords[rng.IntN(len(spillWords))] + strconv.Itoa(rng.IntN(1000)),
			"parent_id":   "t1_" + strconv.FormatInt(int64(3e9+rng.IntN(1e6)), 36),
			"created_utc": strconv.Itoa(1420070400 + i),
		},
		TokensA: strings.Fields(strings.ReplaceAll(a, ".", " .")),
		TokensB: strings.Fields(strings.ReplaceAll(b, ".", " .")),
	}
}

func spillRedditRows(n int) []shards.Row {
	rng := rand.New(rand.NewPCG(7, 11))
	rows := make([]shards.Row, n)
	for i := range rows {
		rows[i] = spillRedditRow(rng, i)
	}
	return rows
}

// spillVariedRows covers every field and the edge cases of the codec.
func spillVariedRows() []shards.Row {
	manyMeta := make(map[string]string)
	for i := range 1000 {
		manyMeta[fmt.Sprintf("key-%04d", i)] = strings.Repeat("v", i%17)
	}
	nanPayload := math.Float64frombits(0x7ff8_0000_dead_beef)
	return []shards.Row{
		{},
		{ID: "zero-label", Label: spillF64(0)},
		{ID: "neg-zero-label", Label: spillF64(math.Copysign(0, -1))},
		{ID: "nan-label", Label: spillF64(nanPayload)},
		{ID: "inf", Label: spillF64(math.Inf(-1)), Scores: []float64{math.Inf(1), math.Inf(-1), math.NaN(), math.Copysign(0, -1), 5e-324, math.MaxFloat64}},
		{
			ID: "sts-1", Corpus: "sts", Dataset: "2014/deft-forum", Split: "test",
			A: "A man is playing a guitar.", B: "A man plays the guitar.",
			LangA: "en", LangB: "en", Label: spillF64(4.8), GroupKey: "g",
			SourceFile: "sts/2014/deft-forum.txt", SourceLine: 12, SourceOffset: 4096,
			Scores:  []float64{4.8, 5, 4.6},
			TokensA: []string{"A", "man", "is", "playing", "a", "guitar", "."},
			TokensB: []string{"A", "man", "plays", "the", "guitar", "."},
			IDsA:    []int32{0, 1, -1, math.MaxInt32, math.MinInt32},
			IDsB:    []int32{7},
			TopicsA: []float32{0.25, float32(math.NaN()), float32(math.Inf(1)), float32(math.Copysign(0, -1))},
			TopicsB: []float32{math.MaxFloat32, math.SmallestNonzeroFloat32},
		},
		{
			ID: "unicode", A: "Ｆｕｌｌ-width ﬁ café naïve 日本語のテキスト 🤖👍🏽 \u200d", B: "Привет, мир! مرحبا بالعالم",
			Context: []string{"", "一", "emoji 🏳️‍🌈"}, LangA: "ja", LangB: "ru",
			Meta: map[string]string{"": "empty key", "ключ": "значение", "k": ""},
		},
		{ID: "invalid-utf8", A: "\xff\xfe\x00bytes\x00", Context: []string{"\x80"}},
		{ID: "extremes", SourceLine: math.MinInt64, SourceOffset: math.MaxInt64},
		{ID: "empty-lists", Context: []string{}, Scores: []float64{}, Meta: map[string]string{}, TokensA: []string{}, IDsA: []int32{}, TopicsB: []float32{}},
		{ID: "empty-strings-in-lists", Context: []string{"", ""}, TokensA: []string{""}, TokensB: []string{"", "x", ""}},
		{ID: "many-meta", Meta: manyMeta},
		{
			ID: "tokens-not-in-text",
			A:  "Don't   PANIC: see https://example.org/x" + strings.Repeat(" ", 100) + "then   go on, \u00e9t\u00e9 ok",
			B:  "ab ab ab",
			TokensA: []string{"<s>", "do", "Do", "n't", "", "PANIC", ":", "https://example.org/x", "not-there",
				"then", "go", "then", "on", ",", "été", "ok", "</s>"},
			TokensB: []string{"ab", "ab", "ab", "ab", "b", "a"},
		},
		{ID: "huge", A: strings.Repeat("large text ", 100_000), B: strings.Repeat("ü", 1<<19), TokensA: slices.Repeat([]string{"large", "text"}, 50_000)},
		{ID: "long-lists", IDsA: make([]int32, 70_000), TopicsA: make([]float32, 3000), Scores: make([]float64, 200)},
		spillRedditRows(1)[0],
	}
}

// ---------------------------------------------------------------------------
// Codec

func TestAppendRowRoundTrip(t *testing.T) {
	for _, want := range spillVariedRows() {
		t.Run(want.ID, func(t *testing.T) {
			enc := spill.AppendRow([]byte("prefix"), &want)
			if !bytes.HasPrefix(enc, []byte("prefix")) {
				t.Fatal("AppendRow overwrote dst")
			}
			enc = enc[len("prefix"):]
			var got shards.Row
			n, err := spill.DecodeRow(append(enc, "trailing"...), &got)
			if err != nil {
				t.Fatalf("DecodeRow: %v", err)
			}
			if n != len(enc) {
				t.Errorf("DecodeRow consumed %d bytes, AppendRow wrote %d", n, len(enc))
			}
			if d := spillDiffRows(&want, &got); d != "" {
				t.Errorf("round trip differs: %s", d)
			}
			// Empty lists come back nil.
			if want.ID == "empty-lists" && (got.Context != nil || got.Scores != nil || got.Meta != nil || got.TokensA != nil || got.IDsA != nil || got.TopicsB != nil) {
				t.Errorf("empty lists did not come back nil: %+v", got)
			}
		})
	}
}

func TestAppendRowTokensReferTheirText(t *testing.T) {
	r := spillRedditRows(1)[0]
	bare := r
	bare.TokensA, bare.TokensB = nil, nil
	var tokenBytes int
	for _, tok := range slices.Concat(r.TokensA, r.TokensB) {
		tokenBytes += len(tok)
	}
	// A reference takes two bytes; a literal 1 + len(token).
	added := len(spill.AppendRow(nil, &r)) - len(spill.AppendRow(nil, &bare))
	if max := 2*(len(r.TokensA)+len(r.TokensB)) + 2; added > max {
		t.Errorf("tokens added %d bytes (%d bytes of tokens), want at most %d", added, tokenBytes, max)
	}
	var got shards.Row
	if _, err := spill.DecodeRow(spill.AppendRow(nil, &r), &got); err != nil {
		t.Fatal(err)
	}
	if d := spillDiffRows(&r, &got); d != "" {
		t.Error(d)
	}
}

func TestDecodeRowSequence(t *testing.T) {
	rows := spillVariedRows()
	var buf []byte
	for i := range rows {
		buf = spill.AppendRow(buf, &rows[i])
	}
	var got shards.Row // reused on purpose: every field must be overwritten
	for i := range rows {
		n, err := spill.DecodeRow(buf, &got)
		if err != nil {
			t.Fatalf("row %d: %v", i, err)
		}
		buf = buf[n:]
		if d := spillDiffRows(&rows[i], &got); d != "" {
			t.Errorf("row %d (%s): %s", i, rows[i].ID, d)
		}
	}
	if len(buf) != 0 {
		t.Errorf("%d bytes left", len(buf))
	}
}

func TestAppendRowDeterministic(t *testing.T) {
	for _, r := range spillVariedRows() {
		first := spill.AppendRow(nil, &r)
		for range 5 {
			// A new map with the same content iterates in another order.
			r2 := r
			r2.Meta = maps.Clone(r.Meta)
			if got := spill.AppendRow(nil, &r2); !bytes.Equal(got, first) {
				t.Fatalf("row %s: encodings differ", r.ID)
			}
		}
	}
}

func TestDecodeRowStringsDoNotAliasInput(t *testing.T) {
	want := spillRedditRows(1)[0]
	enc := spill.AppendRow(nil, &want)
	var got shards.Row
	if _, err := spill.DecodeRow(enc, &got); err != nil {
		t.Fatal(err)
	}
	clear(enc)
	if d := spillDiffRows(&want, &got); d != "" {
		t.Errorf("row changed with its input buffer: %s", d)
	}
}

func TestDecodeRowReusesRow(t *testing.T) {
	rows := spillRedditRows(64)
	var buf []byte
	for i := range rows {
		buf = spill.AppendRow(buf, &rows[i])
	}
	var r shards.Row
	decodeAll := func() {
		b := buf
		for len(b) > 0 {
			n, err := spill.DecodeRow(b, &r)
			if err != nil {
				t.Fatal(err)
			}
			b = b[n:]
		}
	}
	decodeAll() // grow r's slices and map
	allocs := testing.AllocsPerRun(20, decodeAll) / float64(len(rows))
	t.Logf("%.2f allocations per decoded row", allocs)
	// One string per row; the map may rarely grow.
	if allocs > 1.5 {
		t.Errorf("%.2f allocations per decoded row, want about 1", allocs)
	}
}

func TestDecodeRowTruncated(t *testing.T) {
	for _, r := range spillVariedRows() {
		if r.ID == "huge" || r.ID == "many-meta" || r.ID == "long-lists" {
			continue // quadratic; the fuzzer covers long rows
		}
		enc := spill.AppendRow(nil, &r)
		for i := range len(enc) {
			var got shards.Row
			if _, err := spill.DecodeRow(enc[:i], &got); !errors.Is(err, spill.ErrCorrupt) {
				t.Fatalf("row %s cut to %d of %d bytes: err %v, want ErrCorrupt", r.ID, i, len(enc), err)
			}
		}
	}
}

func TestDecodeRowCorrupt(t *testing.T) {
	valid := spill.AppendRow(nil, &shards.Row{ID: "x", Meta: map[string]string{"a": "1", "b": "2"}, IDsA: []int32{1}})
	for _, tc := range []struct {
		name string
		b    []byte
	}{
		{"empty", nil},
		{"zero length", []byte{0}},
		{"varint overflow", bytes.Repeat([]byte{0xff}, 11)},
		{"length beyond input", []byte{0xff, 0xff, 0xff, 0xff, 0x0f, 0}},
		{"unknown flag", append([]byte{24, 0x02}, make([]byte, 23)...)},
		{"huge list count", append(append([]byte{41, 0}, make([]byte, 6)...), append([]byte{0xff, 0xff, 0xff, 0xff, 0x0f}, make([]byte, 29)...)...)},
		{"meta keys out of order", bytes.Replace(valid, []byte{1, 'a', 1, '1', 1, 'b'}, []byte{1, 'b', 1, '1', 1, 'a'}, 1)},
		{"id overflows int32", spillReplaceTail(valid, []byte{1, 2}, []byte{1, 0x80, 0x80, 0x80, 0x80, 0x20})},
		{"bytes after the last field", spillGrowBody(valid)},
		{"token outside its text", spillTokenPastText()},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var r shards.Row
			n, err := spill.DecodeRow(tc.b, &r)
			if !errors.Is(err, spill.ErrCorrupt) {
				t.Fatalf("DecodeRow = %d, %v; want ErrCorrupt", n, err)
			}
			t.Log(err)
		})
	}
}

// spillReplaceTail rewrites the IDsA list at the end of enc (its last
// fields are IDsA, IDsB, TopicsA, TopicsB: old, then three zero counts).
func spillReplaceTail(enc, old, repl []byte) []byte {
	body := enc[1:] // one length byte for this small row
	i := bytes.LastIndex(body, append(slices.Clone(old), 0, 0, 0))
	nb := slices.Concat(body[:i], repl, []byte{0, 0, 0})
	return append([]byte{byte(len(nb))}, nb...)
}

// spillTokenPastText encodes a row whose one token refers to bytes past the
// end of A.
func spillTokenPastText() []byte {
	enc := spill.AppendRow(nil, &shards.Row{A: "abc", TokensA: []string{"bc"}})
	// The tail: tokens_a (1 token, tag 2<<1|1, skip 1), then five empty lists.
	tail := []byte{1, 5, 1, 0, 0, 0, 0, 0}
	if !bytes.HasSuffix(enc, tail) {
		panic("unexpected encoding")
	}
	enc[len(enc)-len(tail)+2] = 2 // skip 2: "c" and one byte past the end
	return enc
}

// spillGrowBody appends a byte to the body of a small row and fixes up its
// length prefix.
func spillGrowBody(enc []byte) []byte {
	return append([]byte{enc[0] + 1}, append(slices.Clone(enc[1:]), 0)...)
}

var spillFuzzRuns int

// FuzzDecodeRow checks that DecodeRow never panics or allocates much more
// than its input on any bytes, that what it decodes re-encodes to a row
// that decodes the same, and that a row built from the fuzz input survives
// AppendRow and DecodeRow exactly.
func FuzzDecodeRow(f *testing.F) {
	for _, r := range spillVariedRows() {
		if r.ID == "huge" || r.ID == "long-lists" || r.ID == "many-meta" {
			continue
		}
		f.Add(spill.AppendRow(nil, &r))
	}
	f.Add([]byte{})
	f.Add([]byte{0xff, 0xff, 0xff, 0xff, 0x0f})
	f.Add([]byte("PSPILL1\nB"))
	f.Fuzz(func(t *testing.T, data []byte) {
		// 1. Arbitrary bytes.
		// Measuring allocations stops the world, so only one input in 8 is
		// measured (as are the seeds) to keep the fuzzer fast.
		spillFuzzRuns++
		measure := spillFuzzRuns%8 == 1 || len(data) > 1<<10
		var ms runtime.MemStats
		if measure {
			runtime.ReadMemStats(&ms)
		}
		before := ms.TotalAlloc
		var r shards.Row
		n, err := spill.DecodeRow(data, &r)
		if measure {
			runtime.ReadMemStats(&ms)
			// A string header per input byte, or a map entry per two, at most.
			if alloc, limit := ms.TotalAlloc-before, 64*uint64(len(data))+64<<10; alloc > limit {
				t.Fatalf("DecodeRow of %d bytes allocated %d bytes", len(data), alloc)
			}
		}
		if err != nil {
			if !errors.Is(err, spill.ErrCorrupt) {
				t.Fatalf("error does not wrap ErrCorrupt: %v", err)
			}
		} else {
			if n <= 0 || n > len(data) {
				t.Fatalf("DecodeRow consumed %d of %d bytes", n, len(data))
			}
			enc := spill.AppendRow(nil, &r)
			var r2 shards.Row
			if n2, err := spill.DecodeRow(enc, &r2); err != nil || n2 != len(enc) {
				t.Fatalf("re-encoded row: DecodeRow = %d, %v; want %d, nil", n2, err, len(enc))
			}
			if d := spillDiffRows(&r, &r2); d != "" {
				t.Fatalf("re-encoded row differs: %s", d)
			}
		}

		// 2. A row made of the input.
		want := spillRowFromBytes(data)
		enc := spill.AppendRow(nil, &want)
		var got shards.Row
		n, err = spill.DecodeRow(enc, &got)
		if err != nil || n != len(enc) {
			t.Fatalf("DecodeRow(AppendRow(row)) = %d, %v; want %d, nil", n, err, len(enc))
		}
		if d := spillDiffRows(&want, &got); d != "" {
			t.Fatalf("round trip differs: %s", d)
		}
		if _, err := spill.DecodeRow(enc[:len(enc)-1], &got); !errors.Is(err, spill.ErrCorrupt) {
			t.Fatalf("truncated row: err %v, want ErrCorrupt", err)
		}
	})
}

// spillRowFromBytes builds a row whose every field is drawn from data.
func spillRowFromBytes(data []byte) shards.Row {
	p := data
	next := func() byte {
		if len(p) == 0 {
			return 0
		}
		c := p[0]
		p = p[1:]
		return c
	}
	take := func(n int) []byte {
		n = min(n, len(p))
		b := p[:n]
		p = p[n:]
		return b
	}
	str := func() string { return string(take(int(next() % 40))) }
	strs := func() []string {
		var s []string
		for range int(next() % 6) {
			s = append(s, str())
		}
		return s
	}
	u64 := func() uint64 {
		var b [8]byte
		copy(b[:], take(8))
		return uint64(b[0]) | uint64(b[1])<<8 | uint64(b[2])<<16 | uint64(b[3])<<24 |
			uint64(b[4])<<32 | uint64(b[5])<<40 | uint64(b[6])<<48 | uint64(b[7])<<56
	}
	var r shards.Row
	flags := next()
	r.ID, r.Corpus, r.Dataset, r.Split, r.A, r.B = str(), str(), str(), str(), str(), str()
	r.Context = strs()
	r.LangA, r.LangB = str(), str()
	if flags&1 != 0 {
		r.Label = spillF64(math.Float64frombits(u64()))
	}
	r.GroupKey, r.SourceFile = str(), str()
	r.SourceLine, r.SourceOffset = int64(u64()), int64(u64())
	for range int(next() % 4) {
		r.Scores = append(r.Scores, math.Float64frombits(u64()))
	}
	for range int(next() % 5) {
		if r.Meta == nil {
			r.Meta = map[string]string{}
		}
		r.Meta[str()] = str()
	}
	toks := func(text string) []string {
		var t []string
		for range int(next() % 8) {
			c := next()
			if c&1 == 0 || text == "" {
				t = append(t, str())
				continue
			}
			i := int(next()) % len(text)
			t = append(t, text[i:i+int(c>>1)%(len(text)-i+1)])
		}
		return t
	}
	r.TokensA, r.TokensB = toks(r.A), toks(r.B)
	for range int(next() % 5) {
		r.IDsA = append(r.IDsA, int32(u64()))
	}
	for range int(next() % 5) {
		r.IDsB = append(r.IDsB, int32(u64()>>7))
	}
	for range int(next() % 5) {
		r.TopicsA = append(r.TopicsA, math.Float32frombits(uint32(u64())))
	}
	for range int(next() % 5) {
		r.TopicsB = append(r.TopicsB, math.Float32frombits(uint32(u64())))
	}
	return r
}

// ---------------------------------------------------------------------------
// Files

func spillWriteFile(t testing.TB, path string, rows []shards.Row) *spill.Writer {
	t.Helper()
	w, err := spill.Create(context.Background(), path)
	if err != nil {
		t.Fatal(err)
	}
	for i := range rows {
		if err := w.Write(&rows[i]); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	return w
}

// spillReadAll reads a file with one reused row, cloning each.
func spillReadAll(path string) ([]shards.Row, int64, error) {
	r, err := spill.Open(context.Background(), path)
	if err != nil {
		return nil, 0, err
	}
	defer r.Close()
	var rows []shards.Row
	var row shards.Row
	for {
		err := r.Next(&row)
		if err == io.EOF {
			return rows, r.Rows(), nil
		}
		if err != nil {
			return rows, r.Rows(), err
		}
		rows = append(rows, row)
		row = shards.Row{} // the next Next reuses row's slices
	}
}

func spillCheckRows(t *testing.T, want, got []shards.Row) {
	t.Helper()
	if len(got) != len(want) {
		t.Fatalf("read %d rows, wrote %d", len(got), len(want))
	}
	for i := range want {
		if d := spillDiffRows(&want[i], &got[i]); d != "" {
			t.Fatalf("row %d (%s): %s", i, want[i].ID, d)
		}
	}
}

func TestSpillRoundTripLocal(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "sub", "bucket-007.spill") // OpenWrite makes sub/
	want := slices.Concat(spillRedditRows(5000), spillVariedRows(), spillRedditRows(3000))
	w := spillWriteFile(t, path, want)

	if w.Rows() != int64(len(want)) {
		t.Errorf("Rows() = %d, want %d", w.Rows(), len(want))
	}
	st, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	if w.Bytes() != st.Size() {
		t.Errorf("Bytes() = %d, file has %d", w.Bytes(), st.Size())
	}
	if ents, _ := os.ReadDir(filepath.Dir(path)); len(ents) != 1 {
		t.Errorf("directory holds %d entries, want only the spill file: %v", len(ents), ents)
	}

	got, n, err := spillReadAll(path)
	if err != nil {
		t.Fatal(err)
	}
	if n != int64(len(want)) {
		t.Errorf("reader Rows() = %d, want %d", n, len(want))
	}
	spillCheckRows(t, want, got)

	// ReadFiles hands out rows that may be kept.
	var kept []*shards.Row
	if err := spill.ReadFiles(context.Background(), []string{path, path}, func(r *shards.Row) error {
		kept = append(kept, r)
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	if len(kept) != 2*len(want) {
		t.Fatalf("ReadFiles gave %d rows, want %d", len(kept), 2*len(want))
	}
	for i, r := range kept {
		if d := spillDiffRows(&want[i%len(want)], r); d != "" {
			t.Fatalf("ReadFiles row %d: %s", i, d)
		}
	}
}

func TestSpillEmptyFile(t *testing.T) {
	path := filepath.Join(t.TempDir(), "empty.spill")
	w := spillWriteFile(t, path, nil)
	if w.Rows() != 0 || w.Bytes() != 8+17 {
		t.Errorf("Rows() = %d, Bytes() = %d; want 0, 25", w.Rows(), w.Bytes())
	}
	got, _, err := spillReadAll(path)
	if err != nil || len(got) != 0 {
		t.Fatalf("read %d rows, %v; want 0, nil", len(got), err)
	}
}

func TestSpillDeterministicFile(t *testing.T) {
	dir := t.TempDir()
	rows := spillRedditRows(3000)
	spillWriteFile(t, filepath.Join(dir, "a.spill"), rows)
	for i := range rows { // same content, other map iteration order
		rows[i].Meta = maps.Clone(rows[i].Meta)
	}
	spillWriteFile(t, filepath.Join(dir, "b.spill"), rows)
	a, _ := os.ReadFile(filepath.Join(dir, "a.spill"))
	b, _ := os.ReadFile(filepath.Join(dir, "b.spill"))
	if !bytes.Equal(a, b) {
		t.Error("the same rows gave different files")
	}
}

func TestSpillNoFileBeforeClose(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "bucket.spill")
	w, err := spill.Create(context.Background(), path)
	if err != nil {
		t.Fatal(err)
	}
	rows := spillRedditRows(2000)
	for i := range rows {
		if err := w.Write(&rows[i]); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := os.Stat(path); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("final name exists before Close: %v", err)
	}
	ents, _ := os.ReadDir(dir)
	if len(ents) != 1 || !strings.HasPrefix(ents[0].Name(), ".bucket.spill.tmp-") {
		t.Fatalf("want one hidden temporary file, have %v", ents)
	}
	if err := w.Abort(); err != nil {
		t.Fatal(err)
	}
	if ents, _ := os.ReadDir(dir); len(ents) != 0 {
		t.Fatalf("Abort left %v", ents)
	}
	if err := w.Close(); err == nil {
		t.Error("Close after Abort succeeded")
	}
	if err := w.Write(&rows[0]); err == nil {
		t.Error("Write after Abort succeeded")
	}
}

func TestSpillTruncated(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "whole.spill")
	rows := spillRedditRows(3000) // several blocks
	spillWriteFile(t, path, rows)
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	blockEnd := spillFirstBlockEnd(t, data)
	for _, cut := range []int{0, 3, 8, 8 + 1, 8 + 10, 8 + 21, 8 + 21 + 100, blockEnd, blockEnd + 1, len(data) - 17, len(data) - 16, len(data) - 1} {
		t.Run(strconv.Itoa(cut), func(t *testing.T) {
			p := filepath.Join(dir, fmt.Sprintf("cut-%d.spill", cut))
			if err := os.WriteFile(p, data[:cut], 0o644); err != nil {
				t.Fatal(err)
			}
			got, _, err := spillReadAll(p)
			if !errors.Is(err, spill.ErrCorrupt) || !strings.Contains(err.Error(), p) {
				t.Fatalf("read %d rows, err %v; want ErrCorrupt naming %s", len(got), err, p)
			}
			if cut > 8 && !errors.Is(err, io.ErrUnexpectedEOF) {
				t.Errorf("err %v does not wrap io.ErrUnexpectedEOF", err)
			}
			t.Log(err)
			err = spill.ReadFiles(context.Background(), []string{p}, func(*shards.Row) error { return nil })
			if !errors.Is(err, spill.ErrCorrupt) {
				t.Fatalf("ReadFiles: %v", err)
			}
		})
	}
}

// spillFirstBlockEnd returns the offset just after the first block.
func spillFirstBlockEnd(t *testing.T, data []byte) int {
	t.Helper()
	if len(data) < 8+21 || data[8] != 'S' {
		t.Fatal("file does not start with a block")
	}
	comp := int(data[17]) | int(data[18])<<8 | int(data[19])<<16 | int(data[20])<<24
	return 8 + 21 + comp
}

func TestSpillCorruptByte(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "whole.spill")
	rng := rand.New(rand.NewPCG(3, 4))
	var rows []shards.Row
	for i := range 40 { // two blocks of a few KiB: short enough to corrupt every byte
		rows = append(rows, spillRedditRow(rng, i))
	}
	w, err := spill.Create(context.Background(), path)
	if err != nil {
		t.Fatal(err)
	}
	for i := range rows {
		if err := w.Write(&rows[i]); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	data, _ := os.ReadFile(path)
	p := "spillplain://corrupt/bad.spill" // in memory: the loop reads thousands of files
	for i := range data {
		for _, mask := range []byte{0x01, 0x80, 0xff} {
			bad := slices.Clone(data)
			bad[i] ^= mask
			spillPlainFS.put(p, bad)
			got, _, err := spillReadAll(p)
			if !errors.Is(err, spill.ErrCorrupt) {
				t.Fatalf("byte %d of %d ^ %#x: read %d rows, err %v; want ErrCorrupt", i, len(data), mask, len(got), err)
			}
		}
	}
	// Bytes after the trailer.
	spillPlainFS.put(p, append(slices.Clone(data), 0))
	defer spillPlainFS.remove(p)
	if _, _, err := spillReadAll(p); !errors.Is(err, spill.ErrCorrupt) {
		t.Fatalf("trailing byte: err %v, want ErrCorrupt", err)
	}
}

// FuzzOpenSpill reads arbitrary bytes as a spill file: no panic, and an
// error that wraps ErrCorrupt unless the file is valid.
func FuzzOpenSpill(f *testing.F) {
	dir := f.TempDir()
	for i, n := range []int{0, 1, 30, 400} {
		p := filepath.Join(dir, fmt.Sprintf("seed-%d.spill", i))
		spillWriteFile(f, p, spillRedditRows(n))
		data, err := os.ReadFile(p)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(data)
		f.Add(data[:len(data)/2])
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		p := "spillplain://fuzz/input.spill"
		spillPlainFS.put(p, data)
		defer spillPlainFS.remove(p)
		r, err := spill.Open(context.Background(), p)
		if err != nil {
			if !errors.Is(err, spill.ErrCorrupt) {
				t.Fatalf("Open: %v does not wrap ErrCorrupt", err)
			}
			return
		}
		defer r.Close()
		var row shards.Row
		for {
			err := r.Next(&row)
			if err == io.EOF {
				return
			}
			if err != nil {
				if !errors.Is(err, spill.ErrCorrupt) {
					t.Fatalf("Next: %v does not wrap ErrCorrupt", err)
				}
				return
			}
		}
	})
}

func TestSpillNotASpillFile(t *testing.T) {
	p := filepath.Join(t.TempDir(), "x.spill")
	os.WriteFile(p, []byte("hello, world\n"), 0o644)
	if _, err := spill.Open(context.Background(), p); !errors.Is(err, spill.ErrCorrupt) || !strings.Contains(err.Error(), p) {
		t.Fatalf("err %v; want ErrCorrupt naming the file", err)
	}
	_, err := spill.Open(context.Background(), filepath.Join(t.TempDir(), "missing.spill"))
	if !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("missing file: err %v, want os.ErrNotExist", err)
	}
}

func TestSpillBadPath(t *testing.T) {
	for _, p := range []string{"", "dir/", "memfs://", "memfs://bucket/", "nosuchscheme://x/y.spill"} {
		if w, err := spill.Create(context.Background(), p); err == nil {
			w.Abort()
			t.Errorf("Create(%q) succeeded", p)
		}
	}
}

func TestSpillMemFS(t *testing.T) {
	ctx := context.Background()
	path := "memfs://spilltest/bucket-1.spill"
	want := spillRedditRows(4000)
	spillWriteFile(t, path, want)
	fs, _ := filesystem.New(ctx, path)
	if names, _ := fs.List(ctx, "memfs://spilltest/*"); !slices.Equal(names, []string{path}) {
		t.Errorf("memfs holds %q, want only %q", names, path)
	}
	got, _, err := spillReadAll(path)
	if err != nil {
		t.Fatal(err)
	}
	spillCheckRows(t, want, got)
}

// spillMemFS is an in-memory filesystem with the bare filesystem.Interface:
// it can neither rename nor remove. A file appears when its writer closes.
// With failAfter > 0, a file's writes fail once it would pass that size.
type spillMemFS struct {
	mu        sync.Mutex
	files     map[string][]byte
	failAfter int
}

// spillMemFSRename adds Rename and Remove.
type spillMemFSRename struct{ *spillMemFS }

var (
	spillPlainFS = &spillMemFS{files: map[string][]byte{}}
	spillFailFS  = spillMemFSRename{&spillMemFS{files: map[string][]byte{}, failAfter: 1 << 10}}
)

func init() {
	filesystem.Register("spillplain", func(context.Context) filesystem.Interface { return spillPlainFS })
	filesystem.Register("spillfail", func(context.Context) filesystem.Interface { return spillFailFS })
}

func (f *spillMemFS) names() []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	return slices.Sorted(maps.Keys(f.files))
}

func (f *spillMemFS) put(name string, data []byte) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.files[name] = data
}

func (f *spillMemFS) remove(name string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	delete(f.files, name)
}

func (f *spillMemFS) Close() error { return nil }

func (f *spillMemFS) List(_ context.Context, glob string) ([]string, error) {
	var out []string
	for _, name := range f.names() {
		if ok, _ := filesystem.Match(glob, name); ok {
			out = append(out, name)
		}
	}
	return out, nil
}

func (f *spillMemFS) OpenRead(_ context.Context, name string) (io.ReadCloser, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	data, ok := f.files[name]
	if !ok {
		return nil, os.ErrNotExist
	}
	return io.NopCloser(bytes.NewReader(data)), nil
}

func (f *spillMemFS) OpenWrite(_ context.Context, name string) (io.WriteCloser, error) {
	return &spillMemWriter{fs: f, name: name}, nil
}

func (f *spillMemFS) Size(_ context.Context, name string) (int64, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	data, ok := f.files[name]
	if !ok {
		return -1, os.ErrNotExist
	}
	return int64(len(data)), nil
}

func (f spillMemFSRename) Remove(_ context.Context, name string) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	if _, ok := f.files[name]; !ok {
		return os.ErrNotExist
	}
	delete(f.files, name)
	return nil
}

func (f spillMemFSRename) Rename(_ context.Context, from, to string) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	data, ok := f.files[from]
	if !ok {
		return os.ErrNotExist
	}
	delete(f.files, from)
	f.files[to] = data
	return nil
}

type spillMemWriter struct {
	fs   *spillMemFS
	name string
	buf  bytes.Buffer
}

func (w *spillMemWriter) Write(p []byte) (int, error) {
	if w.fs.failAfter > 0 && w.buf.Len()+len(p) > w.fs.failAfter {
		return 0, errors.New("disk full")
	}
	return w.buf.Write(p)
}

func (w *spillMemWriter) Close() error {
	w.fs.mu.Lock()
	defer w.fs.mu.Unlock()
	w.fs.files[w.name] = w.buf.Bytes()
	return nil
}

func TestSpillFilesystemWithoutRename(t *testing.T) {
	path := "spillplain://dir/bucket.spill"
	want := spillRedditRows(500)
	spillWriteFile(t, path, want)
	got, _, err := spillReadAll(path)
	if err != nil {
		t.Fatal(err)
	}
	spillCheckRows(t, want, got)
	if names := spillPlainFS.names(); !slices.Equal(names, []string{path}) {
		t.Errorf("filesystem holds %q, want only %q", names, path)
	}
}

func TestSpillWriteFailure(t *testing.T) {
	ctx := context.Background()
	path := "spillfail://dir/bucket.spill"
	w, err := spill.Create(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	var werr error
	for _, r := range spillRedditRows(5000) {
		if werr = w.Write(&r); werr != nil {
			break
		}
	}
	if werr == nil || !strings.Contains(werr.Error(), "disk full") || !strings.Contains(werr.Error(), path) {
		t.Fatalf("Write: %v; want the filesystem's error naming the file", werr)
	}
	if err := w.Close(); err == nil {
		t.Fatal("Close succeeded after a failed Write")
	}
	if names := spillFailFS.names(); len(names) != 0 {
		t.Errorf("failed write left %q", names)
	}
}

func TestSpillCanceledContext(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	path := filepath.Join(t.TempDir(), "c.spill")
	w, err := spill.Create(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	r := spillRedditRows(1)[0]
	w.Write(&r)
	cancel()
	if err := w.Close(); !errors.Is(err, context.Canceled) {
		t.Fatalf("Close: %v, want context.Canceled", err)
	}
	if _, err := os.Stat(path); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("canceled write left %s", path)
	}
}

func TestReadSpillFiles(t *testing.T) {
	dir := t.TempDir()
	rows := spillRedditRows(300)
	var paths []string
	for i := range 3 {
		p := filepath.Join(dir, fmt.Sprintf("b%d.spill", i))
		spillWriteFile(t, p, rows[i*100:(i+1)*100])
		paths = append(paths, p)
	}
	slices.Reverse(paths)
	var ids []string
	if err := spill.ReadFiles(context.Background(), paths, func(r *shards.Row) error {
		ids = append(ids, r.ID)
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	var want []string
	for i := 2; i >= 0; i-- {
		for _, r := range rows[i*100 : (i+1)*100] {
			want = append(want, r.ID)
		}
	}
	if !slices.Equal(ids, want) {
		t.Error("ReadFiles did not read the files in the order given")
	}

	stop := errors.New("stop")
	err := spill.ReadFiles(context.Background(), paths, func(*shards.Row) error { return stop })
	if !errors.Is(err, stop) || !strings.Contains(err.Error(), paths[0]) {
		t.Errorf("fn's error came back as %v", err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if err := spill.ReadFiles(ctx, paths, func(*shards.Row) error { return nil }); !errors.Is(err, context.Canceled) {
		t.Errorf("canceled context: %v", err)
	}
}

func TestSpillRowTooLarge(t *testing.T) {
	if testing.Short() {
		t.Skip("allocates a few hundred MB")
	}
	path := filepath.Join(t.TempDir(), "big.spill")
	w, err := spill.Create(context.Background(), path)
	if err != nil {
		t.Fatal(err)
	}
	defer w.Abort()
	small := spillRedditRows(1)[0]
	big := shards.Row{ID: "big", A: strings.Repeat("x", 65<<20)}
	if err := w.Write(&small); err != nil {
		t.Fatal(err)
	}
	if err := w.Write(&big); err == nil {
		t.Fatal("a 65 MiB row was accepted")
	}
	if err := w.Write(&small); err != nil {
		t.Fatalf("writer unusable after a refused row: %v", err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	got, _, err := spillReadAll(path)
	if err != nil || len(got) != 2 {
		t.Fatalf("read %d rows, %v; want 2", len(got), err)
	}
}

// spillWriterHeap opens n writers in dir, writes rowsEach rows to each
// (round robin, as a scatter does) and returns the heap growth per writer
// while they are all open.
func spillWriterHeap(tb testing.TB, dir string, n, rowsEach int, rows []shards.Row) float64 {
	var ms runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&ms)
	before := ms.HeapAlloc
	ws := make([]*spill.Writer, n)
	for i := range ws {
		w, err := spill.Create(context.Background(), filepath.Join(dir, fmt.Sprintf("%d-bucket-%03d.spill", rowsEach, i)))
		if err != nil {
			tb.Fatal(err)
		}
		ws[i] = w
	}
	for j := range rowsEach {
		for i, w := range ws {
			if err := w.Write(&rows[(i*rowsEach+j)%len(rows)]); err != nil {
				tb.Fatal(err)
			}
		}
	}
	// Twice: the first moves the shared pools (compressors, frame buffers)
	// to their victim caches, the second frees them. They are the process's,
	// not a writer's.
	runtime.GC()
	runtime.GC()
	runtime.ReadMemStats(&ms)
	per := (float64(ms.HeapAlloc) - float64(before)) / float64(n)
	for _, w := range ws {
		if err := w.Close(); err != nil {
			tb.Fatal(err)
		}
	}
	return per
}

func TestSpillWriterMemory(t *testing.T) {
	rows := spillRedditRows(4096)
	dir := t.TempDir()
	for _, rowsEach := range []int{0, 200, 1000} {
		per := spillWriterHeap(t, dir, 256, rowsEach, rows)
		t.Logf("256 open writers, %4d rows each: %.0f KiB of heap per writer", rowsEach, per/1024)
		if per > 1<<20 {
			t.Errorf("%.0f KiB per open writer, want under 1 MiB", per/1024)
		}
	}
}

// ---------------------------------------------------------------------------
// Benchmarks

func spillEncodedSize(rows []shards.Row) float64 {
	var n int
	for i := range rows {
		n += len(spill.AppendRow(nil, &rows[i]))
	}
	return float64(n) / float64(len(rows))
}

func BenchmarkAppendRow(b *testing.B) {
	rows := spillRedditRows(4096)
	b.SetBytes(int64(spillEncodedSize(rows)))
	buf := make([]byte, 0, 4096)
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; b.Loop(); i++ {
		buf = spill.AppendRow(buf[:0], &rows[i%len(rows)])
	}
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "rows/s")
}

func BenchmarkDecodeRow(b *testing.B) {
	rows := spillRedditRows(4096)
	var buf []byte
	var offs []int
	for i := range rows {
		offs = append(offs, len(buf))
		buf = spill.AppendRow(buf, &rows[i])
	}
	b.SetBytes(int64(len(buf) / len(rows)))
	var r shards.Row
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; b.Loop(); i++ {
		if _, err := spill.DecodeRow(buf[offs[i%len(offs)]:], &r); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "rows/s")
}

// BenchmarkSpillWrite measures encoding, compressing and writing rows to a
// local file (Close included).
func BenchmarkSpillWrite(b *testing.B) {
	rows := spillRedditRows(4096)
	size := spillEncodedSize(rows)
	b.SetBytes(int64(size))
	path := filepath.Join(b.TempDir(), "bench.spill")
	b.ReportAllocs()
	b.ResetTimer()
	w, err := spill.Create(context.Background(), path)
	if err != nil {
		b.Fatal(err)
	}
	for i := 0; b.Loop(); i++ {
		if err := w.Write(&rows[i%len(rows)]); err != nil {
			b.Fatal(err)
		}
	}
	if err := w.Close(); err != nil {
		b.Fatal(err)
	}
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "rows/s")
	b.ReportMetric(float64(w.Bytes())/float64(b.N), "file-B/row")
	b.ReportMetric(size/(float64(w.Bytes())/float64(b.N)), "ratio")
}

// spillBenchFile writes n rows to a file for the read benchmarks.
func spillBenchFile(b *testing.B, n int) (string, float64) {
	rows := spillRedditRows(4096)
	path := filepath.Join(b.TempDir(), "bench.spill")
	w, err := spill.Create(context.Background(), path)
	if err != nil {
		b.Fatal(err)
	}
	for i := range n {
		if err := w.Write(&rows[i%len(rows)]); err != nil {
			b.Fatal(err)
		}
	}
	if err := w.Close(); err != nil {
		b.Fatal(err)
	}
	return path, spillEncodedSize(rows)
}

// BenchmarkSpillRead measures reading, decompressing and decoding rows from
// a local file into one reused row.
func BenchmarkSpillRead(b *testing.B) {
	path, size := spillBenchFile(b, 200_000)
	b.SetBytes(int64(size))
	b.ReportAllocs()
	b.ResetTimer()
	var r *spill.Reader
	var row shards.Row
	for b.Loop() {
		if r == nil {
			var err error
			if r, err = spill.Open(context.Background(), path); err != nil {
				b.Fatal(err)
			}
		}
		err := r.Next(&row)
		if err == io.EOF {
			r.Close()
			r = nil
			continue // a Loop iteration that reads no row: rare enough to ignore
		}
		if err != nil {
			b.Fatal(err)
		}
	}
	if r != nil {
		r.Close()
	}
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "rows/s")
}

// BenchmarkReadSpillFiles is BenchmarkSpillRead through the convenience
// function, which hands out a fresh row each time.
func BenchmarkReadSpillFiles(b *testing.B) {
	path, size := spillBenchFile(b, 200_000)
	b.SetBytes(int64(size))
	b.ReportAllocs()
	b.ResetTimer()
	stop := errors.New("stop")
	rows := 0
	for rows < b.N {
		err := spill.ReadFiles(context.Background(), []string{path}, func(*shards.Row) error {
			if rows++; rows == b.N {
				return stop
			}
			return nil
		})
		if err != nil && !errors.Is(err, stop) {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(rows)/b.Elapsed().Seconds(), "rows/s")
}

// BenchmarkSpillWriterMemory reports the heap each of 256 open writers
// holds once their blocks have filled (one iteration is enough).
func BenchmarkSpillWriterMemory(b *testing.B) {
	rows := spillRedditRows(4096)
	var per float64
	for i := 0; b.Loop(); i++ {
		per = spillWriterHeap(b, b.TempDir(), 256, 1000, rows)
	}
	b.ReportMetric(per, "heap-B/writer")
}

func ExampleCreate() {
	ctx := context.Background()
	dir, err := os.MkdirTemp("", "spill")
	if err != nil {
		panic(err)
	}
	defer os.RemoveAll(dir)
	path := filepath.Join(dir, "bucket-00042.spill")

	w, err := spill.Create(ctx, path)
	if err != nil {
		panic(err)
	}
	defer w.Abort() // discards the file unless Close succeeded
	for _, text := range []string{"first comment", "second comment"} {
		r := shards.Row{ID: text[:1], A: text, TokensA: strings.Fields(text)}
		if err := w.Write(&r); err != nil {
			panic(err)
		}
	}
	if err := w.Close(); err != nil {
		panic(err)
	}

	err = spill.ReadFiles(ctx, []string{path}, func(r *shards.Row) error {
		fmt.Printf("%s %q %q\n", r.ID, r.A, r.TokensA)
		return nil
	})
	if err != nil {
		panic(err)
	}
	fmt.Println(w.Rows(), "rows")
	// Output:
	// f "first comment" ["first" "comment"]
	// s "second comment" ["second" "comment"]
	// 2 rows
}
