package evalsink_test

import (
	"context"
	"math"
	"strings"
	"testing"

	"github.com/parastream/parastream/evalsink"
	"github.com/parastream/parastream/trainstep"
)

// TestAgainstScipy scores every similarity set of ../shared (STS
// 2012-2015, STS Benchmark, SICK) with a random word-averaging model, and
// checks each set's Pearson and Spearman against scipy to 1e-6, and the
// year aggregates (mean, weighted mean, pooled) and the average against
// figures computed here by hand from scipy's.
func TestAgainstScipy(t *testing.T) {
	py := pythonWith(t, "scipy.stats", "python3-scipy", "PARASTREAM_REQUIRE_SCIPY")
	sets := loadSets(t, sharedSets(t))
	// A vocabulary of the 3000 most frequent words: the rest are
	// unknown, so that some texts embed from <unk> alone.
	dir := checkpoint(t, t.TempDir(), "ck", vocabulary(sets, 3000), 7)
	m, ck, err := trainstep.LoadModel(dir, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer m.Close()
	lex, err := ck.Lexicon()
	if err != nil {
		t.Fatal(err)
	}
	emb, err := evalsink.NewEmbedder(m, lex, ck.Config.EmbedDim())
	if err != nil {
		t.Fatal(err)
	}
	type dumpSet struct {
		Name string    `json:"name"`
		Pred []float64 `json:"pred"`
		Gold []float64 `json:"gold"`
	}
	var dump struct {
		Sets  []dumpSet        `json:"sets"`
		Pools map[string][]int `json:"pools"`
	}
	dump.Pools = map[string][]int{}
	var scored []*evalsink.Scored
	for _, s := range sets.Sets {
		if s.Task != evalsink.TaskSimilarity {
			continue
		}
		sc, err := evalsink.ScoreSimilarity(context.Background(), emb, s, evalsink.ScaleCosine)
		if err != nil {
			t.Fatal(err)
		}
		scored = append(scored, sc)
		if s.Year != "" {
			key := s.Split + "/" + s.Year
			dump.Pools[key] = append(dump.Pools[key], len(dump.Sets))
		}
		dump.Sets = append(dump.Sets, dumpSet{s.Corpus + "/" + s.Split + "/" + s.Dataset, sc.Pred, sc.Gold})
	}
	if len(scored) < 20 {
		t.Fatalf("%d similarity sets, want the 19 STS test sets, 3 STS 2012 train sets, STS Benchmark and SICK", len(scored))
	}
	var ref struct {
		Sets []struct {
			Name              string
			Pearson, Spearman float64
		}
		Pools map[string]struct{ Pearson, Spearman float64 }
	}
	runCheck(t, py, "scipy_check.py", dump, &ref)

	scores := evalsink.SimilarityScores(scored)
	const tol = 1e-6
	check := func(what string, got, want float64) {
		t.Helper()
		if math.IsNaN(got) || math.Abs(got-want) > tol {
			t.Errorf("%s: got %.9f, want %.9f (difference %.2g)", what, got, want, got-want)
		}
	}
	byKey := map[string]evalsink.Score{}
	for _, s := range scores {
		byKey[s.Corpus+"/"+s.Split+"/"+s.Dataset+"/"+s.Kind] = s
	}
	pairs := map[string]int{}
	var maxDiff float64
	for i, r := range ref.Sets {
		s, ok := byKey[r.Name+"/"+evalsink.KindDataset]
		if !ok {
			t.Fatalf("no score for %s", r.Name)
		}
		check(r.Name+" Pearson", s.Pearson/100, r.Pearson)
		check(r.Name+" Spearman", s.Spearman/100, r.Spearman)
		maxDiff = max(maxDiff, math.Abs(s.Pearson/100-r.Pearson), math.Abs(s.Spearman/100-r.Spearman))
		pairs[r.Name] = len(dump.Sets[i].Pred)
	}
	t.Logf("%d sets, largest difference from scipy %.3g", len(ref.Sets), maxDiff)

	// Year aggregates by hand, from scipy's figures.
	for key, idx := range dump.Pools {
		split, year, _ := strings.Cut(key, "/")
		var mean, weighted, n [2]float64
		for _, i := range idx {
			r := ref.Sets[i]
			w := float64(pairs[r.Name])
			for k, v := range []float64{r.Pearson, r.Spearman} {
				mean[k] += v / float64(len(idx))
				weighted[k] += w * v
				n[k] += w
			}
		}
		prefix := "sts/" + split + "/" + year + "/"
		for k, name := range []string{"Pearson", "Spearman"} {
			get := func(s evalsink.Score) float64 { return []float64{s.Pearson, s.Spearman}[k] / 100 }
			check(prefix+"mean "+name, get(byKey[prefix+evalsink.KindMean]), mean[k])
			check(prefix+"weighted mean "+name, get(byKey[prefix+evalsink.KindWeightedMean]), weighted[k]/n[k])
			check(prefix+"pooled "+name, get(byKey[prefix+evalsink.KindPooled]), []float64{ref.Pools[key].Pearson, ref.Pools[key].Spearman}[k])
		}
		if got := byKey[prefix+evalsink.KindPooled].Pairs; got != int64(n[0]) {
			t.Errorf("%s pooled pairs %d, want %v", prefix, got, n[0])
		}
	}
	// The average: the STS 2012-2015 test sets (no SICK test set here).
	var avg float64
	var count int
	for _, r := range ref.Sets {
		for _, y := range []string{"2012", "2013", "2014", "2015"} {
			if strings.HasPrefix(r.Name, "sts/test/"+y+"/") {
				avg += r.Pearson
				count++
			}
		}
	}
	if count != 19 {
		t.Fatalf("%d STS 2012-2015 test sets, want 19", count)
	}
	check("average Pearson", byKey["sts+sick/test/all/"+evalsink.KindAverage].Pearson/100, avg/float64(count))
	if emb.Unknown == 0 || emb.Empty != 0 {
		t.Logf("tokens %d, unknown %d, empty %d", emb.Tokens, emb.Unknown, emb.Empty)
	}
}
