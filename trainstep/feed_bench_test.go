package trainstep_test

import (
	"context"
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/parastream/parastream/internal/sysmem"
	"github.com/parastream/parastream/shards"
	"github.com/parastream/parastream/trainstep"
	"github.com/parastream/parastream/trainstep/internal/trainbench"
)

// BenchmarkRunFeed measures Run end to end from the embedded broker, in
// examples/s, for avg at the step benchmark's sizes (batch 100, dimension
// 300, 20,000 words, STS lengths), 20,000 rows (200 steps) with a
// checkpoint every 50 (with the seconds the loop waited for the feed and in
// checkpoints, and the peak RSS of the variant's runs): the serial feed with synchronous checkpoints (as
// before), then the feed ahead and the background checkpoints alone and
// together, in the same process and on the same published rows. It logs
// each rate over the serial one's.
func BenchmarkRunFeed(b *testing.B) {
	const rows = 20_000
	lens := trainbench.Lengths(b)
	rng := rand.New(rand.NewPCG(3, 4))
	side := func() []int32 {
		ids := make([]int32, lens[rng.IntN(len(lens))])
		for i := range ids {
			ids[i] = rng.Int32N(trainbench.Vocab)
		}
		return ids
	}
	data := make([]shards.Row, rows)
	for i := range data {
		data[i] = shards.Row{ID: fmt.Sprint("r", i), IDsA: side(), IDsB: side()}
	}
	cc := publishRows(b, "para", data, true)
	vocab := make([]string, trainbench.Vocab)
	for i := range vocab {
		vocab[i] = fmt.Sprint("w", i)
	}
	rates := map[string]float64{}
	runs := 0 // each run its own consumer group
	variants := []struct {
		name  string
		ahead int
		sync  bool
	}{{"serial-sync", -1, true}, {"ahead-sync", trainstep.DefaultFeedAhead, true}, {"serial-async", -1, false}, {"ahead-async", trainstep.DefaultFeedAhead, false}}
	for _, v := range variants {
		b.Run(v.name, func(b *testing.B) {
			var examples int64
			var secs, feedWait, ckWait float64
			// The peak of this variant's runs alone, not of the setup.
			peakRSS := sysmem.TrackPeakRSS()
			for range b.N {
				runs++
				sum, err := trainstep.Run(context.Background(), trainstep.RunConfig{
					Client: cc, Dataset: "para", Run: fmt.Sprintf("bench-%s-%d", v.name, runs), Vocab: vocab,
					Model:  trainstep.Config{Encoder: "avg", Dim: 300, BatchSize: 100},
					Epochs: 1, CheckpointDir: b.TempDir(), CheckpointEvery: 50, FeedAhead: v.ahead, CheckpointSync: v.sync,
				})
				if err != nil {
					b.Fatal(err)
				}
				examples += sum.Examples
				secs += sum.Elapsed.Seconds()
				feedWait += sum.FeedWait.Seconds()
				ckWait += sum.CheckpointWait.Seconds()
			}
			rates[v.name] = float64(examples) / secs
			b.ReportMetric(rates[v.name], "examples/s")
			b.ReportMetric(feedWait/float64(b.N), "feed-wait-s/run")
			b.ReportMetric(ckWait/float64(b.N), "checkpoint-wait-s/run")
			if peak, ok := peakRSS(); ok {
				b.ReportMetric(float64(peak)/(1<<20), "peak-RSS-MiB")
			}
		})
	}
	if base := rates["serial-sync"]; base > 0 {
		for _, v := range variants[1:] {
			b.Logf("%s: %.0f examples/s, %.2f × serial-sync's %.0f", v.name, rates[v.name], rates[v.name]/base, base)
		}
	}
}
