package metric

import (
	"cmp"
	"math"
	"slices"
)

// A ranking is a question with labelled candidates: SemEval-2016/2017
// Task 3 subtask B (an original question and the 10 related questions a
// search engine found), TrecQA and WikiQA (a question and candidate answer
// sentences), and Quora's questions paired with several labelled
// candidates. A model ranks each question's candidates by the cosine of
// the question's and the candidate's sentence embeddings; MAP and MRR are
// computed as each set's official scorer computes them (RankingDef).

// SemEvalCutoff is how many of a question's candidates the SemEval-2016
// Task 3 scorer (v2.2, ev.py's default threshold) counts: its top 10.
// Subtask B gives every question exactly 10, so it never cuts one off.
const SemEvalCutoff = 10

// RankingDef is how a ranking set is scored: which questions count and how
// a question's average precision is computed.
type RankingDef struct {
	// Dataset names the result row.
	Dataset string
	// Cutoff counts only the top Cutoff candidates of a question (0: all,
	// as trec_eval, whose default depth of 1,000 holds every question
	// here).
	Cutoff int
	// ByRetrieved divides a question's AP by its relevant candidates
	// within the cutoff, as the SemEval scorer does (metrics.py's map: the
	// mean of the precisions at the relevant ranks it saw); otherwise by
	// all its relevant candidates, as trec_eval does. The two agree when
	// the cutoff holds every candidate.
	ByRetrieved bool
	// Mixed keeps only the questions with both a relevant and an
	// irrelevant candidate (WikiQA's filtered set; Quora's rankings).
	// Otherwise every question counts, and one without a relevant
	// candidate scores AP 0 and RR 0, as both scorers count it (and one
	// whose candidates are all relevant scores 1).
	Mixed bool
}

// Candidate is one labelled candidate of a question with the model's
// score for it.
type Candidate struct {
	Score    float64
	Relevant bool
}

// Question is one ranking: the question's id and its candidates (every
// one the data lists, duplicates included, as the scorers count lines).
type Question struct {
	ID         string
	Candidates []Candidate
}

// Rankings is what ScoreRankings measures on a set of questions.
type Rankings struct {
	Def RankingDef
	// Questions counts the questions kept, Candidates their candidates;
	// NoRelevant and AllRelevant those of them without a relevant
	// candidate and with only relevant ones.
	Questions, Candidates, NoRelevant, AllRelevant int
	// MAP and MRR are the mean average precision and mean reciprocal rank
	// of the first relevant candidate (×100); ChanceMAP and ChanceMRR
	// what a uniformly random order of each question's candidates scores
	// on average (×100).
	MAP, MRR, ChanceMAP, ChanceMRR float64
	// PerQuestion holds each kept question's id, AP and RR (not ×100),
	// in the order of the questions given: the items of the figures.
	PerQuestion []RankingScore
}

// ScoreRankings scores questions by def. A question's candidates are
// ordered by score, highest first; a relevant candidate tied with an
// irrelevant one ranks below it (ties count against the model, so a model
// that scores everything alike gets the worst order). The official
// scorers break ties otherwise (the SemEval scorer keeps the file's order,
// the search engine's ranking; trec_eval orders tied documents by
// decreasing id): the figures equal theirs whenever no relevant candidate
// ties with an irrelevant one. The candidates' order in qs is changed.
func ScoreRankings(qs []Question, def RankingDef) *Rankings {
	r := &Rankings{Def: def}
	var sumAP, sumRR, chanceAP, chanceRR float64
	for _, q := range qs {
		rel := 0
		for _, c := range q.Candidates {
			if c.Relevant {
				rel++
			}
		}
		if def.Mixed && (rel == 0 || rel == len(q.Candidates)) {
			continue
		}
		if len(q.Candidates) == 0 {
			continue
		}
		ap, rr := averagePrecision(q.Candidates, def.Cutoff, def.ByRetrieved)
		cAP, cRR := chanceRanking(len(q.Candidates), rel, def.Cutoff, def.ByRetrieved)
		r.Questions++
		r.Candidates += len(q.Candidates)
		switch rel {
		case 0:
			r.NoRelevant++
		case len(q.Candidates):
			r.AllRelevant++
		}
		sumAP, sumRR, chanceAP, chanceRR = sumAP+ap, sumRR+rr, chanceAP+cAP, chanceRR+cRR
		r.PerQuestion = append(r.PerQuestion, RankingScore{q.ID, ap, rr})
	}
	if r.Questions > 0 {
		n := float64(r.Questions)
		r.MAP, r.MRR, r.ChanceMAP, r.ChanceMRR = 100*sumAP/n, 100*sumRR/n, 100*chanceAP/n, 100*chanceRR/n
	}
	return r
}

