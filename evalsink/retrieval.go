package evalsink

import (
	"cmp"
	"context"
	"hash/fnv"
	"math/rand/v2"
	"slices"
	"strings"

	"github.com/parastream/parastream/evalsink/metric"
)

// DefaultCandidates is how many responses a retrieval query ranks: the
// true one and 99 drawn at random, as Yang et al. (2018) and Henderson et
// al. (2017) report precision at N.
const DefaultCandidates = 100

// Retrieval is what RetrievalScores measures on one set.
type Retrieval struct {
	Corpus, Split, Dataset string
	// Queries is the number of true pairs ranked; Candidates the pool
	// each ranks: its true response and Candidates−1 negatives (the same
	// for every query; fewer than asked when the set has too few
	// responses); Responses the set's distinct responses the negatives
	// are drawn from.
	Queries, Candidates, Responses int
	// P1, P3, P10 are the share of queries whose true response ranks in
	// the top 1, 3, 10 (×100); MRR the mean reciprocal rank of the true
	// response (×100).
	P1, P3, P10, MRR float64
	// ChanceP1, ChanceP3, ChanceP10 and ChanceMRR are what a model that
	// ranks the pool at random scores on average: min(N, Candidates) /
	// Candidates and H(Candidates) / Candidates (×100).
	ChanceP1, ChanceP3, ChanceP10, ChanceMRR float64
	// RankQueries counts the queries the data gives a ranking for (a
	// text paired with at least one relevant and one irrelevant labelled
	// candidate); RankCandidates the candidates they rank in all; MAP
	// and RankMRR are their mean average precision and mean reciprocal
	// rank (×100), ChanceMAP and ChanceRankMRR what a random ranking of
	// the same candidates scores on average (metric.ChanceAP, ChanceRR). Zero
	// RankQueries: none.
	RankQueries, RankCandidates int
	MAP, RankMRR                float64
	ChanceMAP, ChanceRankMRR    float64
	// PerQuery holds each ranked query's id (its pair's) and the rank of
	// its true response; PerRanking each ranking's id (its first pair's),
	// average precision and reciprocal rank: the items of the figures'
	// intervals and comparisons.
	PerQuery   []QueryRank
	PerRanking []metric.RankingScore
}

// QueryRank is one retrieval query: its id and its true response's rank
// (1 is first).
type QueryRank struct {
	ID   string
	Rank int
}

// positive says whether a retrieval pair is a true input-response pair:
// Quora's labelled duplicates (label 1); every Reddit pair.
func positive(s *Set, p Pair) bool {
	if s.Corpus == "quora" {
		return p.Gold > 0
	}
	return true
}

