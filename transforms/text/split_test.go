package text_test

import (
	"fmt"
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
