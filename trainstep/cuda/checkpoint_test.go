package cuda_test

import (
	"encoding/json"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/parastream/parastream/trainstep"
	"github.com/parastream/parastream/trainstep/compute"
)

// TestCheckpointsAcrossBackends trains lstmavg with dropout and Adam for
// 2 steps on the CUDA backend (emulated, or the GPU: testBackend), resumes the checkpoint on the
// CPU backend for 2 more, then that checkpoint on the CUDA backend for 2
// more: the parameters must match 6 steps straight on the CPU, the files
// must be the same set, and each trainer.json names its backend. The
// embedding table has 13 words and 4 out-of-vocabulary buckets (17 rows),
// and the batches use the buckets' ids too. lstmavg with the margin loss,
// the DAN (its bigram table and catch-up state) with the hinge loss, and
// the transformer (SGD) with the margin loss.
func TestCheckpointsAcrossBackends(t *testing.T) {
	for _, cfg := range []compute.Config{
		{Encoder: compute.EncLSTMAvg, Loss: compute.LossMargin, Dim: 6, Hidden: 5, BatchSize: 4, BucketWidth: 4, Dropout: 0.1, Seed: 5, OOVBuckets: 4},
		{Encoder: compute.EncDAN, Loss: compute.LossHinge, HingeK: 2, DANLayers: []int{7, 4}, BigramBuckets: 11,
			Dim: 6, BatchSize: 4, BucketWidth: 4, Dropout: 0.1, Seed: 5, OOVBuckets: 4},
		// SGD: Adam would step the k block of bqkv on rounding noise
		// (its gradient is 0: TestEmulatorUpdate).
		{Encoder: compute.EncTransformer, Loss: compute.LossMargin, TFLayers: 2, TFHeads: 2, TFFilter: 7, Optimizer: compute.OptSGD,
			Dim: 6, BatchSize: 4, BucketWidth: 4, Dropout: 0.1, Seed: 5, OOVBuckets: 4},
	} {
		t.Run(cfg.Encoder+"/"+cfg.Loss, func(t *testing.T) { checkpointsAcross(t, cfg) })
	}
}

func checkpointsAcross(t *testing.T, cfg compute.Config) {
	vocab := make([]string, 13)
	for i := range vocab {
		vocab[i] = string(rune('a' + i))
	}
	rng := rand.New(rand.NewPCG(7, 7))
	var steps [][]trainstep.Pair
	for range 6 {
		var b []trainstep.Pair
		for range 4 {
			a, c := make([]int32, 1+rng.IntN(6)), make([]int32, 1+rng.IntN(6))
			for j := range a {
				a[j] = rng.Int32N(17)
			}
			for j := range c {
				c[j] = rng.Int32N(17)
			}
			b = append(b, trainstep.Pair{A: a, B: c})
		}
		steps = append(steps, b)
	}
	train := func(tr *trainstep.Trainer, bs [][]trainstep.Pair) {
		t.Helper()
		for _, b := range bs {
			if _, err := tr.Step(b); err != nil {
				t.Fatal(err)
			}
		}
	}
	straight, err := trainstep.New(cfg, trainstep.Options{Vocab: vocab})
	if err != nil {
		t.Fatal(err)
	}
	defer straight.Close()
	train(straight, steps)

	dir := t.TempDir()
	gpu, err := trainstep.New(cfg, trainstep.Options{Vocab: vocab, Backend: testBackend(t)})
	if err != nil {
		t.Fatal(err)
	}
	train(gpu, steps[:2])
	ck1 := filepath.Join(dir, "step-2")
	if err := gpu.Save(ck1, json.RawMessage(`{"offset":2}`)); err != nil {
		t.Fatal(err)
	}
	gpu.Close()
	onCPU, pos, err := trainstep.Resume(ck1, nil)
	if err != nil {
		t.Fatal(err)
	}
	if string(pos) != `{"offset":2}` {
		t.Errorf("position %s", pos)
	}
	train(onCPU, steps[2:4])
	ck2 := filepath.Join(dir, "step-4")
	if err := onCPU.Save(ck2, nil); err != nil {
		t.Fatal(err)
	}
	onCPU.Close()
	back, _, err := trainstep.Resume(ck2, testBackend(t))
	if err != nil {
		t.Fatal(err)
	}
	defer back.Close()
	train(back, steps[4:])
	if c := back.Config(); c.Vocab != 17 || c.OOVBuckets != 4 {
		t.Errorf("resumed on the CUDA backend with vocab %d, %d buckets; want 17, 4", c.Vocab, c.OOVBuckets)
	}
	want, got := straight.Model().Params(), back.Model().Params()
	for i := range want {
		if j, d, ok := closeTo(got[i].Data, want[i].Data); !ok {
			t.Errorf("%s after 6 steps across backends differs at %d by %.3g", want[i].Name, j, d)
		}
	}
	for ck, backend := range map[string]string{ck1: testBackend(t).Name(), ck2: "gorgonia-cpu"} {
		data, err := os.ReadFile(filepath.Join(ck, "trainer.json"))
		if err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(string(data), `"backend": "`+backend+`"`) && !strings.Contains(string(data), `"backend":"`+backend+`"`) {
			t.Errorf("%s/trainer.json does not name %s: %s", ck, backend, data)
		}
	}
	names := func(d string) string {
		es, _ := os.ReadDir(d)
		var s []string
		for _, e := range es {
			s = append(s, e.Name())
		}
		return strings.Join(s, " ")
	}
	if names(ck1) != names(ck2) {
		t.Errorf("checkpoint files: cuda %s, cpu %s", names(ck1), names(ck2))
	}
}
