package evalsink_test

import (
	"context"
	"fmt"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/parastream/parastream/evalsink"
	"github.com/parastream/parastream/evalsink/metric"
	"github.com/parastream/parastream/internal/testenv"
)

// TestRankingAgainstOfficialScorers scores an untrained avg model's
// rankings of the real dev sets with the official scorers themselves and
// checks the evaluation's rows against what they print: trec_eval
// (PARASTREAM_TREC_EVAL, or trec_eval on the PATH; usnistgov/trec_eval)
// on TrecQA raw and clean dev (qrels written from the data) and WikiQA dev
// (the release's WikiQA-dev.ref and WikiQA-dev-filtered.ref, the run
// numbered as they number questions and candidates), per question (-q)
// too; the SemEval-2016 Task 3 scorer's ev.py (PARASTREAM_SEMEVAL_EV: the
// path of MAP_scripts/ev.py of english_scorer_and_random_baselines_v2.2,
// run with the python2 on the PATH) on subtask B dev. Skipped without
// them; run with PARASTREAM_TREC_EVAL and PARASTREAM_SEMEVAL_EV set.
func TestRankingAgainstOfficialScorers(t *testing.T) {
	trecEval := os.Getenv("PARASTREAM_TREC_EVAL")
	if trecEval == "" {
		trecEval, _ = exec.LookPath("trec_eval")
	}
	ev := os.Getenv("PARASTREAM_SEMEVAL_EV")
	if trecEval == "" && ev == "" {
		t.Skip("skipping: neither trec_eval (PARASTREAM_TREC_EVAL or the PATH) nor the SemEval scorer (PARASTREAM_SEMEVAL_EV) is here")
	}
	dir := rankingSetsDir(t)
	sets := loadSets(t, dir)
	ck := checkpoint(t, t.TempDir(), "avg", vocabulary(sets, 0), 1)
	evaluator, err := evalsink.NewEvaluator(context.Background(), evalsink.Config{Eval: dir, Out: t.TempDir(), Logger: testLogger(t)})
	if err != nil {
		t.Fatal(err)
	}
	defer evaluator.Close()
	sum, err := evaluator.Evaluate(context.Background(), evalsink.Target{Dir: ck})
	if err != nil {
		t.Fatal(err)
	}
	rows := rankingRows(sum.Rows)
	emb, _, err := evalsink.OpenEmbedder(ck, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer emb.Close()
	work := t.TempDir()
	// near: a row's figure (×100) and a scorer's, printed to places.
	near := func(what string, ours, theirs float64, places int) {
		t.Helper()
		if math.Abs(ours-theirs) > 0.5*math.Pow(10, -float64(places))+1e-12 {
			t.Errorf("%s: ours %.6f, the scorer's %.*f", what, ours, places, theirs)
		}
	}
	for _, s := range sets.Sets {
		if s.Task != evalsink.TaskRanking || s.Split == "train" {
			continue
		}
		// The pairs in file order: the scorers' line order.
		pairs := slices.Clone(s.Pairs)
		slices.SortStableFunc(pairs, func(a, b evalsink.Pair) int { return sourceLine(t, a) - sourceLine(t, b) })
		cos := make([]float64, len(pairs))
		for i, p := range pairs {
			v, err := emb.Embed(context.Background(), [][]string{p.A, p.B})
			if err != nil {
				t.Fatal(err)
			}
			cos[i] = metric.Cosine(v[0], v[1])
		}
		name := filepath.Join(work, strings.ReplaceAll(s.Dataset, "/", "_"))
		var run, qrels strings.Builder
		qnum, cand := map[string]int{}, map[string]int{}
		for i, p := range pairs {
			if _, ok := qnum[p.Group]; !ok {
				qnum[p.Group] = len(qnum) + 1
			}
			switch s.Corpus {
			case "semeval-cqa":
				fmt.Fprintf(&run, "%s\t%s\t0\t%.17g\tfalse\n", p.Meta["orgq_id"], p.Meta["relq_id"], cos[i])
			case "wikiqa":
				fmt.Fprintf(&run, "%d 0 %d 0 %.17g run\n", qnum[p.Group], cand[p.Group], cos[i])
				cand[p.Group]++
			default:
				fmt.Fprintf(&run, "%s 0 %s 0 %.17g run\n", p.Group, p.ID, cos[i])
				fmt.Fprintf(&qrels, "%s 0 %s %d\n", p.Group, p.ID, int(p.Gold))
			}
		}
		if err := os.WriteFile(name+".run", []byte(run.String()), 0o644); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(name+".qrels", []byte(qrels.String()), 0o644); err != nil {
			t.Fatal(err)
		}
		switch {
		case s.Corpus == "semeval-cqa" && ev != "":
			gold := testenv.SharedData(t, "eval/semeval2017-cqa/SemEval2016-Task3-CQA-QL-dev.xml.subtaskB.relevancy")
			out, err := exec.Command("python2", ev, gold, name+".run").CombinedOutput()
			if err != nil {
				t.Fatalf("%s: %v\n%s", ev, err, out)
			}
			r := rows[[2]string{s.Dataset, evalsink.KindRanking}]
			m := regexp.MustCompile(`(?m)^MAP\s*:\s*\S+\s+(\S+)\s*$`).FindSubmatch(out)
			mrr := regexp.MustCompile(`(?m)^MRR\s*:\s*\S+\s+(\S+)\s*$`).FindSubmatch(out)
			if m == nil || mrr == nil {
				t.Fatalf("%s printed no MAP or MRR:\n%s", ev, out)
			}
			v, _ := strconv.ParseFloat(string(m[1]), 64)
			w, _ := strconv.ParseFloat(string(mrr[1]), 64)
			near(s.Dataset+" MAP", *r.MAP/100, v, 4)
			near(s.Dataset+" MRR", *r.MRR, w, 2)
			t.Logf("%s: MAP %.4f, MRR %.2f; ev.py %.4f, %.2f", s.Dataset, *r.MAP/100, *r.MRR, v, w)
		case s.Corpus != "semeval-cqa" && trecEval != "":
			checks := [][2]string{{s.Dataset, name + ".qrels"}}
			if s.Corpus == "wikiqa" {
				checks = [][2]string{{s.Dataset, testenv.SharedData(t, "eval/wikiqa/WikiQA-dev.ref")},
					{s.Dataset + "-filtered", testenv.SharedData(t, "eval/wikiqa/WikiQA-dev-filtered.ref")}}
			}
			// Each question's AP and RR by ScoreRankings, under trec_eval's
			// id for it.
			at := map[string]int{}
			var qs []metric.Question
			for i, p := range pairs {
				id := p.Group
				if s.Corpus == "wikiqa" {
					id = strconv.Itoa(qnum[p.Group])
				}
				if _, ok := at[id]; !ok {
					at[id] = len(qs)
					qs = append(qs, metric.Question{ID: id})
				}
				q := &qs[at[id]]
				q.Candidates = append(q.Candidates, metric.Candidate{Score: cos[i], Relevant: p.Gold > 0})
			}
			for ci, c := range checks {
				out, err := exec.Command(trecEval, "-q", "-m", "num_q", "-m", "map", "-m", "recip_rank", c[1], name+".run").CombinedOutput()
				if err != nil {
					t.Fatalf("%s: %v\n%s", trecEval, err, out)
				}
				r := rows[[2]string{c[0], evalsink.KindRanking}]
				per := map[string]metric.RankingScore{}
				for _, x := range metric.ScoreRankings(slices.Clone(qs), metric.RankingDef{Mixed: ci == 1}).PerQuestion {
					per[x.ID] = x
				}
				got := map[string]float64{}
				perQ := 0
				for _, l := range strings.Split(strings.TrimSpace(string(out)), "\n") {
					f := strings.Fields(l)
					if len(f) != 3 {
						continue
					}
					v, _ := strconv.ParseFloat(f[2], 64)
					if f[1] == "all" {
						got[f[0]] = v
						continue
					}
					x, ok := per[f[1]]
					switch {
					case !ok:
						t.Errorf("%s: trec_eval scores question %s, which the row leaves out", c[0], f[1])
					case f[0] == "map":
						near(c[0]+" question "+f[1]+" AP", x.AP, v, 4)
						perQ++
					case f[0] == "recip_rank":
						near(c[0]+" question "+f[1]+" RR", x.RR, v, 4)
					}
				}
				if perQ != len(per) {
					t.Errorf("%s: trec_eval scores %d questions, the row %d", c[0], perQ, len(per))
				}
				near(c[0]+" questions", float64(r.Pairs), got["num_q"], 0)
				near(c[0]+" MAP", *r.MAP/100, got["map"], 4)
				near(c[0]+" MRR", *r.MRR/100, got["recip_rank"], 4)
				t.Logf("%s: %d questions, MAP %.4f, MRR %.4f; trec_eval %v, %.4f, %.4f", c[0], r.Pairs, *r.MAP/100, *r.MRR/100, got["num_q"], got["map"], got["recip_rank"])
			}
		}
	}
}
