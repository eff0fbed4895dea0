package evalsink

import (
	"cmp"
	"context"
	"hash/fnv"
	"math/rand/v2"
	"slices"
	"strings"
)

// DefaultCandidates is how many responses a retrieval query ranks: the
// true one and 99 drawn at random, as Yang et al. (2018) and Henderson et
// al. (2017) report precision at N.
const DefaultCandidates = 100

// Retrieval is what RetrievalScores measures on one set.
type Retrieval struct {
	Corpus, Split, Dataset string
	// Queries is the number of true pairs ranked; Candidates the
	// responses each ranks (fewer than asked when the set has fewer
	// distinct responses).
	Queries, Candidates int
	// P1, P3, P10 are the share of queries whose true response ranks in
	// the top 1, 3, 10 (×100); MRR the mean reciprocal rank of the true
	// response (×100).
	P1, P3, P10, MRR float64
	// RankQueries counts the queries the data gives a ranking for (a
	// text with at least two labelled candidates, one relevant); MAP and
	// RankMRR are their mean average precision and mean reciprocal rank
	// (×100). Zero RankQueries: none.
	RankQueries  int
	MAP, RankMRR float64
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
// response among candidates−1 others drawn at random (seeded by seed and
// the pair's ID, so the draw does not depend on the order of the set)
// from the set's distinct responses, by the cosine of the embeddings. A
// tie with a negative counts against the true response, so a model that
// gives everything the same score ranks it last. Where the data gives
// rankings (a text paired with several labelled candidates) it also
// measures MAP and MRR over them.
func RetrievalScores(ctx context.Context, e *Embedder, s *Set, candidates int, seed uint64) (*Retrieval, error) {
	r := &Retrieval{Corpus: s.Corpus, Split: s.Split, Dataset: s.Dataset}
	key := func(t []string) string { return strings.Join(t, "\x00") }
	// Distinct texts, embedded once.
	index := map[string]int{}
	var texts [][]string
	add := func(t []string) int {
		k := key(t)
		if i, ok := index[k]; ok {
			return i
		}
		index[k] = len(texts)
		texts = append(texts, t)
		return len(texts) - 1
	}
	qa, qb := make([]int, len(s.Pairs)), make([]int, len(s.Pairs))
	var responses []int
	isResponse := map[int]bool{}
	for i, p := range s.Pairs {
		qa[i], qb[i] = add(p.A), add(p.B)
		if !isResponse[qb[i]] {
			isResponse[qb[i]] = true
			responses = append(responses, qb[i])
		}
	}
	vecs, err := e.Embed(ctx, texts)
	if err != nil {
		return nil, err
	}
	r.Candidates = min(candidates, len(responses))
	var rr, p1, p3, p10 float64
	for i, p := range s.Pairs {
		if !positive(s, p) {
			continue
		}
		h := fnv.New64a()
		h.Write([]byte(p.ID))
		rng := rand.New(rand.NewPCG(seed, h.Sum64()))
		truth := Cosine(vecs[qa[i]], vecs[qb[i]])
		rank := 1
		drawn := map[int]bool{qb[i]: true}
		for n := 1; n < r.Candidates; {
			c := responses[rng.IntN(len(responses))]
			if drawn[c] {
				continue
			}
			drawn[c] = true
			n++
			if Cosine(vecs[qa[i]], vecs[c]) >= truth {
				rank++
			}
		}
		r.Queries++
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
	}
	if s.Corpus == "quora" {
		r.RankQueries, r.MAP, r.RankMRR = rankings(s, qa, qb, vecs)
	}
	return r, nil
}

// rankings measures MAP and MRR over the texts that the set pairs with at
// least two labelled candidates, one or more of them relevant.
func rankings(s *Set, qa, qb []int, vecs [][]float32) (queries int, mapScore, mrr float64) {
	type cand struct {
		score    float64
		relevant bool
	}
	byQuery := map[int][]cand{}
	var order []int
	for i, p := range s.Pairs {
		if _, ok := byQuery[qa[i]]; !ok {
			order = append(order, qa[i])
		}
		byQuery[qa[i]] = append(byQuery[qa[i]], cand{Cosine(vecs[qa[i]], vecs[qb[i]]), p.Gold > 0})
	}
	var sumAP, sumRR float64
	for _, q := range order {
		cs := byQuery[q]
		rel := 0
		for _, c := range cs {
			if c.relevant {
				rel++
			}
		}
		if len(cs) < 2 || rel == 0 {
			continue
		}
		// Highest score first; on a tie the irrelevant candidate first
		// (ties count against the model).
		slices.SortStableFunc(cs, func(a, b cand) int {
			if c := cmp.Compare(b.score, a.score); c != 0 {
				return c
			}
			switch {
			case a.relevant == b.relevant:
				return 0
			case a.relevant:
				return 1
			}
			return -1
		})
		var hits, ap, firstRR float64
		for k, c := range cs {
			if c.relevant {
				hits++
				ap += hits / float64(k+1)
				if firstRR == 0 {
					firstRR = 1 / float64(k+1)
				}
			}
		}
		queries++
		sumAP += ap / float64(rel)
		sumRR += firstRR
	}
	if queries == 0 {
		return 0, 0, 0
	}
	return queries, 100 * sumAP / float64(queries), 100 * sumRR / float64(queries)
}
