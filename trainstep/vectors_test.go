package trainstep_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"slices"
	"strings"
	"testing"

	"github.com/parastream/parastream/internal/testenv"
	"github.com/parastream/parastream/trainstep"
	"github.com/parastream/parastream/trainstep/compute"
)

func TestReadVectorsFormats(t *testing.T) {
	for _, tc := range []struct {
		file  string
		dim   int
		words []string
		check string
		want  []float32
	}{
		{"glove.txt", 3, []string{"the", "cat", "sat"}, "sat", []float32{-1.5e-3, 0, 4}},
		{"word2vec.txt", 2, []string{"the", "New York", "cat"}, "New York", []float32{1, -1}},
	} {
		v, err := trainstep.LoadVectors("testdata/" + tc.file)
		if err != nil {
			t.Fatalf("%s: %v", tc.file, err)
		}
		if v.Dim != tc.dim || !slices.Equal(v.Words, tc.words) || !slices.Equal(v.Lookup(tc.check), tc.want) {
			t.Errorf("%s: dim %d words %v %s=%v", tc.file, v.Dim, v.Words, tc.check, v.Lookup(tc.check))
		}
	}
}

func TestReadVectorsErrors(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{"", "no vectors"},
		{"the 1 2\ncat 1\n", "line 2: 2 fields"},
		{"the 1 2\ncat 1 x\n", `line 2: value 2 "x": not a number`},
		{"2 3\nthe 1 2 3\n", "announces 2 vectors, read 1"},
		{"the\n", "line 1: 0 numeric fields"},
		{"2 99999\n", "out of range"},
	} {
		_, err := trainstep.ReadVectors(strings.NewReader(tc.in))
		if !errors.Is(err, trainstep.ErrVectors) || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%q: err %v, want ErrVectors mentioning %q", tc.in, err, tc.want)
		}
	}
}

// TestRealGloVeSample reads the real GloVe sample and initialises a model's
// embeddings from it, counting the out-of-vocabulary words.
func TestRealGloVeSample(t *testing.T) {
	path := testenv.SharedData(t, "wordvecs/glove.6B.100d.sample.txt.gz")
	v, err := trainstep.LoadVectors(path)
	if err != nil {
		t.Fatal(err)
	}
	if v.Dim != 100 || len(v.Words) != 100 || v.Lookup("the") == nil || v.Lookup(",") == nil {
		t.Fatalf("dim %d, %d words, the=%v", v.Dim, len(v.Words), v.Lookup("the") != nil)
	}
	vocab := []string{"<unk>", "The", "of", "zyzzyva", "and"}
	tr, err := trainstep.New(trainstep.Config{Dim: 100, BatchSize: 2}, trainstep.Options{Vocab: vocab, Vectors: v})
	if err != nil {
		t.Fatal(err)
	}
	defer tr.Close()
	if tr.Found != 3 || tr.OOV != 2 {
		t.Errorf("found %d, oov %d; want 3 (The via the, of, and) and 2", tr.Found, tr.OOV)
	}
	emb := tr.Model().Params()[0]
	if emb.Name != compute.ParamEmbeddings || !slices.Equal(emb.Data[100:200], v.Lookup("the")) {
		t.Errorf("row of The is not the vector of the")
	}
	if _, err := trainstep.New(trainstep.Config{Dim: 50, BatchSize: 2}, trainstep.Options{Vocab: vocab, Vectors: v}); err == nil {
		t.Error("dimension mismatch accepted")
	}
}

