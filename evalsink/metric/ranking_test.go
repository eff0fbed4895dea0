package metric_test

import (
	"bufio"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/parastream/parastream/evalsink/internal/evaltest"
	"github.com/parastream/parastream/evalsink/metric"
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
	questions := func(score func(i int) float64) []metric.Question {
		var qs []metric.Question
		for i, g := range gold {
			if pred[i].question != g.question || pred[i].candidate != g.candidate {
				t.Fatalf("line %d: %s %s against %s %s", i+1, pred[i].question, pred[i].candidate, g.question, g.candidate)
			}
			if len(qs) == 0 || qs[len(qs)-1].ID != g.question {
				qs = append(qs, metric.Question{ID: g.question})
			}
			q := &qs[len(qs)-1]
			q.Candidates = append(q.Candidates, metric.Candidate{Score: score(i), Relevant: g.relevant})
		}
		return qs
	}
	def := metric.RankingDef{Cutoff: metric.SemEvalCutoff, ByRetrieved: true}
	for _, c := range []struct {
		name               string
		score              func(i int) float64
		mapEV, mrrEV       float64 // ev.py, ×100
		mapREADME, mrrREAD string
	}{
		{"random baseline", func(i int) float64 { return pred[i].score }, 55.94935878054926, 62.23333333333333, "0.5595", "62.23"},
		{"IR baseline", func(i int) float64 { return gold[i].score }, 71.35299099269337, 76.66666666666666, "0.7135", "76.67"},
	} {
		x := metric.ScoreRankings(questions(c.score), def)
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
	q := func(id, ranks string) metric.Question {
		out := metric.Question{ID: id}
		for i, c := range ranks {
			out.Candidates = append(out.Candidates, metric.Candidate{Score: float64(len(ranks) - i), Relevant: c == 'r'})
		}
		return out
	}
	semeval := metric.RankingDef{Cutoff: 10, ByRetrieved: true}
	for _, c := range []struct {
		name          string
		qs            []metric.Question
		def           metric.RankingDef
		questions     int
		mapx, mrr     float64 // ×100
		perAP, perRR  []float64
		noRel, allRel int
	}{
		{"a tie counts against the relevant candidate",
			[]metric.Question{{ID: "t", Candidates: []metric.Candidate{{Score: 0.5, Relevant: true}, {Score: 0.5}, {Score: 0.9}}}},
			metric.RankingDef{}, 1, 100.0 / 3, 100.0 / 3, []float64{1.0 / 3}, []float64{1.0 / 3}, 0, 0},
		{"a constant score ranks every relevant candidate last",
			[]metric.Question{{ID: "c", Candidates: []metric.Candidate{{Relevant: true}, {}, {Relevant: true}, {}}}},
			metric.RankingDef{}, 1, 100 * (1.0/3 + 2.0/4) / 2, 100.0 / 3, []float64{(1.0/3 + 2.0/4) / 2}, []float64{1.0 / 3}, 0, 0},
		{"a question without a relevant candidate counts 0", []metric.Question{q("a", "r."), q("b", "..")},
			metric.RankingDef{}, 2, 50, 50, []float64{1, 0}, []float64{1, 0}, 1, 0},
		{"... and is left out of the mixed questions", []metric.Question{q("a", "r."), q("b", "..")},
			metric.RankingDef{Mixed: true}, 1, 100, 100, []float64{1}, []float64{1}, 0, 0},
		{"a question with only relevant candidates counts 1", []metric.Question{q("a", "rr"), q("b", ".r")},
			metric.RankingDef{}, 2, 75, 75, []float64{1, 0.5}, []float64{1, 0.5}, 0, 1},
		{"... and is left out of the mixed questions", []metric.Question{q("a", "rr"), q("b", ".r")},
			metric.RankingDef{Mixed: true}, 1, 50, 50, []float64{0.5}, []float64{0.5}, 0, 0},
		{"AP over the relevant candidates' precisions", []metric.Question{q("a", "r.r."), q("b", ".r.r")},
			metric.RankingDef{}, 2, 100 * ((1+2.0/3)/2 + (1.0/2+2.0/4)/2) / 2, 100 * (1 + 0.5) / 2,
			[]float64{(1 + 2.0/3) / 2, (1.0/2 + 2.0/4) / 2}, []float64{1, 0.5}, 0, 0},
		// Relevant at ranks 2 and 11 of 12.
		{"trec_eval: AP over every relevant candidate", []metric.Question{q("a", ".r........r.")},
			metric.RankingDef{}, 1, 100 * (1.0/2 + 2.0/11) / 2, 50, []float64{(1.0/2 + 2.0/11) / 2}, []float64{0.5}, 0, 0},
		{"SemEval: AP over the relevant within the top 10", []metric.Question{q("a", ".r........r.")},
			semeval, 1, 50, 50, []float64{0.5}, []float64{0.5}, 0, 0},
		{"a cutoff, AP over every relevant candidate", []metric.Question{q("a", ".r........r.")},
			metric.RankingDef{Cutoff: 10}, 1, 25, 50, []float64{0.25}, []float64{0.5}, 0, 0},
		{"SemEval: a relevant candidate below the top 10 only counts 0", []metric.Question{q("a", "..........r")},
			semeval, 1, 0, 0, []float64{0}, []float64{0}, 0, 0},
	} {
		t.Run(c.name, func(t *testing.T) {
			x := metric.ScoreRankings(c.qs, c.def)
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
					def := metric.RankingDef{Cutoff: cutoff, ByRetrieved: byRetrieved}
					var sumAP, sumRR float64
					count := 0
					var chance *metric.Rankings
					evaltest.Permutations(n, func(p []int) {
						cs := make([]metric.Candidate, n)
						for k, c := range p { // candidate c at rank k+1
							cs[k] = metric.Candidate{Score: float64(n - k), Relevant: c < rel}
						}
						x := metric.ScoreRankings([]metric.Question{{ID: "q", Candidates: cs}}, def)
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
