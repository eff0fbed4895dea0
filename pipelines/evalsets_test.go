package pipelines_test

import (
	"maps"
	"strings"
	"testing"

	"github.com/parastream/parastream/pipelines"
	"github.com/parastream/parastream/shards"
)

// splitRows is the rows of every (corpus, split) of an output's manifest.
func splitRows(t *testing.T, out string) map[string]int64 {
	t.Helper()
	m, err := shards.ReadManifest(out)
	if err != nil {
		t.Fatal(err)
	}
	if err := m.Verify(out); err != nil {
		t.Fatal(err)
	}
	got := map[string]int64{}
	for _, sp := range m.Splits {
		got[sp.Corpus+"/"+sp.Split] = sp.Rows
	}
	return got
}

// extractEval extracts one evaluation set into out, resolving its input
// as the command line does (a TrecQA folder), and checks that no pair was
// filtered or deduplicated.
func extractEval(t *testing.T, corpus, input, out string) *pipelines.Summary {
	t.Helper()
	c := cfg(corpus, input, "")
	c.Out = out
	if err := c.ResolveInputs(); err != nil {
		t.Fatal(err)
	}
	sum := extract(t, c)
	for k, v := range sum.Counters {
		if v != 0 && (strings.HasPrefix(k, "filtered_") || strings.HasPrefix(k, "dedupe_")) {
			t.Errorf("%s: %s = %d: an evaluation set must keep every pair", corpus, k, v)
		}
	}
	checkConservation(t, sum)
	return sum
}

// Several evaluation sets extracted one after the other into one
// directory keep their official splits, side by side in its manifest, and
// the single-text sets (SST, MR) keep every row although B is empty.
func TestExtractEvalSetsFixture(t *testing.T) {
	out := t.TempDir()
	extractEval(t, "sst", fixture("evalsets/[sS]*-*"), out)
	extractEval(t, "mr", fixture("evalsets/mr"), out)
	extractEval(t, "trecqa", fixture("evalsets/trecqa"), out)
	extractEval(t, "snli", fixture("evalsets/snli_1.0_dev.mini.txt"), out)
	extractEval(t, "scws", fixture("evalsets/ratings.txt"), out)
	want := map[string]int64{
		"sst/train": 3, "sst/dev": 3, "mr/test": 5, "trecqa/dev": 4, "snli/dev": 3, "scws/test": 2,
	}
	if got := splitRows(t, out); !maps.Equal(got, want) {
		t.Errorf("manifest splits %v, want %v", got, want)
	}
	for _, corpus := range []string{"sst", "mr"} {
		split := map[string]string{"sst": "dev", "mr": "test"}[corpus]
		r, err := shards.OpenSplit(out, corpus, split)
		if err != nil {
			t.Fatal(err)
		}
		for row, err := range r.All() {
			if err != nil {
				t.Fatal(err)
			}
			if row.B != "" || len(row.TokensA) == 0 || row.Label == nil {
				t.Errorf("%s row %+v", corpus, row)
			}
		}
		r.Close()
	}
}

// Every evaluation set of ../shared/data extracts with its official
// splits and every pair the readers yield (counts in corpora's tests,
// from the data's README).
func TestExtractSharedEvalSets(t *testing.T) {
	if testing.Short() {
		t.Skip("long test, run by make test-long: extracts every real evaluation set (about half a minute)")
	}
	d := sharedData(t, "eval")
	for _, c := range []struct {
		corpus, input string
		splits        map[string]int64
	}{
		{"snli", d + "/snli/snli_1.0_*.jsonl.gz", map[string]int64{"dev": 9842, "train": 1022}},
		{"msrp", sharedData(t, "corpora/msrp/msr_paraphrase_train.txt"), map[string]int64{"train": 4076}},
		{"sst", d + "/sst/sentiment-*", map[string]int64{"train": 67349, "dev": 872}},
		{"mr", d + "/mr", map[string]int64{"test": 10662}},
		{"semeval-cqa", d + "/semeval2017-cqa/*.xml", map[string]int64{"train": 670, "dev": 500}},
		{"trecqa", d + "/trecqa", map[string]int64{"train": 4718, "dev": 1148 + 1117}},
		{"wikiqa", d + "/wikiqa/*.tsv.gz", map[string]int64{"train": 20360, "dev": 2733}},
		{"scws", d + "/scws/ratings.txt", map[string]int64{"test": 2003}},
	} {
		t.Run(c.corpus, func(t *testing.T) {
			out := t.TempDir()
			sum := extractEval(t, c.corpus, c.input, out)
			if !maps.Equal(sum.Splits, c.splits) {
				t.Errorf("splits %v, want %v", sum.Splits, c.splits)
			}
			checkOutput(t, out)
		})
	}
}
