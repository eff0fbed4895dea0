package trainstep_test

import (
	"context"
	"fmt"
	"math/rand/v2"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"testing"

	"github.com/parastream/parastream/corpora"
	"github.com/parastream/parastream/evalsink/metric"
	"github.com/parastream/parastream/internal/testenv"
	"github.com/parastream/parastream/shards"
	"github.com/parastream/parastream/trainstep"
	"github.com/parastream/parastream/trainstep/compute"
	"github.com/parastream/parastream/transforms/text"
)

// Subsample sizes of the learning test: enough to learn, small enough for
// `make test` on two shared cores.
const (
	learnPPDB  = 60_000
	learnMoses = 4_000
)

// readPairs reads the tokenised pairs of a corpus file with one reader,
// keeping those keep accepts.
func readPairs(t *testing.T, format string, paths []string, keep func(corpora.Example) bool) [][2][]string {
	t.Helper()
	r, err := corpora.OpenFormat(format, paths, corpora.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	var out [][2][]string
	opts := text.TokenizeOptions{Lower: true}
	err = corpora.Drain(r, func(e corpora.Example) error {
		if keep == nil || keep(e) {
			out = append(out, [2][]string{text.Tokenize(e.A, opts), text.Tokenize(e.B, opts)})
		}
		return nil
	}, nil)
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// sample returns n of pairs, seeded.
func sample(pairs [][2][]string, n int, seed uint64) [][2][]string {
	rand.New(rand.NewPCG(seed, 1)).Shuffle(len(pairs), func(i, j int) { pairs[i], pairs[j] = pairs[j], pairs[i] })
	return pairs[:min(n, len(pairs))]
}

// stsSet is one STS evaluation set: token lists and gold scores.
type stsSet struct {
	name string
	a, b [][]string
	gold []float64
}

func readSTS(t *testing.T, dir string) []stsSet {
	t.Helper()
	inputs, err := filepath.Glob(filepath.Join(dir, "201[2345]", "STS.input.*.txt"))
	if err != nil || len(inputs) == 0 {
		t.Fatalf("no STS inputs under %s (%v)", dir, err)
	}
	sort.Strings(inputs)
	var sets []stsSet
	for _, in := range inputs {
		s := stsSet{name: filepath.Base(filepath.Dir(in)) + "/" + strings.TrimSuffix(strings.TrimPrefix(filepath.Base(in), "STS.input."), ".txt")}
		r, err := corpora.OpenFormat("sts", []string{in, corpora.STSGoldPath(in)}, corpora.Options{})
		if err != nil {
			t.Fatal(err)
		}
		opts := text.TokenizeOptions{Lower: true}
		err = corpora.Drain(r, func(e corpora.Example) error {
			if e.HasLabel {
				s.a, s.b = append(s.a, text.Tokenize(e.A, opts)), append(s.b, text.Tokenize(e.B, opts))
				s.gold = append(s.gold, e.Label)
			}
			return nil
		}, nil)
		r.Close()
		if err != nil {
			t.Fatal(err)
		}
		sets = append(sets, s)
	}
	return sets
}

// meanPearson embeds every STS pair with m and returns the mean over the
// sets of the Pearson r of cosine against gold, and the r of each set.
func meanPearson(t *testing.T, m compute.Model, sets []stsSet, ids func([]string) []int32) (float64, []float64) {
	t.Helper()
	var sum float64
	var each []float64
	for _, s := range sets {
		seqs := make([][]int32, 0, 2*len(s.a))
		for i := range s.a {
			seqs = append(seqs, ids(s.a[i]), ids(s.b[i]))
		}
		vecs, err := m.Embed(seqs)
		if err != nil {
			t.Fatal(err)
		}
		cos := make([]float64, len(s.a))
		for i := range cos {
			cos[i] = metric.Cosine(vecs[2*i], vecs[2*i+1])
		}
		r := metric.Pearson(cos, s.gold)
		each = append(each, r)
		sum += r
	}
	return sum / float64(len(sets)), each
}

// TestLearnsOnRealData trains avg with the margin loss, from Kafka, on
// samples of the real PPDB lexical pairs, Moses fr-en phrase pairs and
// Quora duplicates, and checks that the mean Pearson r over the STS 2012 to
// 2015 sets rises clearly above that of the same model with its initial
// random embeddings.
func TestLearnsOnRealData(t *testing.T) {
	if testing.Short() {
		t.Skip("skipping the learning test in -short mode")
	}
	ppdb := testenv.SharedData(t, "corpora/ppdb/ppdb-1.0-xxxl-lexical-synonym-pairs.tsv")
	moses := testenv.SharedData(t, "corpora/moses/fr-en/phrase-table.gz")
	quora := testenv.SharedData(t, "corpora/quora/quora_duplicate_questions.sample.tsv")
	sts := readSTS(t, testenv.SharedData(t, "eval/sts"))

	var pairs [][2][]string
	pairs = append(pairs, sample(readPairs(t, "ppdb-pairs", []string{ppdb}, nil), learnPPDB, 1)...)
	pairs = append(pairs, sample(readPairs(t, "moses", []string{moses}, nil), learnMoses, 2)...)
	pairs = append(pairs, readPairs(t, "quora", []string{quora}, func(e corpora.Example) bool { return e.Label == 1 })...)

	// The vocabulary of the training texts; other words map to <unk>.
	vocab := []string{"<pad>", "<unk>"}
	index := map[string]int32{}
	// Unknown words are left out of a sentence (all unknown: <unk>), so
	// that sentences sharing only unknown words do not look alike.
	ids := func(toks []string) []int32 {
		out := make([]int32, 0, len(toks))
		for _, w := range toks {
			if id, ok := index[w]; ok {
				out = append(out, id)
			}
		}
		if len(out) == 0 {
			out = append(out, 1)
		}
		return out
	}
	for _, p := range pairs {
		for _, w := range slices.Concat(p[0], p[1]) {
			if _, ok := index[w]; !ok {
				index[w] = int32(len(vocab))
				vocab = append(vocab, w)
			}
		}
	}
	rows := make([]shards.Row, len(pairs))
	for i, p := range pairs {
		rows[i] = shards.Row{ID: fmt.Sprint("r", i), TokensA: p[0], TokensB: p[1], IDsA: ids(p[0]), IDsB: ids(p[1])}
	}
	cc := publishRows(t, "learn", rows, true)

	model := trainstep.Config{Encoder: compute.EncAvg, Loss: compute.LossMargin, Dim: 100, BatchSize: 100, LR: 0.003, Seed: 1}
	initial, err := trainstep.New(model, trainstep.Options{Vocab: vocab})
	if err != nil {
		t.Fatal(err)
	}
	defer initial.Close()
	before, beforeEach := meanPearson(t, initial.Model(), sts, ids)

	dir := t.TempDir()
	sum, err := trainstep.Run(context.Background(), trainstep.RunConfig{
		Client: cc, Dataset: "learn", Run: "learn", Model: model, Vocab: vocab, Epochs: 2, CheckpointDir: dir, CheckpointEvery: 100_000,
	})
	if err != nil {
		t.Fatal(err)
	}
	m, _, err := trainstep.LoadModel(sum.Checkpoint, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer m.Close()
	after, afterEach := meanPearson(t, m, sts, ids)
	for i, s := range sts {
		t.Logf("%-24s %5d pairs  r %6.3f -> %6.3f", s.name, len(s.gold), beforeEach[i], afterEach[i])
	}
	t.Logf("%d training pairs (%d PPDB, %d Moses, %d Quora duplicates), vocabulary %d, %d steps in %s (%.0f pairs/s), final loss %.4f",
		len(pairs), learnPPDB, learnMoses, len(pairs)-learnPPDB-learnMoses, len(vocab), sum.TotalSteps, sum.Elapsed.Round(1e8),
		float64(sum.Examples)/sum.Elapsed.Seconds(), sum.Loss)
	t.Logf("mean Pearson r over %d STS 2012-2015 sets: random embeddings %.3f, trained %.3f", len(sts), before, after)
	if after < before+0.05 {
		t.Errorf("mean Pearson r %.3f after training, %.3f with the initial embeddings: want a clear gain (at least 0.05)", after, before)
	}
}
