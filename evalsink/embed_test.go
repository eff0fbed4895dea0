package evalsink_test

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/parastream/parastream/evalsink"
	"github.com/parastream/parastream/featurize"
	"github.com/parastream/parastream/featurize/lexicon"
	"github.com/parastream/parastream/shards"
	"github.com/parastream/parastream/trainstep"
)

// newLexicon is the lexicon of words with buckets out-of-vocabulary
// buckets.
func newLexicon(t *testing.T, words []string, buckets int) *lexicon.Lexicon {
	t.Helper()
	l, err := lexicon.New(words, buckets)
	if err != nil {
		t.Fatal(err)
	}
	return l
}

// TestEmbedderIDs pins the ids the Embedder gives: vocabulary words their
// index, unseen words V + crc32(token) mod N (values written literally;
// Python's zlib.crc32 gives the same), or <unk> without buckets, or
// nothing without <unk>; and its counters.
func TestEmbedderIDs(t *testing.T) {
	specials := []string{"<pad>", "<unk>", "<s>", "</s>", "the", "cat"} // V = 6
	toks := []string{"the", "zyzzyva", "東京", "cat", "héllo"}
	for _, c := range []struct {
		name     string
		words    []string
		buckets  int
		want     []int32
		bucketed int64
	}{
		{"buckets", specials, 100_000, []int32{4, 6 + 51557, 6 + 81039, 5, 6 + 86}, 3},
		{"few buckets", specials, 1000, []int32{4, 6 + 557, 6 + 39, 5, 6 + 86}, 3},
		{"unk", specials, 0, []int32{4, 1, 1, 5, 1}, 0},
		{"no unk", []string{"the", "cat"}, 0, []int32{0, 1}, 0},
	} {
		t.Run(c.name, func(t *testing.T) {
			lex := newLexicon(t, c.words, c.buckets)
			emb, err := evalsink.NewEmbedder(fakeModel{dim: lex.Rows()}, lex, lex.Rows())
			if err != nil {
				t.Fatal(err)
			}
			if got := emb.IDs(toks); !slices.Equal(got, c.want) {
				t.Errorf("IDs = %v, want %v", got, c.want)
			}
			if emb.Tokens != 5 || emb.Unknown != 3 || emb.Bucketed != c.bucketed {
				t.Errorf("tokens %d, unknown %d, bucketed %d; want 5, 3, %d", emb.Tokens, emb.Unknown, emb.Bucketed, c.bucketed)
			}
		})
	}
	if _, err := evalsink.NewEmbedder(fakeModel{}, nil, 1); err == nil {
		t.Error("an embedder without a lexicon was made")
	}
}

