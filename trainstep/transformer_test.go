package trainstep_test

import (
	"bytes"
	"math"
	"math/rand/v2"
	"path/filepath"
	"strings"
	"testing"

	"github.com/parastream/parastream/trainstep"
	"github.com/parastream/parastream/trainstep/compute"
	"github.com/parastream/parastream/trainstep/internal/trainbench"
)

// TestTransformerSoftmaxOverfits trains a small transformer with the
// batch-softmax loss on one fixed batch of 32 pairs: the loss, log 32 ≈ 3.47
// for a model that cannot tell the responses apart, must fall under 0.01
// (its minimum is 0) within 120 steps. The trained model is then saved,
// loaded back as `parastream embed` loads it, and must embed as the
// trainer's did; its export holds every parameter of the layout.
func TestTransformerSoftmaxOverfits(t *testing.T) {
	cfg := trainstep.Config{Encoder: compute.EncTransformer, Loss: compute.LossSoftmax, Dim: 16, TFLayers: 2, TFHeads: 4, TFFilter: 32,
		Vocab: 60, BatchSize: 32, LR: 0.003, Seed: 5}
	batch := paraphrases(rand.New(rand.NewPCG(9, 9)), 32)
	tr := newTrainer(t, cfg)
	first, loss := 0.0, 0.0
	steps := 0
	for steps < 120 {
		var err error
		if loss, err = tr.Step(batch); err != nil {
			t.Fatal(err)
		}
		if steps == 0 {
			first = loss
		}
		steps++
		if loss < 0.01 {
			break
		}
	}
	if math.Abs(first-math.Log(32)) > 0.5 || loss >= 0.01 {
		t.Fatalf("softmax loss %.4f -> %.4f after %d steps on one batch, want from about log 32 = 3.47 to under 0.01", first, loss, steps)
	}
	t.Logf("softmax loss %.4f -> %.5f in %d steps", first, loss, steps)

	seqs := [][]int32{batch[0].A, batch[1].B, {1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11}}
	want, err := tr.Embed(seqs)
	if err != nil {
		t.Fatal(err)
	}
	dir := filepath.Join(t.TempDir(), "step-n")
	if err := tr.Save(dir, nil); err != nil {
		t.Fatal(err)
	}
	m, ck, err := trainstep.LoadModel(dir, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer m.Close()
	got, err := m.Embed(seqs)
	if err != nil {
		t.Fatal(err)
	}
	for i := range want {
		for u := range want[i] {
			if want[i][u] != got[i][u] {
				t.Fatalf("sentence %d unit %d: trainer %v, loaded checkpoint %v", i, u, want[i][u], got[i][u])
			}
		}
	}
	var b bytes.Buffer
	if err := trainstep.ExportSafetensors(&b, ck, dir); err != nil {
		t.Fatal(err)
	}
	ts, meta, err := trainstep.ReadSafetensors(b.Bytes())
	if err != nil {
		t.Fatal(err)
	}
	names := map[string]bool{}
	for _, x := range ts {
		names[x.Name] = true
	}
	for _, s := range compute.Layout(tr.Config()) {
		if !names[s.Name] {
			t.Errorf("export lacks %s", s.Name)
		}
	}
	if !strings.Contains(meta["config"], `"tf_layers":2`) || !strings.Contains(meta["config"], `"tf_heads":4`) {
		t.Errorf("export's config %s lacks the transformer's sizes", meta["config"])
	}
}

// BenchmarkTransformerStep measures training steps of the transformer at
// the CPU sizes of docs/models/transformer.md (dimension 128, 2 blocks of 4
// heads, filter 512) beside DAN of as many compositional parameters
// (dimension 128, tanh layers 512, 512, 128: 393,216 weights each), both
// with the batch-softmax loss, batch 100, STS sentence lengths.
func BenchmarkTransformerStep(b *testing.B) {
	lens := trainbench.Lengths(b)
	for _, cfg := range []trainstep.Config{
		{Encoder: compute.EncTransformer, Dim: 128, TFLayers: 2, TFHeads: 4, TFFilter: 512},
		{Encoder: compute.EncDAN, Dim: 128, DANLayers: []int{512, 512, 128}},
	} {
		cfg.Loss, cfg.Vocab, cfg.BatchSize = compute.LossSoftmax, trainbench.Vocab, 100
		b.Run(cfg.Encoder, func(b *testing.B) {
			rate := trainbench.RunConfig(b, cfg, nil, lens)
			b.ReportMetric(rate/100, "steps/s")
		})
	}
}
