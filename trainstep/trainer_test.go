package trainstep_test

import (
	"errors"
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/parastream/parastream/featurize/lexicon"
	"github.com/parastream/parastream/trainstep"
	"github.com/parastream/parastream/trainstep/compute"
)

// paraphrases is a synthetic paraphrase task: 20 concepts with 3 synonyms
// each (id = concept·3 + k); a pair says the same concepts with other
// synonyms in another order.
func paraphrases(rng *rand.Rand, n int) []trainstep.Pair {
	out := make([]trainstep.Pair, n)
	for i := range out {
		k := 2 + rng.IntN(4)
		concepts := rng.Perm(20)[:k]
		var a, b []int32
		for _, c := range concepts {
			a = append(a, int32(c*3+rng.IntN(3)))
			b = append(b, int32(c*3+rng.IntN(3)))
		}
		rng.Shuffle(len(b), func(x, y int) { b[x], b[y] = b[y], b[x] })
		out[i] = trainstep.Pair{A: a, B: b}
	}
	return out
}

func newTrainer(t *testing.T, cfg trainstep.Config) *trainstep.Trainer {
	t.Helper()
	tr, err := trainstep.New(cfg, trainstep.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { tr.Close() })
	return tr
}

func TestLossDecreases(t *testing.T) {
	for _, enc := range []string{compute.EncAvg, compute.EncGRAN} {
		t.Run(enc, func(t *testing.T) {
			tr := newTrainer(t, trainstep.Config{Encoder: enc, Dim: 16, Vocab: 60, BatchSize: 10, LR: 0.02, Margin: 0.6, Seed: 3})
			data := paraphrases(rand.New(rand.NewPCG(1, 2)), 400)
			batches, skipped := trainstep.Batches(data, 10, 64)
			if skipped != 0 || len(batches) != 40 {
				t.Fatalf("%d batches, %d skipped", len(batches), skipped)
			}
			var losses []float64
			for epoch := range 2 {
				for _, b := range batches {
					loss, err := tr.Step(b)
					if err != nil {
						t.Fatal(err)
					}
					losses = append(losses, loss)
				}
				_ = epoch
				tr.EndEpoch()
			}
			first := mean(losses[:10])
			last := mean(losses[len(losses)-10:])
			t.Logf("%s: mean loss of the first 10 steps %.4f, of the last 10 %.4f", enc, first, last)
			if !(last < 0.5*first) {
				t.Errorf("loss did not halve: first %.4f, last %.4f", first, last)
			}
		})
	}
}

func mean(xs []float64) float64 {
	var s float64
	for _, x := range xs {
		s += x
	}
	return s / float64(len(xs))
}

// TestMaxNegative builds a batch of three one-word pairs whose embeddings
// lie on the unit circle at known angles, so the most similar non-partner
// of every row is known by hand; the loss must be the one of exactly
// those negatives.
func TestMaxNegative(t *testing.T) {
	tr := newTrainer(t, trainstep.Config{Dim: 2, Vocab: 6, BatchSize: 3, Margin: 2})
	deg := []float64{0, 10, 30, 100, 170, 200} // word k's angle
	emb := compute.NewTensor(compute.ParamEmbeddings, 6, 2)
	for k, d := range deg {
		emb.Data[2*k], emb.Data[2*k+1] = float32(math.Cos(d*math.Pi/180)), float32(math.Sin(d*math.Pi/180))
	}
	if err := tr.Model().SetParams([]compute.Tensor{emb}); err != nil {
		t.Fatal(err)
	}
	// Rows 0-2 are the A sides (words 0, 2, 4), rows 3-5 the B sides
	// (words 1, 3, 5); row r's partner is r±3.
	rowWord := []int{0, 2, 4, 1, 3, 5}
	pairs := []trainstep.Pair{{A: []int32{0}, B: []int32{1}}, {A: []int32{2}, B: []int32{3}}, {A: []int32{4}, B: []int32{5}}}
	// By hand: 0°→30° (row 1), 30°→10° (row 3), 170°→100° (row 4),
	// 10°→30° (row 1), 100°→170° (row 2), 200°→100° (row 4).
	wantNeg := []int{1, 3, 4, 1, 2, 4}
	cos := func(r, c int) float64 { return math.Cos((deg[rowWord[r]] - deg[rowWord[c]]) * math.Pi / 180) }
	lossWith := func(neg []int) float64 {
		var s float64
		for r := range 6 {
			s += max(0, 2-cos(r%3, r%3+3)+cos(r, neg[r]))
		}
		return s / 3
	}
	want := lossWith(wantNeg)
	got, err := tr.Step(pairs)
	if err != nil {
		t.Fatal(err)
	}
	if math.Abs(got-want) > 1e-5 {
		t.Fatalf("loss %.6f, want %.6f (negatives %v)", got, want, wantNeg)
	}
	// Any other choice of a single negative changes the loss.
	for r := range 6 {
		for c := range 6 {
			if c == r || c == (r+3)%6 || c == wantNeg[r] {
				continue
			}
			alt := slices.Clone(wantNeg)
			alt[r] = c
			if math.Abs(lossWith(alt)-got) < 1e-4 {
				t.Errorf("row %d: negative %d gives the same loss as %d; the batch does not pin the choice", r, c, wantNeg[r])
			}
		}
	}
}

