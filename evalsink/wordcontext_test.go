package evalsink_test

import (
	"context"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/parastream/parastream/evalsink"
	"github.com/parastream/parastream/evalsink/metric"
	"github.com/parastream/parastream/pipelines"
	"github.com/parastream/parastream/trainstep"
	"github.com/parastream/parastream/trainstep/compute"
)

// contextModel is fakeModel with a topic context: a text's vector is its
// bag of ids followed by its topic vector.
type contextModel struct{ fakeModel }

func (m contextModel) EmbedContext(seqs [][]int32, ctx [][]float32) ([][]float32, error) {
	out, err := m.fakeModel.Embed(seqs)
	for i := range out {
		out[i] = append(out[i][:m.dim-1], ctx[i]...)
	}
	return out, err
}

// lengthTopics is a one-topic context: the text's length.
func lengthTopics(tokens []string) []float32 { return []float32{float32(len(tokens))} }

// TestEmbedInContext: a text embedded in a context gets the context's
// topic vector; the same text in two contexts two vectors (the cache keys
// the context); a text in its own context its Embed vector; a model
// without a context has none and refuses to embed in one.
func TestEmbedInContext(t *testing.T) {
	vocab := []string{"the", "cat", "sat"}
	emb, err := evalsink.NewEmbedder(contextModel{fakeModel{dim: 4}}, newLexicon(t, vocab, 0), 4)
	if err != nil {
		t.Fatal(err)
	}
	if emb.HasContext() {
		t.Fatal("a context before SetContext")
	}
	if err := emb.SetContext(lengthTopics); err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	cat, long, short := []string{"cat"}, []string{"the", "cat", "sat"}, []string{"the", "cat"}
	got, err := emb.EmbedInContext(ctx, [][]string{cat, cat, cat, long}, [][]string{long, short, cat, long})
	if err != nil {
		t.Fatal(err)
	}
	own, err := emb.Embed(ctx, [][]string{cat, long})
	if err != nil {
		t.Fatal(err)
	}
	want := [][]float32{{0, 1, 0, 3}, {0, 1, 0, 2}, {0, 1, 0, 1}, {1, 1, 1, 3}}
	for i := range want {
		if !slices.Equal(got[i], want[i]) {
			t.Errorf("text %d in context: %v, want %v", i, got[i], want[i])
		}
	}
	if !slices.Equal(own[0], want[2]) || !slices.Equal(own[1], want[3]) {
		t.Errorf("Embed: %v, want %v and %v", own, want[2], want[3])
	}
	if _, err := emb.EmbedInContext(ctx, [][]string{cat}, nil); err == nil {
		t.Error("a text embedded without its context")
	}
	plain, err := evalsink.NewEmbedder(fakeModel{dim: 3}, newLexicon(t, vocab, 0), 3)
	if err != nil {
		t.Fatal(err)
	}
	if plain.HasContext() {
		t.Error("a model without a context has one")
	}
	if _, err := plain.EmbedInContext(ctx, [][]string{cat}, [][]string{long}); err == nil {
		t.Error("a model without a context embedded in one")
	}
}

// scwsLines are word pairs in context in SCWS's format (id, word1, POS1,
// word2, POS2, context1, context2, the mean rating, ten ratings).
func scwsLines() []string {
	ratings := "\t5.0\t5.0\t5.0\t5.0\t5.0\t5.0\t5.0\t5.0\t5.0\t5.0"
	return []string{
		"1\tbank\tn\tshore\tn\tHe sat on the <b> bank </b> of the river .\tThe <b> shore </b> was sandy .\t7.5" + ratings,
		"2\tBank\tn\tbank\tn\t<b> Bank </b> rates rose .\tShe robbed a <b> bank </b> in town\t3.2" + ratings,
		"3\tking\tn\tqueen\tn\tThe <b> king </b> spoke to the crowd .\tThe <b> queen </b> smiled at them .\t8.0" + ratings,
		"4\tcup\tn\tmug\tn\tA <b> cup </b> of tea , please\tA <b> mug </b> of strong coffee\t8.8" + ratings,
		"5\triver\tn\tmoney\tn\tThe <b> river </b> flooded the valley in spring\tHe lent me some <b> money </b> .\t0.5" + ratings,
		"6\twalk\tv\trun\tv\tWe <b> walk </b> home every day\tThey <b> run </b> a small shop\t2.1" + ratings,
	}
}

