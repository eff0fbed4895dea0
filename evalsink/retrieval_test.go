package evalsink_test

import (
	"context"
	"encoding/binary"
	"hash/fnv"
	"math"
	"math/rand/v2"
	"strconv"
	"strings"
	"testing"

	"github.com/parastream/parastream/evalsink"
	"github.com/parastream/parastream/evalsink/internal/evaltest"
	"github.com/parastream/parastream/evalsink/metric"
)

// randomModel gives each text a random vector drawn from its ids and the
// model's seed: an encoder that knows nothing of what texts mean, whose
// rankings are uniformly random.
type randomModel struct {
	fakeModel
	seed uint64
}

func (m randomModel) Embed(seqs [][]int32) ([][]float32, error) {
	out := make([][]float32, len(seqs))
	for i, s := range seqs {
		h := fnv.New64a()
		for _, id := range s {
			h.Write(binary.LittleEndian.AppendUint32(nil, uint32(id)))
		}
		rng := rand.New(rand.NewPCG(m.seed, h.Sum64()))
		out[i] = make([]float32, m.dim)
		for j := range out[i] {
			out[i][j] = float32(rng.NormFloat64())
		}
	}
	return out, nil
}

// bruteChance averages AP and the first relevant's reciprocal rank over
// every order of n candidates whose first rel are relevant.
func bruteChance(n, rel int) (ap, rr float64) {
	count := 0
	evaltest.Permutations(n, func(p []int) {
		var hits, sum, first float64
		for k, c := range p {
			if c < rel {
				hits++
				sum += hits / float64(k+1)
				if first == 0 {
					first = 1 / float64(k+1)
				}
			}
		}
		ap += sum / float64(rel)
		rr += first
		count++
	})
	return ap / float64(count), rr / float64(count)
}

// TestChance checks ChanceAP and ChanceRR against every order of up to 7
// candidates, and H(100)/100 for one true response among 100.
func TestChance(t *testing.T) {
	for n := 1; n <= 7; n++ {
		for rel := 1; rel <= n; rel++ {
			ap, rr := bruteChance(n, rel)
			if got := metric.ChanceAP(n, rel); math.Abs(got-ap) > 1e-12 {
				t.Errorf("ChanceAP(%d, %d) = %v, every order gives %v", n, rel, got, ap)
			}
			if got := metric.ChanceRR(n, rel); math.Abs(got-rr) > 1e-12 {
				t.Errorf("ChanceRR(%d, %d) = %v, every order gives %v", n, rel, got, rr)
			}
		}
	}
	var h float64
	for k := 1; k <= 100; k++ {
		h += 1 / float64(k)
	}
	if got := metric.ChanceRR(100, 1); math.Abs(got-h/100) > 1e-12 || metric.ChanceAP(2, 1) != 0.75 {
		t.Errorf("ChanceRR(100, 1) = %v, want H(100)/100 = %v; ChanceAP(2, 1) = %v, want 0.75", got, h/100, metric.ChanceAP(2, 1))
	}
}

// TestRetrievalPoolExcludesQueryAndDuplicates: a query's own text and its
// other duplicates are responses of the set but never its negatives, and a
// question whose candidates are all duplicates is no ranking. With the
// overlap model the true response then ranks first; drawn as negatives,
// the other duplicate (a tie) and the query's own text (cosine 1) would
// push it down.
func TestRetrievalPoolExcludesQueryAndDuplicates(t *testing.T) {
	s := evalsink.Set{Corpus: "quora", Split: "test", Dataset: "quora/test", Pairs: []evalsink.Pair{
		{ID: "d1", A: []string{"a"}, B: []string{"a", "b"}, Gold: 1},
		{ID: "d2", A: []string{"a"}, B: []string{"a", "c"}, Gold: 1},
		{ID: "self", A: []string{"z"}, B: []string{"a"}, Gold: 0},
	}}
	vocab := []string{"a", "b", "c", "z"}
	for i := range 20 {
		w := "u" + strconv.Itoa(i)
		vocab = append(vocab, w)
		s.Pairs = append(s.Pairs, evalsink.Pair{ID: w, A: []string{"z"}, B: []string{w}, Gold: 0})
	}
	emb, err := evalsink.NewEmbedder(fakeModel{dim: len(vocab)}, newLexicon(t, vocab, 0), len(vocab))
	if err != nil {
		t.Fatal(err)
	}
	// 23 responses; each query may not draw "a" nor its other duplicate:
	// 20 negatives, a pool of 21.
	r, err := evalsink.RetrievalScores(context.Background(), emb, &s, 100, 1)
	if err != nil {
		t.Fatal(err)
	}
	if r.Queries != 2 || r.Responses != 23 || r.Candidates != 21 || r.P1 != 100 || r.MRR != 100 {
		t.Errorf("pool: %+v", r)
	}
	if math.Abs(r.ChanceMRR-100*metric.ChanceRR(21, 1)) > 1e-9 || math.Abs(r.ChanceP1-100.0/21) > 1e-9 || r.ChanceP10 != 1000.0/21 {
		t.Errorf("chance on a pool of 21: %+v", r)
	}
	// "a" has only duplicates: every order is right, no ranking. "z" has
	// 21 candidates, none relevant: none either.
	if r.RankQueries != 0 || r.MAP != 0 {
		t.Errorf("rankings without an irrelevant or a relevant candidate: %+v", r)
	}
}

