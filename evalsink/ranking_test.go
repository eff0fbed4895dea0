package evalsink_test

import (
	"context"
	"fmt"
	"math"
	"os"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/parastream/parastream/evalsink"
	"github.com/parastream/parastream/evalsink/metric"
	"github.com/parastream/parastream/internal/testenv"
)

// rankingRows indexes an evaluation's ranking and word-in-context rows by
// dataset and kind.
func rankingRows(rows []evalsink.Result) map[[2]string]evalsink.Result {
	out := map[[2]string]evalsink.Result{}
	for _, r := range rows {
		switch r.Kind {
		case evalsink.KindRanking, evalsink.KindRankingChance, evalsink.KindWordContext:
			out[[2]string{r.Dataset, r.Kind}] = r
		}
	}
	return out
}

// sourceLine is the line number of a pair's Source ("file:line").
func sourceLine(t *testing.T, p evalsink.Pair) int {
	t.Helper()
	i := strings.LastIndexByte(p.Source, ':')
	n, err := strconv.Atoi(p.Source[i+1:])
	if i < 0 || err != nil {
		t.Fatalf("pair %s: source %q has no line", p.ID, p.Source)
	}
	return n
}

// TestRankingAndWordContextOnSharedData evaluates an untrained 24-dimension
// avg model (random word vectors over the sets' words) on the real
// SemEval CQA, TrecQA, WikiQA and SCWS sets of ../shared: every row is
// there with its n, candidates and bootstrap intervals, none of training
// data; no topic-context row for a model without one; the figures are not
// below chance (an untrained word average measures word overlap, which
// ranks answers a little above chance, and gives a word paired with itself
// cosine 1); the SemEval row is ScoreRankings of the checkpoint's cosines
// with the official scorer's definition; WikiQA's questions and
// candidates, numbered as the release's .ref qrels number them, are
// exactly those of WikiQA-dev.ref and, for the filtered row,
// WikiQA-dev-filtered.ref (122 questions, 1,126 lines).
func TestRankingAndWordContextOnSharedData(t *testing.T) {
	dir := rankingSetsDir(t)
	sets := loadSets(t, dir)
	ck := checkpoint(t, t.TempDir(), "avg", vocabulary(sets, 0), 1)
	out := t.TempDir()
	ev, err := evalsink.NewEvaluator(context.Background(), evalsink.Config{Eval: dir, Out: out, Logger: testLogger(t)})
	if err != nil {
		t.Fatal(err)
	}
	defer ev.Close()
	sum, err := ev.Evaluate(context.Background(), evalsink.Target{Dir: ck})
	if err != nil {
		t.Fatal(err)
	}
	rows := rankingRows(sum.Rows)
	for _, r := range sum.Rows {
		if r.Split == "train" {
			t.Errorf("a row of training data: %s %s", r.Dataset, r.Kind)
		}
	}
	for _, w := range []struct {
		dataset          string
		questions, cands int64
	}{
		{"semeval-cqa/dev", 50, 500},
		{"trecqa/raw-dev", 81, 1148},
		{"trecqa/clean-dev", 65, 1117},
		{"wikiqa/dev", 296, 2733},
		{"wikiqa/dev-filtered", 122, 1126},
	} {
		r, ok := rows[[2]string{w.dataset, evalsink.KindRanking}]
		c, okc := rows[[2]string{w.dataset, evalsink.KindRankingChance}]
		if !ok || !okc {
			t.Errorf("%s: no ranking row or no chance row", w.dataset)
			continue
		}
		t.Logf("%s: MAP %.2f [%.2f, %.2f], MRR %.2f [%.2f, %.2f]; chance %.2f, %.2f", w.dataset, *r.MAP, r.CILow["map"], r.CIHigh["map"],
			*r.MRR, r.CILow["mrr"], r.CIHigh["mrr"], *c.MAP, *c.MRR)
		if r.Pairs != w.questions || r.Candidates != w.cands || c.Pairs != w.questions || c.Candidates != w.cands {
			t.Errorf("%s: %d questions, %d candidates (chance row %d, %d); want %d, %d", w.dataset, r.Pairs, r.Candidates, c.Pairs, c.Candidates, w.questions, w.cands)
		}
		for _, col := range []string{"map", "mrr"} {
			v := *r.MAP
			if col == "mrr" {
				v = *r.MRR
			}
			lo, okLo := r.CILow[col]
			hi, okHi := r.CIHigh[col]
			if !okLo || !okHi || lo > v || v > hi || hi-lo < 1 {
				t.Errorf("%s %s %.2f: interval [%.2f, %.2f]", w.dataset, col, v, lo, hi)
			}
		}
		if len(c.CILow) != 0 || *c.MAP <= 0 || *c.MAP >= 100 {
			t.Errorf("%s chance row: MAP %v, intervals %v", w.dataset, *c.MAP, c.CILow)
		}
		if *c.MAP > r.CIHigh["map"] || *c.MRR > r.CIHigh["mrr"] {
			t.Errorf("%s: MAP %.2f, MRR %.2f below chance (%.2f, %.2f)", w.dataset, *r.MAP, *r.MRR, *c.MAP, *c.MRR)
		}
	}
	words, ok := rows[[2]string{"scws/words", evalsink.KindWordContext}]
	if !ok {
		t.Fatal("no scws/words row")
	}
	t.Logf("scws/words: ρ %.2f [%.2f, %.2f], r %.2f [%.2f, %.2f]", *words.Spearman, words.CILow["spearman"], words.CIHigh["spearman"],
		*words.Pearson, words.CILow["pearson"], words.CIHigh["pearson"])
	if words.Pairs != 2003 || words.CILow["spearman"] <= 0 || words.CIHigh["spearman"] < *words.Spearman || words.CILow["pearson"] > *words.Pearson {
		t.Errorf("scws/words: %d pairs, ρ %v in [%v, %v], r %v in [%v, %v]", words.Pairs, *words.Spearman, words.CILow["spearman"],
			words.CIHigh["spearman"], *words.Pearson, words.CILow["pearson"], words.CIHigh["pearson"])
	}
	if _, ok := rows[[2]string{"scws/topics", evalsink.KindWordContext}]; ok {
		t.Error("a topic-context row for a model without a topic context")
	}

	// The SemEval row: the official scorer's definition of the cosines.
	emb, _, err := evalsink.OpenEmbedder(ck, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer emb.Close()
	for _, s := range sets.Sets {
		if s.Dataset != "semeval-cqa/dev" {
			continue
		}
		var qs []metric.Question
		at := map[string]int{}
		for _, p := range s.Pairs {
			v, err := emb.Embed(context.Background(), [][]string{p.A, p.B})
			if err != nil {
				t.Fatal(err)
			}
			i, ok := at[p.Group]
			if !ok {
				i = len(qs)
				at[p.Group] = i
				qs = append(qs, metric.Question{ID: p.Group})
			}
			qs[i].Candidates = append(qs[i].Candidates, metric.Candidate{Score: metric.Cosine(v[0], v[1]), Relevant: p.Gold > 0})
		}
		x := metric.ScoreRankings(qs, metric.RankingDef{Cutoff: metric.SemEvalCutoff, ByRetrieved: true})
		r := rows[[2]string{"semeval-cqa/dev", evalsink.KindRanking}]
		if math.Abs(x.MAP-*r.MAP) > 1e-9 || math.Abs(x.MRR-*r.MRR) > 1e-9 || x.NoRelevant != 7 {
			t.Errorf("semeval-cqa/dev row: MAP %v, MRR %v; the scorer's definition gives %v, %v (%d questions without a relevant one)", *r.MAP, *r.MRR, x.MAP, x.MRR, x.NoRelevant)
		}
	}

	// WikiQA's questions against the release's qrels.
	for _, s := range sets.Sets {
		if s.Dataset != "wikiqa/dev" {
			continue
		}
		pairs := slices.Clone(s.Pairs)
		slices.SortFunc(pairs, func(a, b evalsink.Pair) int { return sourceLine(t, a) - sourceLine(t, b) })
		qnum := map[string]int{}
		cands := map[string]int{}
		labels := map[string]map[int]bool{}
		type line struct {
			group string
			text  string
		}
		var lines []line
		for _, p := range pairs {
			if _, ok := qnum[p.Group]; !ok {
				qnum[p.Group] = len(qnum) + 1
				labels[p.Group] = map[int]bool{}
			}
			lines = append(lines, line{p.Group, fmt.Sprintf("%d 0 %d %d", qnum[p.Group], cands[p.Group], int(p.Gold))})
			labels[p.Group][int(p.Gold)] = true
			cands[p.Group]++
		}
		var all, filtered []string
		for _, l := range lines {
			all = append(all, l.text)
			if labels[l.group][0] && labels[l.group][1] {
				filtered = append(filtered, l.text)
			}
		}
		for _, ref := range []struct {
			file  string
			lines []string
			qs    int
		}{{"WikiQA-dev.ref", all, 296}, {"WikiQA-dev-filtered.ref", filtered, 122}} {
			data, err := os.ReadFile(testenv.SharedData(t, "eval/wikiqa/"+ref.file))
			if err != nil {
				t.Fatal(err)
			}
			want := strings.Split(strings.TrimSpace(string(data)), "\n")
			qs := map[string]bool{}
			for _, l := range want {
				qs[strings.Fields(l)[0]] = true
			}
			if !slices.Equal(ref.lines, want) || len(qs) != ref.qs {
				t.Errorf("%s: %d lines, %d questions; the set gives %d lines", ref.file, len(want), len(qs), len(ref.lines))
			}
		}
	}

	report, err := os.ReadFile(sum.Report)
	if err != nil {
		t.Fatal(err)
	}
	for _, line := range []string{
		"| semeval-cqa/dev (subtask B, the official scorer v2.2: every question, one without a relevant related question counts 0; top 10; 500 candidates) MAP | 50 † |",
		"| trecqa/clean-dev (trec_eval; the clean set: without the questions whose candidates are all correct or all wrong; 1117 candidates) MRR | 65 † |",
		"| wikiqa/dev-filtered (trec_eval; the questions with a correct and an incorrect candidate, as most papers report; 1126 candidates) MAP | 122 |",
		"| wikiqa/dev chance (each question's candidates in random order) MAP | 296 |",
		"| SCWS, the two words alone (context ignored) ρ | 2003 |",
	} {
		if !strings.Contains(string(report), line) {
			t.Errorf("the report lacks %q", line)
		}
	}
}
