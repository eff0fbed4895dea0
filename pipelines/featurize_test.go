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
					want, known := model.Lex.ID(side.tokens[j])
					if id != want || (known && model.Vocab.Entry(id).Token != side.tokens[j]) || (!known && int(id) < model.Vocab.Len()) {
						t.Fatalf("row %s: token %q got id %d, want %d (known %v)", row.ID, side.tokens[j], id, want, known)
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
	// Unseen words (the STS Benchmark's test split, min count 2) fall to
	// the default 100,000 buckets; the manifest counts them.
	if st := sum.Stats; model.Info.OOVBuckets != pipelines.DefaultOOVBuckets || st.Unknown == 0 || st.Bucketed != st.Unknown ||
		m.Stats["featurize/bucketed_tokens"] != st.Bucketed || m.Stats["featurize/unknown_tokens"] != st.Unknown {
		t.Errorf("buckets %d, stats %+v, manifest %v", model.Info.OOVBuckets, st, m.Stats)
	}

	// The same input and settings give the same bytes.
	again := filepath.Join(t.TempDir(), "again")
	runFeaturize(t, smallFeaturize(in, again))
	if _, b := readManifestFiles(t, again); !bytes.Equal(b, manifest) {
		t.Error("two runs gave different manifests")
	}

	// Applying the saved model to the same shards gives the same shards;
	// featurizing in place gives them too.
	// The saved model's buckets apply, whatever OOVBuckets says.
	reuse := smallFeaturize(in, filepath.Join(t.TempDir(), "reuse"))
	reuse.Model = filepath.Join(out, "featurize")
	reuse.OOVBuckets = 7
	if s := runFeaturize(t, reuse); s.Fitted || s.Model.Lex.Buckets() != pipelines.DefaultOOVBuckets {
		t.Errorf("a run given --model fitted a model (%v) or has %d buckets", s.Fitted, s.Model.Lex.Buckets())
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

// TestFeaturizeWithoutBuckets: --oov-buckets 0 maps every unseen word to
// <unk>, as before the buckets, and records 0 buckets; the ids of known
// words and the topic vectors are those of a run with buckets.
func TestFeaturizeWithoutBuckets(t *testing.T) {
	in := featurizeInput(t)
	bucketsDir, unkDir := filepath.Join(t.TempDir(), "buckets"), filepath.Join(t.TempDir(), "unk")
	withB := runFeaturize(t, smallFeaturize(in, bucketsDir))
	c := smallFeaturize(in, unkDir)
	c.OOVBuckets = 0
	sum := runFeaturize(t, c)
	if sum.Model.Info.OOVBuckets != 0 || sum.Model.Info.OOVHash != "" || sum.Stats.Bucketed != 0 || sum.Stats.Unknown != withB.Stats.Unknown {
		t.Fatalf("info %+v, stats %+v (with buckets %+v)", sum.Model.Info, sum.Stats, withB.Stats)
	}
	m, _ := readManifestFiles(t, unkDir)
	mb, _ := readManifestFiles(t, bucketsDir)
	unknown := 0
	for i, f := range m.Files {
		// The two runs' shards differ, and so do their names (a name holds
		// its content's version); they have the same logical names.
		fb := mb.Files[i]
		if shards.LogicalPath(f.Path) != shards.LogicalPath(fb.Path) {
			t.Fatalf("shard %d: %s, with buckets %s", i, f.Path, fb.Path)
		}
		plain, bucketed := readRows(t, filepath.Join(unkDir, f.Path)), readRows(t, filepath.Join(bucketsDir, fb.Path))
		if len(plain) != len(bucketed) {
			t.Fatalf("%s: %d rows, with buckets %d", f.Path, len(plain), len(bucketed))
		}
		for j, r := range plain {
			b := bucketed[j]
			if !slices.Equal(r.TopicsA, b.TopicsA) || !slices.Equal(r.TopicsB, b.TopicsB) {
				t.Fatalf("row %s: topic vectors differ with buckets", r.ID)
			}
			for k, id := range r.IDsA {
				_, known := withB.Model.Lex.ID(r.TokensA[k])
				if !known {
					unknown++
				}
				if (!known && (id != featurize.UnkID || int(b.IDsA[k]) < withB.Model.Vocab.Len())) || (known && id != b.IDsA[k]) {
					t.Fatalf("row %s: token %q got %d, with buckets %d", r.ID, r.TokensA[k], id, b.IDsA[k])
				}
			}
		}
	}
	if unknown == 0 {
		t.Error("no unseen word: the test checks nothing")
	}
}

// readRows reads every row of a shard (copied: the reader reuses its
// buffers).
func readRows(t *testing.T, path string) []shards.Row {
	t.Helper()
	r, err := shards.OpenFile(path)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	var rows []shards.Row
	for row, err := range r.All() {
		if err != nil {
			t.Fatal(err)
		}
		row.TokensA, row.TokensB = slices.Clone(row.TokensA), slices.Clone(row.TokensB)
		row.IDsA, row.IDsB = slices.Clone(row.IDsA), slices.Clone(row.IDsB)
		row.TopicsA, row.TopicsB = slices.Clone(row.TopicsA), slices.Clone(row.TopicsB)
		rows = append(rows, row)
	}
	return rows
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
	// The curve is saved beside the model the manifest names.
	m, err := shards.ReadManifest(out)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(out, filepath.Dir(m.Featurize.Path), featurize.CurveFile)); err != nil {
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
