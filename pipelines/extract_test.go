package pipelines_test

import (
	"context"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/apache/beam/sdks/v2/go/pkg/beam/testing/ptest"

	"github.com/parastream/parastream/corpora/synth"
	"github.com/parastream/parastream/internal/testenv"
	"github.com/parastream/parastream/pipelines"
	"github.com/parastream/parastream/shards"
	"github.com/parastream/parastream/transforms"
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

// Without a token budget the dedupe stage writes the shards itself
// (transforms.DedupeAndWrite); a budget larger than the corpus takes the
// two-stage path (DedupeAndSplit, then WriteShards) and keeps every pair.
// Both must give the same shards, byte for byte, and so must spill files
// of S2 blocks (--spill-compression s2) and of stored ones (the default
// on a local disk).
func TestDedupeAndWriteMatchesTwoStages(t *testing.T) {
	input := filepath.Join(t.TempDir(), "RC.jsonl")
	f, err := os.Create(input)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := synth.Reddit(f, synth.Config{Rows: 20000, Seed: 3}); err != nil {
		t.Fatal(err)
	}
	f.Close()
	files := func(budget int64, compression string) ([]shards.ShardInfo, *pipelines.Summary) {
		c := cfg("reddit", input, "")
		c.Out, c.Buckets, c.Budget.Tokens, c.SpillCompression = t.TempDir(), 7, budget, compression
		c.Shards.MaxRows = 1000
		sum := extract(t, c)
		m, err := shards.ReadManifest(c.Out)
		if err != nil {
			t.Fatal(err)
		}
		return m.Files, sum
	}
	fused, fs := files(0, "")
	twoStage, ts := files(1<<40, "")
	if len(fused) < 4 || !slices.Equal(fused, twoStage) {
		t.Fatalf("fused shards %v\ntwo-stage shards %v", fused, twoStage)
	}
	if s2, _ := files(1<<40, transforms.SpillS2); !slices.Equal(fused, s2) {
		t.Fatalf("shards with stored spill blocks %v\nwith S2 blocks %v", fused, s2)
	}
	for _, k := range []string{"dedupe_exact", "dedupe_normalized", "written_train", "written_dev", "written_test"} {
		if fs.Counters[k] != ts.Counters[k] {
			t.Errorf("%s: fused %d, two-stage %d", k, fs.Counters[k], ts.Counters[k])
		}
	}
	if fs.Counters["dedupe_exact"]+fs.Counters["dedupe_normalized"] == 0 {
		t.Error("nothing was deduplicated: the test does not exercise dedupe")
	}
}

func TestExtractConfigSpillCompression(t *testing.T) {
	c := cfg("quora", fixture("quora/mini.tsv"), "")
	c.Out = t.TempDir()
	for _, v := range append(transforms.SpillCompressions(), "") {
		c.SpillCompression = v
		if err := c.Validate(); err != nil {
			t.Errorf("--spill-compression %q: %v", v, err)
		}
	}
	c.SpillCompression = "zstd"
	if err := c.Validate(); err == nil || !strings.Contains(err.Error(), "--spill-compression") {
		t.Errorf("--spill-compression zstd: %v, want an error naming the flag", err)
	}
}

// The last progress line, printed when the run ends, gives the counts the
// summary gives: records read, duplicates dropped and rows written.
func TestProgressAgreesWithSummary(t *testing.T) {
	input := filepath.Join(t.TempDir(), "RC.jsonl")
	f, err := os.Create(input)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := synth.Reddit(f, synth.Config{Rows: 5000, Seed: 3}); err != nil {
		t.Fatal(err)
	}
	f.Close()
	c := cfg("reddit", input, "")
	c.Out, c.Buckets = t.TempDir(), 3
	var progress strings.Builder
	sum, err := pipelines.RunExtract(context.Background(), c, pipelines.RunOptions{Progress: &progress, ProgressEvery: time.Hour})
	if err != nil {
		t.Fatal(err)
	}
	m := regexp.MustCompile(`read (\d+) records .* duplicates dropped (\d+)  written (\d+)\n$`).FindStringSubmatch(progress.String())
	if m == nil {
		t.Fatalf("no final progress line in %q", progress.String())
	}
	var written int64
	for _, n := range sum.Splits {
		written += n
	}
	k := sum.Counters
	want := []int64{k["read"], k["dedupe_exact"] + k["dedupe_normalized"] + k["dedupe_external"], written}
	for i, name := range []string{"read", "duplicates dropped", "written"} {
		if got, _ := strconv.ParseInt(m[i+1], 10, 64); got != want[i] {
			t.Errorf("%s: progress %d, summary %d", name, got, want[i])
		}
	}
	if want[1] == 0 {
		t.Error("nothing was deduplicated: the test does not exercise dedupe")
	}
}
