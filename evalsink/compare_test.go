package evalsink_test

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/parastream/parastream/evalsink"
	"github.com/parastream/parastream/evalsink/metric"
	"github.com/parastream/parastream/trainstep"
)

func TestParseFigureRef(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want evalsink.FigureRef
		err  string
	}{
		{"stsb/dev:pearson", evalsink.FigureRef{Dataset: "stsb/dev", Column: "pearson"}, ""},
		{"all:average:pearson", evalsink.FigureRef{Dataset: "all", Kind: "average", Column: "pearson"}, ""},
		{"quora/test:ranking:map", evalsink.FigureRef{Dataset: "quora/test", Kind: "ranking", Column: "map"}, ""},
		{"stsb/dev", evalsink.FigureRef{}, "DATASET:COLUMN"},
		{"stsb/dev:r", evalsink.FigureRef{}, `column "r" is none of pearson`},
		{"all:avg:pearson", evalsink.FigureRef{}, `kind "avg" is none of`},
		{":pearson", evalsink.FigureRef{}, "names no dataset"},
	} {
		got, err := evalsink.ParseFigureRef(tc.in)
		if tc.err != "" {
			if err == nil || !strings.Contains(err.Error(), tc.err) {
				t.Errorf("%q: error %v, want one saying %q", tc.in, err, tc.err)
			}
			continue
		}
		if err != nil || got != tc.want || got.String() != tc.in {
			t.Errorf("%q: %+v (%q), %v", tc.in, got, got.String(), err)
		}
	}
}

// TestCompareCheckpointWithItself: a checkpoint compared with itself, on
// the repository's fixtures: every figure within noise, difference 0 and
// its interval [0, 0]; recorded once; RunCompare prints the table and the
// summary and writes the Markdown beside the part.
func TestCompareCheckpointWithItself(t *testing.T) {
	eval := fixtureSetsDir(t)
	vocab := vocabulary(loadSets(t, eval), 0)
	out := t.TempDir()
	ck := checkpoint(t, filepath.Join(t.TempDir(), "run-a"), "step-1", vocab, 1)
	sum, err := evaluator(t, eval, out, "").Evaluate(context.Background(), evalsink.Target{Dir: ck})
	if err != nil {
		t.Fatal(err)
	}
	c, err := evalsink.CompareEvaluations(out, sum.EvalID, sum.EvalID, evalsink.CompareOptions{Bootstrap: metric.Bootstrap{Seed: 1}})
	if err != nil {
		t.Fatal(err)
	}
	if len(c.Rows) < 10 {
		t.Fatalf("%d figures compared", len(c.Rows))
	}
	for _, r := range c.Rows {
		if r.Verdict != metric.VerdictNoise || r.Diff != 0 || r.CILow != 0 || r.CIHigh != 0 || r.A != r.B || r.Items < 2 {
			t.Errorf("%s %s %s: %+v", r.Dataset, r.Kind, r.Column, r)
		}
	}
	if h := c.Headline(); h == nil || h.Dataset != "all" || h.Kind != evalsink.KindAverage || h.Column != "pearson" {
		t.Errorf("headline %+v, want the average's Pearson", h)
	}
	if better, worse, noise := c.Counts(); better != 0 || worse != 0 || noise != len(c.Rows) {
		t.Errorf("counts %d %d %d", better, worse, noise)
	}
	for i, want := range []bool{true, false} {
		if added, err := evalsink.RecordComparison(out, c); err != nil || added != want {
			t.Errorf("recording #%d: added %v, %v", i+1, added, err)
		}
	}
	if rows, err := evalsink.ReadComparisons(out); err != nil || len(rows) != len(c.Rows) {
		t.Errorf("comparisons table: %d rows, %v; want %d", len(rows), err, len(c.Rows))
	}

	// The command's library: by checkpoint, then by eval_id prefix.
	var b bytes.Buffer
	cc := evalsink.CompareConfig{Config: evalsink.Config{Eval: eval, Out: out, Logger: testLogger(t)}, A: ck, B: sum.EvalID[:8]}
	res, err := evalsink.RunCompare(context.Background(), cc, &b)
	if err != nil {
		t.Fatal(err)
	}
	printed := b.String()
	for _, want := range []string{"| Set | kind | figure | A | B | B − A | 95% interval of B − A | verdict | items |",
		"| **Average of the STS 2012–2015 and SICK test sets** (headline) | average | Pearson's r |", "| +0.0 | +0.0 to +0.0 | within noise |",
		"B better on 0 figures, worse on 0, within noise on ", "about 1 in 20"} {
		if !strings.Contains(printed, want) {
			t.Errorf("RunCompare printed no %q:\n%s", want, printed)
		}
	}
	// The comparison recorded above: the same evaluations, seed and
	// headline.
	if res.Added || res.EvalA != sum.EvalID || res.EvalB != sum.EvalID || res.Comparison.ID != c.ID {
		t.Errorf("RunCompare: %+v", res)
	}
	for _, p := range []string{res.Markdown, res.Part} {
		if _, err := os.Stat(p); err != nil {
			t.Error(err)
		}
	}
	cc.A, cc.Seed = sum.EvalID, 2 // another bootstrap: another comparison
	if res, err := evalsink.RunCompare(context.Background(), cc, &b); err != nil || !res.Added {
		t.Fatalf("with seed 2: %v", err)
	}
	if parts, _ := filepath.Glob(filepath.Join(out, evalsink.ComparisonsDir, "part-*")); len(parts) != 2 {
		t.Errorf("comparison parts after comparing twice: %v", parts)
	}
	for _, tc := range []struct{ ref, want string }{
		{"ffffffff", "no checkpoint directory ffffffff, nor an evaluation"},
		{t.TempDir(), "is a directory but no checkpoint"},
		{"", "give a checkpoint directory or an eval_id"},
	} {
		cc.B = tc.ref
		if _, err := evalsink.RunCompare(context.Background(), cc, &b); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("B %q: %v, want %q", tc.ref, err, tc.want)
		}
	}
}

