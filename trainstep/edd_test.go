package trainstep_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"path/filepath"
	"slices"
	"testing"

	"github.com/parastream/parastream/trainstep"
	"github.com/parastream/parastream/trainstep/compute"
	"github.com/parastream/parastream/trainstep/cuda"
)

// eddModel is a small edd configuration for the loop's tests.
func eddModel() trainstep.Config {
	return trainstep.Config{Encoder: compute.EncEDD, Loss: compute.LossLocalGlobal, Dim: 8, Hidden: 8, BatchSize: 10, LR: 0.01, OutVocab: 40}
}

// TestEDDRunResumesExactlyOnce is TestRunResumesExactlyOnce's crash and
// resume with the encoder-decoder: every row trained once per epoch, and
// the final checkpoint generates.
func TestEDDRunResumesExactlyOnce(t *testing.T) {
	const rows = 300
	cc, vocab := publishPairs(t, rows, true)
	ctx := context.Background()
	dir, trace := t.TempDir(), filepath.Join(t.TempDir(), "ids.tsv")
	cfg := trainstep.RunConfig{
		Client: cc, Dataset: "para", Run: "edd-once", Vocab: vocab, Model: eddModel(),
		Epochs: 2, ShuffleBuffer: 100, Window: 5, CheckpointDir: dir, CheckpointEvery: 7, MaxSteps: 23, TraceIDs: trace,
	}
	// The GPU refuses the encoder-decoder (docs/reference.md): under
	// PARASTREAM_TEST_GPU the run must say so before its first step, and
	// the loop is then checked on the CPU backend, as without the switch.
	if gpu := testBackend(t); gpu != nil {
		on := cfg
		on.Backend, on.CheckpointDir, on.TraceIDs = gpu, t.TempDir(), ""
		if _, err := trainstep.Run(ctx, on); !errors.Is(err, cuda.ErrUnsupported) {
			t.Fatalf("edd on the GPU: %v, want cuda.ErrUnsupported", err)
		}
	}
	sum, err := trainstep.Run(ctx, cfg)
	if err != nil {
		t.Fatal(err)
	}
	firstRun := len(readTrace(t, trace))
	const crashedAt = 21
	resume := trainstep.RunConfig{Client: cc, Dataset: "para", Resume: filepath.Join(dir, fmt.Sprintf("step-%08d", crashedAt)),
		Epochs: 2, ShuffleBuffer: 100, Window: 5, CheckpointEvery: 7, TraceIDs: trace}
	if sum, err = trainstep.Run(ctx, resume); err != nil {
		t.Fatal(err)
	}
	trainedOnce(t, trace, firstRun, crashedAt, rows, 2)
	m, ck, err := trainstep.LoadModel(sum.Checkpoint, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer m.Close()
	if ck.Config.Encoder != compute.EncEDD || ck.Config.Loss != compute.LossLocalGlobal || ck.Config.OutVocab != 40 {
		t.Fatalf("checkpoint config %+v", ck.Config)
	}
	gen, ok := m.(compute.Generator)
	if !ok {
		t.Fatal("the loaded edd model is no compute.Generator")
	}
	out, err := gen.Generate([][]int32{{4, 5, 6}}, compute.GenerateOptions{Beam: 3, MaxLen: 5})
	if err != nil || len(out) != 1 || len(out[0]) > 5 {
		t.Fatalf("generating from the checkpoint: %v, %v", out, err)
	}
}

// TestEDDCheckpointRoundTrip: a saved edd model loads with the same
// embeddings and generations, and exports.
func TestEDDCheckpointRoundTrip(t *testing.T) {
	vocab := []string{"<pad>", "<unk>", "<s>", "</s>"}
	for i := range 56 {
		vocab = append(vocab, fmt.Sprint("w", i))
	}
	cfg := eddModel()
	cfg.Seed = 4
	tr := newTrainerVocab(t, cfg, vocab)
	data := paraphrases(rand.New(rand.NewPCG(1, 2)), 40)
	for i := 0; i < 40; i += 10 {
		if _, err := tr.Step(data[i : i+10]); err != nil {
			t.Fatal(err)
		}
	}
	dir := filepath.Join(t.TempDir(), "ck")
	if err := tr.Save(dir, nil); err != nil {
		t.Fatal(err)
	}
	m, ck, err := trainstep.LoadModel(dir, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer m.Close()
	seqs := [][]int32{{4, 9, 12}, {30, 31}}
	want, _ := tr.Embed(seqs)
	got, err := m.Embed(seqs)
	if err != nil || !slices.EqualFunc(got, want, slices.Equal) || len(got[0]) != ck.Config.EmbedDim() {
		t.Fatalf("embeddings from the checkpoint %v (%v), trainer %v", got, err, want)
	}
	opts := compute.GenerateOptions{Beam: 2, MaxLen: 6}
	g1, err := tr.Model().(compute.Generator).Generate(seqs, opts)
	if err != nil {
		t.Fatal(err)
	}
	g2, err := m.(compute.Generator).Generate(seqs, opts)
	if err != nil || !slices.EqualFunc(g1, g2, slices.Equal) {
		t.Fatalf("generations from the checkpoint %v (%v), trainer %v", g2, err, g1)
	}
	var buf bytes.Buffer
	if err := trainstep.ExportSafetensors(&buf, ck, dir); err != nil || buf.Len() == 0 {
		t.Fatalf("export: %v (%d bytes)", err, buf.Len())
	}
}
