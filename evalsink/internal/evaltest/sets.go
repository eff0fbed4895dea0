package evaltest

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

	"github.com/parastream/parastream/evalsink"
	"github.com/parastream/parastream/internal/testenv"
	"github.com/parastream/parastream/pipelines"
	"github.com/parastream/parastream/trainstep"
)

// Extracted is a directory of shards extracted once per test binary.
type Extracted struct {
	once sync.Once
	dir  string
	err  error
}

// Fixtures are the extracted sets the tests of one binary share: a test
// package declares one, and its TestMain calls Cleanup after the tests.
type Fixtures struct {
	real    Extracted // ../shared STS, STS Benchmark, SICK, Quora
	fixture Extracted // the repository's own fixtures (sts, stsb, sick, quora, reddit)
	rank    Extracted // ../shared SemEval CQA, TrecQA, WikiQA, SCWS
}

// Get runs the extraction pipeline for each corpus and input glob into
// one directory under the system's temporary directory (removed by
// Remove after the tests), once per test binary.
func (x *Extracted) Get(t *testing.T, inputs [][2]string) string {
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

// SharedSets extracts the real STS, STS Benchmark, SICK and Quora data of
// ../shared/data, or skips.
func (f *Fixtures) SharedSets(t *testing.T) string {
	t.Helper()
	eval := testenv.SharedData(t, "eval")
	quora := testenv.SharedData(t, "corpora/quora/quora_duplicate_questions.sample.tsv")
	return f.real.Get(t, [][2]string{
		{"sts", filepath.Join(eval, "sts", "*", "STS.input.*.txt")},
		{"stsb", filepath.Join(eval, "stsbenchmark", "sts-*.csv")},
		{"sick", filepath.Join(eval, "sick", "SICK_*.txt")},
		{"quora", quora},
	})
}

// RankingSets extracts the real ranking sets (SemEval-2016 Task 3
// train part 2 and dev, TrecQA train, raw and clean dev, WikiQA train and
// dev) and SCWS of ../shared/data, or skips.
func (f *Fixtures) RankingSets(t *testing.T) string {
	t.Helper()
	eval := testenv.SharedData(t, "eval")
	return f.rank.Get(t, [][2]string{
		{"semeval-cqa", filepath.Join(eval, "semeval2017-cqa", "*.xml")},
		{"trecqa", filepath.Join(eval, "trecqa", "*", "a.toks")},
		{"wikiqa", filepath.Join(eval, "wikiqa", "WikiQA-*.tsv.gz")},
		{"scws", filepath.Join(eval, "scws", "ratings.txt")},
	})
}

// FixtureSets extracts the repository's fixtures.
func (f *Fixtures) FixtureSets(t *testing.T) string {
	t.Helper()
	return f.fixture.Get(t, [][2]string{
		{"sts", testenv.Fixture("sts/*/STS.input.*.txt")},
		{"stsb", testenv.Fixture("stsb/sts-*.csv")},
		{"sick", testenv.Fixture("sick/SICK_*.txt")},
	})
}

// LoadSets loads the sets under dir.
func LoadSets(t *testing.T, dir string) *evalsink.Sets {
	t.Helper()
	s, err := evalsink.LoadSets(context.Background(), dir, nil)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// Vocabulary is the special tokens, then the sets' tokens by decreasing
// count (ties by string), at most n words (0: all).
func Vocabulary(sets *evalsink.Sets, n int) []string {
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

// Checkpoint saves a word-averaging model with random embeddings (drawn
// from seed) over vocab as a checkpoint under dir/name, and returns its
// directory.
func Checkpoint(t *testing.T, dir, name string, vocab []string, seed uint64) string {
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

// Remove removes the directory x extracted into, if any.
func (x *Extracted) Remove() {
	if x.dir != "" {
		os.RemoveAll(x.dir)
	}
}

// Cleanup removes the directories of the sets extracted.
func (f *Fixtures) Cleanup() {
	for _, x := range []*Extracted{&f.real, &f.fixture, &f.rank} {
		x.Remove()
	}
}

// Logger logs warnings and errors to the test's output.
func Logger(t testing.TB) *slog.Logger {
	return slog.New(slog.NewTextHandler(Writer{T: t}, &slog.HandlerOptions{Level: slog.LevelWarn}))
}

// Writer writes to the test's log, a line a Write.
type Writer struct{ T testing.TB }

func (w Writer) Write(p []byte) (int, error) {
	w.T.Helper()
	w.T.Log(strings.TrimSpace(string(p)))
	return len(p), nil
}
