package cuda_test

import (
	"fmt"
	"testing"

	"github.com/parastream/parastream/trainstep/cuda"
	"github.com/parastream/parastream/trainstep/internal/trainbench"
)

// BenchmarkGPUGraphs measures what CUDA graphs and TF32 give: the training
// step of BenchmarkGPUTrainStep for avg, lstmavg, gran and the transformer
// at batch 100 and 1,000 with every launch eager (--cuda-graphs=false),
// with graphs (the default), and with graphs and TF32 (--tf32). It needs a
// GPU (cuda:0) and skips without one.
func BenchmarkGPUGraphs(b *testing.B) {
	lens := trainbench.Lengths(b)
	for _, v := range []struct {
		name string
		opts cuda.Options
	}{
		{"eager", cuda.Options{NoGraphs: true}},
		{"graphs", cuda.Options{}},
		{"graphs+tf32", cuda.Options{TF32: true}},
	} {
		v.opts.Env = cuda.EnvFromOS("")
		gpu, err := cuda.Open(v.opts)
		if err != nil {
			b.Skipf("no GPU: %v", err)
		}
		for _, batch := range []int{100, 1000} {
			for _, enc := range benchEncoders() {
				b.Run(fmt.Sprintf("%s/%s/batch%d", v.name, enc, batch), func(b *testing.B) {
					trainbench.RunConfig(b, benchConfig(enc, batch), gpu, lens)
				})
			}
		}
		if err := gpu.Close(); err != nil {
			b.Fatal(err)
		}
	}
}
