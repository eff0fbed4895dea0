package evalsink_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/parastream/parastream/evalsink"
	"github.com/parastream/parastream/evalsink/metric"
)

// synthetic builds classification sets whose labels a bag-of-words model
// (fakeModel: a text's embedding counts its words) can learn, with a tenth
// of the labels flipped so that no classifier is perfect.
type synthetic struct {
	rng   *rand.Rand
	vocab []string
	next  int
}

func newSynthetic(seed uint64) *synthetic {
	s := &synthetic{rng: rand.New(rand.NewPCG(seed, 23)), vocab: []string{"pos", "neg", "not"}}
	for i := range 20 {
		s.vocab = append(s.vocab, fmt.Sprintf("k%d", i), fmt.Sprintf("n%d", i))
	}
	return s
}

func (s *synthetic) noise(n int) []string {
	var out []string
	for range n {
		out = append(out, fmt.Sprintf("n%d", s.rng.IntN(20)))
	}
	return out
}

func (s *synthetic) id(corpus string) string {
	s.next++
	return fmt.Sprintf("%s:%d", corpus, s.next)
}

// flip returns label, or with probability 0.1 another of classes.
func (s *synthetic) flip(label, classes int) int {
	if s.rng.Float64() < 0.1 {
		return (label + 1 + s.rng.IntN(classes-1)) % classes
	}
	return label
}

// sentiment is a single-text set: "pos" or "neg" among noise words.
func (s *synthetic) sentiment(corpus, split, dataset string, n int) *evalsink.Set {
	set := &evalsink.Set{Corpus: corpus, Split: split, Dataset: dataset, Task: evalsink.TaskClassification}
	for range n {
		label := s.rng.IntN(2)
		word := []string{"neg", "pos"}[label]
		set.Pairs = append(set.Pairs, evalsink.Pair{ID: s.id(corpus), A: append(s.noise(3), word), Gold: float64(s.flip(label, 2))})
	}
	return set
}

// pairs is a pair set: a paraphrase (1) shares its key word, a
// non-paraphrase (0) has another; with three classes entailment (0) shares
// the key, contradiction (2) shares it and adds "not", neutral (1) has
// another key. SICK's labels are in Meta["entailment"].
func (s *synthetic) pairs(corpus, split, dataset string, n, classes int) *evalsink.Set {
	set := &evalsink.Set{Corpus: corpus, Split: split, Dataset: dataset, Task: evalsink.TaskClassification}
	for range n {
		k := s.rng.IntN(20)
		label := s.rng.IntN(classes)
		a, b := append(s.noise(2), fmt.Sprintf("k%d", k)), s.noise(2)
		switch {
		case classes == 2 && label == 1, classes == 3 && label == 0:
			b = append(b, fmt.Sprintf("k%d", k))
		case classes == 3 && label == 2:
			b = append(b, fmt.Sprintf("k%d", k), "not")
		default:
			b = append(b, fmt.Sprintf("k%d", (k+1+s.rng.IntN(19))%20))
		}
		p := evalsink.Pair{ID: s.id(corpus), A: a, B: b, Gold: float64(s.flip(label, classes))}
		if corpus == "sick" {
			p.Meta = map[string]string{"entailment": []string{"ENTAILMENT", "NEUTRAL", "CONTRADICTION"}[int(p.Gold)]}
			p.Gold = 3.5 // the relatedness score
		}
		set.Pairs = append(set.Pairs, p)
	}
	return set
}

