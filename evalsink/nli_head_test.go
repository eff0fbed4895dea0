package evalsink_test

import (
	"context"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/parastream/parastream/evalsink"
	"github.com/parastream/parastream/internal/testenv"
	"github.com/parastream/parastream/pipelines"
	"github.com/parastream/parastream/trainstep"
	"github.com/parastream/parastream/trainstep/compute"
)

// nliSets extracts the SNLI fixture (its dev split) into a new directory.
func nliSets(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	cfg := pipelines.NewExtractConfig("snli", testenv.Fixture("evalsets/snli_1.0_dev.mini.txt"), dir)
	if _, err := pipelines.RunExtract(context.Background(), cfg, pipelines.RunOptions{}); err != nil {
		t.Fatal(err)
	}
	return dir
}

// nliCheckpoint trains a small avg model with an NLI head (hidden units
// hidden; 0: none) on the set's own pairs for a few steps, so that the head
// is not at its start, and saves it under dir/name.
func nliCheckpoint(t *testing.T, sets *evalsink.Sets, dir, name string, hidden int) string {
	t.Helper()
	vocab := vocabulary(sets, 0)
	tr, err := trainstep.New(trainstep.Config{Encoder: "avg", Dim: 8, BatchSize: 2, Seed: 3, NLIHidden: hidden, LR: 0.05}, trainstep.Options{Vocab: vocab})
	if err != nil {
		t.Fatal(err)
	}
	defer tr.Close()
	ids := func(toks []string) []int32 {
		var out []int32
		for _, w := range toks {
			for i, v := range vocab {
				if v == w {
					out = append(out, int32(i))
				}
			}
		}
		return out
	}
	var pairs []trainstep.Pair
	for _, s := range sets.Sets {
		for _, p := range s.Pairs {
			pairs = append(pairs, trainstep.Pair{A: ids(p.A), B: ids(p.B), Label: float32(p.Gold), NLI: true})
		}
	}
	if hidden > 0 {
		for range 20 {
			if _, err := tr.Step(pairs); err != nil {
				t.Fatal(err)
			}
		}
	}
	out := filepath.Join(dir, name)
	if err := tr.Save(out, nil); err != nil {
		t.Fatal(err)
	}
	return out
}

// TestNLIHeadRows: the evaluation of a checkpoint with an NLI head has a
// classification_head row per NLI set whose accuracy is the head's
// (compute.NLIHead over the embedder's vectors) with its interval; a
// checkpoint without a head has none.
func TestNLIHeadRows(t *testing.T) {
	ctx := context.Background()
	evalDir := nliSets(t)
	sets := loadSets(t, evalDir)
	root := t.TempDir()
	withHead := nliCheckpoint(t, sets, root, "head", 6)
	without := nliCheckpoint(t, sets, root, "plain", 0)
	ev, err := evalsink.NewEvaluator(ctx, evalsink.Config{Eval: evalDir, Out: filepath.Join(root, "results"), Logger: testLogger(t)})
	if err != nil {
		t.Fatal(err)
	}
	defer ev.Close()

	sum, err := ev.Evaluate(ctx, evalsink.Target{Dir: withHead})
	if err != nil {
		t.Fatal(err)
	}
	var row *evalsink.Result
	for i, r := range sum.Rows {
		if r.Kind == evalsink.KindClassificationHead {
			if row != nil {
				t.Fatalf("two head rows: %+v and %+v", *row, r)
			}
			row = &sum.Rows[i]
		}
	}
	if row == nil {
		t.Fatalf("no %s row among %d", evalsink.KindClassificationHead, len(sum.Rows))
	}
	var set *evalsink.Set
	for _, s := range sets.Sets {
		if s.Corpus == "snli" && s.Split == "dev" {
			set = s
		}
	}
	if set == nil || row.Corpus != "snli" || row.Dataset != set.Dataset || row.Pairs != int64(len(set.Pairs)) || row.Accuracy == nil {
		t.Fatalf("head row %+v, want snli's dev set of %d pairs with an accuracy", *row, len(set.Pairs))
	}
	// The head's accuracy recomputed from the checkpoint's parameters.
	emb, ck, err := evalsink.OpenEmbedder(withHead, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer emb.Close()
	head, err := compute.NewNLIHead(ck.Config, ck.Params)
	if err != nil {
		t.Fatal(err)
	}
	correct := 0
	for _, p := range set.Pairs {
		vs, err := emb.Embed(ctx, [][]string{p.A, p.B})
		if err != nil {
			t.Fatal(err)
		}
		if head.Predict(vs[0], vs[1]) == int(p.Gold) {
			correct++
		}
	}
	if want := 100 * float64(correct) / float64(len(set.Pairs)); math.Abs(*row.Accuracy-want) > 1e-9 {
		t.Errorf("head accuracy %.4f, recomputed %.4f", *row.Accuracy, want)
	}
	lo, okLo := row.CILow["accuracy"]
	hi, okHi := row.CIHigh["accuracy"]
	if !okLo || !okHi || lo > *row.Accuracy || hi < *row.Accuracy {
		t.Errorf("accuracy %.1f: interval [%v, %v] (%v, %v)", *row.Accuracy, lo, hi, okLo, okHi)
	}
	report, err := os.ReadFile(sum.Report)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(report), "own head") {
		t.Errorf("the report has no table of the checkpoint's own head:\n%s", report)
	}

	sum, err = ev.Evaluate(ctx, evalsink.Target{Dir: without})
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range sum.Rows {
		if r.Kind == evalsink.KindClassificationHead {
			t.Errorf("a checkpoint without a head has a head row: %+v", r)
		}
	}
}