// averagePrecision orders cs in place by score, highest first, a relevant
// candidate tied with an irrelevant one below it, and returns the average
// precision and the reciprocal rank of the first relevant candidate over
// the top cutoff (0: all): AP is the sum of the precision at each relevant
// candidate's rank within the cutoff, divided by the relevant candidates
// within the cutoff when byRetrieved, by all relevant candidates
// otherwise. Both are 0 when no relevant candidate is within the cutoff.
func averagePrecision(cs []Candidate, cutoff int, byRetrieved bool) (ap, rr float64) {
	slices.SortStableFunc(cs, func(a, b Candidate) int {
		if c := cmp.Compare(b.Score, a.Score); c != 0 {
			return c
		}
		switch {
		case a.Relevant == b.Relevant:
			return 0
		case a.Relevant:
			return 1
		}
		return -1
	})
	rel := 0
	for _, c := range cs {
		if c.Relevant {
			rel++
		}
	}
	top := len(cs)
	if cutoff > 0 {
		top = min(top, cutoff)
	}
	var hits, sum float64
	for k, c := range cs[:top] {
		if c.Relevant {
			hits++
			sum += hits / float64(k+1)
			if rr == 0 {
				rr = 1 / float64(k+1)
			}
		}
	}
	switch {
	case hits == 0:
		return 0, 0
	case byRetrieved:
		return sum / hits, rr
	}
	return sum / float64(rel), rr
}

// chanceRanking is the expected AP and RR that averagePrecision gives a
// uniformly random order of n candidates of which rel are relevant. With
// no binding cutoff, ChanceAP and ChanceRR. With a cutoff k < n, the
// number m of relevant candidates in the top k is hypergeometric, and
// given m their places among the k are uniformly random, so the sum of
// their precisions has the mean m·ChanceAP(k, m): E[AP] = Σₘ P(m)
// ChanceAP(k, m), times m/rel when AP divides by all relevant; E[RR] is
// ChanceRR's sum over the first k ranks.
func chanceRanking(n, rel, cutoff int, byRetrieved bool) (ap, rr float64) {
	if n <= 0 || rel <= 0 || rel > n {
		return 0, 0
	}
	if cutoff <= 0 || cutoff >= n {
		return ChanceAP(n, rel), ChanceRR(n, rel)
	}
	k := cutoff
	for m := max(1, rel-(n-k)); m <= min(k, rel); m++ {
		p := math.Exp(lchoose(rel, m) + lchoose(n-rel, k-m) - lchoose(n, k))
		a := ChanceAP(k, m)
		if !byRetrieved {
			a *= float64(m) / float64(rel)
		}
		ap += p * a
	}
	return ap, chanceRRAt(n, rel, k)
}

// lchoose is log C(n, k).
func lchoose(n, k int) float64 {
	a, _ := math.Lgamma(float64(n + 1))
	b, _ := math.Lgamma(float64(k + 1))
	c, _ := math.Lgamma(float64(n - k + 1))
	return a - b - c
}

// ChanceAP is the expected average precision of a uniformly random order
// of n candidates of which rel are relevant (1 ≤ rel ≤ n): position k is
// relevant with probability rel/n, and then each of the k−1 above it with
// probability (rel−1)/(n−1), so
//
//	E[AP] = (1/n) Σ_{k=1..n} (1 + (k−1)(rel−1)/(n−1)) / k
//
// (1/2 + 1/4 = 3/4 for one relevant of two; 1 when all are relevant).
func ChanceAP(n, rel int) float64 {
	if n <= 0 || rel <= 0 || rel > n {
		return 0
	}
	if n == 1 {
		return 1
	}
	var sum float64
	for k := 1; k <= n; k++ {
		sum += (1 + float64(k-1)*float64(rel-1)/float64(n-1)) / float64(k)
	}
	return sum / float64(n)
}

// ChanceRR is the expected reciprocal rank of the first relevant
// candidate in a uniformly random order of n candidates of which rel are
// relevant: Σ_k P(first = k)/k, where P(first > k) = C(n−k, rel)/C(n, rel).
// For one relevant candidate it is H(n)/n (0.0519 for n = 100).
func ChanceRR(n, rel int) float64 { return chanceRRAt(n, rel, n) }

// chanceRRAt is ChanceRR counting only a first relevant candidate within
// the top cutoff ranks (a later one gives 0).
func chanceRRAt(n, rel, cutoff int) float64 {
	if n <= 0 || rel <= 0 || rel > n {
		return 0
	}
	var sum float64
	above := 1.0 // P(first > k−1)
	for k := 1; k <= min(n-rel+1, cutoff); k++ {
		next := above * float64(n-k+1-rel) / float64(n-k+1) // P(first > k)
		sum += (above - next) / float64(k)
		above = next
	}
	return sum
}

// RankingScore is one ranking of labelled candidates: its id, average
// precision and reciprocal rank of its first relevant candidate.
type RankingScore struct {
	ID     string
	AP, RR float64
}
