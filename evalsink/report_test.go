package evalsink_test

import (
	"bytes"
	"strconv"
	"strings"
	"testing"

	"github.com/parastream/parastream/evalsink"
)

// results turns similarity scores into one evaluation's rows.
func results(evalID, run string, step int64, scores []evalsink.Score) []evalsink.Result {
	var rows []evalsink.Result
	for _, s := range scores {
		p, sp := s.Pearson, s.Spearman
		rows = append(rows, evalsink.Result{EvalID: evalID, Run: run, Model: "avg", Step: step, Corpus: s.Corpus, Split: s.Split,
			Dataset: s.Dataset, Year: s.Year, Kind: s.Kind, Pairs: s.Pairs, Pearson: &p, Spearman: &sp, Scale: evalsink.ScaleCosine})
	}
	return rows
}

// scored is a similarity set of n pairs with predictions that follow the
// gold scores.
func scored(corpus, split, dataset, year string, n int) *evalsink.Scored {
	sc := &evalsink.Scored{Set: &evalsink.Set{Corpus: corpus, Split: split, Dataset: dataset, Year: year, Task: evalsink.TaskSimilarity}}
	for i := range n {
		g := float64(i % 6)
		sc.Gold, sc.Pred, sc.Cos = append(sc.Gold, g), append(sc.Pred, g/5+float64(i%3)/10), append(sc.Cos, g/5)
	}
	return sc
}

// TestReportNamesWhatItMeasured: a report over two sets names them in the
// average's label, shows each line's n, marks the set under 100 pairs as
// too small to compare, and gives the retrieval pool and chance.
func TestReportNamesWhatItMeasured(t *testing.T) {
	scores := evalsink.SimilarityScores([]*evalsink.Scored{
		scored("sts", "test", "2012/MSRpar", "2012", 750),
		scored("sick", "test", "sick/test", "", 40),
	})
	rows := results("e1", "run-a", 20, scores)
	f := func(v float64) *float64 { return &v }
	rows = append(rows,
		evalsink.Result{EvalID: "e1", Run: "run-a", Step: 20, Corpus: "quora", Split: "test", Dataset: "quora/test", Kind: evalsink.KindRetrieval,
			Pairs: 165, Candidates: 100, PAt1: f(12.5), PAt3: f(20), PAt10: f(40), MRR: f(21)},
		evalsink.Result{EvalID: "e1", Run: "run-a", Step: 20, Corpus: "quora", Split: "test", Dataset: "quora/test", Kind: evalsink.KindRetrievalChance,
			Pairs: 165, Candidates: 100, PAt1: f(1), PAt3: f(3), PAt10: f(10), MRR: f(5.2)})
	// A set without a true pair ranks nothing and has no pool.
	rows = append(rows, evalsink.Result{EvalID: "e1", Run: "run-a", Step: 20, Corpus: "reddit", Split: "test", Dataset: "reddit/test",
		Kind: evalsink.KindRetrieval, PAt1: f(0), PAt3: f(0), PAt10: f(0), MRR: f(0)})
	var b bytes.Buffer
	if err := evalsink.WriteReport(&b, rows); err != nil {
		t.Fatal(err)
	}
	report := b.String()
	t.Logf("report:\n%s", report)
	for _, want := range []string{
		"| Dataset | n | run-a (avg, step 20) |",
		"| 2012 MSRpar | 750 |",
		"| SICK test | 40 † |",
		"| **Average of 2 sets**: STS 2012 MSRpar; SICK test | 790 |",
		"| **STS 2012 mean** | 750 |",
		"| quora/test, pool of 100 (the true response, 99 others) P@1 | 165 | 12.5 |",
		"| quora/test chance (the same pools in random order) MRR | 165 | 5.2 |",
		"† fewer than 100 pairs",
		"| reddit/test (no true pair to rank) P@1 | 0 † | 0.0 |",
	} {
		if !strings.Contains(report, want) {
			t.Errorf("report lacks %q", want)
		}
	}
	if strings.Contains(report, "2012–2015, SICK test sets") {
		t.Error("the average is still labelled with sets it did not average")
	}
}

// TestReportShowsIntervals: a figure with a bootstrap interval shows it
// in parentheses ("to" where a bound is negative), one without shows the
// figure alone, and a footnote says what the interval is.
func TestReportShowsIntervals(t *testing.T) {
	rows := results("e1", "run-a", 20, evalsink.SimilarityScores([]*evalsink.Scored{scored("stsb", "dev", "stsb/dev", "", 750)}))
	for i := range rows {
		rows[i].CILow = map[string]float64{"pearson": 55.14, "spearman": -3.21}
		rows[i].CIHigh = map[string]float64{"pearson": 59.56, "spearman": 1.5}
	}
	var b bytes.Buffer
	if err := evalsink.WriteReport(&b, rows); err != nil {
		t.Fatal(err)
	}
	report := b.String()
	p, s := *rows[0].Pearson, *rows[0].Spearman
	for _, want := range []string{
		"| STS Benchmark dev | 750 | " + strconv.FormatFloat(p, 'f', 1, 64) + " (55.1–59.6) |",
		"| STS Benchmark dev | 750 | " + strconv.FormatFloat(s, 'f', 1, 64) + " (-3.2 to 1.5) |",
		"In parentheses, a figure's 95% interval: a seeded percentile bootstrap",
	} {
		if !strings.Contains(report, want) {
			t.Errorf("report lacks %q:\n%s", want, report)
		}
	}
	rows[0].CILow, rows[0].CIHigh = nil, nil
	b.Reset()
	if err := evalsink.WriteReport(&b, rows[:1]); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(b.String(), "| STS Benchmark dev | 750 | "+strconv.FormatFloat(p, 'f', 1, 64)+" |") || strings.Contains(b.String(), "95% interval") {
		t.Errorf("a report without intervals shows some:\n%s", b.String())
	}
}

// TestReportFooterSaysWhatApplies: the note under the tables of a report
// without retrieval rows or STS years says nothing of retrieval, chance
// lines or a year's mean; one with them does.
func TestReportFooterSaysWhatApplies(t *testing.T) {
	f := func(v float64) *float64 { return &v }
	only := []evalsink.Result{{EvalID: "e1", Run: "run-a", Step: 20, Corpus: "quora", Split: "test", Dataset: "quora/test", Kind: evalsink.KindRetrieval,
		Pairs: 165, Candidates: 100, PAt1: f(12.5), PAt3: f(20), PAt10: f(40), MRR: f(21)}}
	sts := results("e1", "run-a", 20, evalsink.SimilarityScores([]*evalsink.Scored{scored("sts", "test", "2012/MSRpar", "2012", 750)}))
	for _, c := range []struct {
		name      string
		rows      []evalsink.Result
		want, not []string
	}{
		{"retrieval alone", only, []string{"Retrieval ranks"}, []string{"A year's mean", "Similarity is the cosine"}},
		{"STS alone", sts, []string{"A year's mean", "Similarity is the cosine"}, []string{"Retrieval ranks", "retrieval and rankings"}},
	} {
		var b bytes.Buffer
		if err := evalsink.WriteReport(&b, c.rows); err != nil {
			t.Fatal(err)
		}
		for _, w := range c.want {
			if !strings.Contains(b.String(), w) {
				t.Errorf("%s: report lacks %q", c.name, w)
			}
		}
		for _, n := range c.not {
			if strings.Contains(b.String(), n) {
				t.Errorf("%s: report says %q, which does not apply", c.name, n)
			}
		}
	}
}
