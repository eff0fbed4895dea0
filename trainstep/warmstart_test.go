package trainstep_test

import (
	"math/rand/v2"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/parastream/parastream/trainstep"
	"github.com/parastream/parastream/trainstep/compute"
)

// TestWarmStart pretrains the csae on its reconstruction and starts a
// margin run from it: every parameter the two models share starts at the
// checkpoint's values, the rest at their own start; another vocabulary, a
// trainer that has stepped and lambda_w are refused.
func TestWarmStart(t *testing.T) {
	vocab := make([]string, 60)
	for i := range vocab {
		vocab[i] = "w" + string(rune('a'+i%26)) + string(rune('a'+i/26))
	}
	data := withTopics(paraphrases(rand.New(rand.NewPCG(5, 6)), 32), 4)
	batches, _ := trainstep.Batches(data, 8, 64)
	pre := trainstep.Config{Encoder: compute.EncCSAE, Loss: compute.LossRecon, Dim: 6, CSAELayers: []int{5}, CSAETopK: 40, BatchSize: 8,
		Context: compute.ContextTopics, Topics: 4}
	tr := newTrainerVocab(t, pre, vocab)
	for _, b := range batches {
		if _, err := tr.Step(b); err != nil {
			t.Fatal(err)
		}
	}
	dir := filepath.Join(t.TempDir(), "pre")
	if err := tr.Save(dir, nil); err != nil {
		t.Fatal(err)
	}
	want := map[string][]float32{}
	for _, p := range tr.Model().Params() {
		want[p.Name] = p.Data
	}

	fine := pre
	fine.Loss, fine.Seed = compute.LossMargin, 9 // no decoder: its parameters are left out
	ft := newTrainerVocab(t, fine, vocab)
	start := map[string][]float32{}
	for _, p := range ft.Model().Params() {
		start[p.Name] = slices.Clone(p.Data)
	}
	names, err := ft.WarmStart(dir)
	if err != nil {
		t.Fatal(err)
	}
	if len(names) != len(start) {
		t.Errorf("warm-started %v, want every one of the margin model's %d parameters", names, len(start))
	}
	for _, p := range ft.Model().Params() {
		if !slices.Equal(p.Data, want[p.Name]) {
			t.Errorf("%s: not the checkpoint's values", p.Name)
		}
	}
	if slices.Equal(start[compute.ParamEmbeddings], want[compute.ParamEmbeddings]) {
		t.Fatal("the two runs start with the same embeddings: the test cannot tell a warm start")
	}
	if _, err := ft.Step(batches[0]); err != nil {
		t.Fatal(err)
	}
	if _, err := ft.WarmStart(dir); err == nil || !strings.Contains(err.Error(), "steps") {
		t.Errorf("warm start after a step: %v, want it refused", err)
	}
	other := newTrainerVocab(t, fine, append(slices.Clone(vocab), "extra"))
	if _, err := other.WarmStart(dir); err == nil || !strings.Contains(err.Error(), "vocabulary") {
		t.Errorf("warm start with another vocabulary: %v, want it refused", err)
	}
	lw := fine
	lw.LambdaW = 0.01
	if _, err := newTrainerVocab(t, lw, vocab).WarmStart(dir); err == nil || !strings.Contains(err.Error(), "lambda_w") {
		t.Errorf("warm start with lambda_w: %v, want it refused", err)
	}
}
