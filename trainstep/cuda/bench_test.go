package cuda_test

import (
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/parastream/parastream/internal/testenv"
	"github.com/parastream/parastream/trainstep"
	"github.com/parastream/parastream/trainstep/cuda"
)

// stsLengths are the token counts of the STS 2012 sentences (../shared),
// or nil.
func stsLengths() []int {
	files, _ := filepath.Glob(filepath.Join(testenv.Root(), "..", "shared", "data", "eval", "sts", "2012", "STS.input.*.txt"))
	var lens []int
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			continue
		}
		for _, line := range strings.Split(string(data), "\n") {
			for _, s := range strings.Split(line, "\t") {
				if n := len(strings.Fields(s)); n > 0 {
					lens = append(lens, n)
				}
			}
		}
	}
	return lens
}

// BenchmarkGPUTrainStep is the GPU benchmark: training pairs/s of
// avg, lstmavg and gran at dimension 300 with a 20,000-word vocabulary,
// STS 2012 sentence lengths, margin loss with MAX negatives and Adam, at
// batch 100 (the research's) and 1,000. It needs a GPU (cuda:0, or
// $PARASTREAM_BENCH_DEVICE) and skips without one; scripts/gpu_bench.sh
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
	lens := stsLengths()
	if len(lens) == 0 {
		b.Log("../shared/data/eval/sts/2012 absent: lengths 4-24")
		for n := 4; n <= 24; n++ {
			lens = append(lens, n)
		}
	}
	for _, batch := range []int{100, 1000} {
		for _, enc := range []string{"avg", "lstmavg", "gran"} {
			b.Run(fmt.Sprintf("%s/batch%d", enc, batch), func(b *testing.B) {
				const vocab = 20000
				rng := rand.New(rand.NewPCG(2, 3))
				seq := func() []int32 {
					s := make([]int32, lens[rng.IntN(len(lens))])
					for i := range s {
						s[i] = rng.Int32N(vocab)
					}
					return s
				}
				pairs := make([]trainstep.Pair, 8*batch)
				for i := range pairs {
					pairs[i] = trainstep.Pair{A: seq(), B: seq()}
				}
				batches, _ := trainstep.Batches(pairs, batch, 64)
				tr, err := trainstep.New(trainstep.Config{Encoder: enc, Dim: 300, Vocab: vocab, BatchSize: batch},
					trainstep.Options{Backend: gpu})
				if err != nil {
					b.Fatal(err)
				}
				defer tr.Close()
				for _, bt := range batches { // allocate every bucket's workspace
					if _, err := tr.Step(bt); err != nil {
						b.Fatal(err)
					}
				}
				b.ResetTimer()
				n := 0
				for i := 0; i < b.N; i++ {
					bt := batches[i%len(batches)]
					if _, err := tr.Step(bt); err != nil { // Step reads the loss back: synchronised
						b.Fatal(err)
					}
					n += len(bt)
				}
				b.ReportMetric(float64(n)/b.Elapsed().Seconds(), "pairs/s")
			})
		}
	}
}
