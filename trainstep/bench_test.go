package trainstep_test

import (
	"fmt"
	"testing"

	"github.com/parastream/parastream/trainstep"
	"github.com/parastream/parastream/trainstep/compute"
	"github.com/parastream/parastream/trainstep/internal/trainbench"
)

// BenchmarkTrainStep measures training throughput (pairs/s) at the
// research's sizes: batch 100, dimension 300, STS sentence lengths, a
// vocabulary of 20,000 words, margin loss with max negatives, Adam.
func BenchmarkTrainStep(b *testing.B) {
	lens := trainbench.Lengths(b)
	for _, enc := range []string{"avg", "lstmavg", "gran"} {
		b.Run(enc, func(b *testing.B) { trainbench.Run(b, enc, 100, nil, lens) })
	}
}

// BenchmarkVocabScaling measures avg at batch 100, dimension 300 and STS
// lengths with vocabularies of 20,000, 100,000 and 400,000 words, with the
// sparse embedding update (the default: a step updates its batch's rows)
// and the dense one (every row), and logs pairs/s at 400,000 words over
// pairs/s at 20,000 for each: the sparse step's cost must not grow with the
// vocabulary. It measures the steady state (trainbench.RunConfig): the
// warm-up steps, outside the timer, last until the heap has been collected
// twice; give it enough steps (make bench: -benchtime 200x) that a run's
// figure is an average, not the luck of a few steps.
func BenchmarkVocabScaling(b *testing.B) {
	lens := trainbench.Lengths(b)
	for _, up := range []string{compute.UpdateSparse, compute.UpdateDense} {
		rates := map[int]float64{}
		for _, v := range []int{20_000, 100_000, 400_000} {
			name := fmt.Sprintf("vocab=%d", v)
			if up == compute.UpdateDense {
				name = "dense/" + name
			}
			b.Run(name, func(b *testing.B) {
				rates[v] = trainbench.RunConfig(b, trainstep.Config{Encoder: "avg", Dim: 300, Vocab: v, BatchSize: 100, EmbeddingUpdate: up}, nil, lens)
			})
		}
		if rates[20_000] > 0 && rates[400_000] > 0 {
			b.Logf("%s: %.0f pairs/s at 20,000 words, %.0f at 100,000, %.0f at 400,000: 400,000/20,000 = %.2f",
				up, rates[20_000], rates[100_000], rates[400_000], rates[400_000]/rates[20_000])
		}
	}
}
