package evalsink_test

import (
	"bufio"
	"context"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/parastream/parastream/evalsink"
	"github.com/parastream/parastream/internal/testenv"
)

// scorerLine is a line of a SemEval-2016 Task 3 scorer file (a gold
// .relevancy or a .pred): ORGQ_ID, RELQ_ID, rank, score, label.
type scorerLine struct {
	question, candidate string
	score               float64
	relevant            bool
}

func readScorerFile(t *testing.T, path string) []scorerLine {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var out []scorerLine
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		fs := strings.Split(sc.Text(), "\t")
		if len(fs) != 5 {
			t.Fatalf("%s: %q: want 5 tab-separated fields", path, sc.Text())
		}
		v, err := strconv.ParseFloat(fs[3], 64)
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, scorerLine{fs[0], fs[1], v, fs[4] == "true"})
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	return out
}

// TestSemEvalScorerExamples scores the two rankings the official SemEval-2016
// Task 3 scorer (v2.2) ships for subtask B's dev set, the random baseline
// (the .pred file) and the search engine's order (the gold file's scores,
// 1/rank), against the gold labels, with the definition the semeval-cqa row
// uses. The figures are those of the scorer's own ev.py (metrics.py's map
// and mrr, run here with Python 2.7.18 on the same files), to every digit
// it prints in full; the scorer's README publishes them to 4 places (MAP
// 0.5595 random, 0.7135 IR; MRR 62.23, 76.67). 7 of the 50 questions have
// no relevant related question and count 0.
func TestSemEvalScorerExamples(t *testing.T) {
	dir := testenv.SharedData(t, "eval/semeval2017-cqa")
	gold := readScorerFile(t, filepath.Join(dir, "SemEval2016-Task3-CQA-QL-dev.xml.subtaskB.relevancy"))
	pred := readScorerFile(t, filepath.Join(dir, "SemEval2016-Task3-CQA-QL-dev.xml.subtaskB.pred"))
	if len(gold) != 500 || len(pred) != 500 {
		t.Fatalf("%d gold and %d predicted lines, want 500 each", len(gold), len(pred))
	}
	questions := func(score func(i int) float64) []evalsink.Question {
		var qs []evalsink.Question
		for i, g := range gold {
			if pred[i].question != g.question || pred[i].candidate != g.candidate {
				t.Fatalf("line %d: %s %s against %s %s", i+1, pred[i].question, pred[i].candidate, g.question, g.candidate)
			}
			if len(qs) == 0 || qs[len(qs)-1].ID != g.question {
				qs = append(qs, evalsink.Question{ID: g.question})
			}
			q := &qs[len(qs)-1]
			q.Candidates = append(q.Candidates, evalsink.Candidate{Score: score(i), Relevant: g.relevant})
		}
		return qs
	}
	def := evalsink.RankingDef{Cutoff: evalsink.SemEvalCutoff, ByRetrieved: true}
	for _, c := range []struct {
		name               string
		score              func(i int) float64
		mapEV, mrrEV       float64 // ev.py, ×100
		mapREADME, mrrREAD string
	}{
		{"random baseline", func(i int) float64 { return pred[i].score }, 55.94935878054926, 62.23333333333333, "0.5595", "62.23"},
		{"IR baseline", func(i int) float64 { return gold[i].score }, 71.35299099269337, 76.66666666666666, "0.7135", "76.67"},
	} {
		x := evalsink.ScoreRankings(questions(c.score), def)
		if x.Questions != 50 || x.Candidates != 500 || x.NoRelevant != 7 || x.AllRelevant != 2 {
			t.Errorf("%s: %d questions, %d candidates, %d without and %d with only relevant ones; want 50, 500, 7, 2",
				c.name, x.Questions, x.Candidates, x.NoRelevant, x.AllRelevant)
		}
		if math.Abs(x.MAP-c.mapEV) > 1e-9 || math.Abs(x.MRR-c.mrrEV) > 1e-9 {
			t.Errorf("%s: MAP %.12f, MRR %.12f; the official scorer gives %.12f, %.12f", c.name, x.MAP, x.MRR, c.mapEV, c.mrrEV)
		}
		if got, gotMRR := fmt.Sprintf("%.4f", x.MAP/100), fmt.Sprintf("%.2f", x.MRR); got != c.mapREADME || gotMRR != c.mrrREAD {
			t.Errorf("%s: MAP %s, MRR %s; the scorer's README publishes %s, %s", c.name, got, gotMRR, c.mapREADME, c.mrrREAD)
		}
	}
}