// syntheticSets returns every task's sets (and the test splits where
// withTest), and the embedder of the bag-of-words model.
func syntheticSets(t *testing.T, seed uint64, withTest bool) (*evalsink.Sets, *evalsink.Embedder) {
	t.Helper()
	s := newSynthetic(seed)
	sets := []*evalsink.Set{
		s.sentiment("sst", "train", "sst/train", 200),
		s.sentiment("sst", "dev", "sst/dev", 100),
		s.sentiment("mr", "test", "mr", 150),
		s.pairs("msrp", "train", "msrp/train", 150, 2),
		s.pairs("sick", "train", "sick/train", 200, 3),
		s.pairs("sick", "trial", "sick/trial", 100, 3),
		s.pairs("snli", "train", "snli/train", 200, 3),
		s.pairs("snli", "dev", "snli/dev", 100, 3),
	}
	if withTest {
		sets = append(sets,
			s.sentiment("sst", "test", "sst/test", 80),
			s.pairs("msrp", "test", "msrp/test", 80, 2),
			s.pairs("sick", "test", "sick/test", 80, 3),
			s.pairs("snli", "test", "snli/test", 80, 3))
	}
	emb, err := evalsink.NewEmbedder(fakeModel{dim: len(s.vocab)}, newLexicon(t, s.vocab, 0), len(s.vocab))
	if err != nil {
		t.Fatal(err)
	}
	return &evalsink.Sets{Sets: sets}, emb
}

// label is a synthetic pair's class.
func label(corpus string, p evalsink.Pair) float64 {
	if corpus == "sick" {
		return float64(slices.Index([]string{"ENTAILMENT", "NEUTRAL", "CONTRADICTION"}, p.Meta["entailment"]))
	}
	return p.Gold
}

// checkRows checks the classification rows against the sets they scored:
// the datasets expected, in order; n the set's pairs; the accuracy figure's
// items the pairs' IDs in order with a 0/1 Pred, its value the row's
// accuracy, at least minAcc; for two classes the F1 figure's items the
// predicted and gold labels, its value the row's F1; for three none.
func checkRows(t *testing.T, rows []evalsink.RowFigures, sets *evalsink.Sets, want []string, minAcc float64) {
	t.Helper()
	var got []string
	for _, rf := range rows {
		got = append(got, rf.Row.Dataset)
	}
	if !slices.Equal(got, want) {
		t.Fatalf("rows %v, want %v", got, want)
	}
	for _, rf := range rows {
		r := rf.Row
		var set *evalsink.Set
		for _, s := range sets.Sets {
			if s.Dataset == r.Dataset {
				set = s
			}
		}
		binary := r.Corpus == "sst" || r.Corpus == "mr" || r.Corpus == "msrp"
		if r.Kind != evalsink.KindClassification || r.Corpus != set.Corpus || r.Split != set.Split || r.Pairs != int64(len(set.Pairs)) {
			t.Errorf("%s: row %s %s %s n %d, set of %d pairs", r.Dataset, r.Corpus, r.Split, r.Kind, r.Pairs, len(set.Pairs))
		}
		if r.Accuracy == nil || *r.Accuracy < minAcc || *r.Accuracy > 100 {
			t.Errorf("%s: accuracy %v, want at least %v", r.Dataset, r.Accuracy, minAcc)
			continue
		}
		wantFigs := 1
		if binary {
			wantFigs = 2
		}
		if len(rf.Figures) != wantFigs || (r.F1 != nil) != binary {
			t.Fatalf("%s: %d figures, F1 %v", r.Dataset, len(rf.Figures), r.F1)
		}
		acc := rf.Figures[0]
		if acc.Column != "accuracy" || acc.Metric != metric.MetricMean || math.Abs(100*acc.Value()-*r.Accuracy) > 1e-9 {
			t.Errorf("%s: accuracy figure %s %s %v, row %v", r.Dataset, acc.Column, acc.Metric, 100*acc.Value(), *r.Accuracy)
		}
		for i, it := range acc.Items {
			if it.ID != set.Pairs[i].ID || it.Pred != 0 && it.Pred != 1 || it.Group != "" {
				t.Fatalf("%s: accuracy item %d: %+v, pair %s", r.Dataset, i, it, set.Pairs[i].ID)
			}
		}
		if !binary {
			continue
		}
		f1 := rf.Figures[1]
		if f1.Column != "f1" || f1.Metric != metric.MetricF1 || math.Abs(100*f1.Value()-*r.F1) > 1e-9 || len(f1.Items) != len(set.Pairs) {
			t.Errorf("%s: F1 figure %s %s %v over %d items, row %v", r.Dataset, f1.Column, f1.Metric, 100*f1.Value(), len(f1.Items), *r.F1)
		}
		for i, it := range f1.Items {
			if it.ID != set.Pairs[i].ID || it.Gold != label(r.Corpus, set.Pairs[i]) || (it.Pred == it.Gold) != (acc.Items[i].Pred == 1) {
				t.Fatalf("%s: F1 item %d: %+v, accuracy item %+v", r.Dataset, i, it, acc.Items[i])
			}
		}
	}
}

