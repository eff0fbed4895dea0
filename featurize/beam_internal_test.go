package featurize

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"
)

// The sample of least priorities is the same however the texts are split
// into shards and merged, and a text seen in two shards counts once.
func TestSampleMergeIndependentOfSharding(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	var texts [][]string
	for i := range 500 {
		texts = append(texts, []string{fmt.Sprintf("w%d", rng.IntN(300)), fmt.Sprintf("v%d", i%250)})
	}
	const n = 40
	one := newSampler(n)
	for _, tx := range texts {
		one.offer(textPriority(7, tx), tx)
	}
	want := one.sorted()
	if len(want) != n {
		t.Fatalf("sample of %d, want %d", len(want), n)
	}
	for _, parts := range []int{2, 3, 7} {
		fn := &mergeCountsFn{SampleSize: n}
		var acc Counts
		for p := range parts {
			s := newSampler(n)
			for i, tx := range texts {
				// Every text goes to its own part, and some to the next too.
				if i%parts == p || (i%5 == 0 && (i+1)%parts == p) {
					s.offer(textPriority(7, tx), tx)
				}
			}
			acc = fn.MergeAccumulators(acc, Counts{Sample: s.sorted()})
		}
		if !slices.EqualFunc(acc.Sample, want, func(a, b SampledText) bool { return a.Priority == b.Priority && slices.Equal(a.Tokens, b.Tokens) }) {
			t.Errorf("%d parts: the merged sample differs from the one-pass sample", parts)
		}
	}
}

func TestMergeCountsAddsTokens(t *testing.T) {
	fn := &mergeCountsFn{SampleSize: 10}
	a := Counts{Tokens: []string{"a", "c"}, Count: []int64{1, 2}, Docs: []int64{1, 1}, Texts: 2}
	b := Counts{Tokens: []string{"b", "c", "d"}, Count: []int64{4, 5, 6}, Docs: []int64{1, 2, 3}, Texts: 5}
	got := fn.MergeAccumulators(a, b)
	if !slices.Equal(got.Tokens, []string{"a", "b", "c", "d"}) || !slices.Equal(got.Count, []int64{1, 4, 7, 6}) ||
		!slices.Equal(got.Docs, []int64{1, 1, 3, 3}) || got.Texts != 7 {
		t.Fatalf("merged %+v", got)
	}
	if again := fn.MergeAccumulators(b, a); !slices.Equal(again.Count, got.Count) {
		t.Error("merging is not symmetric")
	}
}
