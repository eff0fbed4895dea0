package synth_test

import (
	"io"
	"testing"

	"github.com/parastream/parastream/corpora/synth"
)

// benchRows runs a generator over io.Discard and reports MB/s of
// uncompressed output and rows/s.
func benchRows(b *testing.B, rows int64, gen func(ws []io.Writer, cfg synth.Config) (synth.Stats, error), files int, cfg synth.Config) {
	ws := make([]io.Writer, files)
	for i := range ws {
		ws[i] = io.Discard
	}
	var bytes int64
	n := 0
	for b.Loop() {
		cfg.Rows, cfg.Seed = rows, uint64(n)
		st, err := gen(ws, cfg)
		if err != nil {
			b.Fatal(err)
		}
		bytes += st.Bytes
		n++
	}
	b.SetBytes(bytes / int64(n))
	b.ReportMetric(float64(rows*int64(n))/b.Elapsed().Seconds(), "rows/s")
}

// BenchmarkReddit measures the comment generator on one core (the default
// mixed layout).
func BenchmarkReddit(b *testing.B) {
	benchRows(b, 100000, generators[0].gen, 1, synth.Config{})
}

// BenchmarkReddit2024 measures the 71-key layout of recent dumps.
func BenchmarkReddit2024(b *testing.B) {
	benchRows(b, 100000, generators[0].gen, 1, synth.Config{Era: "2024"})
}

func BenchmarkRedditWithSubmissions(b *testing.B) {
	benchRows(b, 100000, func(ws []io.Writer, c synth.Config) (synth.Stats, error) {
		cs, ss, err := synth.RedditThreads(ws[0], ws[1], c)
		cs.Bytes += ss.Bytes
		return cs, err
	}, 2, synth.Config{})
}

func BenchmarkEuroparl(b *testing.B) { benchRows(b, 100000, generators[2].gen, 2, synth.Config{}) }
func BenchmarkPPDB(b *testing.B)     { benchRows(b, 100000, generators[3].gen, 1, synth.Config{}) }
func BenchmarkQuora(b *testing.B)    { benchRows(b, 100000, generators[5].gen, 1, synth.Config{}) }
func BenchmarkSimpWiki(b *testing.B) { benchRows(b, 100000, generators[6].gen, 2, synth.Config{}) }