// RetrievalScores ranks, for each true pair of a retrieval set, its
// response among candidates−1 negatives by the cosine of the embeddings.
// The negatives are drawn at random (seeded by seed and the pair's ID, so
// the draw does not depend on the order of the set) from the set's
// distinct responses, less those that are not negatives: the query's own
// text, and every text the set pairs with the query as a true pair (another
// duplicate of a Quora question, another reply to a Reddit comment). Every
// query ranks a pool of the same size, so chance is the same for all. A
// tie with a negative counts against the true response, so a model that
// gives everything the same score ranks it last. Where the data gives
// rankings (a text paired with several labelled candidates, at least one
// relevant and one not) it also measures MAP and MRR over them.
func RetrievalScores(ctx context.Context, e *Embedder, s *Set, candidates int, seed uint64) (*Retrieval, error) {
	r := &Retrieval{Corpus: s.Corpus, Split: s.Split, Dataset: s.Dataset}
	// Distinct texts, embedded once.
	texts, qa, qb := pairTexts(s.Pairs)
	var responses []int
	isResponse := map[int]bool{}
	// related[t] are the texts the set pairs with t as a true pair, in
	// either direction: never a negative for t.
	related := map[int]map[int]bool{}
	relate := func(a, b int) {
		if related[a] == nil {
			related[a] = map[int]bool{}
		}
		related[a][b] = true
	}
	for i, p := range s.Pairs {
		if !isResponse[qb[i]] {
			isResponse[qb[i]] = true
			responses = append(responses, qb[i])
		}
		if positive(s, p) {
			relate(qa[i], qb[i])
			relate(qb[i], qa[i])
		}
	}
	// The draw indexes responses in the order of their texts, not of the
	// set's rows.
	slices.SortFunc(responses, func(a, b int) int { return cmp.Compare(textKey(texts[a]), textKey(texts[b])) })
	r.Responses = len(responses)
	vecs, err := e.Embed(ctx, texts)
	if err != nil {
		return nil, err
	}
	// excluded is the responses that cannot be a negative of query i.
	excluded := func(i, c int) bool { return c == qa[i] || related[qa[i]][c] }
	// The pool: as asked, or as many as the query with the fewest
	// eligible negatives has, plus its true response.
	r.Candidates = candidates
	for i, p := range s.Pairs {
		if !positive(s, p) {
			continue
		}
		n := len(responses)
		if isResponse[qa[i]] && !related[qa[i]][qa[i]] {
			n--
		}
		for c := range related[qa[i]] {
			if isResponse[c] {
				n--
			}
		}
		r.Candidates = min(r.Candidates, n+1)
	}
	var rr, p1, p3, p10 float64
	for i, p := range s.Pairs {
		if !positive(s, p) {
			continue
		}
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		h := fnv.New64a()
		h.Write([]byte(p.ID))
		rng := rand.New(rand.NewPCG(seed, h.Sum64()))
		truth := metric.Cosine(vecs[qa[i]], vecs[qb[i]])
		rank := 1
		drawn := map[int]bool{}
		for n := 1; n < r.Candidates; {
			c := responses[rng.IntN(len(responses))]
			if drawn[c] || excluded(i, c) {
				continue
			}
			drawn[c] = true
			n++
			if metric.Cosine(vecs[qa[i]], vecs[c]) >= truth {
				rank++
			}
		}
		r.Queries++
		r.PerQuery = append(r.PerQuery, QueryRank{p.ID, rank})
		rr += 1 / float64(rank)
		for _, at := range []struct {
			n   int
			sum *float64
		}{{1, &p1}, {3, &p3}, {10, &p10}} {
			if rank <= at.n {
				*at.sum++
			}
		}
	}
	if r.Queries > 0 {
		q := float64(r.Queries)
		r.P1, r.P3, r.P10, r.MRR = 100*p1/q, 100*p3/q, 100*p10/q, 100*rr/q
		c := float64(r.Candidates)
		r.ChanceP1, r.ChanceP3, r.ChanceP10 = 100*min(1, c)/c, 100*min(3, c)/c, 100*min(10, c)/c
		r.ChanceMRR = 100 * metric.ChanceRR(r.Candidates, 1)
	} else {
		r.Candidates = 0
	}
	if s.Corpus == "quora" {
		rankings(r, s, qa, qb, vecs)
	}
	return r, nil
}

// pairTexts indexes the distinct texts of pairs: texts holds each once, in
// the order met; a[i] and b[i] are the indexes of pair i's sides.
func pairTexts(pairs []Pair) (texts [][]string, a, b []int) {
	index := map[string]int{}
	add := func(t []string) int {
		k := textKey(t)
		if i, ok := index[k]; ok {
			return i
		}
		index[k] = len(texts)
		texts = append(texts, t)
		return len(texts) - 1
	}
	a, b = make([]int, len(pairs)), make([]int, len(pairs))
	for i, p := range pairs {
		a[i], b[i] = add(p.A), add(p.B)
	}
	return texts, a, b
}

func textKey(t []string) string { return strings.Join(t, "\x00") }

// rankings measures MAP and MRR over the texts that the set pairs with at
// least one relevant and one irrelevant labelled candidate (metric.ScoreRankings
// with RankingDef.Mixed). A query whose candidates are all relevant ranks
// nothing (every order gives AP 1): it is left out, as is a candidate that
// is the query's own text or repeats one already counted.
func rankings(r *Retrieval, s *Set, qa, qb []int, vecs [][]float32) {
	type cand struct {
		text     int
		score    float64
		relevant bool
	}
	byQuery := map[int][]cand{}
	firstID := map[int]string{}
	var order []int
	for i, p := range s.Pairs {
		if qa[i] == qb[i] {
			continue
		}
		cs, ok := byQuery[qa[i]]
		if !ok {
			order = append(order, qa[i])
			firstID[qa[i]] = p.ID
		}
		if j := slices.IndexFunc(cs, func(c cand) bool { return c.text == qb[i] }); j >= 0 {
			cs[j].relevant = cs[j].relevant || p.Gold > 0
			continue
		}
		byQuery[qa[i]] = append(cs, cand{qb[i], metric.Cosine(vecs[qa[i]], vecs[qb[i]]), p.Gold > 0})
	}
	qs := make([]metric.Question, len(order))
	for i, q := range order {
		qs[i].ID = firstID[q]
		for _, c := range byQuery[q] {
			qs[i].Candidates = append(qs[i].Candidates, metric.Candidate{Score: c.score, Relevant: c.relevant})
		}
	}
	x := metric.ScoreRankings(qs, metric.RankingDef{Mixed: true})
	r.RankQueries, r.RankCandidates = x.Questions, x.Candidates
	r.MAP, r.RankMRR, r.ChanceMAP, r.ChanceRankMRR = x.MAP, x.MRR, x.ChanceMAP, x.ChanceMRR
	r.PerRanking = x.PerQuestion
}
