package pipelines_test

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/parastream/parastream/corpora/synth"
	"github.com/parastream/parastream/featurize"
	"github.com/parastream/parastream/pipelines"
	"github.com/parastream/parastream/shards"
)

// featurizeInput extracts generated Quora pairs and the STS Benchmark
// fixture (an evaluation set, official splits) into one directory.
func featurizeInput(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	quora := filepath.Join(dir, "quora.tsv")
	f, err := os.Create(quora)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := synth.Quora(f, synth.Config{Rows: 3000, Seed: 5}); err != nil {
		t.Fatal(err)
	}
	f.Close()
	in := filepath.Join(dir, "shards")
	for _, c := range []pipelines.ExtractConfig{cfg("quora", quora, ""), cfg("stsb", fixture("stsb/sts-mini.csv"), "")} {
		c.Out = in
		extract(t, c)
	}
	return in
}

func runFeaturize(t *testing.T, c pipelines.FeaturizeConfig) *pipelines.FeaturizeSummary {
	t.Helper()
	sum, err := pipelines.RunFeaturize(context.Background(), c, pipelines.RunOptions{})
	if err != nil {
		t.Fatalf("featurize %s -> %s: %v", c.In, c.Out, err)
	}
	return sum
}

func smallFeaturize(in, out string) pipelines.FeaturizeConfig {
	c := pipelines.NewFeaturizeConfig(in, out)
	c.Topics = 6
	c.Sample = 1500
	c.Command = []string{"parastream", "featurize", "test"}
	return c
}

func readManifestFiles(t *testing.T, dir string) (*shards.Manifest, []byte) {
	t.Helper()
	m, err := shards.ReadManifest(dir)
	if err != nil {
		t.Fatal(err)
	}
	if err := m.Verify(dir); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(filepath.Join(dir, shards.ManifestName))
	if err != nil {
		t.Fatal(err)
	}
	return m, b
}

