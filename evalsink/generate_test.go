package evalsink_test

import (
	"bytes"
	"context"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/parastream/parastream/evalsink"
	"github.com/parastream/parastream/trainstep"
	"github.com/parastream/parastream/trainstep/compute"
	"github.com/parastream/parastream/transforms/text"
)

// eddCheckpoint trains a small edd model to copy its input on a few
// sentences of the words of vocab and saves it.
func eddCheckpoint(t *testing.T, vocab []string, sents [][]int32) string {
	t.Helper()
	cfg := trainstep.Config{Encoder: compute.EncEDD, Loss: compute.LossLocal, Dim: 16, Hidden: 32, BatchSize: 4, LR: 0.02, Seed: 2}
	tr, err := trainstep.New(cfg, trainstep.Options{Vocab: vocab})
	if err != nil {
		t.Fatal(err)
	}
	defer tr.Close()
	pairs := make([]trainstep.Pair, len(sents))
	for i, s := range sents {
		pairs[i] = trainstep.Pair{A: s, B: s}
	}
	for range 300 {
		if _, err := tr.Step(pairs); err != nil {
			t.Fatal(err)
		}
	}
	dir := filepath.Join(t.TempDir(), "step-00000300")
	if err := tr.Save(dir, nil); err != nil {
		t.Fatal(err)
	}
	return dir
}

// TestGenerateAndEvaluate: a model trained to copy four sentences
// paraphrases them as themselves from plain text, and its generation
// rows score 100 BLEU-1 like the copy-the-input row.
func TestGenerateAndEvaluate(t *testing.T) {
	vocab := []string{"<pad>", "<unk>", text.StartToken, text.EndToken, "how", "do", "i", "learn", "go", "what", "is", "love", "?", "why", "sky", "blue"}
	sents := [][]int32{{4, 5, 6, 7, 8, 12}, {9, 10, 11, 12}, {13, 10, 14, 15, 12}, {9, 10, 8, 12}}
	dir := eddCheckpoint(t, vocab, sents)
	var lines []string
	for _, s := range sents {
		var w []string
		for _, id := range s {
			w = append(w, vocab[id])
		}
		lines = append(lines, strings.Join(w, " "))
	}
	in := strings.Join(lines, "\n") + "\n"
	for _, beam := range []int{1, 3} {
		var out, log bytes.Buffer
		g := evalsink.GenerationEval{Checkpoint: filepath.Dir(dir), Options: compute.GenerateOptions{Beam: beam}}
		if err := evalsink.RunGenerate(context.Background(), g, strings.NewReader(in), &out, &log); err != nil {
			t.Fatal(err)
		}
		if got := strings.Split(strings.TrimSpace(out.String()), "\n"); strings.Join(got, "\n") != strings.Join(lines, "\n") {
			t.Errorf("beam %d: generated %q, want %q (log %s)", beam, got, lines, log.String())
		}
	}
	// Held-out pairs in Quora's format: a duplicate pair per sentence,
	// and a non-duplicate left out.
	tsv := "id\tqid1\tqid2\tquestion1\tquestion2\tis_duplicate\n"
	for i, l := range lines {
		tsv += fmt.Sprintf("%d\t%d\t%d\t%s\t%s\t1\n", i, 2*i, 2*i+1, l, l)
	}
	tsv += "9\t98\t99\thow do i learn go ?\twhy is sky blue ?\t0\n"
	pairs := filepath.Join(t.TempDir(), "held.tsv")
	if err := os.WriteFile(pairs, []byte(tsv), 0o644); err != nil {
		t.Fatal(err)
	}
	results := t.TempDir()
	rows, err := evalsink.EvaluateGeneration(context.Background(), evalsink.GenerationEval{Checkpoint: dir, Pairs: []string{pairs}, Out: results})
	if err != nil {
		t.Fatal(err)
	}
	if len(rows) != 2 || !strings.HasSuffix(rows[1].Dataset, evalsink.CopyInputSuffix) {
		t.Fatalf("rows %+v, want the model's and the copy-the-input one", rows)
	}
	for _, r := range rows {
		if r.Kind != evalsink.KindGeneration || r.Pairs != 4 || math.Abs(*r.BLEU1-100) > 1e-9 || *r.TER != 0 || r.Model != compute.EncEDD {
			t.Errorf("%s: kind %s, %d pairs, BLEU-1 %v, TER %v, model %s; want 4 pairs scored 100 and 0", r.Dataset, r.Kind, r.Pairs, *r.BLEU1, *r.TER, r.Model)
		}
	}
	all, err := evalsink.ReadResults(results)
	if err != nil || len(all) != 2 {
		t.Fatalf("results directory: %d rows (%v), want 2", len(all), err)
	}
}

// TestGenerateRefusesEncoders: a similarity model's checkpoint does not
// generate.
func TestGenerateRefusesEncoders(t *testing.T) {
	tr, err := trainstep.New(trainstep.Config{Encoder: compute.EncAvg, Dim: 4, BatchSize: 2}, trainstep.Options{Vocab: []string{"<unk>", "a", "b"}})
	if err != nil {
		t.Fatal(err)
	}
	defer tr.Close()
	dir := filepath.Join(t.TempDir(), "ck")
	if err := tr.Save(dir, nil); err != nil {
		t.Fatal(err)
	}
	_, _, err = evalsink.OpenParaphraser(dir)
	if err == nil || !strings.Contains(err.Error(), "--model edd") {
		t.Fatalf("opening an avg checkpoint: %v, want a refusal naming --model edd", err)
	}
}

// TestGenerationEvalValidate: Validate names each field that cannot run
// and how to fix it; a checkpoint is all a valid configuration needs.
func TestGenerationEvalValidate(t *testing.T) {
	if err := (evalsink.GenerationEval{Checkpoint: "ckpt"}).Validate(); err != nil {
		t.Errorf("a checkpoint alone: %v", err)
	}
	bad := evalsink.GenerationEval{Limit: -1, Options: compute.GenerateOptions{Beam: -2, MaxLen: -3}}
	err := bad.Validate()
	if err == nil {
		t.Fatal("no checkpoint, negative beam, max len and limit: accepted")
	}
	for _, want := range []string{"give the edd checkpoint directory", "beam -2: give a beam width", "max len -3: give the most words", "limit -1: give the number"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("%v: does not say %q", err, want)
		}
	}
	if _, err := evalsink.EvaluateGeneration(context.Background(), bad); err == nil || !strings.Contains(err.Error(), "checkpoint") {
		t.Errorf("EvaluateGeneration of an invalid configuration: %v", err)
	}
}
