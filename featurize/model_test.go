package featurize_test

import (
	"context"
	"encoding/json"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/parastream/parastream/featurize"
	"github.com/parastream/parastream/featurize/lexicon"
	"github.com/parastream/parastream/shards"
)

// toyModel fits a small model on texts drawn from two word groups.
func toyModel(t *testing.T) (*featurize.Model, [][]string) {
	t.Helper()
	return toyModelBuckets(t, 0)
}

// toyModelBuckets is toyModel with buckets out-of-vocabulary buckets: the
// vocabulary (V = 15: the 4 special tokens, "the" and the 10 words of the
// groups) and the topics are the same whatever buckets is.
func toyModelBuckets(t *testing.T, buckets int) (*featurize.Model, [][]string) {
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
	info := featurize.Info{Weighting: featurize.TFIDF, RelError: res.RelError, Iters: res.Iters, OOVBuckets: buckets}
	if buckets > 0 {
		info.OOVHash = lexicon.Hash
	}
	m, err := featurize.NewModel(v, nmf, info)
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

// TestFeaturizerApplyBuckets pins the ids of unseen words in featurized
// rows: V + crc32(token) mod N, the values written literally (Python's
// zlib.crc32 gives the same), and checks that the topic vectors, which
// weigh the vocabulary's words only, are those of the same model without
// buckets.
func TestFeaturizerApplyBuckets(t *testing.T) {
	plain, texts := toyModel(t)
	bucketed, _ := toyModelBuckets(t, 100_000)
	if bucketed.Vocab.Len() != 15 || bucketed.Lex.Rows() != 100_015 || plain.Lex.Rows() != 15 {
		t.Fatalf("V = %d, rows %d and %d; want 15, 100015 and 15", bucketed.Vocab.Len(), bucketed.Lex.Rows(), plain.Lex.Rows())
	}
	the := plain.Vocab.ID("the")
	for _, c := range []struct {
		name           string
		a, b           []string
		bucketA, plnA  []int32
		bucketB, plnB  []int32
		bucketed, unkn int64
	}{
		{"unseen words", []string{"the", "zyzzyva"}, []string{"東京", "the", "quizzaciously"},
			[]int32{the, 51572}, []int32{the, featurize.UnkID},
			[]int32{81054, the, 29782}, []int32{featurize.UnkID, the, featurize.UnkID}, 3, 3},
		{"only unseen", []string{"flibbertigibbet"}, []string{"héllo", "héllo"},
			[]int32{29245}, []int32{featurize.UnkID},
			[]int32{101, 101}, []int32{featurize.UnkID, featurize.UnkID}, 3, 3},
		{"known", texts[0], texts[1], nil, nil, nil, nil, 0, 0},
		{"mixed", append([]string{"zyzzyva"}, texts[2]...), append(slices.Clone(texts[3]), "東京"), nil, nil, nil, nil, 2, 2},
	} {
		t.Run(c.name, func(t *testing.T) {
			var stB, stP featurize.TextStats
			rb := shards.Row{A: "a", B: "b", TokensA: c.a, TokensB: c.b}
			rp := rb
			bucketed.NewFeaturizer().Apply(&rb, &stB)
			plain.NewFeaturizer().Apply(&rp, &stP)
			if c.bucketA != nil {
				if !slices.Equal(rb.IDsA, c.bucketA) || !slices.Equal(rb.IDsB, c.bucketB) {
					t.Errorf("with buckets: ids %v and %v, want %v and %v", rb.IDsA, rb.IDsB, c.bucketA, c.bucketB)
				}
				if !slices.Equal(rp.IDsA, c.plnA) || !slices.Equal(rp.IDsB, c.plnB) {
					t.Errorf("without buckets: ids %v and %v, want %v and %v", rp.IDsA, rp.IDsB, c.plnA, c.plnB)
				}
			}
			for side, ids := range [][]int32{rb.IDsA, rb.IDsB} {
				toks := [][]string{c.a, c.b}[side]
				for i, id := range ids {
					if w, known := bucketed.Lex.ID(toks[i]); id != w || (id >= 15) == known || int(id) >= bucketed.Lex.Rows() {
						t.Errorf("side %d token %q: id %d, lexicon %d (known %v)", side, toks[i], id, w, known)
					}
				}
			}
			if !slices.Equal(rb.TopicsA, rp.TopicsA) || !slices.Equal(rb.TopicsB, rp.TopicsB) {
				t.Errorf("topic vectors differ with buckets: %v %v, without: %v %v", rb.TopicsA, rb.TopicsB, rp.TopicsA, rp.TopicsB)
			}
			if stB.Unknown != c.unkn || stB.Bucketed != c.bucketed || stP.Unknown != c.unkn || stP.Bucketed != 0 || stB.Empty != stP.Empty {
				t.Errorf("stats with buckets %+v, without %+v; want %d unknown, %d bucketed", stB, stP, c.unkn, c.bucketed)
			}
		})
	}
}

// TestBoWIgnoresBucketIDs: ids beyond the vocabulary (buckets) get no
// weight and do not index out of range.
func TestBoWIgnoresBucketIDs(t *testing.T) {
	m, texts := toyModel(t)
	ids, _ := m.Vocab.AppendIDs(nil, texts[0])
	var sc featurize.BoWScratch
	idx, val := m.BoW.Vector(&sc, ids)
	wantIdx, wantVal := slices.Clone(idx), slices.Clone(val)
	withBuckets := append(slices.Clone(ids), 15, 16, 100_014, 1<<30)
	idx, val = m.BoW.Vector(&sc, withBuckets)
	if !slices.Equal(idx, wantIdx) || !slices.Equal(val, wantVal) {
		t.Errorf("bucket ids changed the vector: %v %v, want %v %v", idx, val, wantIdx, wantVal)
	}
}

func TestModelBucketsSaveLoad(t *testing.T) {
	m, _ := toyModelBuckets(t, 1000)
	dir := t.TempDir()
	if _, err := m.Save(dir); err != nil {
		t.Fatal(err)
	}
	info, err := os.ReadFile(filepath.Join(dir, featurize.InfoFile))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(info), `"oov_buckets": 1000`) || !strings.Contains(string(info), `"oov_hash": "crc32-ieee"`) {
		t.Errorf("featurize.json lacks the buckets:\n%s", info)
	}
	loaded, err := featurize.LoadModel(dir)
	if err != nil {
		t.Fatal(err)
	}
	if loaded.Info.OOVBuckets != 1000 || loaded.Lex.Buckets() != 1000 || loaded.Info.OOVHash != lexicon.Hash {
		t.Errorf("loaded %d buckets (lexicon %d), hash %q", loaded.Info.OOVBuckets, loaded.Lex.Buckets(), loaded.Info.OOVHash)
	}
	if id, _ := loaded.Lex.ID("zyzzyva"); id != 15+557 {
		t.Errorf("zyzzyva = %d, want %d", id, 15+557)
	}
}

