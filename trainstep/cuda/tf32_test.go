package cuda_test

import (
	"math"
	"testing"

	"github.com/parastream/parastream/trainstep/compute"
	"github.com/parastream/parastream/trainstep/cuda"
)

// TestTF32Accuracy runs the same batch with float32 products and with
// TF32 tensor-core products (--tf32) and logs, for the loss and each
// gradient, the largest difference relative to the tensor's largest
// float32 value. On the emulator (which rounds the GEMMs' operands as
// cvt.rna.tf32.f32) the model is small and the difference must show and
// stay under 1%; with PARASTREAM_TEST_GPU=1 the model has the sizes of a
// run (dim 300, 100 pairs of up to 30 words) and the figures logged are
// the device's.
func TestTF32Accuracy(t *testing.T) {
	cfg := smallConfig(compute.EncLSTMAvg, compute.NegMax)
	n, maxLen := 5, 7
	if onGPU() {
		cfg = compute.Config{Encoder: compute.EncLSTMAvg, Dim: 300, Hidden: 300, Vocab: 20000, Negatives: compute.NegMax, BatchSize: 100, Seed: 3}.Defaults()
		n, maxLen = 100, 30
	}
	ps := params(cfg)
	b := batchOf(t, cfg, n, maxLen, 7)
	f32 := buildWith(t, testBackend(t), cfg, ps)
	tf := buildWith(t, testBackendWith(t, cuda.Options{TF32: true}), cfg, ps)
	l32, err := f32.ForwardBackward(b)
	if err != nil {
		t.Fatal(err)
	}
	ltf, err := tf.ForwardBackward(b)
	if err != nil {
		t.Fatal(err)
	}
	worst := math.Abs(ltf-l32) / math.Abs(l32)
	t.Logf("loss: fp32 %.7g, tf32 %.7g, relative difference %.2e", l32, ltf, worst)
	g32, gtf := f32.Grads(), tf.Grads()
	for i := range g32 {
		var scale, diff float64
		for j, v := range g32[i].Data {
			scale = max(scale, math.Abs(float64(v)))
			diff = max(diff, math.Abs(float64(gtf[i].Data[j]-v)))
		}
		rel := diff / max(scale, 1e-30)
		t.Logf("gradient of %s: largest difference %.2e of its largest value %.3g (relative %.2e)", g32[i].Name, diff, scale, rel)
		worst = max(worst, rel)
	}
	if worst > 0.01 {
		t.Errorf("TF32 differs from fp32 by %.2e (relative), more than 1%%", worst)
	}
	if !onGPU() && worst == 0 {
		t.Errorf("TF32 gave the fp32 results bit for bit: the products were not rounded")
	}
}
