package cpu

import (
	"math"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/parastream/parastream/featurize"
	"github.com/parastream/parastream/trainstep/compute"
)

// TestEDDSpecialIDs: the decoder's special ids are featurize's.
func TestEDDSpecialIDs(t *testing.T) {
	if compute.EDDUnkID != featurize.UnkID || compute.EDDStartID != featurize.StartID || compute.EDDEndID != featurize.EndID {
		t.Fatalf("edd ids unk %d start %d end %d, featurize's %d %d %d", compute.EDDUnkID, compute.EDDStartID, compute.EDDEndID,
			featurize.UnkID, featurize.StartID, featurize.EndID)
	}
}

// eddBatch is a batch of pairs built from explicit ids.
func eddBatch(t *testing.T, cfg compute.Config, a, b [][]int32) *compute.Batch {
	t.Helper()
	bt, err := compute.NewContextBatch(cfg, compute.Pairs{A: a, B: b}, rand.New(rand.NewPCG(1, 1)))
	if err != nil {
		t.Fatal(err)
	}
	return bt
}

// TestGradientEDD checks the local loss, and local and global together,
// against central differences in float64; OutVocab 9 < Vocab 12 leaves
// some targets <unk>.
func TestGradientEDD(t *testing.T) {
	for _, loss := range []string{compute.LossLocal, compute.LossLocalGlobal} {
		t.Run(loss, func(t *testing.T) {
			cfg := tinyConfig(compute.EncEDD, loss)
			cfg.OutVocab = 9
			cfg.GlobalWeight = 0.7
			m := buildF64(t, cfg)
			gradCheck(t, m, tinyBatch(t, cfg, 5))
		})
	}
}

// TestGradientEDDRegularised adds dropout on the encoder's words and the
// L2 terms.
func TestGradientEDDRegularised(t *testing.T) {
	cfg := tinyConfig(compute.EncEDD, compute.LossLocalGlobal)
	cfg.Dropout, cfg.LambdaC, cfg.LambdaW = 0.3, 0.02, 0.05
	m := buildF64(t, cfg)
	gradCheck(t, m, tinyBatch(t, cfg, 9))
}

// TestEDDGraphMatchesHost: the graph's local loss is the mean negative
// log-likelihood per target token that the host decoder (generation's)
// computes.
func TestEDDGraphMatchesHost(t *testing.T) {
	cfg := tinyConfig(compute.EncEDD, compute.LossLocal)
	cfg.OutVocab = 9
	m := buildF64(t, cfg)
	b := tinyBatch(t, cfg, 5)
	loss, err := m.ForwardBackward(b)
	if err != nil {
		t.Fatal(err)
	}
	var nll float64
	tokens := 0
	for i := range b.A {
		ll, err := m.LogLikelihood(b.A[i], b.B[i])
		if err != nil {
			t.Fatal(err)
		}
		nll -= ll
		tokens += len(b.B[i]) + 1
	}
	if want := nll / float64(tokens); math.Abs(loss-want) > 1e-5*math.Abs(want) {
		t.Fatalf("graph loss %.9g, host %.9g", loss, want)
	}
}

// TestEDDGlobalLoss: with the global loss the batch's loss exceeds the
// local one by the weighted hinge terms, which are positive at the start.
func TestEDDGlobalLoss(t *testing.T) {
	local := buildF64(t, tinyConfig(compute.EncEDD, compute.LossLocal))
	cfg := tinyConfig(compute.EncEDD, compute.LossLocalGlobal)
	both := buildF64(t, cfg)
	b := tinyBatch(t, cfg, 5)
	l1, err := local.ForwardBackward(b)
	if err != nil {
		t.Fatal(err)
	}
	l2, err := both.ForwardBackward(b)
	if err != nil {
		t.Fatal(err)
	}
	if !(l2 > l1) {
		t.Fatalf("local %g, local+global %g: want the global term positive", l1, l2)
	}
}

// TestEDDOverfit trains on one small batch until greedy generation
// reproduces every target.
func TestEDDOverfit(t *testing.T) {
	cfg := compute.Config{Encoder: compute.EncEDD, Loss: compute.LossLocalGlobal, Dim: 16, Hidden: 32, Vocab: 24,
		BatchSize: 4, BucketWidth: 4, Seed: 3, LR: 0.02}.Defaults()
	a := [][]int32{{4, 5, 6}, {7, 8}, {9, 10, 11, 12}, {13}}
	bs := [][]int32{{5, 4, 6, 14}, {8, 15}, {16, 17, 18}, {19, 20, 21, 22, 23}}
	params := compute.InitParams(cfg, rand.New(rand.NewPCG(cfg.Seed, 2)))
	mdl, err := New().Build(cfg, params)
	if err != nil {
		t.Fatal(err)
	}
	defer mdl.Close()
	b := eddBatch(t, cfg, a, bs)
	gen := mdl.(compute.Generator)
	var got [][]int32
	for step := int64(1); step <= 400; step++ {
		if _, err := mdl.ForwardBackward(b); err != nil {
			t.Fatal(err)
		}
		if err := mdl.Update(step, cfg.LR); err != nil {
			t.Fatal(err)
		}
		if step%50 == 0 {
			if got, err = gen.Generate(a, compute.GenerateOptions{MaxLen: 8}); err != nil {
				t.Fatal(err)
			}
			if slices.EqualFunc(got, bs, slices.Equal) {
				t.Logf("reproduced the targets after %d steps", step)
				return
			}
		}
	}
	t.Fatalf("after 400 steps greedy generation gives %v, want %v", got, bs)
}

// TestEDDBeam: beam 1 is greedy search, and a wider beam finds a sequence
// at least as probable, more probable on some input of a random model.
func TestEDDBeam(t *testing.T) {
	cfg := tinyConfig(compute.EncEDD, compute.LossLocal)
	m := buildF64(t, cfg)
	seqs := [][]int32{{4, 5}, {6}, {7, 8, 9}, {10, 11, 4}, {5, 5}, {9, 4}}
	greedy, err := m.Generate(seqs, compute.GenerateOptions{MaxLen: 6})
	if err != nil {
		t.Fatal(err)
	}
	beam1, err := m.Generate(seqs, compute.GenerateOptions{Beam: 1, MaxLen: 6})
	if err != nil {
		t.Fatal(err)
	}
	if !slices.EqualFunc(greedy, beam1, slices.Equal) {
		t.Fatalf("greedy %v, beam 1 %v", greedy, beam1)
	}
	f, err := m.Embed(seqs)
	if err != nil {
		t.Fatal(err)
	}
	d := m.decoder()
	better := 0
	for i := range seqs {
		s := d.start(f[i])
		h1 := compute.BeamSearch(d.step, s, compute.EDDStartID, compute.EDDEndID, 1, 6)
		if !slices.Equal(h1.Tokens, greedy[i]) {
			t.Fatalf("input %d: BeamSearch width 1 %v, the greedy loop %v", i, h1.Tokens, greedy[i])
		}
		h4 := compute.BeamSearch(d.step, s, compute.EDDStartID, compute.EDDEndID, 4, 6)
		if h4.LogP < h1.LogP-1e-12 {
			t.Fatalf("input %d: beam 4 log-probability %g below greedy's %g", i, h4.LogP, h1.LogP)
		}
		if h4.LogP > h1.LogP+1e-9 {
			better++
		}
	}
	t.Logf("beam 4 beat greedy on %d of %d inputs", better, len(seqs))
}