// TestScoreRankingsByHand checks ScoreRankings on rankings worked out by
// hand: ties, questions without a relevant candidate or with only
// relevant ones, each scorer's normalisation of AP and the cutoff.
func TestScoreRankingsByHand(t *testing.T) {
	// q builds a question from its candidates in rank order ('r'
	// relevant, '.' not), scored n, n−1, ..., 1.
	q := func(id, ranks string) evalsink.Question {
		out := evalsink.Question{ID: id}
		for i, c := range ranks {
			out.Candidates = append(out.Candidates, evalsink.Candidate{Score: float64(len(ranks) - i), Relevant: c == 'r'})
		}
		return out
	}
	semeval := evalsink.RankingDef{Cutoff: 10, ByRetrieved: true}
	for _, c := range []struct {
		name          string
		qs            []evalsink.Question
		def           evalsink.RankingDef
		questions     int
		mapx, mrr     float64 // ×100
		perAP, perRR  []float64
		noRel, allRel int
	}{
		{"a tie counts against the relevant candidate",
			[]evalsink.Question{{ID: "t", Candidates: []evalsink.Candidate{{Score: 0.5, Relevant: true}, {Score: 0.5}, {Score: 0.9}}}},
			evalsink.RankingDef{}, 1, 100.0 / 3, 100.0 / 3, []float64{1.0 / 3}, []float64{1.0 / 3}, 0, 0},
		{"a constant score ranks every relevant candidate last",
			[]evalsink.Question{{ID: "c", Candidates: []evalsink.Candidate{{Relevant: true}, {}, {Relevant: true}, {}}}},
			evalsink.RankingDef{}, 1, 100 * (1.0/3 + 2.0/4) / 2, 100.0 / 3, []float64{(1.0/3 + 2.0/4) / 2}, []float64{1.0 / 3}, 0, 0},
		{"a question without a relevant candidate counts 0", []evalsink.Question{q("a", "r."), q("b", "..")},
			evalsink.RankingDef{}, 2, 50, 50, []float64{1, 0}, []float64{1, 0}, 1, 0},
		{"... and is left out of the mixed questions", []evalsink.Question{q("a", "r."), q("b", "..")},
			evalsink.RankingDef{Mixed: true}, 1, 100, 100, []float64{1}, []float64{1}, 0, 0},
		{"a question with only relevant candidates counts 1", []evalsink.Question{q("a", "rr"), q("b", ".r")},
			evalsink.RankingDef{}, 2, 75, 75, []float64{1, 0.5}, []float64{1, 0.5}, 0, 1},
		{"... and is left out of the mixed questions", []evalsink.Question{q("a", "rr"), q("b", ".r")},
			evalsink.RankingDef{Mixed: true}, 1, 50, 50, []float64{0.5}, []float64{0.5}, 0, 0},
		{"AP over the relevant candidates' precisions", []evalsink.Question{q("a", "r.r."), q("b", ".r.r")},
			evalsink.RankingDef{}, 2, 100 * ((1+2.0/3)/2 + (1.0/2+2.0/4)/2) / 2, 100 * (1 + 0.5) / 2,
			[]float64{(1 + 2.0/3) / 2, (1.0/2 + 2.0/4) / 2}, []float64{1, 0.5}, 0, 0},
		// Relevant at ranks 2 and 11 of 12.
		{"trec_eval: AP over every relevant candidate", []evalsink.Question{q("a", ".r........r.")},
			evalsink.RankingDef{}, 1, 100 * (1.0/2 + 2.0/11) / 2, 50, []float64{(1.0/2 + 2.0/11) / 2}, []float64{0.5}, 0, 0},
		{"SemEval: AP over the relevant within the top 10", []evalsink.Question{q("a", ".r........r.")},
			semeval, 1, 50, 50, []float64{0.5}, []float64{0.5}, 0, 0},
		{"a cutoff, AP over every relevant candidate", []evalsink.Question{q("a", ".r........r.")},
			evalsink.RankingDef{Cutoff: 10}, 1, 25, 50, []float64{0.25}, []float64{0.5}, 0, 0},
		{"SemEval: a relevant candidate below the top 10 only counts 0", []evalsink.Question{q("a", "..........r")},
			semeval, 1, 0, 0, []float64{0}, []float64{0}, 0, 0},
	} {
		t.Run(c.name, func(t *testing.T) {
			x := evalsink.ScoreRankings(c.qs, c.def)
			if x.Questions != c.questions || x.NoRelevant != c.noRel || x.AllRelevant != c.allRel {
				t.Errorf("%d questions, %d without a relevant one, %d with only relevant ones; want %d, %d, %d",
					x.Questions, x.NoRelevant, x.AllRelevant, c.questions, c.noRel, c.allRel)
			}
			if math.Abs(x.MAP-c.mapx) > 1e-9 || math.Abs(x.MRR-c.mrr) > 1e-9 {
				t.Errorf("MAP %v, MRR %v; want %v, %v", x.MAP, x.MRR, c.mapx, c.mrr)
			}
			for i, p := range x.PerQuestion {
				if math.Abs(p.AP-c.perAP[i]) > 1e-12 || math.Abs(p.RR-c.perRR[i]) > 1e-12 {
					t.Errorf("question %s: AP %v, RR %v; want %v, %v", p.ID, p.AP, p.RR, c.perAP[i], c.perRR[i])
				}
			}
		})
	}
}

