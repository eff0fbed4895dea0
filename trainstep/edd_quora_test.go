package trainstep_test

import (
	"cmp"
	"fmt"
	"math/rand/v2"
	"os"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/parastream/parastream/corpora"
	"github.com/parastream/parastream/evalsink/metric"
	"github.com/parastream/parastream/internal/testenv"
	"github.com/parastream/parastream/trainstep"
	"github.com/parastream/parastream/trainstep/compute"
)

// eddExperimentEnv runs TestEDDQuoraAblation, the acceptance experiment
// of docs/models/edd.md (minutes of CPU; not part of `make test`).
const eddExperimentEnv = "PARASTREAM_EDD_EXPERIMENT"

// envInt is the integer in environment variable name, or def.
func envInt(t *testing.T, name string, def int) int {
	v := os.Getenv(name)
	if v == "" {
		return def
	}
	n, err := strconv.Atoi(v)
	if err != nil {
		t.Fatalf("%s=%q: not an integer", name, v)
	}
	return n
}

// eddVocab is featurize's layout over the training texts: <pad> <unk> <s>
// </s>, then the words seen at least minCount times, most frequent first.
func eddVocab(texts [][]string, minCount int) ([]string, func([]string) []int32) {
	counts := map[string]int{}
	for _, s := range texts {
		for _, w := range s {
			counts[w]++
		}
	}
	var words []string
	for w, c := range counts {
		if c >= minCount {
			words = append(words, w)
		}
	}
	slices.SortFunc(words, func(a, b string) int { return cmp.Or(cmp.Compare(counts[b], counts[a]), strings.Compare(a, b)) })
	vocab := append([]string{"<pad>", "<unk>", "<s>", "</s>"}, words...)
	index := map[string]int32{}
	for i, w := range vocab {
		index[w] = int32(i)
	}
	return vocab, func(toks []string) []int32 {
		out := make([]int32, len(toks))
		for i, w := range toks {
			if id, ok := index[w]; ok {
				out[i] = id
			} else {
				out[i] = compute.EDDUnkID
			}
		}
		return out
	}
}

// genScores scores hypotheses against one reference each with evalsink's
// BLEU, METEOR and TER.
func genScores(t *testing.T, hyps, refs [][]string) metric.GenerationScores {
	t.Helper()
	many := make([][][]string, len(refs))
	for i, r := range refs {
		many[i] = [][]string{r}
	}
	g, err := metric.ScoreGeneration(hyps, many)
	if err != nil {
		t.Fatal(err)
	}
	return g
}

// fmtScores is one line of generation figures.
func fmtScores(g metric.GenerationScores) string {
	return fmt.Sprintf("BLEU-1 %.1f, BLEU-2 %.1f, BLEU-3 %.1f, BLEU-4 %.1f, METEOR %.1f, TER %.1f", g.BLEU.B1, g.BLEU.B2, g.BLEU.B3, g.BLEU.B4, g.METEOR, g.TER)
}

