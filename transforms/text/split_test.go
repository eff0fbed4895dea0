package text_test

import (
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/parastream/parastream/transforms/text"
)

func TestAssignSplitIsStableAndProportional(t *testing.T) {
	r := text.SplitRatios{Train: 0.8, Dev: 0.1, Test: 0.1}
	counts := map[string]int{}
	for i := 0; i < 100000; i++ {
		g := fmt.Sprintf("t3_1afw%04x", i) // ids with a long common prefix, as Reddit's

		s := text.AssignSplit(g, 7, r)
		if s != text.AssignSplit(g, 7, r) {
			t.Fatal("not stable")
		}
		counts[s]++
	}
	for split, want := range map[string]float64{"train": 0.8, "dev": 0.1, "test": 0.1} {
		if got := float64(counts[split]) / 100000; got < want-0.01 || got > want+0.01 {
			t.Errorf("%s share %.3f, want %.2f", split, got, want)
		}
	}
	if _, err := text.ParseSplitRatios("0.9,0.05,0.04"); err == nil {
		t.Error("ratios summing to 0.99 accepted")
	}
}

// TestHash64IsSeededFNV checks Hash64, written out to allocate nothing,
// against its definition on hash/fnv (SeededFNV, then Mix64): the splits,
// buckets and budget cells of earlier outputs depend on its values.
func TestHash64IsSeededFNV(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for i := range 2000 {
		key := make([]byte, rng.IntN(40))
		for j := range key {
			key[j] = byte(rng.Uint32())
		}
		seed := rng.Uint64()
		if i%3 == 0 {
			seed = uint64(i)
		}
		h := text.SeededFNV(seed)
		h.Write(key)
		want := text.Mix64(h.Sum64())
		if got := text.Hash64(seed, string(key)); got != want {
			t.Fatalf("Hash64(%d, %q) = %x, want %x", seed, key, got, want)
		}
		if got := text.Hash64Bytes(seed, key); got != want {
			t.Fatalf("Hash64Bytes(%d, %q) = %x, want %x", seed, key, got, want)
		}
	}
	key := "t3_1afw0001\x00a reply"
	if n := testing.AllocsPerRun(100, func() { text.Hash64(7, key) }); n != 0 {
		t.Errorf("Hash64 allocates %v times a key, want 0", n)
	}
}
