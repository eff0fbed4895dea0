package pipelines_test

import (
	"context"
	"os"
	"path/filepath"
	"runtime/debug"
	"strconv"
	"testing"
	"time"

	"github.com/klauspost/compress/zstd"

	"github.com/parastream/parastream/corpora"
	"github.com/parastream/parastream/corpora/synth"
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
	st, err := synth.Reddit(zw, synth.Config{Rows: n, Seed: 11})
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
	for i := 0; i < b.N; i++ {
		// The plain loop: read, normalise, filter and tokenise, in one
		// goroutine, keeping nothing.
		start := time.Now()
		r, err := corpora.OpenFormat("reddit-comments", []string{input}, corpora.Options{})
		if err != nil {
			b.Fatal(err)
		}
		prep := cfg.Prepare
		prep.Reddit = true
		kept := 0
		err = corpora.Drain(r, func(e corpora.Example) error {
			row := shards.TakeExample(&e, "")
			if prep.Apply(&row) == "" {
				kept++
			}
			return nil
		}, nil)
		r.Close()
		if err != nil {
			b.Fatal(err)
		}
		loopSecs += time.Since(start).Seconds()

		start = time.Now()
		c := cfg
		c.Out = filepath.Join(dir, "out")
		if _, err := pipelines.RunExtract(context.Background(), c, pipelines.RunOptions{}); err != nil {
			b.Fatal(err)
		}
		pipeSecs += time.Since(start).Seconds()
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
}
