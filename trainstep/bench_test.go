package trainstep_test

import (
	"bufio"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/parastream/parastream/internal/testenv"
	"github.com/parastream/parastream/trainstep"
)

// benchLengths are sentence lengths in tokens: those of the STS 2012 test
// sentences when ../shared/data is there, else lengths drawn uniformly from
// 4 to 24.
func benchLengths(b *testing.B) []int {
	dir := filepath.Join(testenv.Root(), "..", "shared", "data", "eval", "sts", "2012")
	files, _ := filepath.Glob(filepath.Join(dir, "STS.input.*.txt"))
	var lens []int
	for _, f := range files {
		fh, err := os.Open(f)
		if err != nil {
			continue
		}
		sc := bufio.NewScanner(fh)
		for sc.Scan() {
			for _, s := range strings.Split(sc.Text(), "\t") {
				if n := len(strings.Fields(s)); n > 0 {
					lens = append(lens, n)
				}
			}
		}
		fh.Close()
	}
	if len(lens) == 0 {
		b.Log("../shared/data/eval/sts/2012 absent: synthetic lengths 4-24")
		rng := rand.New(rand.NewPCG(1, 1))
		for range 2000 {
			lens = append(lens, 4+rng.IntN(21))
		}
	}
	return lens
}

// BenchmarkTrainStep measures training throughput (pairs/s) at the
// research's sizes: batch 100, dimension 300, STS sentence lengths, a
// vocabulary of 20,000 words, margin loss with max negatives, Adam.
func BenchmarkTrainStep(b *testing.B) {
	lens := benchLengths(b)
	for _, enc := range []string{"avg", "lstmavg", "gran"} {
		b.Run(enc, func(b *testing.B) {
			const vocab, batch = 20000, 100
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
			tr, err := trainstep.New(trainstep.Config{Encoder: enc, Dim: 300, Vocab: vocab, BatchSize: batch}, trainstep.Options{})
			if err != nil {
				b.Fatal(err)
			}
			defer tr.Close()
			for _, bt := range batches { // build every bucket's graph first
				if _, err := tr.Step(bt); err != nil {
					b.Fatal(err)
				}
			}
			b.ResetTimer()
			n := 0
			for i := 0; i < b.N; i++ {
				bt := batches[i%len(batches)]
				if _, err := tr.Step(bt); err != nil {
					b.Fatal(err)
				}
				n += len(bt)
			}
			b.ReportMetric(float64(n)/b.Elapsed().Seconds(), "pairs/s")
		})
	}
}
