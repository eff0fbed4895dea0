package evalsink_test

import (
	"bytes"
	"context"
	"encoding/csv"
	"image/png"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/parastream/parastream/evalsink"
	"github.com/parastream/parastream/trainstep/compute"
)

// evaluator makes an evaluator of the sets under eval writing to out.
func evaluator(t *testing.T, eval, out, dsn string) *evalsink.Evaluator {
	t.Helper()
	ev, err := evalsink.NewEvaluator(context.Background(), evalsink.Config{Eval: eval, Out: out, SQLDSN: dsn, Logger: testLogger(t)})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ev.Close() })
	return ev
}

func csvRows(t *testing.T, out string) [][]string {
	t.Helper()
	f, err := os.Open(filepath.Join(out, evalsink.CSVName))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	recs, err := csv.NewReader(f).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	return recs[1:]
}

// TestEvaluateTwice evaluates two checkpoints of a run, then one of them
// again: the second time adds no part, no CSV row; the report has a column
// per run and the plots are PNGs.
func TestEvaluateTwice(t *testing.T) {
	eval := sharedSets(t)
	sets := loadSets(t, eval)
	vocab := vocabulary(sets, 0)
	runs := t.TempDir()
	out := t.TempDir()
	ev := evaluator(t, eval, out, "")
	ctx := context.Background()
	ck1 := checkpoint(t, filepath.Join(runs, "run-a"), "step-1", vocab, 1)
	ck2 := checkpoint(t, filepath.Join(runs, "run-b"), "step-1", vocab, 2)

	first, err := ev.Evaluate(ctx, evalsink.Target{Dir: ck1})
	if err != nil {
		t.Fatal(err)
	}
	if !first.Added || len(first.Rows) == 0 {
		t.Fatalf("first evaluation: added %v, %d rows", first.Added, len(first.Rows))
	}
	r := first.Rows[0]
	if r.Run != "run-a" || r.Model != "avg" || r.Checkpoint != ck1 || r.DataHash != sets.DataHash || len(r.ModelHash) != 64 {
		t.Errorf("first row: %+v", r)
	}
	kinds := map[string]int{}
	for _, r := range first.Rows {
		kinds[r.Kind]++
	}
	// STS 2012-2015 test sets and 2012-train: 5 of each aggregate;
	// retrieval on the Quora test split.
	if kinds[evalsink.KindMean] != 5 || kinds[evalsink.KindPooled] != 5 || kinds[evalsink.KindAverage] != 1 || kinds[evalsink.KindRetrieval] != 1 ||
		kinds[evalsink.KindRetrievalChance] != 1 {
		t.Errorf("kinds %v", kinds)
	}
	if _, err := ev.Evaluate(ctx, evalsink.Target{Dir: ck2, Run: "named-b", Model: "avg-random"}); err != nil {
		t.Fatal(err)
	}
	before := csvRows(t, out)
	again, err := ev.Evaluate(ctx, evalsink.Target{Dir: ck1})
	if err != nil {
		t.Fatal(err)
	}
	if again.Added || again.EvalID != first.EvalID || len(again.Rows) != len(first.Rows) {
		t.Errorf("second evaluation of the same checkpoint: added %v, id %s (first %s), %d rows", again.Added, again.EvalID, first.EvalID, len(again.Rows))
	}
	// A new evaluator (another process) finds it too.
	if s, err := evaluator(t, eval, out, "").Evaluate(ctx, evalsink.Target{Dir: ck1}); err != nil || s.Added {
		t.Errorf("evaluating again from a new evaluator: added %v, err %v", s != nil && s.Added, err)
	}
	after := csvRows(t, out)
	all, err := evalsink.ReadResults(out)
	if err != nil {
		t.Fatal(err)
	}
	if len(after) != len(before) || len(all) != 2*len(first.Rows) {
		t.Errorf("rows after evaluating again: CSV %d (before %d), Parquet %d, want %d", len(after), len(before), len(all), 2*len(first.Rows))
	}
	parts, _ := filepath.Glob(filepath.Join(out, evalsink.PartsDir, "*"))
	if len(parts) != 2 {
		t.Errorf("parts: %v", parts)
	}

	report, err := os.ReadFile(filepath.Join(out, evalsink.ReportName))
	if err != nil {
		t.Fatal(err)
	}
	// SICK's test file is absent from ../shared: the average is over the
	// 19 STS 2012-2015 test sets, and says so.
	for _, want := range []string{"| Dataset | n | named-b (avg-random, step 0) | run-a (avg, step 0) |", "| 2014 deft-forum | 450 |",
		"| **STS 2015 mean** | 3000 |", "STS 2013 weighted mean (by pairs)", "STS 2012 pooled (all pairs)", "| STS Benchmark dev | 1500 |",
		"| SICK trial | 500 |", "| **Average of 19 sets**: STS 2012 MSRpar, MSRvid, SMTeuroparl, surprise.OnWN, surprise.SMTnews; STS 2013 FNWN, OnWN, headlines; ",
		"quora/test, pool of 100 (the true response, 99 others) P@1 | 165 |", "quora/test chance (the same pools in random order) MRR | 165 | 5.2 |", "Spearman's ρ"} {
		if !strings.Contains(string(report), want) {
			t.Errorf("report lacks %q:\n%s", want, report)
		}
	}
	t.Logf("report:\n%s", report)
	for _, p := range append(first.Plots, filepath.Join(out, evalsink.PlotsDir, "curves-run-a-mean.png")) {
		data, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := png.Decode(bytes.NewReader(data)); err != nil {
			t.Errorf("%s: %v", p, err)
		}
	}
}

