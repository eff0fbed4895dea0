package evalsink_test

import (
	"math"
	"strings"
	"testing"
	"time"

	"github.com/parastream/parastream/evalsink"
	"github.com/parastream/parastream/evalsink/internal/evaltest"
	"github.com/parastream/parastream/evalsink/metric"
)

func near(got, want, tol float64) bool { return math.Abs(got-want) <= tol }

// TestGenerationRows: the generation row carries the evaluation's columns,
// the set's names, the sentences and the six figures, and nothing of the
// other kinds.
func TestGenerationRows(t *testing.T) {
	hyps, refs := evaltest.BLEUCorpus()
	base := evalsink.Result{EvalID: "e1", Run: "run-a", Model: "avg", Step: 300, Scale: evalsink.ScaleCosine,
		EvaluatedAt: time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC), DataHash: "d", ModelHash: "m", Kind: evalsink.KindDataset,
		Pearson: new(float64), Candidates: 100}
	rows, err := evalsink.GenerationRows(base, evalsink.GenerationSet{Corpus: "quora", Split: "test", Dataset: "quora/test", Hyps: hyps, Refs: refs})
	if err != nil {
		t.Fatal(err)
	}
	if len(rows) != 1 {
		t.Fatalf("%d rows, want 1", len(rows))
	}
	r := rows[0]
	want, err := metric.ScoreGeneration(hyps, refs)
	if err != nil {
		t.Fatal(err)
	}
	if r.EvalID != "e1" || r.Run != "run-a" || r.Model != "avg" || r.Step != 300 || r.Kind != evalsink.KindGeneration ||
		r.Corpus != "quora" || r.Split != "test" || r.Dataset != "quora/test" || r.Pairs != 8 || r.Candidates != 0 || !r.EvaluatedAt.Equal(base.EvaluatedAt) {
		t.Errorf("row %+v", r)
	}
	if r.Pearson != nil || r.Spearman != nil || r.PAt1 != nil || r.MRR != nil || r.MAP != nil {
		t.Errorf("generation row has figures of other kinds: %+v", r)
	}
	for name, v := range map[string][2]*float64{"bleu_1": {r.BLEU1, &want.BLEU.B1}, "bleu_2": {r.BLEU2, &want.BLEU.B2},
		"bleu_3": {r.BLEU3, &want.BLEU.B3}, "bleu_4": {r.BLEU4, &want.BLEU.B4}, "meteor": {r.METEOR, &want.METEOR}, "ter": {r.TER, &want.TER}} {
		if v[0] == nil || *v[0] != *v[1] {
			t.Errorf("%s = %v, want %v", name, v[0], *v[1])
		}
	}
	if !near(*r.BLEU4, 35.00684129662144, 1e-9) || !near(*r.TER, 100*18/50.5, 1e-9) {
		t.Errorf("BLEU-4 %v, TER %v: not sacrebleu's", *r.BLEU4, *r.TER)
	}
	if _, err := evalsink.GenerationRows(base, evalsink.GenerationSet{Dataset: "x", Hyps: hyps}); err == nil || !strings.Contains(err.Error(), "x") {
		t.Errorf("rows of hypotheses without references: %v", err)
	}
}
