package evalsink_test

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/parastream/parastream/evalsink"
	"github.com/parastream/parastream/internal/testenv"
)

func f64(v float64) *float64 { return &v }

// mtebRows are an evaluation's rows: a year's sets, mean and pooled rows,
// and the STS Benchmark's dev set.
func mtebRows() []evalsink.Result {
	return []evalsink.Result{
		{Corpus: "sts", Split: "test", Dataset: "2012/MSRpar", Year: "2012", Kind: evalsink.KindDataset, Pairs: 750, Pearson: f64(40), Spearman: f64(41)},
		{Corpus: "sts", Split: "test", Dataset: "2012", Year: "2012", Kind: evalsink.KindMean, Pairs: 3108, Pearson: f64(55), Spearman: f64(54)},
		{Corpus: "sts", Split: "test", Dataset: "2012", Year: "2012", Kind: evalsink.KindPooled, Pairs: 3108, Pearson: f64(57.6), Spearman: f64(52.9)},
		{Corpus: "sts", Split: "test", Dataset: "2015", Year: "2015", Kind: evalsink.KindPooled, Pairs: 3000, Pearson: f64(74), Spearman: f64(74.4)},
		{Corpus: "stsb", Split: "dev", Dataset: "stsb/dev", Kind: evalsink.KindDataset, Pairs: 1500, Pearson: f64(71.5), Spearman: f64(71.2)},
		{Corpus: "stsb", Split: "train", Dataset: "stsb/train", Kind: evalsink.KindDataset, Pairs: 5749, Pearson: f64(70), Spearman: f64(69)},
	}
}

// TestMTEBScores: MTEB's metric is each year's pooled Spearman and the
// STS Benchmark's dev set as its validation split; the per-set, mean and
// train rows are not MTEB figures.
func TestMTEBScores(t *testing.T) {
	var got []string
	for _, s := range evalsink.MTEBScores(mtebRows()) {
		got = append(got, s.Task+"/"+s.Split+"="+strings.TrimRight(strings.TrimRight(jsonNum(s.Spearman), "0"), "."))
	}
	want := []string{"STS12/test=52.9", "STS15/test=74.4", "STSBenchmark/validation=71.2"}
	if !slices.Equal(got, want) {
		t.Errorf("MTEB scores %v, want %v", got, want)
	}
}

func jsonNum(v float64) string { b, _ := json.Marshal(v); return string(b) }

// TestWriteMTEB writes the files and checks them against MTEB's result
// schema with scripts/mteb_check.py (skipped without python3).
func TestWriteMTEB(t *testing.T) {
	dir := t.TempDir()
	files, err := evalsink.WriteMTEB(dir, evalsink.MTEBScores(mtebRows()), evalsink.MTEBMeta{Name: "parastream/quora-avg", Revision: "abc123", EmbedDim: 300, Datasets: []string{"quora", "msrp"}})
	if err != nil {
		t.Fatal(err)
	}
	folder := filepath.Join(dir, "parastream__quora-avg", "abc123")
	var names []string
	for _, f := range files {
		if filepath.Dir(f) != folder {
			t.Errorf("%s outside %s", f, folder)
		}
		names = append(names, filepath.Base(f))
	}
	if want := []string{"STS12.json", "STS15.json", "STSBenchmark.json", "model_meta.json"}; !slices.Equal(names, want) {
		t.Errorf("files %v, want %v", names, want)
	}
	var doc struct {
		Revision string                      `json:"dataset_revision"`
		Scores   map[string][]map[string]any `json:"scores"`
	}
	b, _ := os.ReadFile(filepath.Join(folder, "STS12.json"))
	if err := json.Unmarshal(b, &doc); err != nil || doc.Scores["test"][0]["main_score"] != 0.529 || doc.Revision == "" {
		t.Errorf("STS12.json: %s (%v)", b, err)
	}
	python, err := exec.LookPath("python3")
	if err != nil {
		t.Skip("skipping the schema check: no python3")
	}
	out, err := exec.Command(python, filepath.Join(testenv.Root(), "scripts", "mteb_check.py"), folder).CombinedOutput()
	if err != nil {
		t.Fatalf("mteb_check.py: %v\n%s", err, out)
	}
	if _, err := evalsink.WriteMTEB(dir, nil, evalsink.MTEBMeta{Name: "x", Revision: "y"}); err == nil {
		t.Error("WriteMTEB of no scores: no error")
	}
}

// TestVectorsCheckpoint: external vectors embed a text as the mean of its
// words' vectors, a word without one left out.
func TestVectorsCheckpoint(t *testing.T) {
	dir := t.TempDir()
	vecs := filepath.Join(dir, "vecs.txt")
	if err := os.WriteFile(vecs, []byte("cat 1 0 2\ndog 3 4 0\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	ck, err := evalsink.VectorsCheckpoint(vecs, filepath.Join(dir, "ck"))
	if err != nil {
		t.Fatal(err)
	}
	emb, _, err := evalsink.OpenEmbedder(ck, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer emb.Close()
	got, err := emb.Embed(t.Context(), [][]string{{"cat", "dog", "zebra"}, {"zebra"}})
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(got[0], []float32{2, 2, 1}) || !slices.Equal(got[1], []float32{0, 0, 0}) {
		t.Errorf("embeddings %v, want the mean of cat and dog, then zeros", got)
	}
	if err := emb.SetTruncate(2); err != nil {
		t.Fatal(err)
	}
	got, err = emb.Embed(t.Context(), [][]string{{"cat", "dog"}, {"zebra"}})
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(got[0], []float32{2, 2}) || len(got[1]) != 2 {
		t.Errorf("truncated to 2: %v", got)
	}
	if err := emb.SetTruncate(4); err == nil {
		t.Error("SetTruncate beyond the embedding: no error")
	}
}