func FuzzReadVectors(f *testing.F) {
	for _, name := range []string{"glove.txt", "word2vec.txt"} {
		b, err := os.ReadFile("testdata/" + name)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b)
	}
	f.Add([]byte("1 1\nx 1e40\n"))
	f.Add([]byte("\ufeffa b 1 2\n"))
	f.Add([]byte("0 5\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		v, err := trainstep.ReadVectors(bytes.NewReader(data))
		if err != nil {
			if !errors.Is(err, trainstep.ErrVectors) {
				t.Fatalf("error %v does not wrap ErrVectors", err)
			}
			return
		}
		if v.Dim <= 0 || len(v.Data) != len(v.Words)*v.Dim || len(v.Words) == 0 {
			t.Fatalf("dim %d, %d words, %d values", v.Dim, len(v.Words), len(v.Data))
		}
		// Round trip through GloVe text (%g of float32 is exact).
		var buf bytes.Buffer
		for i, w := range v.Words {
			buf.WriteString(w)
			for _, x := range v.Data[i*v.Dim : (i+1)*v.Dim] {
				fmt.Fprintf(&buf, " %g", x)
			}
			buf.WriteByte('\n')
		}
		v2, err := trainstep.ReadVectors(&buf)
		if err != nil {
			// A word that is itself numeric (e.g. "1 2" in a GloVe file
			// without header) cannot be told from the vector; skip those.
			return
		}
		if v2.Dim == v.Dim && slices.Equal(v2.Words, v.Words) && !slices.Equal(v2.Data, v.Data) {
			t.Fatalf("values changed in a round trip")
		}
	})
}

func TestInitEmbeddingsOOV(t *testing.T) {
	v, err := trainstep.ReadVectors(strings.NewReader("a 1 2\nb 3 4\n"))
	if err != nil {
		t.Fatal(err)
	}
	cfg := trainstep.Config{Dim: 2, Vocab: 4}.Defaults()
	params := compute.InitParams(cfg, rand.New(rand.NewPCG(1, 1)))
	found, oov, err := trainstep.InitEmbeddings(params, []string{"x", "A", "b", "c"}, v)
	if err != nil || found != 2 || oov != 2 {
		t.Fatalf("found %d oov %d err %v", found, oov, err)
	}
	if !slices.Equal(params[0].Data[2:6], []float32{1, 2, 3, 4}) {
		t.Errorf("rows %v", params[0].Data)
	}
}

// TestWriteGloVe: the vocabulary's rows as GloVe text, which ReadVectors
// reads back; the out-of-vocabulary bucket rows after them are left out.
func TestWriteGloVe(t *testing.T) {
	ck := &trainstep.Checkpoint{Config: trainstep.Config{Dim: 2}, Vocab: []string{"<unk>", "cat"},
		Params: []compute.Tensor{{Name: "embeddings", Shape: []int{3, 2}, Data: []float32{0, 0, 0.5, -1.25, 9, 9}}}}
	var b bytes.Buffer
	if err := trainstep.WriteGloVe(context.Background(), &b, ck); err != nil {
		t.Fatal(err)
	}
	if got, want := b.String(), "<unk> 0 0\ncat 0.5 -1.25\n"; got != want {
		t.Fatalf("got %q, want %q", got, want)
	}
	v, err := trainstep.ReadVectors(&b)
	if err != nil || v.Dim != 2 || !slices.Equal(v.Lookup("cat"), []float32{0.5, -1.25}) {
		t.Fatalf("read back %+v, %v", v, err)
	}
	ck.Vocab = nil
	if err := trainstep.WriteGloVe(context.Background(), &b, ck); err == nil {
		t.Error("a checkpoint without a vocabulary was exported")
	}
}

// TestExportSafetensors: every parameter, with the configuration, the
// vocabulary and the step in the metadata.
func TestExportSafetensors(t *testing.T) {
	ck := &trainstep.Checkpoint{Config: trainstep.Config{Dim: 2}, Vocab: []string{"the", "cat"}, State: trainstep.TrainerState{Step: 7},
		Params: []compute.Tensor{{Name: "embeddings", Shape: []int{2, 2}, Data: []float32{0, 0, 0.5, -1.25}}}}
	var b bytes.Buffer
	if err := trainstep.ExportSafetensors(&b, ck, "ck/step-7"); err != nil {
		t.Fatal(err)
	}
	ts, meta, err := trainstep.ReadSafetensors(b.Bytes())
	if err != nil || len(ts) != 1 || !slices.Equal(ts[0].Data, ck.Params[0].Data) ||
		meta["step"] != "7" || meta["checkpoint"] != "ck/step-7" || meta["vocab"] != `["the","cat"]` || !strings.Contains(meta["config"], `"dim":2`) {
		t.Errorf("read back %v, %v, %v", ts, meta, err)
	}
}