// scwsSets extracts scwsLines into a directory of their own.
func scwsSets(t *testing.T) string {
	t.Helper()
	in := filepath.Join(t.TempDir(), "ratings.txt")
	if err := os.WriteFile(in, []byte(strings.Join(scwsLines(), "\n")+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	if _, err := pipelines.RunExtract(context.Background(), pipelines.NewExtractConfig("scws", in, dir), pipelines.RunOptions{}); err != nil {
		t.Fatal(err)
	}
	return dir
}

// contextCheckpoint saves an untrained model of encoder with a topic
// context of k topics over vocab, its context parameters (zero at the
// start, which would make the context count for nothing) drawn at random.
func contextCheckpoint(t *testing.T, dir, encoder string, vocab []string, k int) string {
	t.Helper()
	cfg := trainstep.Config{Encoder: encoder, Dim: 8, BatchSize: 2, Seed: 1, Context: compute.ContextTopics, Topics: k}
	if encoder == compute.EncCSAE {
		cfg.CSAELayers, cfg.CSAETopK = []int{8}, len(vocab)
	}
	tr, err := trainstep.New(cfg, trainstep.Options{Vocab: vocab})
	if err != nil {
		t.Fatal(err)
	}
	defer tr.Close()
	rng := rand.New(rand.NewPCG(1, 2))
	var set []compute.Tensor
	for _, p := range tr.Model().Params() {
		if len(p.Shape) == 2 && !slices.ContainsFunc(p.Data, func(v float32) bool { return v != 0 }) {
			for i := range p.Data {
				p.Data[i] = float32(rng.NormFloat64())
			}
			set = append(set, p)
		}
	}
	if len(set) == 0 {
		t.Fatalf("%s: no context parameter at zero", encoder)
	}
	if err := tr.Model().SetParams(set); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(dir, encoder)
	if err := tr.Save(out, nil); err != nil {
		t.Fatal(err)
	}
	return out
}

// TestWordContextTopicRow evaluates models with a topic context (avg with
// --context topics, and the csae) on six SCWS pairs: besides the words
// alone, a "scws/topics" row whose predictions are the cosines of each
// target word embedded with its whole context's topic vector, recomputed
// here through the model itself; the two rows differ (the context
// counts), and the report names both.
func TestWordContextTopicRow(t *testing.T) {
	dir := scwsSets(t)
	sets := loadSets(t, dir)
	if len(sets.Sets) != 1 || sets.Sets[0].Corpus != "scws" || len(sets.Sets[0].Pairs) != 6 {
		t.Fatalf("six SCWS pairs extract to %d sets, the first %+v", len(sets.Sets), *sets.Sets[0])
	}
	s := sets.Sets[0]
	topics := func(tokens []string) []float32 {
		v := make([]float32, 3)
		for _, w := range tokens {
			v[len(w)%3] += 0.5
		}
		return v
	}
	for _, encoder := range []string{compute.EncAvg, compute.EncCSAE} {
		t.Run(encoder, func(t *testing.T) {
			ck := contextCheckpoint(t, t.TempDir(), encoder, vocabulary(sets, 0), 3)
			cfg := evalsink.Config{Eval: dir, Out: t.TempDir(), Logger: testLogger(t),
				ContextFor: func(string) (func([]string) []float32, error) { return topics, nil }}
			ev, err := evalsink.NewEvaluator(context.Background(), cfg)
			if err != nil {
				t.Fatal(err)
			}
			defer ev.Close()
			sum, err := ev.Evaluate(context.Background(), evalsink.Target{Dir: ck})
			if err != nil {
				t.Fatal(err)
			}
			rows := rankingRows(sum.Rows)
			words, okW := rows[[2]string{"scws/words", evalsink.KindWordContext}]
			inTopics, okT := rows[[2]string{"scws/topics", evalsink.KindWordContext}]
			if !okW || !okT {
				t.Fatalf("rows: %v", rows)
			}
			// The words as the contexts hold them (lowercased).
			targets := map[string][2]string{"scws:1": {"bank", "shore"}, "scws:2": {"bank", "bank"}, "scws:3": {"king", "queen"},
				"scws:4": {"cup", "mug"}, "scws:5": {"river", "money"}, "scws:6": {"walk", "run"}}
			m, _, err := trainstep.LoadModel(ck, nil)
			if err != nil {
				t.Fatal(err)
			}
			defer m.Close()
			emb, _, err := evalsink.OpenEmbedder(ck, cfg.ContextFor)
			if err != nil {
				t.Fatal(err)
			}
			defer emb.Close()
			var pred, gold []float64
			for _, p := range s.Pairs {
				w, ok := targets[p.ID]
				if !ok {
					t.Fatalf("pair %s: not one of scwsLines", p.ID)
				}
				v, err := m.(compute.ContextEmbedder).EmbedContext([][]int32{emb.IDs([]string{w[0]}), emb.IDs([]string{w[1]})},
					[][]float32{topics(p.A), topics(p.B)})
				if err != nil {
					t.Fatal(err)
				}
				pred, gold = append(pred, metric.Cosine(v[0], v[1])), append(gold, p.Gold)
			}
			if want := 100 * metric.Pearson(pred, gold); math.Abs(*inTopics.Pearson-want) > 1e-9 || inTopics.Pairs != int64(len(s.Pairs)) {
				t.Errorf("scws/topics: r %v over %d pairs; each word with its context's topics gives %v over %d", *inTopics.Pearson, inTopics.Pairs, want, len(s.Pairs))
			}
			if *inTopics.Pearson == *words.Pearson {
				t.Errorf("the topic context changes nothing: r %v both", *words.Pearson)
			}
			t.Logf("%s: words alone r %.2f, in topics r %.2f", encoder, *words.Pearson, *inTopics.Pearson)
		})
	}
}
