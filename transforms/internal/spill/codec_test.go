package spill_test

import (
	"bytes"
	"errors"
	"maps"
	"math"
	"runtime"
	"slices"
	"strconv"
	"testing"

	"github.com/parastream/parastream/shards"
	"github.com/parastream/parastream/transforms/internal/spill"
)

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
	spillCheckRoundTrip(t, &r)
}

// TestAppendRowLowercasedTokens: tokens that are their text's words
// lowercased (written whole) and tokens that are the text's own bytes mix
// in one list and come back as they were.
func TestAppendRowLowercasedTokens(t *testing.T) {
	r := shards.Row{
		ID:      "lower",
		A:       "The Cat (Big) sat. ÉTÉ é İx Ab",
		TokensA: []string{"the", "cat", "(", "big", ")", "sat", ".", "été", "é", "i̇x", "ab", "b", "AB", ""},
		B:       "(The",
		TokensB: []string{"(", "the", "the"},
	}
	spillCheckRoundTrip(t, &r)
}

// TestAppendRowKeyed checks that a row's key comes back with it, that a
// row without one reports none, and that DecodeRow reads either.
func TestAppendRowKeyed(t *testing.T) {
	row := shards.Row{ID: "r1", A: "a b", TokensA: []string{"a", "b"}, Meta: map[string]string{"author": "x"}}
	key := spill.Key{1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16}
	enc := spill.AppendRowKeyed(nil, &row, key)
	enc = spill.AppendRow(enc, &row)
	var got shards.Row
	n, k, ok, err := spill.DecodeRowKeyed(enc, &got)
	if err != nil || !ok || k != key {
		t.Fatalf("DecodeRowKeyed = %d, %v, %v, %v; want the key %v", n, k, ok, err, key)
	}
	if d := spillDiffRows(&row, &got); d != "" {
		t.Fatalf("keyed row: %s", d)
	}
	if m, err := spill.DecodeRow(enc, &got); err != nil || m != n {
		t.Fatalf("DecodeRow of a keyed row = %d, %v; want %d, nil", m, err, n)
	}
	if _, k, ok, err := spill.DecodeRowKeyed(enc[n:], &got); err != nil || ok || k != (spill.Key{}) {
		t.Fatalf("DecodeRowKeyed of a row without a key = %v, %v, %v; want no key", k, ok, err)
	}
	if len(enc)-n != len(enc[:n])-16 {
		t.Errorf("a keyed row takes %d bytes, the same row without a key %d: want 16 more", n, len(enc)-n)
	}
}

// TestAppendRowWellKnownMetaKeys checks that each of the usual Meta keys
// takes one byte, and that all of them come back, beside literal ones
// (some their prefixes or extensions), in key order: the codec's two
// directions of its table agree.
func TestAppendRowWellKnownMetaKeys(t *testing.T) {
	size := func(m map[string]string) int { return len(spill.AppendRow(nil, &shards.Row{Meta: m})) }
	keys := spill.WellKnownMetaKeys()
	if len(keys) < 9 || !slices.Contains(keys, "parent_id") {
		t.Fatalf("well-known keys %q: want the Reddit ones among them", keys)
	}
	row := shards.Row{ID: "r", Meta: map[string]string{"authors": "b", "aut": "c", "zz": ""}}
	for i, k := range keys {
		if got, want := size(map[string]string{k: "v"}), size(map[string]string{"": "v"}); got != want {
			t.Errorf("a row with Meta key %q encodes to %d bytes, with the empty key %d: want the same", k, got, want)
		}
		row.Meta[k] = strconv.Itoa(i)
	}
	spillCheckRoundTrip(t, &row)
}

// spillCheckRoundTrip encodes r, decodes it and checks it comes back.
func spillCheckRoundTrip(t *testing.T, r *shards.Row) {
	t.Helper()
	enc := spill.AppendRow(nil, r)
	var got shards.Row
	if n, err := spill.DecodeRow(enc, &got); err != nil || n != len(enc) {
		t.Fatalf("DecodeRow = %d, %v; want %d, nil", n, err, len(enc))
	}
	if d := spillDiffRows(r, &got); d != "" {
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
		{"unknown flag", append([]byte{24, 0x04}, make([]byte, 23)...)},
		{"key cut short", []byte{9, 0x02, 1, 2, 3, 4, 5, 6, 7, 8}},
		{"huge list count", append(append([]byte{41, 0}, make([]byte, 6)...), append([]byte{0xff, 0xff, 0xff, 0xff, 0x0f}, make([]byte, 29)...)...)},
		{"meta keys out of order", bytes.Replace(valid, []byte{2, 'a', 1, '1', 2, 'b'}, []byte{2, 'b', 1, '1', 2, 'a'}, 1)},
		{"unknown well-known meta key", bytes.Replace(valid, []byte{2, 'a', 1, '1', 2, 'b'}, []byte{0x7f, 1, '1', 2, 'b'}, 1)},
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
		f.Add(spill.AppendRowKeyed(nil, &r, spill.Key{1, 2, 3}))
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
			// A keyed row re-encodes with its key.
			_, key, keyed, _ := spill.DecodeRowKeyed(data, &shards.Row{})
			enc := spill.AppendRow(nil, &r)
			if keyed {
				enc = spill.AppendRowKeyed(nil, &r, key)
				if _, k2, ok, err := spill.DecodeRowKeyed(enc, &shards.Row{}); err != nil || !ok || k2 != key {
					t.Fatalf("re-encoded keyed row: key %v, %v, %v; want %v", k2, ok, err, key)
				}
			}
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