// TestModelInfoWithoutBuckets: a featurize.json written before the buckets
// (no oov_buckets, no oov_hash) loads as 0 buckets and maps unknown words to
// <unk> as before; one with buckets and an unknown hash, or negative
// buckets, does not load.
func TestModelInfoWithoutBuckets(t *testing.T) {
	m, texts := toyModel(t)
	for _, c := range []struct {
		name   string
		edit   func(map[string]any)
		loads  bool
		substr string
	}{
		{"old file", func(in map[string]any) { delete(in, "oov_buckets"); delete(in, "oov_hash") }, true, ""},
		{"unknown hash", func(in map[string]any) { in["oov_buckets"] = 10; in["oov_hash"] = "fnv1a" }, false, "fnv1a"},
		{"no hash", func(in map[string]any) { in["oov_buckets"] = 10; delete(in, "oov_hash") }, false, "crc32-ieee"},
		{"negative", func(in map[string]any) { in["oov_buckets"] = -1 }, false, "negative"},
	} {
		t.Run(c.name, func(t *testing.T) {
			dir := t.TempDir()
			if _, err := m.Save(dir); err != nil {
				t.Fatal(err)
			}
			path := filepath.Join(dir, featurize.InfoFile)
			b, err := os.ReadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			var in map[string]any
			if err := json.Unmarshal(b, &in); err != nil {
				t.Fatal(err)
			}
			c.edit(in)
			if b, err = json.Marshal(in); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(path, b, 0o644); err != nil {
				t.Fatal(err)
			}
			loaded, err := featurize.LoadModel(dir)
			if !c.loads {
				if err == nil || !strings.Contains(err.Error(), c.substr) {
					t.Errorf("loaded: %v; want an error naming %q", err, c.substr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if loaded.Info.OOVBuckets != 0 || loaded.Lex.Buckets() != 0 {
				t.Errorf("%d buckets, want 0", loaded.Info.OOVBuckets)
			}
			r := shards.Row{A: "a", TokensA: append(slices.Clone(texts[0]), "zyzzyva")}
			var st featurize.TextStats
			loaded.NewFeaturizer().Apply(&r, &st)
			want, _ := m.Vocab.AppendIDs(nil, texts[0])
			if !slices.Equal(r.IDsA, append(want, featurize.UnkID)) || st.Bucketed != 0 || st.Unknown != 1 {
				t.Errorf("ids %v, stats %+v; want %v then <unk>", r.IDsA, st, want)
			}
		})
	}
}
