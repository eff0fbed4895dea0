package corpora_test

import (
	"fmt"
	"slices"
	"testing"

	"github.com/parastream/parastream/corpora"
)

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
		if got, ok := corpora.Evaluation(c.corpus).OfficialSplit(c.dataset); !ok || got != c.want {
			t.Errorf("%s %s: %q", c.corpus, c.dataset, got)
		}
	}
	if _, ok := corpora.Evaluation("quora").OfficialSplit("quora"); ok {
		t.Error("quora has an official split?")
	}
}

// TestSingleText checks which corpora's rows are single texts, the length
// rule's exception.
func TestSingleText(t *testing.T) {
	for corpus, want := range map[string]bool{"sst": true, "mr": true, "msrp": false, "reddit": false, "ppdb": false, "sts": false} {
		if got := corpora.Evaluation(corpus).SingleText; got != want {
			t.Errorf("%s: single text %v, want %v", corpus, got, want)
		}
	}
}

// TestEvalFormats checks the evaluation sets' entries agree among
// themselves: each names a known task, one format per corpus is its
// evaluation set (the one Evaluation finds), no two sets of a task share
// a place in the report, and a format that is no evaluation set says
// nothing about splits or single texts (it would be ignored).
func TestEvalFormats(t *testing.T) {
	byCorpus := map[string]string{}
	places := map[string]string{}
	for _, f := range corpora.Formats() {
		e := f.Eval
		if !e.Evaluated() {
			if e.Split != nil || e.SingleText || e.Order != 0 {
				t.Errorf("format %s has no evaluation task but an official split, single texts or an order", f.Name)
			}
			continue
		}
		if !slices.Contains(corpora.Tasks(), e.Task) {
			t.Errorf("format %s: unknown evaluation task %q (known: %v)", f.Name, e.Task, corpora.Tasks())
		}
		if other, dup := byCorpus[f.Corpus]; dup {
			t.Errorf("formats %s and %s are both the evaluation set of corpus %s", other, f.Name, f.Corpus)
		}
		byCorpus[f.Corpus] = f.Name
		place := fmt.Sprintf("%s/%d", e.Task, e.Order)
		if other, dup := places[place]; dup {
			t.Errorf("formats %s and %s share the report's place %s: give each its own Order", other, f.Name, place)
		}
		places[place] = f.Name
		if got := corpora.Evaluation(f.Corpus); got.Task != e.Task || got.Order != e.Order {
			t.Errorf("Evaluation(%q) = %+v, want format %s's", f.Corpus, got, f.Name)
		}
	}
	if corpora.Evaluation("ppdb").Evaluated() {
		t.Error("ppdb is an evaluation set?")
	}
}

// ExampleEvalFormats lists the evaluation sets in the order of the
// report, with their tasks: adding one changes this output.
func ExampleEvalFormats() {
	for _, f := range corpora.EvalFormats() {
		_, official := f.Eval.OfficialSplit(f.Corpus)
		fmt.Printf("%-11s %-14s official split %-5v single text %v\n", f.Corpus, f.Eval.Task, official, f.Eval.SingleText)
	}
	// Output:
	// sts         similarity     official split true  single text false
	// stsb        similarity     official split true  single text false
	// sick        similarity     official split true  single text false
	// reddit      retrieval      official split false single text false
	// quora       retrieval      official split false single text false
	// sst         classification official split true  single text true
	// mr          classification official split true  single text true
	// msrp        classification official split true  single text false
	// snli        classification official split true  single text false
	// semeval-cqa ranking        official split true  single text false
	// trecqa      ranking        official split true  single text false
	// wikiqa      ranking        official split true  single text false
	// scws        word_context   official split true  single text false
}