// trainedCheckpoint trains the model of checkpoint(dir, name, vocab, seed)
// with the margin loss on the STS Benchmark train pairs scored 4 or more
// (paraphrases; 1,406 of its 5,749 pairs), for steps batches of 100, and
// saves it.
func trainedCheckpoint(t *testing.T, sets *evalsink.Sets, dir, name string, vocab []string, seed uint64, steps int) string {
	t.Helper()
	ids := map[string]int32{}
	for i, w := range vocab {
		ids[w] = int32(i)
	}
	toIDs := func(ws []string) []int32 {
		var out []int32
		for _, w := range ws {
			if id, ok := ids[w]; ok {
				out = append(out, id)
			}
		}
		return out
	}
	var pairs []trainstep.Pair
	for _, s := range sets.Sets {
		if s.Dataset != "stsb/train" {
			continue
		}
		for _, p := range s.Pairs {
			if a, b := toIDs(p.A), toIDs(p.B); p.Gold >= 4 && len(a) > 0 && len(b) > 0 {
				pairs = append(pairs, trainstep.Pair{A: a, B: b})
			}
		}
	}
	if len(pairs) < 1000 {
		t.Fatalf("%d training pairs from stsb/train", len(pairs))
	}
	tr, err := trainstep.New(trainstep.Config{Encoder: "avg", Dim: 24, BatchSize: 100, Seed: seed}, trainstep.Options{Vocab: vocab})
	if err != nil {
		t.Fatal(err)
	}
	defer tr.Close()
	for s := range steps {
		start := s * 100 % (len(pairs) - 100)
		if _, err := tr.Step(pairs[start : start+100]); err != nil {
			t.Fatal(err)
		}
	}
	out := filepath.Join(dir, name)
	if err := tr.Save(out, nil); err != nil {
		t.Fatal(err)
	}
	return out
}

// TestCompareUntrainedAndTrained: the same model before and after 150
// steps on STS Benchmark train's paraphrases (../shared): eval compare
// flags the trained one better on the headline (the average of the STS
// 2012-2015 sets) and on STS Benchmark dev, a set it did not train on,
// and the report shows each figure's interval.
func TestCompareUntrainedAndTrained(t *testing.T) {
	if testing.Short() {
		t.Skip("trains a model and evaluates it twice on the shared data (about 15 s)")
	}
	eval := sharedSets(t)
	sets := loadSets(t, eval)
	vocab := vocabulary(sets, 0)
	runs, out := t.TempDir(), t.TempDir()
	untrained := checkpoint(t, filepath.Join(runs, "run-a"), "step-0", vocab, 1)
	trained := trainedCheckpoint(t, sets, filepath.Join(runs, "run-a"), "step-150", vocab, 1, 150)
	var b bytes.Buffer
	res, err := evalsink.RunCompare(context.Background(), evalsink.CompareConfig{
		Config: evalsink.Config{Eval: eval, Out: out, Logger: testLogger(t)}, A: untrained, B: trained}, &b)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("%s", b.String())
	c := res.Comparison
	h := c.Headline()
	if h == nil || h.Dataset != "all" || h.Verdict != metric.VerdictBetter || h.CILow <= 0 {
		t.Errorf("headline: %+v", h)
	}
	for _, r := range c.Rows {
		if r.Dataset == "stsb/dev" && r.Verdict != metric.VerdictBetter {
			t.Errorf("STS Benchmark dev %s: %+v", r.Column, r)
		}
	}
	if better, _, _ := c.Counts(); better < len(c.Rows)/2 {
		t.Errorf("better on %d of %d figures:\n%s", better, len(c.Rows), b.String())
	}
	report, err := os.ReadFile(filepath.Join(out, evalsink.ReportName))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(report), "In parentheses, a figure's 95% interval") || !strings.Contains(string(report), "| STS Benchmark dev | 1500 | ") {
		t.Errorf("report:\n%s", report)
	}
}

