package pipelines_test

import (
	"context"
	"os"
	"path/filepath"
	"runtime"
	"runtime/debug"
	"runtime/pprof"
	"strconv"
	"testing"
	"time"

	"github.com/klauspost/compress/zstd"

	"github.com/parastream/parastream/corpora"
	"github.com/parastream/parastream/corpora/synth"
	"github.com/parastream/parastream/internal/sysmem"
	"github.com/parastream/parastream/pipelines"
	"github.com/parastream/parastream/shards"
)

// BenchmarkExtractReddit extracts generated Reddit comments (1 million by
// default; PARASTREAM_BENCH_COMMENTS overrides) end to end with the Beam
// pipeline on Prism, and in the same run does the same parse, filter and
// tokenise work in a plain Go loop over the same file, and reports both
// throughputs and their ratio (pipeline/loop). The pipeline does more than
// the loop: it also pairs threads, removes duplicates, splits and writes
// Parquet shards.
func BenchmarkExtractReddit(b *testing.B) {
	n := int64(1_000_000)
	if s := os.Getenv("PARASTREAM_BENCH_COMMENTS"); s != "" {
		v, err := strconv.ParseInt(s, 10, 64)
		if err != nil {
			b.Fatal(err)
		}
		n = v
	}
	dir := b.TempDir()
	input := filepath.Join(dir, "RC_bench.zst")
	f, err := os.Create(input)
	if err != nil {
		b.Fatal(err)
	}
	zw, _ := zstd.NewWriter(f)
	var st synth.Stats
	// Profile labels ("part": gen, loop, pipeline) let a CPU profile of the
	// benchmark be split: go tool pprof -tagfocus part=pipeline.
	pprof.Do(context.Background(), pprof.Labels("part", "gen"), func(context.Context) {
		st, err = synth.Reddit(zw, synth.Config{Rows: n, Seed: 11})
	})
	if err != nil {
		b.Fatal(err)
	}
	zw.Close()
	f.Close()
	mb := float64(st.Bytes) / 1e6
	b.Logf("%d generated comments, %.0f MB of JSON", n, mb)

	// Both sides run with the collector target the CLI uses.
	defer debug.SetGCPercent(debug.SetGCPercent(pipelines.DefaultGCPercent))
	cfg := pipelines.NewExtractConfig("reddit", input, "")
	var loopSecs, pipeSecs float64
	var loopAllocs, pipeAllocs uint64
	var peak int64
	for i := 0; i < b.N; i++ {
		// The plain loop: read, normalise, filter and tokenise, in one
		// goroutine, keeping nothing.
		kept := 0
		secs, allocs := timed(b, "loop", func() error {
			r, err := corpora.OpenFormat("reddit-comments", []string{input}, corpora.Options{})
			if err != nil {
				return err
			}
			defer r.Close()
			prep := cfg.Prepare
			prep.Reddit = true
			return corpora.Drain(r, func(e corpora.Example) error {
				row := shards.TakeExample(&e, "")
				if prep.Apply(&row) == "" {
					kept++
				}
				return nil
			}, nil)
		})
		loopSecs += secs
		loopAllocs += allocs

		c := cfg
		c.Out = filepath.Join(dir, "out")
		// The pipeline's peak resident memory, the loop's and the
		// generator's left behind.
		runtime.GC()
		debug.FreeOSMemory()
		peakRSS := sysmem.TrackPeakRSS()
		secs, allocs = timed(b, "pipeline", func() error {
			_, err := pipelines.RunExtract(context.Background(), c, pipelines.RunOptions{})
			return err
		})
		if p, ok := peakRSS(); ok {
			peak = max(peak, p)
		}
		pipeSecs += secs
		pipeAllocs += allocs
		if kept == 0 {
			b.Fatal("the loop kept nothing")
		}
	}
	runs := float64(b.N)
	b.ReportMetric(float64(n)*runs/loopSecs, "loop-comments/s")
	b.ReportMetric(mb*runs/loopSecs, "loop-MB/s")
	b.ReportMetric(float64(n)*runs/pipeSecs, "pipeline-comments/s")
	b.ReportMetric(mb*runs/pipeSecs, "pipeline-MB/s")
	b.ReportMetric(loopSecs/pipeSecs, "pipeline/loop")
	// Allocations per comment read: the process's heap allocations
	// (runtime.MemStats.Mallocs) while each part ran, Prism's included.
	b.ReportMetric(float64(loopAllocs)/(float64(n)*runs), "loop-allocs/comment")
	b.ReportMetric(float64(pipeAllocs)/(float64(n)*runs), "pipeline-allocs/comment")
	if peak > 0 {
		b.ReportMetric(float64(peak)/(1<<20), "peak-RSS-MiB")
	}
}

// timed runs fn under the profile label part=name and returns its wall time
// and the heap allocations the process made meanwhile.
func timed(b *testing.B, name string, fn func() error) (secs float64, mallocs uint64) {
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	start := time.Now()
	var err error
	pprof.Do(context.Background(), pprof.Labels("part", name), func(context.Context) { err = fn() })
	secs = time.Since(start).Seconds()
	runtime.ReadMemStats(&after)
	if err != nil {
		b.Fatal(err)
	}
	return secs, after.Mallocs - before.Mallocs
}