// TestClassificationProtocols runs the tasks on synthetic sets: without
// test splits, SST-2 dev, MR (cross-validated), MRPC train
// (cross-validated), SICK trial and SNLI dev; with them, SST-2 dev and
// test, MR, MRPC test, SICK test, SNLI dev and test. Each row is checked
// against its set (checkRows); the labels are learnt (accuracy at least
// 75 with a tenth of them flipped); the same seed gives the same rows.
func TestClassificationProtocols(t *testing.T) {
	for _, c := range []struct {
		withTest bool
		want     []string
	}{
		{false, []string{"sst/dev", "mr", "msrp/train", "sick/trial", "snli/dev"}},
		{true, []string{"sst/dev", "sst/test", "mr", "msrp/test", "sick/test", "snli/dev", "snli/test"}},
	} {
		t.Run(fmt.Sprintf("test splits %v", c.withTest), func(t *testing.T) {
			sets, emb := syntheticSets(t, 1, c.withTest)
			env := evalsink.TaskEnv{Emb: emb, Sets: sets, Seed: 3, Base: evalsink.Result{Run: "r"}, Log: testLogger(t)}
			rows, err := evalsink.Classification(context.Background(), env)
			if err != nil {
				t.Fatal(err)
			}
			checkRows(t, rows, sets, c.want, 75)
			for _, rf := range rows {
				f1 := ""
				if rf.Row.F1 != nil {
					f1 = fmt.Sprintf(", F1 %.1f", *rf.Row.F1)
				}
				t.Logf("%s: n %d, accuracy %.1f%s", rf.Row.Dataset, rf.Row.Pairs, *rf.Row.Accuracy, f1)
				if rf.Row.Run != "r" {
					t.Errorf("%s: the row does not start from Base", rf.Row.Dataset)
				}
			}
			again, err := evalsink.Classification(context.Background(), env)
			if err != nil {
				t.Fatal(err)
			}
			for i := range rows {
				if *again[i].Row.Accuracy != *rows[i].Row.Accuracy || !slices.Equal(again[i].Figures[0].Items, rows[i].Figures[0].Items) {
					t.Errorf("%s: a second run gives accuracy %v, the first %v", rows[i].Row.Dataset, *again[i].Row.Accuracy, *rows[i].Row.Accuracy)
				}
			}
		})
	}
}

