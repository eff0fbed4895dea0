package corpora_test

import (
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/parastream/parastream/corpora"
)

// evalCounts reads paths as format and tallies examples by dataset and
// label, distinct groups, rejects and skips.
type evalCounts struct {
	exs     []corpora.Example
	labels  map[float64]int
	groups  map[string]bool
	rejects []*corpora.ParseError
	stats   corpora.Stats
}

func readEval(t *testing.T, format string, paths ...string) evalCounts {
	t.Helper()
	c := evalCounts{labels: map[float64]int{}, groups: map[string]bool{}}
	for _, p := range paths {
		exs, rejects, st := mustReadAll(t, format, []string{p}, corpora.Options{})
		c.exs = append(c.exs, exs...)
		c.rejects = append(c.rejects, rejects...)
		c.stats.Add(st)
		for _, e := range exs {
			c.labels[e.Label]++
			c.groups[e.Group] = true
			if e.Corpus != format || !e.HasLabel || e.A == "" || e.ID == "" || e.Group == "" || e.Source.File != p || e.Source.Line <= 0 {
				t.Fatalf("%s: example %+v", p, e)
			}
		}
	}
	if len(c.rejects) != 0 {
		t.Errorf("%v: %d rejects, first %v", paths, len(c.rejects), c.rejects[0])
	}
	return c
}

func TestSNLISharedData(t *testing.T) {
	dev := readEval(t, "snli", sharedData(t, "eval/snli/snli_1.0_dev.jsonl.gz"))
	if len(dev.exs) != 9842 || dev.labels[0] != 3329 || dev.labels[1] != 3235 || dev.labels[2] != 3278 || dev.stats.Skipped["no_gold_label"] != 158 {
		t.Errorf("dev: %d examples, labels %v, stats %+v; want 9,842 (3,329, 3,235, 3,278), 158 without a gold label", len(dev.exs), dev.labels, dev.stats)
	}
	e := dev.exs[0]
	if e.Dataset != "snli/dev" || e.ID != "snli:4705552913.jpg#2r1n" || e.Group != "4705552913.jpg#2" || e.Label != 1 ||
		e.A != "Two women are embracing while holding to go packages." || e.Meta["gold_label"] != "neutral" ||
		e.Meta["pair_id"] != "4705552913.jpg#2r1n" || e.Meta["caption_id"] != "4705552913.jpg#2" {
		t.Errorf("first dev pair %+v", e)
	}
	for _, e := range dev.exs {
		if e.A != strings.TrimSpace(e.A) || e.B == "" {
			t.Fatalf("untrimmed %+v", e)
		}
	}
	train := readEval(t, "snli", sharedData(t, "eval/snli/snli_1.0_train.first1024.jsonl.gz"))
	if len(train.exs) != 1022 || train.stats.Skipped["no_gold_label"] != 2 || train.exs[0].Dataset != "snli/train" {
		t.Errorf("train: %d examples, %+v", len(train.exs), train.stats)
	}
	txt := readEval(t, "snli", sharedData(t, "eval/snli/snli_1.0_dev.first10.txt"))
	if len(txt.exs)+int(txt.stats.Skipped["no_gold_label"]) != 10 || txt.stats.Skipped["header"] != 1 || txt.exs[0].Dataset != "snli/dev" {
		t.Errorf("txt: %d examples, %+v", len(txt.exs), txt.stats)
	}
	// The .txt rows are the first rows of the JSON lines.
	for i, e := range txt.exs {
		d := dev.exs[i]
		if e.A != d.A || e.B != d.B || e.Label != d.Label || e.ID != d.ID || e.Group != d.Group {
			t.Errorf("txt row %d = %+v, json %+v", i, e, d)
		}
	}
}

func TestSSTSharedData(t *testing.T) {
	train := readEval(t, "sst", sharedData(t, "eval/sst/sentiment-train"))
	if len(train.exs) != 67349 || train.labels[1] != 37569 || train.exs[0].Dataset != "sst/train" {
		t.Errorf("train: %d, labels %v", len(train.exs), train.labels)
	}
	dev := readEval(t, "sst", sharedData(t, "eval/sst/sentiment-dev"))
	glue := readEval(t, "sst", sharedData(t, "eval/sst/SST-2-dev.tsv"))
	if len(dev.exs) != 872 || dev.labels[1] != 444 || len(glue.exs) != 872 || glue.stats.Skipped["header"] != 1 {
		t.Errorf("dev: %d (labels %v), GLUE %d (%+v)", len(dev.exs), dev.labels, len(glue.exs), glue.stats)
	}
	for i, e := range dev.exs {
		g := glue.exs[i]
		if e.A != g.A || e.Label != g.Label || e.B != "" || e.Dataset != "sst/dev" || g.Dataset != "sst/dev" || e.A != strings.TrimSpace(e.A) ||
			e.ID != "sst:dev:"+itoa(i+1) || g.Source.Line != int64(i+2) {
			t.Fatalf("dev %d: %+v, GLUE %+v", i, e, g)
		}
	}
}

func itoa(i int) string { return strconv.Itoa(i) }

