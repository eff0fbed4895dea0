package evalsink

import (
	"context"
	"fmt"
	"slices"
	"strings"

	"github.com/parastream/parastream/evalsink/metric"
)

// rankingDefs returns how a ranking set is scored, one metric.RankingDef per
// row; none for a set of training data or of a corpus without a known
// scorer.
//
//   - semeval-cqa: the official SemEval-2016 Task 3 scorer (v2.2): every
//     question, the top 10, AP over the relevant within them.
//   - trecqa: trec_eval's map and recip_rank on the set as the data gives
//     it (raw: every question; clean: without those whose candidates are
//     all relevant or all irrelevant).
//   - wikiqa: trec_eval on every question (WikiQA-<split>.ref), and on the
//     questions with a correct and an incorrect candidate
//     (WikiQA-<split>-filtered.ref, what most papers report), the row
//     "<dataset>-filtered".
func rankingDefs(s *Set) []metric.RankingDef {
	if s.Split == "train" {
		return nil
	}
	switch s.Corpus {
	case "semeval-cqa":
		return []metric.RankingDef{{Dataset: s.Dataset, Cutoff: metric.SemEvalCutoff, ByRetrieved: true}}
	case "trecqa":
		return []metric.RankingDef{{Dataset: s.Dataset}}
	case "wikiqa":
		return []metric.RankingDef{{Dataset: s.Dataset}, {Dataset: s.Dataset + "-filtered", Mixed: true}}
	}
	return nil
}

// rankingQuestions groups a ranking set's pairs into questions (by the
// pair's Group: the original question, the TrecQA question id, the WikiQA
// QuestionID), in the order of their ids, each candidate scored by the
// cosine of its pair's two texts' embeddings (each distinct text embedded
// once); Gold > 0 is relevant.
func rankingQuestions(ctx context.Context, e *Embedder, s *Set) ([]metric.Question, error) {
	texts, qa, qb := pairTexts(s.Pairs)
	vecs, err := e.Embed(ctx, texts)
	if err != nil {
		return nil, err
	}
	byID := map[string]*metric.Question{}
	var qs []*metric.Question
	for i, p := range s.Pairs {
		q := byID[p.Group]
		if q == nil {
			q = &metric.Question{ID: p.Group}
			byID[p.Group] = q
			qs = append(qs, q)
		}
		q.Candidates = append(q.Candidates, metric.Candidate{Score: metric.Cosine(vecs[qa[i]], vecs[qb[i]]), Relevant: p.Gold > 0})
	}
	slices.SortFunc(qs, func(a, b *metric.Question) int { return strings.Compare(a.ID, b.ID) })
	out := make([]metric.Question, len(qs))
	for i, q := range qs {
		out[i] = *q
	}
	return out, nil
}

// rankingTask scores every ranking set that is not training data
// (rankingDefs): for each of its definitions a KindRanking row (pairs:
// the questions; candidates: their candidates in all; MAP and MRR with
// each question's AP and RR as items, ID the question) followed by its
// KindRankingChance row.
func rankingTask(ctx context.Context, env TaskEnv) ([]RowFigures, error) {
	var out []RowFigures
	for _, s := range env.Sets.Sets {
		defs := rankingDefs(s)
		if s.Task != TaskRanking || len(defs) == 0 {
			continue
		}
		qs, err := rankingQuestions(ctx, env.Emb, s)
		if err != nil {
			return nil, fmt.Errorf("ranking %s: %w", s.Dataset, err)
		}
		for _, def := range defs {
			// Each definition sorts its own copy of the candidates.
			cp := make([]metric.Question, len(qs))
			for i, q := range qs {
				cp[i] = metric.Question{ID: q.ID, Candidates: slices.Clone(q.Candidates)}
			}
			x := metric.ScoreRankings(cp, def)
			if x.Questions == 0 {
				continue
			}
			r := env.Base
			r.Corpus, r.Split, r.Dataset, r.Kind = s.Corpus, s.Split, def.Dataset, KindRanking
			r.Pairs, r.Candidates = int64(x.Questions), int64(x.Candidates)
			r.MAP, r.MRR = ptr(x.MAP), ptr(x.MRR)
			chance := r
			chance.Kind = KindRankingChance
			chance.MAP, chance.MRR = ptr(x.ChanceMAP), ptr(x.ChanceMRR)
			out = append(out, RowFigures{r, rankingFigures(x.PerQuestion)}, RowFigures{Row: chance})
			if env.Log != nil {
				env.Log.Debug("ranked", "dataset", def.Dataset, "questions", x.Questions, "candidates", x.Candidates,
					"no_relevant", x.NoRelevant, "all_relevant", x.AllRelevant, "map", x.MAP, "mrr", x.MRR)
			}
		}
	}
	return out, nil
}

// rankingFigures returns the MAP and MRR figures of a ranking row: the
// mean of the questions' AP and RR.
func rankingFigures(per []metric.RankingScore) []metric.Figure {
	ap, rr := metric.Figure{Column: "map", Metric: metric.MetricMean}, metric.Figure{Column: "mrr", Metric: metric.MetricMean}
	for _, q := range per {
		ap.Items = append(ap.Items, metric.Item{ID: q.ID, Pred: q.AP})
		rr.Items = append(rr.Items, metric.Item{ID: q.ID, Pred: q.RR})
	}
	return []metric.Figure{ap, rr}
}

// rankingLabel is how the report names a ranking row of a set scored by
// rankingDefs (what says which questions it keeps and how one without a
// correct candidate counts), or its chance row.
func rankingLabel(r Result, what string) string {
	if r.Kind == KindRankingChance {
		return r.Dataset + " chance (each question's candidates in random order)"
	}
	return fmt.Sprintf("%s (%s; %d candidates)", r.Dataset, what, r.Candidates)
}

func semevalLabel(r Result) string {
	return rankingLabel(r, "subtask B, the official scorer v2.2: every question, one without a relevant related question counts 0; top 10")
}

func trecqaLabel(r Result) string {
	if strings.Contains(r.Dataset, "clean") {
		return rankingLabel(r, "trec_eval; the clean set: without the questions whose candidates are all correct or all wrong")
	}
	return rankingLabel(r, "trec_eval; every question: one without a correct answer counts 0, one with only correct answers 1")
}

func wikiqaLabel(r Result) string {
	if strings.HasSuffix(r.Dataset, "-filtered") {
		return rankingLabel(r, "trec_eval; the questions with a correct and an incorrect candidate, as most papers report")
	}
	return rankingLabel(r, "trec_eval; every question: one without a correct answer counts 0")
}
