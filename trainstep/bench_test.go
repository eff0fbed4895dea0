package trainstep_test

import (
	"testing"

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