func TestMRSharedData(t *testing.T) {
	pos := readEval(t, "mr", sharedData(t, "eval/mr/rt-polarity.pos"))
	neg := readEval(t, "mr", sharedData(t, "eval/mr/rt-polarity.neg"))
	if len(pos.exs) != 5331 || len(neg.exs) != 5331 || pos.labels[1] != 5331 || neg.labels[0] != 5331 {
		t.Fatalf("pos %d (%v), neg %d (%v)", len(pos.exs), pos.labels, len(neg.exs), neg.labels)
	}
	nel := 0
	for _, e := range append(pos.exs, neg.exs...) {
		if strings.ContainsRune(e.A, '\u0085') {
			nel++
		}
		if e.Dataset != "mr" || e.B != "" || strings.ContainsRune(e.A, '\ufffd') {
			t.Fatalf("%+v", e)
		}
	}
	if nel == 0 {
		t.Errorf("no snippet holds U+0085: 0x85 was not decoded as Latin-1 inside the text")
	}
	t.Logf("%d snippets hold U+0085", nel)
}

func TestSemEvalCQASharedData(t *testing.T) {
	dir := filepath.Dir(sharedData(t, "eval/semeval2017-cqa/SemEval2016-Task3-CQA-QL-dev.xml"))
	for _, c := range []struct {
		name, dataset     string
		orgq, pairs       int
		perfect, relevant int
		irrelevant        int
	}{
		{"SemEval2016-Task3-CQA-QL-dev.xml", "semeval-cqa/dev", 50, 500, 59, 155, 286},
		{"SemEval2016-Task3-CQA-QL-train-part2.xml", "semeval-cqa/train-part2", 67, 670, 54, 242, 374},
	} {
		got := readEval(t, "semeval-cqa", filepath.Join(dir, c.name))
		rel := map[string]int{}
		for _, e := range got.exs {
			rel[e.Meta["relevance"]]++
			if e.Dataset != c.dataset || e.Group != e.Meta["orgq_id"] || e.ID != "semeval-cqa:"+e.Meta["relq_id"] || e.Meta["rank"] == "" || e.B == "" {
				t.Fatalf("%+v", e)
			}
		}
		if len(got.exs) != c.pairs || len(got.groups) != c.orgq || rel["PerfectMatch"] != c.perfect || rel["Relevant"] != c.relevant || rel["Irrelevant"] != c.irrelevant ||
			got.labels[1] != c.perfect+c.relevant {
			t.Errorf("%s: %d pairs over %d questions, %v", c.name, len(got.exs), len(got.groups), rel)
		}
	}
}

func TestTrecQASharedData(t *testing.T) {
	for _, c := range []struct {
		folder    string
		pairs, qs int
		pos       int
	}{{"train", 4718, 93, 348}, {"raw-dev", 1148, 81, 222}, {"clean-dev", 1117, 65, 205}} {
		got := readEval(t, "trecqa", sharedData(t, "eval/trecqa/"+c.folder+"/a.toks"))
		if len(got.exs) != c.pairs || len(got.groups) != c.qs || got.labels[1] != c.pos || got.exs[0].Dataset != "trecqa/"+c.folder {
			t.Errorf("%s: %d pairs, %d questions, labels %v", c.folder, len(got.exs), len(got.groups), got.labels)
		}
	}
}

func TestWikiQASharedData(t *testing.T) {
	for _, c := range []struct {
		name           string
		pairs, qs, pos int
		answered       int
	}{{"train", 20360, 2118, 1040, -1}, {"dev", 2733, 296, 140, 126}} {
		got := readEval(t, "wikiqa", sharedData(t, "eval/wikiqa/WikiQA-"+c.name+".tsv.gz"))
		answered := map[string]bool{}
		for _, e := range got.exs {
			if e.Label == 1 {
				answered[e.Group] = true
			}
			if e.Dataset != "wikiqa/"+c.name || e.Group != e.Meta["question_id"] || strings.ContainsAny(e.A+e.B, "\r\t") {
				t.Fatalf("%+v", e)
			}
		}
		if len(got.exs) != c.pairs || len(got.groups) != c.qs || got.labels[1] != c.pos || (c.answered >= 0 && len(answered) != c.answered) {
			t.Errorf("%s: %d pairs, %d questions, labels %v, %d answered", c.name, len(got.exs), len(got.groups), got.labels, len(answered))
		}
	}
}

func TestSCWSSharedData(t *testing.T) {
	got := readEval(t, "scws", sharedData(t, "eval/scws/ratings.txt"))
	same := 0
	for _, e := range got.exs {
		if e.Meta["word1"] == e.Meta["word2"] {
			same++
		}
		if strings.Contains(e.A+e.B, "<b>") || strings.Contains(e.A+e.B, "</b>") || strings.Contains(e.A+e.B, "  ") ||
			!strings.HasPrefix(e.A, e.Meta["left1"]) || !strings.HasPrefix(e.B, e.Meta["left2"]) || e.Label < 0 || e.Label > 10 ||
			len(strings.Split(e.Meta["ratings"], ",")) != 10 || e.Dataset != "scws" {
			t.Fatalf("%+v", e)
		}
	}
	if len(got.exs) != 2003 || same != 241 {
		t.Errorf("%d pairs, %d with the same word twice; want 2,003 and 241", len(got.exs), same)
	}
}
