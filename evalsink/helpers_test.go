package evalsink_test

import (
	"cmp"
	"context"
	"log/slog"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/apache/beam/sdks/v2/go/pkg/beam/testing/ptest"

	"github.com/parastream/parastream/evalsink"
	"github.com/parastream/parastream/evalsink/internal/evaltest"
	"github.com/parastream/parastream/internal/testenv"
	"github.com/parastream/parastream/pipelines"
	"github.com/parastream/parastream/trainstep"
)

func TestMain(m *testing.M) {
	code := ptest.MainRet(m)
	cleanupExtracted()
	os.Exit(code)
}

// extracted is a directory of shards extracted once per test binary.
type extracted struct {
	once sync.Once
	dir  string
	err  error
}

var (
	realSets    extracted // ../shared STS, STS Benchmark, SICK, Quora
	fixtureSets extracted // the repository's own fixtures (sts, stsb, sick, quora, reddit)
	rankSets    extracted // ../shared SemEval CQA, TrecQA, WikiQA, SCWS
)

// get runs the extraction pipeline for each corpus and input glob into
// one directory under the system's temporary directory (removed by
// cleanupExtracted after the tests), once per test binary.
func (x *extracted) get(t *testing.T, inputs [][2]string) string {
	t.Helper()
	x.once.Do(func() {
		x.dir, x.err = os.MkdirTemp("", "evalsink-sets-")
		for _, in := range inputs {
			if x.err != nil {
				return
			}
			cfg := pipelines.NewExtractConfig(in[0], in[1], x.dir)
			_, x.err = pipelines.RunExtract(context.Background(), cfg, pipelines.RunOptions{})
		}
	})
	if x.err != nil {
		t.Fatal(x.err)
	}
	return x.dir
}

// sharedSets extracts the real STS, STS Benchmark, SICK and Quora data of
// ../shared/data, or skips.
func sharedSets(t *testing.T) string {
	t.Helper()
	eval := testenv.SharedData(t, "eval")
	quora := testenv.SharedData(t, "corpora/quora/quora_duplicate_questions.sample.tsv")
	return realSets.get(t, [][2]string{
		{"sts", filepath.Join(eval, "sts", "*", "STS.input.*.txt")},
		{"stsb", filepath.Join(eval, "stsbenchmark", "sts-*.csv")},
		{"sick", filepath.Join(eval, "sick", "SICK_*.txt")},
		{"quora", quora},
	})
}

// rankingSetsDir extracts the real ranking sets (SemEval-2016 Task 3
// train part 2 and dev, TrecQA train, raw and clean dev, WikiQA train and
// dev) and SCWS of ../shared/data, or skips.
func rankingSetsDir(t *testing.T) string {
	t.Helper()
	eval := testenv.SharedData(t, "eval")
	return rankSets.get(t, [][2]string{
		{"semeval-cqa", filepath.Join(eval, "semeval2017-cqa", "*.xml")},
		{"trecqa", filepath.Join(eval, "trecqa", "*", "a.toks")},
		{"wikiqa", filepath.Join(eval, "wikiqa", "WikiQA-*.tsv.gz")},
		{"scws", filepath.Join(eval, "scws", "ratings.txt")},
	})
}

// fixtureSetsDir extracts the repository's fixtures.
func fixtureSetsDir(t *testing.T) string {
	t.Helper()
	return fixtureSets.get(t, [][2]string{
		{"sts", testenv.Fixture("sts/*/STS.input.*.txt")},
		{"stsb", testenv.Fixture("stsb/sts-*.csv")},
		{"sick", testenv.Fixture("sick/SICK_*.txt")},
	})
}

// loadSets loads the sets under dir.
func loadSets(t *testing.T, dir string) *evalsink.Sets {
	t.Helper()
	s, err := evalsink.LoadSets(context.Background(), dir, nil)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// vocabulary is the special tokens, then the sets' tokens by decreasing
// count (ties by string), at most n words (0: all).
func vocabulary(sets *evalsink.Sets, n int) []string {
	counts := map[string]int{}
	for _, s := range sets.Sets {
		for _, p := range s.Pairs {
			for _, w := range slices.Concat(p.A, p.B) {
				counts[w]++
			}
		}
	}
	words := slices.SortedFunc(maps.Keys(counts), func(a, b string) int {
		return cmp.Or(cmp.Compare(counts[b], counts[a]), cmp.Compare(a, b))
	})
	if n > 0 && len(words) > n {
		words = words[:n]
	}
	return append([]string{"<pad>", "<unk>", "<s>", "</s>"}, words...)
}

// checkpoint saves a word-averaging model with random embeddings (drawn
// from seed) over vocab as a checkpoint under dir/name, and returns its
// directory.
func checkpoint(t *testing.T, dir, name string, vocab []string, seed uint64) string {
	t.Helper()
	tr, err := trainstep.New(trainstep.Config{Encoder: "avg", Dim: 24, BatchSize: 2, Seed: seed}, trainstep.Options{Vocab: vocab})
	if err != nil {
		t.Fatal(err)
	}
	defer tr.Close()
	out := filepath.Join(dir, name)
	if err := tr.Save(out, nil); err != nil {
		t.Fatal(err)
	}
	return out
}

func cleanupExtracted() {
	for _, x := range []*extracted{&realSets, &fixtureSets, &rankSets} {
		if x.dir != "" {
			os.RemoveAll(x.dir)
		}
	}
}

// testLogger logs warnings and errors to the test's output.
func testLogger(t testing.TB) *slog.Logger {
	return slog.New(slog.NewTextHandler(tWriter{t}, &slog.HandlerOptions{Level: slog.LevelWarn}))
}

type tWriter struct{ t testing.TB }

func (w tWriter) Write(p []byte) (int, error) {
	w.t.Helper()
	w.t.Log(strings.TrimSpace(string(p)))
	return len(p), nil
}

// pythonWith: see evaltest.PythonWith.
func pythonWith(t *testing.T, modules, pkg, require string) string {
	t.Helper()
	return evaltest.PythonWith(t, modules, pkg, require)
}

// runCheck: see evaltest.Run.
func runCheck(t *testing.T, py, script string, in, out any) {
	t.Helper()
	evaltest.Run(t, py, script, in, out)
}
