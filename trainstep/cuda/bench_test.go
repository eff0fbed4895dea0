package cuda_test

import (
	"fmt"
	"os"
	"strings"
	"testing"

	"github.com/parastream/parastream/trainstep"
	"github.com/parastream/parastream/trainstep/compute"
	"github.com/parastream/parastream/trainstep/cuda"
	"github.com/parastream/parastream/trainstep/internal/trainbench"
)

// BenchmarkGPUTrainStep is the GPU benchmark: training pairs/s of
// avg, lstmavg and gran at dimension 300 (and the transformer at 512:
// benchConfig) with a 20,000-word vocabulary,
// STS 2012 sentence lengths, margin loss with MAX negatives and Adam, at
// batch 100 (the research's) and 1,000. It needs a GPU (cuda:0, or
// $PARASTREAM_BENCH_DEVICE) and skips without one; scripts/gpu_bench.py
// runs it beside PyTorch on the same GPU.
func BenchmarkGPUTrainStep(b *testing.B) {
	ordinal := 0
	if s := os.Getenv("PARASTREAM_BENCH_DEVICE"); s != "" {
		fmt.Sscanf(strings.TrimPrefix(s, "cuda:"), "%d", &ordinal)
	}
	gpu, err := cuda.Open(cuda.Options{Device: ordinal, Env: cuda.EnvFromOS("")})
	if err != nil {
		b.Skipf("no GPU: %v", err)
	}
	defer gpu.Close()
	b.Logf("%s", gpu.Device())
	lens := trainbench.Lengths(b)
	for _, batch := range []int{100, 1000} {
		for _, enc := range benchEncoders() {
			b.Run(fmt.Sprintf("%s/batch%d", enc, batch), func(b *testing.B) { trainbench.RunConfig(b, benchConfig(enc, batch), gpu, lens) })
		}
	}
}

// benchEncoders are the GPU benchmarks' encoders: issue 15's three and
// the transformer (issue 19).
func benchEncoders() []string {
	return []string{compute.EncAvg, compute.EncLSTMAvg, compute.EncGRAN, compute.EncTransformer}
}

// benchConfig is trainbench.Run's configuration of enc at batch, the
// transformer at the sizes of Yang et al. (2018): dimension 512, 6 blocks
// of 8 heads, filter 2,048 (compute.Config's defaults for it).
func benchConfig(enc string, batch int) trainstep.Config {
	cfg := trainstep.Config{Encoder: enc, Dim: 300, Vocab: trainbench.Vocab, BatchSize: batch}
	if enc == compute.EncTransformer {
		cfg.Dim = 512
	}
	return cfg
}
