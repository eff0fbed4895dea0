package spill_test

import (
	"context"
	"fmt"
	"io"
	"maps"
	"math"
	"math/rand/v2"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/parastream/parastream/shards"
	"github.com/parastream/parastream/transforms/internal/spill"
)

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
