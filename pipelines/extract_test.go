package pipelines_test

import (
	"context"
	"testing"

	"github.com/apache/beam/sdks/v2/go/pkg/beam/testing/ptest"

	"github.com/parastream/parastream/internal/testenv"
	"github.com/parastream/parastream/pipelines"
	"github.com/parastream/parastream/shards"
)

func TestMain(m *testing.M) { ptest.Main(m) }

// fixture and sharedData locate test files (see testenv).
func fixture(rel string) string { return testenv.Fixture(rel) }

func sharedData(t testing.TB, rel string) string {
	t.Helper()
	return testenv.SharedData(t, rel)
}

func extract(t *testing.T, cfg pipelines.ExtractConfig) *pipelines.Summary {
	t.Helper()
	sum, err := pipelines.RunExtract(context.Background(), cfg, pipelines.RunOptions{})
	if err != nil {
		t.Fatalf("extract %s: %v", cfg.Corpus, err)
	}
	return sum
}

func TestExtractQuoraFixture(t *testing.T) {
	out := t.TempDir()
	c := cfg("quora", fixture("quora/mini.tsv"), "")
	c.Out = out
	sum := extract(t, c)
	t.Logf("%+v", sum)
	m, err := shards.ReadManifest(out)
	if err != nil {
		t.Fatal(err)
	}
	if err := m.Verify(out); err != nil {
		t.Fatal(err)
	}
	var total int64
	for _, n := range sum.Splits {
		total += n
	}
	if total == 0 || sum.Counters["parsed"] != 8 {
		t.Fatalf("summary %+v", sum)
	}
}

// cfg is an extraction with the command line's defaults.
func cfg(corpus, input, inputB string) pipelines.ExtractConfig {
	c := pipelines.NewExtractConfig(corpus, input, "")
	c.InputB = inputB
	return c
}
