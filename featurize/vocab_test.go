package featurize_test

import (
	"bytes"
	"errors"
	"math"
	"slices"
	"strings"
	"testing"

	"github.com/parastream/parastream/featurize"
)

func tc(tok string, count, docs int64) featurize.TokenCount {
	return featurize.TokenCount{Token: tok, Count: count, Docs: docs}
}

func vocabTokens(v *featurize.Vocabulary) []string {
	var out []string
	for id := range v.Len() {
		out = append(out, v.Entry(int32(id)).Token)
	}
	return out
}

func TestBuildVocabularyOrderAndBounds(t *testing.T) {
	counts := []featurize.TokenCount{tc("b", 5, 4), tc("a", 5, 3), tc("c", 9, 2), tc("rare", 1, 1), tc("<s>", 7, 7), tc("d", 2, 2)}
	tests := []struct {
		name string
		cfg  featurize.VocabConfig
		want []string
	}{
		{"all", featurize.VocabConfig{}, []string{"<pad>", "<unk>", "<s>", "</s>", "c", "a", "b", "d", "rare"}},
		{"min count 2", featurize.VocabConfig{MinCount: 2}, []string{"<pad>", "<unk>", "<s>", "</s>", "c", "a", "b", "d"}},
		{"max size 6", featurize.VocabConfig{MaxSize: 6}, []string{"<pad>", "<unk>", "<s>", "</s>", "c", "a"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			v, err := featurize.BuildVocabulary(counts, 10, tt.cfg)
			if err != nil {
				t.Fatal(err)
			}
			if got := vocabTokens(v); !slices.Equal(got, tt.want) {
				t.Fatalf("vocabulary %v, want %v", got, tt.want)
			}
			if got := v.Entry(featurize.StartID); got.Count != 7 {
				t.Errorf("<s> count %d, want 7", got.Count)
			}
		})
	}
}

func TestVocabularyIDs(t *testing.T) {
	v, err := featurize.BuildVocabulary([]featurize.TokenCount{tc("the", 3, 2), tc("cat", 1, 1)}, 2, featurize.VocabConfig{})
	if err != nil {
		t.Fatal(err)
	}
	ids, unknown := v.AppendIDs(nil, []string{"<s>", "the", "dog", "cat", "</s>"})
	if want := []int32{featurize.StartID, 4, featurize.UnkID, 5, featurize.EndID}; !slices.Equal(ids, want) {
		t.Fatalf("ids %v, want %v", ids, want)
	}
	if unknown != 1 {
		t.Errorf("%d unknown, want 1", unknown)
	}
}

func TestVocabConfigValidate(t *testing.T) {
	for _, cfg := range []featurize.VocabConfig{{MinCount: -1}, {MaxSize: 4}, {MaxSize: 1}} {
		if _, err := featurize.BuildVocabulary(nil, 0, cfg); err == nil {
			t.Errorf("%+v: no error", cfg)
		}
	}
}

func TestVocabularyRoundTrip(t *testing.T) {
	v, err := featurize.BuildVocabulary([]featurize.TokenCount{tc("é", 3, 2), tc("cat", 1, 1), tc("</s>", 4, 4)}, 4, featurize.VocabConfig{})
	if err != nil {
		t.Fatal(err)
	}
	var b bytes.Buffer
	if _, err := v.WriteTo(&b); err != nil {
		t.Fatal(err)
	}
	want := "#texts\t4\n<pad>\t0\t0\n<unk>\t0\t0\n<s>\t0\t0\n</s>\t4\t4\né\t3\t2\ncat\t1\t1\n"
	if b.String() != want {
		t.Fatalf("file:\n%s\nwant:\n%s", b.String(), want)
	}
	got, err := featurize.ReadVocabulary(&b)
	if err != nil {
		t.Fatal(err)
	}
	if got.Texts != 4 || !slices.Equal(vocabTokens(got), vocabTokens(v)) || got.Entry(4) != v.Entry(4) {
		t.Fatalf("read back %v (texts %d), want %v", vocabTokens(got), got.Texts, vocabTokens(v))
	}
}

