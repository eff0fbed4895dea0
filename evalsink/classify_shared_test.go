package evalsink_test

import (
	"context"
	"fmt"
	"log/slog"
	"path/filepath"
	"testing"
	"time"

	"github.com/parastream/parastream/evalsink"
	"github.com/parastream/parastream/evalsink/internal/evaltest"
	"github.com/parastream/parastream/internal/testenv"
)

// classifySets are ../shared's classification sets, extracted once.
var classifySets evaltest.Extracted

// sharedClassificationSets extracts ../shared's SST-2, MR, MRPC, SICK and
// SNLI, or skips.
func sharedClassificationSets(t *testing.T) string {
	t.Helper()
	eval := testenv.SharedData(t, "eval")
	msrp := testenv.SharedData(t, "corpora/msrp/msr_paraphrase_train.txt")
	return classifySets.Get(t, [][2]string{
		{"sst", filepath.Join(eval, "sst", "sentiment-*")},
		{"mr", filepath.Join(eval, "mr", "rt-polarity.*")},
		{"msrp", msrp},
		{"sick", filepath.Join(eval, "sick", "SICK_*.txt")},
		{"snli", filepath.Join(eval, "snli", "snli_1.0_*.jsonl.gz")},
	})
}

// TestClassificationOnSharedSets evaluates an untrained 24-dimensional
// avg model (random word vectors: a sentence's mean still says which
// words it has) on the real sets of ../shared: each task gives its
// classification row with the items its protocol scores (SST-2 dev 872,
// MR 10,662, MRPC train 4,076, SICK trial 500, SNLI dev 9,842), a
// bootstrap interval around its accuracy (and F1), and, on MR, SICK and
// SNLI, an accuracy whose interval lies above the majority class's share
// (measured: 55.7, 66.8, 41.4 against 50.0, 56.4, 33.8; on SST-2 dev and
// MRPC the untrained model is within noise of the majority: 52.8 against
// 50.9, 68.4 against 67.5, logged).
func TestClassificationOnSharedSets(t *testing.T) {
	if testing.Short() {
		t.Skip("the classification tasks on ../shared take 15 to 40 s here; make test-long runs them")
	}
	eval := sharedClassificationSets(t)
	sets := loadSets(t, eval)
	dir := checkpoint(t, t.TempDir(), "ck", vocabulary(sets, 0), 7)
	log := slog.New(slog.NewTextHandler(evaltest.Writer{T: t}, &slog.HandlerOptions{Level: slog.LevelInfo}))
	out := t.TempDir()
	ev, err := evalsink.NewEvaluator(context.Background(), evalsink.Config{Eval: eval, Out: out, Logger: log})
	if err != nil {
		t.Fatal(err)
	}
	defer ev.Close()
	start := time.Now()
	sum, err := ev.Evaluate(context.Background(), evalsink.Target{Dir: dir})
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("evaluated in %v", time.Since(start).Round(time.Millisecond))
	want := map[string]struct {
		n        int64
		binary   bool
		majority bool // the interval lies above the majority class's share
	}{
		"sst/dev": {872, true, false}, "mr": {10662, true, true}, "msrp/train": {4076, true, false},
		"sick/trial": {500, false, true}, "snli/dev": {9842, false, true},
	}
	got := map[string]bool{}
	for _, r := range sum.Rows {
		if r.Kind != evalsink.KindClassification {
			continue
		}
		w, ok := want[r.Dataset]
		if !ok || got[r.Dataset] {
			t.Errorf("unexpected classification row %s %s", r.Corpus, r.Dataset)
			continue
		}
		got[r.Dataset] = true
		if r.Pairs != w.n || r.Accuracy == nil || (r.F1 != nil) != w.binary {
			t.Errorf("%s: n %d (want %d), accuracy %v, F1 %v", r.Dataset, r.Pairs, w.n, r.Accuracy, r.F1)
			continue
		}
		lo, hi := r.CILow["accuracy"], r.CIHigh["accuracy"]
		if !(lo < *r.Accuracy && *r.Accuracy < hi) || hi-lo > 10 {
			t.Errorf("%s: accuracy %.2f, interval [%.2f, %.2f]", r.Dataset, *r.Accuracy, lo, hi)
		}
		if w.binary && !(r.CILow["f1"] <= *r.F1 && *r.F1 <= r.CIHigh["f1"]) {
			t.Errorf("%s: F1 %.2f, interval [%.2f, %.2f]", r.Dataset, *r.F1, r.CILow["f1"], r.CIHigh["f1"])
		}
		maj := majorityShare(t, sets, r.Dataset)
		if w.majority && lo <= maj {
			t.Errorf("%s: accuracy %.2f [%.2f, %.2f], not above the majority class's %.2f", r.Dataset, *r.Accuracy, lo, hi, maj)
		}
		f1 := ""
		if r.F1 != nil {
			f1 = fmt.Sprintf(", F1 %.2f [%.2f, %.2f]", *r.F1, r.CILow["f1"], r.CIHigh["f1"])
		}
		t.Logf("%s: n %d, accuracy %.2f [%.2f, %.2f]%s; majority class %.2f", r.Dataset, r.Pairs, *r.Accuracy, lo, hi, f1, maj)
	}
	for name := range want {
		if !got[name] {
			t.Errorf("no classification row for %s", name)
		}
	}
}

// majorityShare is the share (×100) of the most frequent class among the
// labelled pairs of the named set.
func majorityShare(t *testing.T, sets *evalsink.Sets, dataset string) float64 {
	t.Helper()
	counts := map[string]int{}
	n := 0
	for _, s := range sets.Sets {
		if s.Dataset != dataset {
			continue
		}
		for _, p := range s.Pairs {
			label := fmt.Sprint(p.Gold)
			if s.Corpus == "sick" {
				label = p.Meta["entailment"]
			}
			counts[label]++
			n++
		}
	}
	most := 0
	for _, c := range counts {
		most = max(most, c)
	}
	if n == 0 {
		t.Fatalf("no set %s", dataset)
	}
	return 100 * float64(most) / float64(n)
}