// TestClassificationAbsentSets: sets a task lacks give no row and no
// error: no classification set at all; SST-2 train without dev; SNLI dev
// without train; SICK trial without train. A pair without a label is left
// out of its set's items.
func TestClassificationAbsentSets(t *testing.T) {
	all, emb := syntheticSets(t, 2, false)
	keep := func(names ...string) *evalsink.Sets {
		out := &evalsink.Sets{}
		for _, s := range all.Sets {
			if slices.Contains(names, s.Dataset) {
				out.Sets = append(out.Sets, s)
			}
		}
		return out
	}
	for _, sets := range []*evalsink.Sets{
		{Sets: []*evalsink.Set{{Corpus: "stsb", Split: "dev", Dataset: "stsb/dev", Task: evalsink.TaskSimilarity,
			Pairs: []evalsink.Pair{{ID: "1", A: []string{"pos"}, B: []string{"neg"}, Gold: 2}}}}},
		keep("sst/train", "snli/dev", "sick/trial"),
		nil,
	} {
		rows, err := evalsink.Classification(context.Background(), evalsink.TaskEnv{Emb: emb, Sets: sets, Seed: 1})
		if err != nil || len(rows) != 0 {
			t.Errorf("%d rows, error %v, want none", len(rows), err)
		}
	}
	sick := keep("sick/train", "sick/trial")
	trial := sick.Sets[1]
	trial.Pairs[0].Meta = nil
	trial.Pairs[1].Meta = map[string]string{"entailment": "maybe"}
	rows, err := evalsink.Classification(context.Background(), evalsink.TaskEnv{Emb: emb, Sets: sick, Seed: 1, Log: testLogger(t)})
	if err != nil {
		t.Fatal(err)
	}
	if len(rows) != 1 || rows[0].Row.Pairs != int64(len(trial.Pairs)-2) || len(rows[0].Figures[0].Items) != len(trial.Pairs)-2 {
		t.Fatalf("SICK trial with 2 unlabelled pairs of %d: %+v", len(trial.Pairs), rows)
	}
	if rows[0].Figures[0].Items[0].ID != trial.Pairs[2].ID {
		t.Errorf("first item %s, want the first labelled pair %s", rows[0].Figures[0].Items[0].ID, trial.Pairs[2].ID)
	}
}

// TestClassificationCancelled: a cancelled context stops the tasks with
// its error.
func TestClassificationCancelled(t *testing.T) {
	sets, emb := syntheticSets(t, 3, false)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := evalsink.Classification(ctx, evalsink.TaskEnv{Emb: emb, Sets: sets, Seed: 1}); !errors.Is(err, context.Canceled) {
		t.Errorf("error %v, want context.Canceled", err)
	}
}

// TestClassificationReportLines: the report names each classification
// line by its set and protocol, with accuracy and (binary tasks) F1 lines.
func TestClassificationReportLines(t *testing.T) {
	sets, emb := syntheticSets(t, 4, true)
	rows, err := evalsink.Classification(context.Background(), evalsink.TaskEnv{Emb: emb, Sets: sets, Seed: 1,
		Base: evalsink.Result{EvalID: "e1", Run: "run-a", Model: "avg", Step: 7}})
	if err != nil {
		t.Fatal(err)
	}
	var results []evalsink.Result
	for _, rf := range rows {
		results = append(results, rf.Row)
	}
	var b bytes.Buffer
	if err := evalsink.WriteReport(&b, results); err != nil {
		t.Fatal(err)
	}
	report := b.String()
	t.Logf("report:\n%s", report)
	for _, want := range []string{
		"| SST-2 dev (split: trained on train, C (2^-2..2^3) chosen on dev) accuracy | 100 |",
		"| SST-2 test (split: trained on train, C (2^-2..2^3) chosen on dev) F1 | 80 † |",
		"| MR, 10-fold cross-validation, each fold's C (2^-2..2^3) by an inner 10-fold cross-validation accuracy | 150 |",
		"| MRPC test (trained on train, C (2^-1..2^5) by 10-fold cross-validation on train) F1 | 80 † |",
		"| SICK entailment test (trained on train, C (2^-2..2^3) chosen on trial) accuracy | 80 † |",
		"| SNLI dev (trained on train, C (2^-1..2^5) by 10-fold cross-validation on train) accuracy | 100 |",
	} {
		if !strings.Contains(report, want) {
			t.Errorf("report lacks %q", want)
		}
	}
	// A 3-class task has no F1: no line of dashes for it.
	if strings.Contains(report, "| SNLI test (trained on train, C (2^-2..2^3) chosen on dev) F1") {
		t.Error("the report has an F1 line for SNLI, a 3-class task without one")
	}
}