// TestUnseenWordsAsInTraining: featurize gives an unseen word of a
// training sentence an id; a checkpoint trained on those ids (words and
// buckets from the featurize model) gives the same word in an evaluation
// sentence the same id, and both sentences the same embedding as their ids
// from the shards.
func TestUnseenWordsAsInTraining(t *testing.T) {
	const buckets = 1000
	m := featurizeModel(t, buckets)
	words := m.Vocab.Words()
	tr, err := trainstep.New(trainstep.Config{Encoder: "avg", Dim: 8, BatchSize: 2, OOVBuckets: m.Info.OOVBuckets, OOVHash: m.Info.OOVHash},
		trainstep.Options{Vocab: words})
	if err != nil {
		t.Fatal(err)
	}
	dir := filepath.Join(t.TempDir(), "ck")
	if err := tr.Save(dir, nil); err != nil {
		t.Fatal(err)
	}
	tr.Close()
	model, ck, err := trainstep.LoadModel(dir, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer model.Close()
	if ck.Config.Vocab != len(words)+buckets || ck.Config.OOVBuckets != buckets || ck.Config.OOVHash != lexicon.Hash {
		t.Fatalf("checkpoint config: vocab %d, buckets %d, hash %q", ck.Config.Vocab, ck.Config.OOVBuckets, ck.Config.OOVHash)
	}
	lex, err := ck.Lexicon()
	if err != nil {
		t.Fatal(err)
	}
	emb, err := evalsink.NewEmbedder(model, lex, ck.Config.EmbedDim())
	if err != nil {
		t.Fatal(err)
	}

	train := shards.Row{A: "a", B: "b", TokensA: []string{"the", "cat", "zyzzyva"}, TokensB: []string{"東京", "dog"}}
	var st featurize.TextStats
	m.NewFeaturizer().Apply(&train, &st)
	// V = 8: the 4 special tokens and the 4 words of featurizeModel.
	if !slices.Equal(train.IDsA, []int32{4, 5, 8 + 557}) || !slices.Equal(train.IDsB, []int32{8 + 39, 6}) || st.Bucketed != 2 {
		t.Fatalf("featurized ids %v %v, stats %+v", train.IDsA, train.IDsB, st)
	}
	evalA := []string{"zyzzyva", "dog", "東京"}
	if got := emb.IDs(evalA); !slices.Equal(got, []int32{8 + 557, 6, 8 + 39}) {
		t.Errorf("evaluation ids %v, want the training ids of the same words", got)
	}
	vecs, err := emb.Embed(context.Background(), [][]string{train.TokensA, train.TokensB})
	if err != nil {
		t.Fatal(err)
	}
	fromShards, err := model.Embed([][]int32{train.IDsA, train.IDsB})
	if err != nil {
		t.Fatal(err)
	}
	for i := range vecs {
		if !slices.Equal(vecs[i], fromShards[i]) {
			t.Errorf("text %d: embedded from tokens %v, from the shard's ids %v", i, vecs[i], fromShards[i])
		}
	}
}

// TestCheckpointWithoutBucketsMapsToUnk: a checkpoint whose config.json has
// no oov_buckets or oov_hash (as written before the buckets) loads, and an
// unknown word embeds as <unk>.
func TestCheckpointWithoutBucketsMapsToUnk(t *testing.T) {
	vocab := []string{"<pad>", "<unk>", "<s>", "</s>", "the", "cat"}
	dir := checkpoint(t, t.TempDir(), "old", vocab, 3)
	path := filepath.Join(dir, trainstep.FileConfig)
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var cfg map[string]any
	if err := json.Unmarshal(b, &cfg); err != nil {
		t.Fatal(err)
	}
	delete(cfg, "oov_buckets")
	delete(cfg, "oov_hash")
	if b, err = json.Marshal(cfg); err != nil {
		t.Fatal(err)
	}
	if strings.Contains(string(b), "oov") {
		t.Fatalf("config still names the buckets: %s", b)
	}
	if err := os.WriteFile(path, b, 0o644); err != nil {
		t.Fatal(err)
	}
	// Checkpoints of then had no sha256sums.txt either.
	if err := os.Remove(filepath.Join(dir, trainstep.FileSums)); err != nil {
		t.Fatal(err)
	}
	model, ck, err := trainstep.LoadModel(dir, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer model.Close()
	lex, err := ck.Lexicon()
	if err != nil {
		t.Fatal(err)
	}
	emb, err := evalsink.NewEmbedder(model, lex, ck.Config.EmbedDim())
	if err != nil {
		t.Fatal(err)
	}
	if ck.Config.OOVBuckets != 0 || lex.Buckets() != 0 || !slices.Equal(emb.IDs([]string{"cat", "zyzzyva"}), []int32{5, 1}) {
		t.Fatalf("buckets %d, ids %v; want 0 and [5 1]", ck.Config.OOVBuckets, emb.IDs([]string{"cat", "zyzzyva"}))
	}
	vecs, err := emb.Embed(context.Background(), [][]string{{"cat", "zyzzyva"}, {"cat", "<unk>"}})
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(vecs[0], vecs[1]) {
		t.Errorf("an unknown word does not embed as <unk>: %v and %v", vecs[0], vecs[1])
	}
}

// featurizeModel is a featurize model over the words "the", "cat", "dog"
// and "fish" (ids 4 to 7 by count) with buckets out-of-vocabulary buckets.
func featurizeModel(t *testing.T, buckets int) *featurize.Model {
	t.Helper()
	var counts []featurize.TokenCount
	for i, w := range []string{"the", "cat", "dog", "fish"} {
		counts = append(counts, featurize.TokenCount{Token: w, Count: int64(10 - i), Docs: int64(10 - i)})
	}
	v, err := featurize.BuildVocabulary(counts, 10, featurize.VocabConfig{})
	if err != nil {
		t.Fatal(err)
	}
	bow, err := featurize.NewBoW(v, featurize.TFIDF)
	if err != nil {
		t.Fatal(err)
	}
	X := featurize.NewCSR(v.Len())
	var sc featurize.BoWScratch
	for _, text := range [][]string{{"the", "cat"}, {"dog", "fish"}, {"cat", "dog"}} {
		ids, _ := v.AppendIDs(nil, text)
		idx, val := bow.Vector(&sc, ids)
		if err := X.AppendRow(idx, val); err != nil {
			t.Fatal(err)
		}
	}
	nmf, _, err := featurize.FitNMF(context.Background(), X, featurize.NMFConfig{K: 2, Seed: 1, MaxIter: 20})
	if err != nil {
		t.Fatal(err)
	}
	m, err := featurize.NewModel(v, nmf, featurize.Info{Weighting: featurize.TFIDF, OOVBuckets: buckets, OOVHash: lexicon.Hash})
	if err != nil {
		t.Fatal(err)
	}
	return m
}