// fakeModel embeds a sequence as the counts of its ids: a text's cosine
// with another is their word overlap.
type fakeModel struct {
	compute.Model
	dim int
}

func (m fakeModel) Embed(seqs [][]int32) ([][]float32, error) {
	out := make([][]float32, len(seqs))
	for i, s := range seqs {
		out[i] = make([]float32, m.dim)
		for _, id := range s {
			out[i][id]++
		}
	}
	return out, nil
}

// TestRetrieval checks precision at N on sets whose answer is known: each
// response shares a word with its input only (rank 1), or with nothing
// (a tie with every negative, which counts against it: rank 100).
func TestRetrieval(t *testing.T) {
	var vocab []string
	var overlap, none evalsink.Set
	overlap.Corpus, none.Corpus = "reddit", "reddit"
	for i := range 300 {
		w, v, u := "w"+string(rune('a'+i%26))+strconv.Itoa(i), "v"+strconv.Itoa(i), "u"+strconv.Itoa(i)
		vocab = append(vocab, w, v, u)
		overlap.Pairs = append(overlap.Pairs, evalsink.Pair{ID: strconv.Itoa(i), A: []string{w, u}, B: []string{w, v}})
		none.Pairs = append(none.Pairs, evalsink.Pair{ID: strconv.Itoa(i), A: []string{u}, B: []string{v}})
	}
	emb, err := evalsink.NewEmbedder(fakeModel{dim: len(vocab)}, newLexicon(t, vocab, 0), len(vocab))
	if err != nil {
		t.Fatal(err)
	}
	r, err := evalsink.RetrievalScores(context.Background(), emb, &overlap, 100, 1)
	if err != nil {
		t.Fatal(err)
	}
	if r.Queries != 300 || r.Candidates != 100 || r.P1 != 100 || r.MRR != 100 {
		t.Errorf("overlapping responses: %+v", r)
	}
	r, err = evalsink.RetrievalScores(context.Background(), emb, &none, 100, 1)
	if err != nil {
		t.Fatal(err)
	}
	if r.P10 != 0 || math.Abs(r.MRR-1) > 1e-9 {
		t.Errorf("responses sharing nothing: %+v", r)
	}

	// Quora: duplicates are the true pairs; a question with labelled
	// candidates is a ranking: "q" ranks "q r" (relevant, overlap 1/2)
	// above "x" (irrelevant, 0): AP 1; "p" ranks "y" (irrelevant, 0) tied
	// with "z" (relevant, 0): the tie counts against, AP 1/2.
	quora := evalsink.Set{Corpus: "quora", Pairs: []evalsink.Pair{
		{ID: "1", A: []string{"q"}, B: []string{"q", "r"}, Gold: 1},
		{ID: "2", A: []string{"q"}, B: []string{"x"}, Gold: 0},
		{ID: "3", A: []string{"p"}, B: []string{"y"}, Gold: 0},
		{ID: "4", A: []string{"p"}, B: []string{"z"}, Gold: 1},
	}}
	qv := []string{"q", "r", "x", "p", "y", "z"}
	emb, err = evalsink.NewEmbedder(fakeModel{dim: len(qv)}, newLexicon(t, qv, 0), len(qv))
	if err != nil {
		t.Fatal(err)
	}
	r, err = evalsink.RetrievalScores(context.Background(), emb, &quora, 100, 1)
	if err != nil {
		t.Fatal(err)
	}
	if r.Queries != 2 || r.Candidates != 4 || r.RankQueries != 2 || r.MAP != 75 || r.RankMRR != 75 {
		t.Errorf("quora rankings: %+v", r)
	}
}
