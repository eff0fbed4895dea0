package trainstep_test

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/parastream/parastream/featurize/lexicon"
	"github.com/parastream/parastream/trainstep"
	"github.com/parastream/parastream/trainstep/compute"
)

// embeddings returns the rows of the embeddings parameter.
func embeddings(t *testing.T, ps []compute.Tensor) compute.Tensor {
	t.Helper()
	for _, p := range ps {
		if p.Name == compute.ParamEmbeddings {
			return p
		}
	}
	t.Fatal("no embeddings")
	return compute.Tensor{}
}

// TestNewWithBuckets: the embedding table has a row per word and per
// out-of-vocabulary bucket; bucket ids train; the checkpoint records the
// buckets, its lexicon maps unseen words to the rows featurize gives them,
// and a resumed run keeps them.
func TestNewWithBuckets(t *testing.T) {
	vocab := []string{"<pad>", "<unk>", "the", "cat", "sat", "mat"} // V = 6
	tr := newTrainerVocab(t, trainstep.Config{Encoder: compute.EncAvg, Dim: 4, BatchSize: 2, OOVBuckets: 10}, vocab)
	cfg := tr.Config()
	if cfg.Vocab != 16 || cfg.OOVBuckets != 10 || cfg.OOVHash != lexicon.Hash {
		t.Fatalf("vocab %d, buckets %d, hash %q; want 16, 10, %q", cfg.Vocab, cfg.OOVBuckets, cfg.OOVHash, lexicon.Hash)
	}
	if e := embeddings(t, tr.Model().Params()); !slices.Equal(e.Shape, []int{16, 4}) {
		t.Fatalf("embeddings %v, want [16 4]", e.Shape)
	}
	if _, err := tr.Step([]trainstep.Pair{{A: []int32{2, 15}, B: []int32{3, 6}}, {A: []int32{4, 5}, B: []int32{10}}}); err != nil {
		t.Fatalf("a step with bucket ids: %v", err)
	}
	if _, err := tr.Step([]trainstep.Pair{{A: []int32{2, 16}, B: []int32{3}}, {A: []int32{4}, B: []int32{5}}}); err == nil || !strings.Contains(err.Error(), "token id 16") {
		t.Errorf("id 16 of a 16-row table: %v", err)
	}

	dir := filepath.Join(t.TempDir(), "ck")
	if err := tr.Save(dir, nil); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(filepath.Join(dir, trainstep.FileConfig))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(b), `"oov_buckets": 10`) || !strings.Contains(string(b), `"oov_hash": "crc32-ieee"`) {
		t.Errorf("config.json lacks the buckets:\n%s", b)
	}
	ck, err := trainstep.ReadCheckpoint(dir)
	if err != nil {
		t.Fatal(err)
	}
	lex, err := ck.Lexicon()
	if err != nil {
		t.Fatal(err)
	}
	// crc32("zyzzyva") = 1447651557 = 7 mod 10.
	if id, known := lex.ID("zyzzyva"); id != 6+7 || known || lex.Rows() != 16 {
		t.Errorf("zyzzyva = %d (known %v), rows %d; want 13, false, 16", id, known, lex.Rows())
	}
	resumed, _, err := trainstep.Resume(dir, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer resumed.Close()
	if c := resumed.Config(); c.OOVBuckets != 10 || c.Vocab != 16 {
		t.Errorf("resumed with %d buckets, vocab %d", c.OOVBuckets, c.Vocab)
	}
}

func TestNewBucketsMustFit(t *testing.T) {
	vocab := []string{"<pad>", "<unk>", "the", "cat", "sat", "mat"}
	for _, c := range []struct {
		name string
		cfg  trainstep.Config
		want string
	}{
		{"words and buckets beyond vocab", trainstep.Config{Vocab: 15, OOVBuckets: 10}, "6 words and 10 out-of-vocabulary buckets does not fit vocab 15"},
		{"unknown hash", trainstep.Config{OOVBuckets: 10, OOVHash: "md5"}, `oov_hash "md5"`},
		{"negative", trainstep.Config{OOVBuckets: -2}, "oov_buckets -2"},
	} {
		c.cfg.Dim, c.cfg.BatchSize = 4, 2
		if tr, err := trainstep.New(c.cfg, trainstep.Options{Vocab: vocab}); err == nil || !strings.Contains(err.Error(), c.want) {
			if err == nil {
				tr.Close()
			}
			t.Errorf("%s: %v, want an error naming %q", c.name, err, c.want)
		}
	}
}

// TestVectorsLeaveBucketsRandom: pretrained vectors replace the rows of the
// words they have; the buckets' rows keep their random start, the same as
// without vectors.
func TestVectorsLeaveBucketsRandom(t *testing.T) {
	vocab := []string{"<pad>", "<unk>", "the", "cat"}
	vecs, err := trainstep.ReadVectors(strings.NewReader("the 1 2\ncat 3 4\nzyzzyva 5 6\n"))
	if err != nil {
		t.Fatal(err)
	}
	cfg := trainstep.Config{Dim: 2, BatchSize: 2, OOVBuckets: 3, Seed: 4}
	with, err := trainstep.New(cfg, trainstep.Options{Vocab: vocab, Vectors: vecs})
	if err != nil {
		t.Fatal(err)
	}
	defer with.Close()
	without := newTrainerVocab(t, cfg, vocab)
	ew, eo := embeddings(t, with.Model().Params()), embeddings(t, without.Model().Params())
	if with.Found != 2 || with.OOV != 2 || !slices.Equal(ew.Shape, []int{7, 2}) {
		t.Fatalf("found %d, oov %d, shape %v", with.Found, with.OOV, ew.Shape)
	}
	if !slices.Equal(ew.Data[4:8], []float32{1, 2, 3, 4}) {
		t.Errorf("word rows %v, want the vectors", ew.Data[4:8])
	}
	if !slices.Equal(ew.Data[:4], eo.Data[:4]) || !slices.Equal(ew.Data[8:], eo.Data[8:]) {
		t.Errorf("rows without a vector changed: %v, without vectors %v", ew.Data, eo.Data)
	}
}