// TestEDDQuoraAblation trains the plain encoder-decoder (local loss) and
// the EDD (local and global losses, shared encoder) with the same seed,
// data, sizes and steps on the Quora sample's duplicates, both directions
// of each training pair, and compares greedy generation on held-out pairs
// by BLEU-1, beside the copy-the-input figure and the encoders' STS r. It
// fails when the EDD does not score the higher BLEU-1 (Patro et al. 2018,
// Table 1).
func TestEDDQuoraAblation(t *testing.T) {
	if os.Getenv(eddExperimentEnv) == "" {
		t.Skipf("the edd experiment takes minutes of CPU: set %s=1 to run it", eddExperimentEnv)
	}
	quora := testenv.SharedData(t, "corpora/quora/quora_duplicate_questions.sample.tsv")
	sts := readSTS(t, testenv.SharedData(t, "eval/sts"))
	pairs := readPairs(t, "quora", []string{quora}, func(e corpora.Example) bool { return e.Label == 1 })
	pairs = sample(pairs, len(pairs), 1)
	held := envInt(t, "EDD_HELD", 400)
	test, trainP := pairs[:held], pairs[held:]
	var texts [][]string
	for _, p := range trainP {
		texts = append(texts, p[0], p[1])
	}
	vocab, ids := eddVocab(texts, 2)
	var data []trainstep.Pair
	for _, p := range trainP {
		a, b := ids(p[0]), ids(p[1])
		data = append(data, trainstep.Pair{A: a, B: b}, trainstep.Pair{A: b, B: a})
	}
	dim, batch, epochs := envInt(t, "EDD_DIM", 128), envInt(t, "EDD_BATCH", 50), envInt(t, "EDD_EPOCHS", 4)
	lr := 0.002
	if v := os.Getenv("EDD_LR"); v != "" {
		lr, _ = strconv.ParseFloat(v, 64)
	}
	var copyHyp, refs [][]string
	for _, p := range test {
		copyHyp, refs = append(copyHyp, p[0]), append(refs, p[1])
	}
	t.Logf("%d training pairs (both directions: %d), %d held out, vocabulary %d (decoder: the first %d ids); dim %d, batch %d, %d epochs, adam lr %g, seed 1, recurrent init %q",
		len(trainP), len(data), len(test), len(vocab), envInt(t, "EDD_OUTVOCAB", 2000), dim, batch, epochs, lr, os.Getenv("EDD_INIT"))
	t.Logf("copy the input: %s", fmtScores(genScores(t, copyHyp, refs)))
	scores := map[string]float64{}
	for _, loss := range []string{compute.LossLocal, compute.LossLocalGlobal} {
		cfg := trainstep.Config{Encoder: compute.EncEDD, Loss: loss, Dim: dim, Hidden: dim, BatchSize: batch,
			LR: lr, MaxLen: 30, Seed: 1, OutVocab: envInt(t, "EDD_OUTVOCAB", 2000), RecurrentInit: os.Getenv("EDD_INIT")}
		tr, err := trainstep.New(cfg, trainstep.Options{Vocab: vocab})
		if err != nil {
			t.Fatal(err)
		}
		start := time.Now()
		rng := rand.New(rand.NewPCG(1, 9))
		var last float64
		for e := range epochs {
			rng.Shuffle(len(data), func(i, j int) { data[i], data[j] = data[j], data[i] })
			batches, _ := trainstep.Batches(data, batch, cfg.MaxLen)
			var sum float64
			for _, b := range batches {
				l, err := tr.Step(b)
				if err != nil {
					t.Fatal(err)
				}
				sum += l
			}
			last = sum / float64(len(batches))
			t.Logf("%s epoch %d: mean loss %.4f, %d steps, %s", loss, e+1, last, tr.Steps(), time.Since(start).Round(time.Second))
		}
		var src [][]int32
		for _, p := range test {
			src = append(src, ids(p[0]))
		}
		out, err := tr.Model().(compute.Generator).Generate(src, compute.GenerateOptions{MaxLen: 30})
		if err != nil {
			t.Fatal(err)
		}
		hyps := make([][]string, len(out))
		for i, s := range out {
			for _, id := range s {
				hyps[i] = append(hyps[i], vocab[id])
			}
		}
		for i := range 5 {
			t.Logf("%s: %q -> %q (ref %q)", loss, strings.Join(test[i][0], " "), strings.Join(hyps[i], " "), strings.Join(test[i][1], " "))
		}
		r, _ := meanPearson(t, tr.Model(), sts, ids)
		g := genScores(t, hyps, refs)
		scores[loss] = g.BLEU.B1
		t.Logf("%s: %s on %d held-out pairs; STS 2012-2015 mean Pearson r %.3f; %s", loss, fmtScores(g), len(test), r, time.Since(start).Round(time.Second))
		tr.Close()
	}
	if scores[compute.LossLocalGlobal] <= scores[compute.LossLocal] {
		t.Errorf("BLEU-1: local-global %.1f, local %.1f: the global loss did not help", scores[compute.LossLocalGlobal], scores[compute.LossLocal])
	}
}
