package pipelines_test

import (
	"context"
	"os"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	"github.com/parastream/parastream/corpora/synth"
	"github.com/parastream/parastream/pipelines"
)

// BenchmarkFeaturize extracts generated Quora pairs (100,000 by default;
// PARASTREAM_BENCH_PAIRS overrides), then featurizes them with the default
// settings (50 topics fitted on a sample of 50,000 texts), and reports the
// fit's time and the throughput of the featurizing pipeline in texts/s
// (reading, ids, tf-idf, the NMF transform of both sides, writing).
func BenchmarkFeaturize(b *testing.B) {
	n := int64(100_000)
	if s := os.Getenv("PARASTREAM_BENCH_PAIRS"); s != "" {
		v, err := strconv.ParseInt(s, 10, 64)
		if err != nil {
			b.Fatal(err)
		}
		n = v
	}
	dir := b.TempDir()
	input := filepath.Join(dir, "quora.tsv")
	f, err := os.Create(input)
	if err != nil {
		b.Fatal(err)
	}
	if _, err := synth.Quora(f, synth.Config{Rows: n, Seed: 9}); err != nil {
		b.Fatal(err)
	}
	f.Close()
	in := filepath.Join(dir, "shards")
	c := pipelines.NewExtractConfig("quora", input, in)
	if _, err := pipelines.RunExtract(context.Background(), c, pipelines.RunOptions{}); err != nil {
		b.Fatal(err)
	}
	b.ResetTimer()
	var fitSecs, applySecs float64
	var texts int64
	for i := 0; i < b.N; i++ {
		fc := pipelines.NewFeaturizeConfig(in, filepath.Join(dir, "out"))
		start := time.Now()
		sum, err := pipelines.RunFeaturize(context.Background(), fc, pipelines.RunOptions{GCPercent: pipelines.DefaultGCPercent})
		if err != nil {
			b.Fatal(err)
		}
		total := time.Since(start).Seconds()
		// Applying the saved model again times the featurizing pipeline
		// alone.
		fc.Model = filepath.Join(fc.Out, "featurize")
		start = time.Now()
		again, err := pipelines.RunFeaturize(context.Background(), fc, pipelines.RunOptions{GCPercent: pipelines.DefaultGCPercent})
		if err != nil {
			b.Fatal(err)
		}
		apply := time.Since(start).Seconds()
		applySecs += apply
		fitSecs += total - apply
		texts += again.Stats.Texts
		b.Logf("k %d, vocabulary %d, relative error %.4f after %d iterations on %d texts", sum.Model.NMF.K, sum.Model.Vocab.Len(), sum.Model.Info.RelError, sum.Model.Info.Iters, sum.Model.Info.FitTexts)
	}
	b.ReportMetric(float64(texts)/applySecs, "apply-texts/s")
	b.ReportMetric(fitSecs/float64(b.N), "count+fit-s")
}
