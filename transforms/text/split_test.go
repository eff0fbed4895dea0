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

func TestOfficialSplit(t *testing.T) {
	for _, c := range []struct{ corpus, dataset, want string }{
		{"sts", "2014/deft-forum", "test"}, {"sts", "2012-train/MSRpar", "train"},
		{"stsb", "stsb/dev", "dev"}, {"sick", "sick/trial", "trial"}, {"sick", "sick/train", "train"},
		{"snli", "snli/dev", "dev"}, {"snli", "snli/train", "train"}, {"snli", "multinli/dev_matched", "dev"}, {"snli", "snli/test", "test"},
		{"msrp", "msrp/train", "train"}, {"msrp", "msrp/test", "test"}, {"sst", "sst/dev", "dev"}, {"sst", "sst/train", "train"},
		{"mr", "mr", "test"}, {"scws", "scws", "test"}, {"semeval-cqa", "semeval-cqa/train-part2", "train"}, {"semeval-cqa", "semeval-cqa/dev", "dev"},
		{"trecqa", "trecqa/train", "train"}, {"trecqa", "trecqa/raw-dev", "dev"}, {"trecqa", "trecqa/clean-dev", "dev"}, {"trecqa", "trecqa/clean-test", "test"},
		{"wikiqa", "wikiqa/train", "train"}, {"wikiqa", "wikiqa/dev", "dev"},
	} {
		if got, ok := text.OfficialSplit(c.corpus, c.dataset); !ok || got != c.want {
			t.Errorf("%s %s: %q", c.corpus, c.dataset, got)
		}
	}
	if _, ok := text.OfficialSplit("quora", "quora"); ok {
		t.Error("quora has an official split?")
	}
}
