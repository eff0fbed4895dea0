package featurize_test

import (
	"context"
	"fmt"
	"math"
	"slices"
	"testing"

	"github.com/parastream/parastream/featurize"
	"github.com/parastream/parastream/shards"
)

// toyModel fits a small model on texts drawn from two word groups.
func toyModel(t *testing.T) (*featurize.Model, [][]string) {
	t.Helper()
	var texts [][]string
	for i := range 60 {
		group := []string{"cat", "dog", "pet", "fur", "paw"}
		if i%2 == 1 {
			group = []string{"stock", "market", "share", "price", "bank"}
		}
		texts = append(texts, []string{group[i%5], group[(i/2)%5], group[(i/3)%5], "the"})
	}
	counts := map[string]*featurize.TokenCount{}
	for _, tx := range texts {
		seen := map[string]bool{}
		for _, w := range tx {
			c := counts[w]
			if c == nil {
				c = &featurize.TokenCount{Token: w}
				counts[w] = c
			}
			c.Count++
			if !seen[w] {
				seen[w] = true
				c.Docs++
			}
		}
	}
	var list []featurize.TokenCount
	for _, c := range counts {
		list = append(list, *c)
	}
	v, err := featurize.BuildVocabulary(list, int64(len(texts)), featurize.VocabConfig{})
	if err != nil {
		t.Fatal(err)
	}
	bow, _ := featurize.NewBoW(v, featurize.TFIDF)
	X := featurize.NewCSR(v.Len())
	var sc featurize.BoWScratch
	for _, tx := range texts {
		ids, _ := v.AppendIDs(nil, tx)
		idx, val := bow.Vector(&sc, ids)
		if err := X.AppendRow(idx, val); err != nil {
			t.Fatal(err)
		}
	}
	nmf, res, err := featurize.FitNMF(context.Background(), X, featurize.NMFConfig{K: 2, L1: 0.001, Seed: 1, MaxIter: 300, Tol: -1})
	if err != nil {
		t.Fatal(err)
	}
	m, err := featurize.NewModel(v, nmf, featurize.Info{Weighting: featurize.TFIDF, RelError: res.RelError, Iters: res.Iters})
	if err != nil {
		t.Fatal(err)
	}
	return m, texts
}

func TestModelSaveLoadAndMarshal(t *testing.T) {
	m, _ := toyModel(t)
	dir := t.TempDir()
	files, err := m.Save(dir)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(files, []string{featurize.VocabularyFile, featurize.TopicsFile, featurize.InfoFile}) {
		t.Errorf("files %v", files)
	}
	loaded, err := featurize.LoadModel(dir)
	if err != nil {
		t.Fatal(err)
	}
	enc, err := m.MarshalBinary()
	if err != nil {
		t.Fatal(err)
	}
	decoded, err := featurize.UnmarshalModel(enc)
	if err != nil {
		t.Fatal(err)
	}
	for _, got := range []*featurize.Model{loaded, decoded} {
		if !slices.Equal(got.NMF.H, m.NMF.H) || got.Vocab.Len() != m.Vocab.Len() || got.Info.Weighting != m.Info.Weighting {
			t.Fatal("the model read back differs")
		}
	}
	for _, cut := range []int{0, 1, len(enc) / 2, len(enc) - 1} {
		if _, err := featurize.UnmarshalModel(enc[:cut]); err == nil {
			t.Errorf("a model cut to %d bytes decoded", cut)
		}
	}
	if _, err := featurize.LoadModel(t.TempDir()); err == nil {
		t.Error("an empty directory loaded as a model")
	}
}

func TestFeaturizerApply(t *testing.T) {
	m, texts := toyModel(t)
	f := m.NewFeaturizer()
	var st featurize.TextStats
	r := shards.Row{A: "x", B: "y", TokensA: texts[0], TokensB: append(slices.Clone(texts[1]), "zebra")}
	f.Apply(&r, &st)
	wantA, _ := m.Vocab.AppendIDs(nil, texts[0])
	if !slices.Equal(r.IDsA, wantA) {
		t.Errorf("IDsA %v, want %v", r.IDsA, wantA)
	}
	if r.IDsB[len(r.IDsB)-1] != featurize.UnkID {
		t.Errorf("an unknown word got id %d", r.IDsB[len(r.IDsB)-1])
	}
	if len(r.TopicsA) != 2 || len(r.TopicsB) != 2 {
		t.Fatalf("topic vectors of lengths %d and %d, want 2", len(r.TopicsA), len(r.TopicsB))
	}
	// The two word groups load on different topics.
	top := func(v []float32) int {
		if v[0] >= v[1] {
			return 0
		}
		return 1
	}
	if top(r.TopicsA) == top(r.TopicsB) {
		t.Errorf("texts of different groups share their main topic: %v and %v", r.TopicsA, r.TopicsB)
	}
	if st.Texts != 2 || st.Tokens != 9 || st.Unknown != 1 || st.Empty != 0 {
		t.Errorf("stats %+v", st)
	}
	// A one-sided row gets nothing on side B; a text of unknown words gets
	// the zero vector.
	one := shards.Row{A: "zebra", TokensA: []string{"zebra"}}
	f.Apply(&one, &st)
	if one.IDsB != nil || one.TopicsB != nil || len(one.TopicsA) != 2 || one.TopicsA[0] != 0 || one.TopicsA[1] != 0 {
		t.Errorf("one-sided unknown row: %+v", one)
	}
	if st.Empty != 1 {
		t.Errorf("empty texts %d, want 1", st.Empty)
	}
}

func TestModelTopicWords(t *testing.T) {
	m, _ := toyModel(t)
	var groups []string
	for k := range 2 {
		ws := m.Topic(k, 5)
		if len(ws) == 0 {
			t.Fatalf("topic %d has no words", k)
		}
		for i := 1; i < len(ws); i++ {
			if ws[i].Weight > ws[i-1].Weight || math.IsNaN(float64(ws[i].Weight)) {
				t.Fatalf("topic %d words not by decreasing weight: %v", k, ws)
			}
		}
		groups = append(groups, fmt.Sprint(ws[0].Token))
	}
	pets := "cat dog pet fur paw"
	if (contains(pets, groups[0])) == (contains(pets, groups[1])) {
		t.Errorf("the top words %v do not separate the two groups", groups)
	}
}

func contains(list, w string) bool { return slices.Contains(splitWords(list), w) }

func splitWords(s string) []string {
	var out []string
	start := 0
	for i := 0; i <= len(s); i++ {
		if i == len(s) || s[i] == ' ' {
			out = append(out, s[start:i])
			start = i + 1
		}
	}
	return out
}