// TestRankingChance checks the chance figures of ScoreRankings against the
// mean of its own figures over every order of up to 6 candidates, for
// every number of relevant ones, with and without a cutoff, AP normalised
// either way.
func TestRankingChance(t *testing.T) {
	for n := 1; n <= 6; n++ {
		for rel := 0; rel <= n; rel++ {
			for cutoff := 0; cutoff <= n; cutoff++ {
				for _, byRetrieved := range []bool{false, true} {
					def := evalsink.RankingDef{Cutoff: cutoff, ByRetrieved: byRetrieved}
					var sumAP, sumRR float64
					count := 0
					var chance *evalsink.Rankings
					permutations(n, func(p []int) {
						cs := make([]evalsink.Candidate, n)
						for k, c := range p { // candidate c at rank k+1
							cs[k] = evalsink.Candidate{Score: float64(n - k), Relevant: c < rel}
						}
						x := evalsink.ScoreRankings([]evalsink.Question{{ID: "q", Candidates: cs}}, def)
						sumAP, sumRR, count = sumAP+x.MAP, sumRR+x.MRR, count+1
						chance = x
					})
					ap, rr := sumAP/float64(count), sumRR/float64(count)
					if math.Abs(chance.ChanceMAP-ap) > 1e-9 || math.Abs(chance.ChanceMRR-rr) > 1e-9 {
						t.Errorf("n %d, %d relevant, cutoff %d, by retrieved %v: chance MAP %v, MRR %v; every order gives %v, %v",
							n, rel, cutoff, byRetrieved, chance.ChanceMAP, chance.ChanceMRR, ap, rr)
					}
				}
			}
		}
	}
}

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
		var qs []evalsink.Question
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
				qs = append(qs, evalsink.Question{ID: p.Group})
			}
			qs[i].Candidates = append(qs[i].Candidates, evalsink.Candidate{Score: evalsink.Cosine(v[0], v[1]), Relevant: p.Gold > 0})
		}
		x := evalsink.ScoreRankings(qs, evalsink.RankingDef{Cutoff: evalsink.SemEvalCutoff, ByRetrieved: true})
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