func TestNaNStops(t *testing.T) {
	tr := newTrainer(t, trainstep.Config{Dim: 4, Vocab: 10, BatchSize: 2})
	pairs := []trainstep.Pair{{A: []int32{1, 2}, B: []int32{3}}, {A: []int32{4}, B: []int32{5, 6}}}
	if _, err := tr.Step(pairs); err != nil {
		t.Fatal(err)
	}
	params := tr.Model().Params()
	params[0].Data[4*3] = float32(math.NaN())
	if err := tr.Model().SetParams(params[:1]); err != nil {
		t.Fatal(err)
	}
	before := tr.Model().Params()
	_, err := tr.Step(pairs)
	if !errors.Is(err, trainstep.ErrNonFinite) {
		t.Fatalf("err %v, want ErrNonFinite", err)
	}
	t.Log(err)
	if tr.Steps() != 1 {
		t.Errorf("steps %d after the failed step, want 1", tr.Steps())
	}
	after := tr.Model().Params()
	for i := range before {
		for j := range before[i].Data {
			b, a := before[i].Data[j], after[i].Data[j]
			if math.Float32bits(a) != math.Float32bits(b) {
				t.Fatalf("%s[%d] changed by the failed step: %v -> %v", before[i].Name, j, b, a)
			}
		}
	}
}

func TestBatches(t *testing.T) {
	var pairs []trainstep.Pair
	for i := range 21 {
		pairs = append(pairs, trainstep.Pair{A: make([]int32, 1+(i*7)%13), B: make([]int32, 1+i%5)})
	}
	pairs = append(pairs, trainstep.Pair{A: nil, B: []int32{1}})
	batches, skipped := trainstep.Batches(pairs, 5, 10)
	if skipped != 1 {
		t.Errorf("skipped %d, want 1", skipped)
	}
	var sizes []int
	total, prev := 0, 0
	for _, b := range batches {
		sizes = append(sizes, len(b))
		total += len(b)
		for _, p := range b {
			l := min(max(len(p.A), len(p.B)), 10)
			if l < prev {
				t.Errorf("lengths not sorted: %d after %d", l, prev)
			}
			prev = l
		}
	}
	if total != 21 || !slices.Equal(sizes, []int{5, 5, 5, 6}) {
		t.Errorf("sizes %v (total %d), want [5 5 5 6] (21): the lone last pair joins the batch before", sizes, total)
	}
}

func TestConfigValidate(t *testing.T) {
	ok := trainstep.Config{Vocab: 10}.Defaults()
	if err := ok.Validate(); err != nil {
		t.Fatal(err)
	}
	if ok.LR != 0.001 || ok.Optimizer != "adam" || ok.BatchSize != 100 || ok.Dim != 300 || ok.Margin != 0.4 || ok.Negatives != "max" {
		t.Errorf("defaults %+v", ok)
	}
	for _, tc := range []struct {
		name string
		edit func(*trainstep.Config)
		want string
	}{
		{"encoder", func(c *trainstep.Config) { c.Encoder = "cnn" }, `encoder "cnn"`},
		{"vocab", func(c *trainstep.Config) { c.Vocab = 0 }, "vocab 0"},
		{"dropout", func(c *trainstep.Config) { c.Dropout = 1 }, "dropout 1"},
		{"negatives", func(c *trainstep.Config) { c.Negatives = "min" }, `negatives "min"`},
		{"gran5", func(c *trainstep.Config) { c.Encoder = "gran5"; c.Hidden = 7 }, "gran5"},
		{"hingek", func(c *trainstep.Config) { c.Loss = "hinge"; c.HingeK = 100 }, "hinge_k 100"},
		{"optimizer", func(c *trainstep.Config) { c.Optimizer = "adagrad" }, `optimizer "adagrad"`},
		{"decay", func(c *trainstep.Config) { c.Decay = 2 }, "decay 2"},
		{"negative buckets", func(c *trainstep.Config) { c.OOVBuckets = -1 }, "oov_buckets -1"},
		{"unknown hash", func(c *trainstep.Config) { c.OOVBuckets = 5; c.OOVHash = "fnv1a" }, `oov_hash "fnv1a"`},
		{"no hash", func(c *trainstep.Config) { c.OOVBuckets = 5 }, `oov_hash ""`},
		{"buckets beyond vocab", func(c *trainstep.Config) { c.OOVBuckets = 10; c.OOVHash = lexicon.Hash }, "vocab 10, oov_buckets 10"},
	} {
		c := ok
		tc.edit(&c)
		err := c.Validate()
		if err == nil || !contains(err.Error(), tc.want) {
			t.Errorf("%s: err %v, want mention of %q", tc.name, err, tc.want)
		}
	}
}

func contains(s, sub string) bool { return strings.Contains(s, sub) }

// TestOverfitsSmallBatch trains every encoder on one fixed batch of 32
// pairs, margin loss with the most similar negative: each must drive the
// loss near zero (every pair's cosine at least the margin above that of
// every negative).
func TestOverfitsSmallBatch(t *testing.T) {
	batch := paraphrases(rand.New(rand.NewPCG(9, 9)), 32)
	for _, enc := range compute.Encoders() {
		t.Run(enc, func(t *testing.T) {
			tr := newTrainer(t, trainstep.Config{Encoder: enc, Loss: compute.LossMargin, Dim: 16, Hidden: 16, DANLayers: []int{16, 16}, BigramBuckets: 101,
				Vocab: 60, BatchSize: 32, LR: 0.003, Seed: 5})
			first, loss := 0.0, 0.0
			for step := range 300 {
				var err error
				if loss, err = tr.Step(batch); err != nil {
					t.Fatal(err)
				}
				if step == 0 {
					first = loss
				}
				if loss < 1e-3 {
					t.Logf("loss %.4f -> %.5f in %d steps", first, loss, step+1)
					return
				}
			}
			t.Errorf("loss %.4f -> %.4f after 300 steps on one batch, want under 0.001", first, loss)
		})
	}
}
