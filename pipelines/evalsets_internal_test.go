package pipelines

import (
	"bufio"
	"os"
	"slices"
	"strings"
	"testing"

	"github.com/parastream/parastream/corpora"
)

// TestEvalFormatsExtract checks that extraction reads each evaluation set
// as its format's entry says: the set's corpus is a --corpus name that
// reads the format, its shards go under that corpus (the name evalsink
// looks the set up by), a set with an official split keeps it and every
// pair, and single texts are length-checked alone.
func TestEvalFormatsExtract(t *testing.T) {
	for _, f := range corpora.EvalFormats() {
		c := ExtractConfig{Corpus: f.Corpus}
		if !slices.Contains(Corpora(), f.Corpus) || c.formatOf() != f.Name {
			t.Errorf("evaluation set %s: --corpus %s does not read format %s", f.Corpus, f.Corpus, f.Name)
		}
		if c.outName() != f.Corpus || c.corpusName() != f.Corpus {
			t.Errorf("evaluation set %s: extracted under %q, rows of corpus %q", f.Corpus, c.outName(), c.corpusName())
		}
		if c.official() != (f.Eval.Split != nil) || c.eval().SingleText != f.Eval.SingleText || c.eval().Task != f.Eval.Task {
			t.Errorf("evaluation set %s: extraction's official %v, single text %v, task %q; the format's entry %+v",
				f.Corpus, c.official(), c.eval().SingleText, c.eval().Task, f.Eval)
		}
	}
	if (ExtractConfig{Corpus: "ppdb-pairs"}).official() {
		t.Error("ppdb-pairs keeps official splits?")
	}
}

// TestEvalDataTarget checks that the Makefile's eval-data target extracts
// every evaluation set with an official split, and nothing else: the sets
// whose every split parastream eval reads (the retrieval corpora, whose
// held-out test split is evaluated, are training data extracted apart).
func TestEvalDataTarget(t *testing.T) {
	f, err := os.Open("../Makefile")
	if err != nil {
		t.Skipf("no Makefile beside the package: %v", err)
	}
	defer f.Close()
	var got []string
	in := false
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		line := sc.Text()
		switch {
		case strings.HasPrefix(line, "eval-data:"):
			in = true
		case in && !strings.HasPrefix(line, "\t"):
			in = false
		case in:
			fields := strings.Fields(line)
			if i := slices.Index(fields, "--corpus"); i >= 0 && i+1 < len(fields) {
				got = append(got, fields[i+1])
			}
		}
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	var want []string
	for _, f := range corpora.EvalFormats() {
		if f.Eval.Split != nil {
			want = append(want, f.Corpus)
		}
	}
	slices.Sort(got)
	slices.Sort(want)
	if !slices.Equal(got, want) {
		t.Errorf("make eval-data extracts %v; the evaluation sets with official splits are %v", got, want)
	}
}