func TestFeaturizeEndToEnd(t *testing.T) {
	in := featurizeInput(t)
	out := filepath.Join(t.TempDir(), "out")
	sum := runFeaturize(t, smallFeaturize(in, out))
	inM, _ := readManifestFiles(t, in)
	m, manifest := readManifestFiles(t, out)
	if m.Vocabulary == nil || m.Topics == nil || m.Featurize == nil {
		t.Fatalf("the manifest lacks the model's artifacts: %+v %+v %+v", m.Vocabulary, m.Topics, m.Featurize)
	}
	if len(m.Files) != len(inM.Files) || !sum.Fitted || sum.Model.NMF.K != 6 {
		t.Fatalf("%d shards (input %d), fitted %v, k %d", len(m.Files), len(inM.Files), sum.Fitted, sum.Model.NMF.K)
	}
	if got := sum.Model.Info.Corpora; !slices.Equal(got, []string{"quora", "stsb"}) {
		t.Errorf("fitted on the training splits of %v", got)
	}
	model, err := featurize.LoadModel(out)
	if err != nil {
		t.Fatal(err)
	}
	var rows, texts int64
	for i, f := range m.Files {
		r, err := shards.OpenFile(filepath.Join(out, f.Path))
		if err != nil {
			t.Fatal(err)
		}
		orig, err := shards.OpenFile(filepath.Join(in, inM.Files[i].Path))
		if err != nil {
			t.Fatal(err)
		}
		next, stop := iterPull(orig)
		for row, err := range r.All() {
			if err != nil {
				t.Fatal(err)
			}
			o, ok := next()
			if !ok || o.ID != row.ID || o.A != row.A || !slices.Equal(o.TokensB, row.TokensB) {
				t.Fatalf("%s: row %s does not match its input row", f.Path, row.ID)
			}
			for _, side := range []struct {
				tokens []string
				ids    []int32
				topics []float32
			}{{row.TokensA, row.IDsA, row.TopicsA}, {row.TokensB, row.IDsB, row.TopicsB}} {
				texts++
				if len(side.ids) != len(side.tokens) || len(side.topics) != 6 {
					t.Fatalf("%s: row %s: %d ids for %d tokens, %d topics", f.Path, row.ID, len(side.ids), len(side.tokens), len(side.topics))
				}
				for j, id := range side.ids {
					if id != featurize.UnkID && model.Vocab.Entry(id).Token != side.tokens[j] {
						t.Fatalf("row %s: token %q got id %d (%q)", row.ID, side.tokens[j], id, model.Vocab.Entry(id).Token)
					}
				}
				for _, v := range side.topics {
					if v < 0 {
						t.Fatalf("row %s: negative topic weight %v", row.ID, side.topics)
					}
				}
			}
			rows++
		}
		stop()
		r.Close()
		orig.Close()
	}
	if rows != sum.Rows || texts != sum.Stats.Texts {
		t.Errorf("read %d rows and %d texts, the summary says %d and %d", rows, texts, sum.Rows, sum.Stats.Texts)
	}

	// The same input and settings give the same bytes.
	again := filepath.Join(t.TempDir(), "again")
	runFeaturize(t, smallFeaturize(in, again))
	if _, b := readManifestFiles(t, again); !bytes.Equal(b, manifest) {
		t.Error("two runs gave different manifests")
	}

	// Applying the saved model to the same shards gives the same shards;
	// featurizing in place gives them too.
	reuse := smallFeaturize(in, filepath.Join(t.TempDir(), "reuse"))
	reuse.Model = filepath.Join(out, "featurize")
	if s := runFeaturize(t, reuse); s.Fitted {
		t.Error("a run given --model fitted a model")
	}
	inPlace := filepath.Join(t.TempDir(), "inplace")
	if err := os.CopyFS(inPlace, os.DirFS(in)); err != nil {
		t.Fatal(err)
	}
	runFeaturize(t, smallFeaturize(inPlace, inPlace))
	for _, dir := range []string{reuse.Out, inPlace} {
		got, _ := readManifestFiles(t, dir)
		if !slices.Equal(got.Files, m.Files) {
			t.Errorf("%s: the shards differ from the first run's", dir)
		}
	}
}

func TestFeaturizeChoosesK(t *testing.T) {
	in := featurizeInput(t)
	out := t.TempDir()
	c := smallFeaturize(in, out)
	c.Topics, c.Candidates, c.MaxIter = 0, []int{2, 4, 8}, 60
	sum := runFeaturize(t, c)
	if len(sum.Model.Info.Curve) != 3 || !slices.Contains(c.Candidates, sum.Model.NMF.K) {
		t.Fatalf("curve %+v, k %d", sum.Model.Info.Curve, sum.Model.NMF.K)
	}
	if _, err := os.Stat(filepath.Join(out, "featurize", featurize.CurveFile)); err != nil {
		t.Error(err)
	}
}

func TestFeaturizeErrors(t *testing.T) {
	in := featurizeInput(t)
	c := smallFeaturize(in, t.TempDir())
	c.Corpora = []string{"reddit"}
	if _, err := pipelines.RunFeaturize(context.Background(), c, pipelines.RunOptions{}); err == nil {
		t.Error("fitting on a corpus that is not there succeeded")
	}
	c = smallFeaturize(t.TempDir(), t.TempDir())
	if _, err := pipelines.RunFeaturize(context.Background(), c, pipelines.RunOptions{}); err == nil {
		t.Error("a directory without a manifest was featurized")
	}
	c = smallFeaturize(in, "")
	if err := c.Validate(); err == nil {
		t.Error("no --out validated")
	}
}

// iterPull reads a shard row by row.
func iterPull(r *shards.FileReader) (func() (shards.Row, bool), func()) {
	var buf [1]shards.Row
	return func() (shards.Row, bool) {
		n, err := r.Read(buf[:])
		if n == 0 || err != nil {
			return shards.Row{}, false
		}
		return buf[0], true
	}, func() {}
}