// TestWatchComparesWithTheRunsBest: after each evaluation the watcher's
// CompareWithBest compares it with the best evaluation of its run before
// it made alike, records the comparison once (a new evaluator, as after a
// restart, adds none), and the report shows the run's latest.
func TestWatchComparesWithTheRunsBest(t *testing.T) {
	eval := fixtureSetsDir(t)
	vocab := vocabulary(loadSets(t, eval), 0)
	runs, out := t.TempDir(), t.TempDir()
	ctx := context.Background()
	ck := func(name string, seed uint64) string {
		return checkpoint(t, filepath.Join(runs, "run-w"), name, vocab, seed)
	}
	evalAndCompare := func(ev *evalsink.Evaluator, dir string) (*evalsink.Summary, *evalsink.CheckpointComparison, bool) {
		t.Helper()
		sum, err := ev.Evaluate(ctx, evalsink.Target{Dir: dir})
		if err != nil {
			t.Fatal(err)
		}
		c, added, err := ev.CompareWithBest(ctx, sum)
		if err != nil {
			t.Fatal(err)
		}
		return sum, c, added
	}
	ev := evaluator(t, eval, out, "")
	first, c, _ := evalAndCompare(ev, ck("s1", 1))
	if c != nil {
		t.Fatalf("the run's first evaluation compared with %s", c.Rows[0].EvalA)
	}
	second, c, added := evalAndCompare(ev, ck("s2", 2))
	if c == nil || !added || c.Rows[0].EvalA != first.EvalID || c.Rows[0].EvalB != second.EvalID || c.Rows[0].Origin != evalsink.OriginWatch {
		t.Fatalf("second evaluation: added %v, %+v", added, c)
	}
	// Restarted: the same evaluation again adds no comparison.
	_, again, added := evalAndCompare(evaluator(t, eval, out, ""), filepath.Join(runs, "run-w", "s2"))
	if again == nil || added || again.ID != c.ID {
		t.Errorf("evaluated again: added %v, comparison %v (first %s)", added, again, c.ID)
	}
	// The third is compared with the better of the two.
	third, c3, _ := evalAndCompare(ev, ck("s3", 3))
	best := first
	if h := c.Headline(); h.B >= h.A {
		best = second
	}
	if c3 == nil || c3.Rows[0].EvalA != best.EvalID {
		t.Errorf("third compared with %v, want %s", c3, best.EvalID)
	}
	// Evaluated otherwise (angular): nothing made alike before it.
	angular, err := evalsink.NewEvaluator(ctx, evalsink.Config{Eval: eval, Out: out, Scale: evalsink.ScaleAngular, Logger: testLogger(t)})
	if err != nil {
		t.Fatal(err)
	}
	defer angular.Close()
	if _, c, _ := evalAndCompare(angular, filepath.Join(runs, "run-w", "s3")); c != nil {
		t.Errorf("an angular evaluation compared with %s", c.Rows[0].EvalA)
	}
	rows, err := evalsink.ReadComparisons(out)
	if err != nil {
		t.Fatal(err)
	}
	ids := map[string]bool{}
	for _, r := range rows {
		ids[r.ComparisonID] = true
	}
	if len(ids) != 2 {
		t.Errorf("%d comparisons recorded, want 2", len(ids))
	}
	report, err := os.ReadFile(filepath.Join(out, evalsink.ReportName))
	if err != nil {
		t.Fatal(err)
	}
	want := "| run-w | step 0 (eval " + third.EvalID[:8] + ") | step 0 (eval " + best.EvalID[:8] + ") | Average of the STS 2012–2015 and SICK test sets Pearson's r |"
	if !strings.Contains(string(report), "## Each run's latest checkpoint against the run's best before it") || !strings.Contains(string(report), want) {
		t.Errorf("report lacks %q:\n%s", want, report)
	}
}