// TestRetrievalRandomEncoderNearChance evaluates encoders that give each
// text a random vector on the Quora test split of ../shared: they must
// score what chance gives on the same pools, not 100. Over 40 such
// encoders the mean of each figure is within 4 standard errors of chance
// (the errors from the variance of a uniformly random rank), and the
// rankings are exactly the questions with a relevant and an irrelevant
// candidate, whose chance MAP the test works out from every order.
func TestRetrievalRandomEncoderNearChance(t *testing.T) {
	sets := loadSets(t, sharedSets(t))
	var quora *evalsink.Set
	for _, s := range sets.Sets {
		if s.Dataset == "quora/test" {
			quora = s
		}
	}
	if quora == nil {
		t.Fatal("no quora/test set in the shared evaluation data")
	}
	// The rankings the data gives, counted here from the raw pairs.
	type counts struct{ n, rel int }
	byQuery := map[string]*counts{}
	seen := map[string]bool{}
	positives := 0
	for _, p := range quora.Pairs {
		if p.Gold > 0 {
			positives++
		}
		a, b := strings.Join(p.A, " "), strings.Join(p.B, " ")
		if seen[a+"\x00"+b] || a == b {
			continue
		}
		seen[a+"\x00"+b] = true
		if byQuery[a] == nil {
			byQuery[a] = &counts{}
		}
		byQuery[a].n++
		if p.Gold > 0 {
			byQuery[a].rel++
		}
	}
	var rankQueries int
	var chanceMAP, chanceRR float64
	for _, c := range byQuery {
		if c.rel > 0 && c.rel < c.n {
			ap, rr := bruteChance(c.n, c.rel)
			rankQueries, chanceMAP, chanceRR = rankQueries+1, chanceMAP+ap, chanceRR+rr
		}
	}
	if rankQueries == 0 {
		t.Fatal("the Quora test split gives no ranking")
	}
	chanceMAP, chanceRR = 100*chanceMAP/float64(rankQueries), 100*chanceRR/float64(rankQueries)

	const encoders = 40
	vocab := vocabulary(sets, 0)
	var mrr, p1, p10, mapSum, rankMRR float64
	var first *evalsink.Retrieval
	for seed := range uint64(encoders) {
		emb, err := evalsink.NewEmbedder(randomModel{fakeModel{dim: 32}, seed}, newLexicon(t, vocab, 0), 32)
		if err != nil {
			t.Fatal(err)
		}
		r, err := evalsink.RetrievalScores(context.Background(), emb, quora, 100, 1)
		if err != nil {
			t.Fatal(err)
		}
		if first == nil {
			first = r
			t.Logf("random encoder 0: %+v", *r)
		}
		if r.MAP == 100 && r.RankMRR == 100 && r.P1 == 100 {
			t.Errorf("encoder %d scores 100: %+v", seed, r)
		}
		if r.Candidates != first.Candidates || r.RankQueries != rankQueries || r.Queries != positives {
			t.Fatalf("encoder %d: %d queries, pool %d, %d rankings; want %d, %d, %d", seed, r.Queries, r.Candidates, r.RankQueries, positives, first.Candidates, rankQueries)
		}
		mrr, p1, p10, mapSum, rankMRR = mrr+r.MRR, p1+r.P1, p10+r.P10, mapSum+r.MAP, rankMRR+r.RankMRR
	}
	c := first.Candidates
	if c != 100 {
		t.Fatalf("pool of %d candidates, want 100 (the set has %d responses)", c, first.Responses)
	}
	// A uniformly random rank U of c: E[1/U] = H(c)/c, E[1/U²] = H2(c)/c.
	var h, h2 float64
	for k := 1; k <= c; k++ {
		h, h2 = h+1/float64(k), h2+1/float64(k*k)
	}
	draws := float64(encoders * first.Queries)
	se := func(v float64) float64 { return 100 * math.Sqrt(v/draws) }
	pk := func(k float64) float64 { return k / float64(c) }
	for _, f := range []struct {
		name              string
		got, chance, stde float64
	}{
		{"MRR", mrr / encoders, 100 * h / float64(c), se(h2/float64(c) - (h/float64(c))*(h/float64(c)))},
		{"P@1", p1 / encoders, 100 * pk(1), se(pk(1) * (1 - pk(1)))},
		{"P@10", p10 / encoders, 100 * pk(10), se(pk(10) * (1 - pk(10)))},
		// AP and RR lie in [0, 1]: a variance of at most 1/4 a query.
		{"ranking MAP", mapSum / encoders, chanceMAP, 100 * math.Sqrt(0.25/float64(encoders*rankQueries))},
		{"ranking MRR", rankMRR / encoders, chanceRR, 100 * math.Sqrt(0.25/float64(encoders*rankQueries))},
	} {
		t.Logf("%s: %.2f over %d random encoders; chance %.2f (standard error %.2f)", f.name, f.got, encoders, f.chance, f.stde)
		if math.Abs(f.got-f.chance) > 4*f.stde {
			t.Errorf("%s of random encoders %.2f, chance %.2f: more than 4 standard errors (%.2f) apart", f.name, f.got, f.chance, f.stde)
		}
	}
	if math.Abs(first.ChanceMRR-100*h/float64(c)) > 1e-9 || math.Abs(first.ChanceMAP-chanceMAP) > 1e-9 || math.Abs(first.ChanceRankMRR-chanceRR) > 1e-9 {
		t.Errorf("reported chance MRR %v, MAP %v, ranking MRR %v; want %v, %v, %v", first.ChanceMRR, first.ChanceMAP, first.ChanceRankMRR, 100*h/float64(c), chanceMAP, chanceRR)
	}
}