func TestReadVocabularyErrors(t *testing.T) {
	tests := []struct{ name, in, want string }{
		{"fields", "<pad>\t0\n", "line 1: 2 tab-separated fields"},
		{"special", "<pad>\t0\t0\nx\t1\t1\n", `line 2: entry 1 is "x", want the special token "<unk>"`},
		{"count", "<pad>\t-1\t0\n", "line 1: counts"},
		{"space", "<pad>\t0\t0\n<unk>\t0\t0\n<s>\t0\t0\n</s>\t0\t0\na b\t1\t1\n", "line 5: token"},
		{"duplicate", "<pad>\t0\t0\n<unk>\t0\t0\n<s>\t0\t0\n</s>\t0\t0\na\t1\t1\na\t1\t1\n", "appears twice"},
		{"short", "<pad>\t0\t0\n", "1 entries"},
		{"texts", "#texts\tx\n", "line 1: the number of texts"},
		{"long", strings.Repeat("a", featurize.MaxVocabularyLine+1), "longer than"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := featurize.ReadVocabulary(strings.NewReader(tt.in))
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("error %v, want one containing %q", err, tt.want)
			}
			if tt.name != "long" && !errors.Is(err, featurize.ErrBadVocabulary) {
				t.Errorf("error %v does not wrap ErrBadVocabulary", err)
			}
		})
	}
}

func FuzzReadVocabulary(f *testing.F) {
	f.Add("#texts\t4\n<pad>\t0\t0\n<unk>\t0\t0\n<s>\t0\t0\n</s>\t4\t4\né\t3\t2\n")
	f.Add("<pad>\t0\t0\n<unk>\t0\t0\n<s>\t0\t0\n</s>\t0\t0\n")
	f.Add("\xff\t1\t1\n")
	f.Fuzz(func(t *testing.T, in string) {
		v, err := featurize.ReadVocabulary(strings.NewReader(in))
		if err != nil {
			return
		}
		var b bytes.Buffer
		if _, err := v.WriteTo(&b); err != nil {
			t.Fatal(err)
		}
		again, err := featurize.ReadVocabulary(&b)
		if err != nil {
			t.Fatalf("a vocabulary written back does not read: %v", err)
		}
		if !slices.Equal(vocabTokens(again), vocabTokens(v)) {
			t.Fatal("round trip changed the tokens")
		}
	})
}

func TestBoWTFIDF(t *testing.T) {
	// Four texts; "a" occurs in all four, "b" in one.
	v, err := featurize.BuildVocabulary([]featurize.TokenCount{tc("a", 6, 4), tc("b", 1, 1)}, 4, featurize.VocabConfig{})
	if err != nil {
		t.Fatal(err)
	}
	bow, err := featurize.NewBoW(v, featurize.TFIDF)
	if err != nil {
		t.Fatal(err)
	}
	var sc featurize.BoWScratch
	// "b a a <unk> <s>": counts a 2, b 1; specials get nothing.
	idx, val := bow.Vector(&sc, []int32{5, 4, 4, featurize.UnkID, featurize.StartID})
	idfA := 1.0 // ln((1+4)/(1+4)) + 1: in every text
	idfB := math.Log(5.0/2.0) + 1
	wa, wb := 2*idfA, 1*idfB
	norm := math.Hypot(wa, wb)
	if !slices.Equal(idx, []int32{4, 5}) {
		t.Fatalf("indices %v, want [4 5]", idx)
	}
	for i, want := range []float64{wa / norm, wb / norm} {
		if math.Abs(float64(val[i])-want) > 1e-6 {
			t.Errorf("value %d = %v, want %v", i, val[i], want)
		}
	}
	counts, _ := featurize.NewBoW(v, featurize.Count)
	if _, val := counts.Vector(&sc, []int32{5, 4, 4}); !slices.Equal(val, []float32{2, 1}) {
		t.Errorf("count weighting %v, want [2 1]", val)
	}
	punct, _ := featurize.BuildVocabulary([]featurize.TokenCount{tc("a", 6, 4), tc("?", 3, 3)}, 4, featurize.VocabConfig{})
	pb, _ := featurize.NewBoW(punct, featurize.Count)
	if idx, _ := pb.Vector(&sc, []int32{4, 5}); !slices.Equal(idx, []int32{4}) {
		t.Errorf("punctuation weighed in: %v", idx)
	}
	if idx, _ := bow.Vector(&sc, []int32{featurize.UnkID}); len(idx) != 0 {
		t.Errorf("a text of unknown words has entries %v", idx)
	}
	if _, err := featurize.NewBoW(v, "bm25"); err == nil {
		t.Error("an unknown weighting was accepted")
	}
}
