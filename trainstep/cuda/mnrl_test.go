package cuda_test

import (
	"context"
	"math/rand/v2"
	"testing"

	"github.com/parastream/parastream/trainstep/compute"
	"github.com/parastream/parastream/trainstep/cpu"
	"github.com/parastream/parastream/trainstep/cuda"
)

// TestEmulatorMNRLOptions runs the mnrl loss's options on the emulator
// (the GPU with PARASTREAM_TEST_GPU set) and the CPU backend (float64) on
// the same batch: hard negatives (3n rows, n·2n similarities), the
// symmetric loss, Matryoshka prefixes, all three together, and a scale
// other than the default. The loss and every gradient must agree.
func TestEmulatorMNRLOptions(t *testing.T) {
	type option struct {
		name string
		negs bool
		mod  func(*compute.Config)
	}
	options := []option{
		{"negatives", true, func(*compute.Config) {}},
		{"symmetric", false, func(c *compute.Config) { c.Symmetric = true }},
		{"matryoshka", false, func(c *compute.Config) { c.Matryoshka = []int{c.EmbedDim(), c.EmbedDim() - 1, 2} }},
		{"scale 7", false, func(c *compute.Config) { c.Scale = 7 }},
		{"all", true, func(c *compute.Config) {
			c.Symmetric, c.Matryoshka, c.Scale = true, []int{c.EmbedDim(), 3}, 11
		}},
	}
	for _, enc := range []string{compute.EncAvg, compute.EncBiLSTMAvg, compute.EncDAN} {
		for _, o := range options {
			t.Run(enc+"/"+o.name, func(t *testing.T) {
				cfg := smallModel(enc, compute.LossMNRL, "")
				o.mod(&cfg)
				if err := cfg.Validate(); err != nil {
					t.Fatal(err)
				}
				ps := params(cfg)
				ref := buildWith(t, &cpu.Backend{Float64: true}, cfg, ps)
				emu := buildWith(t, testBackend(t), cfg, ps)
				b := batch(t, cfg, 5, 11)
				if o.negs {
					b = withNegatives(t, cfg, b)
				}
				sameStep(t, ref, emu, b)
			})
		}
	}
}

// withNegatives is b's pairs again with a hard negative each: a sentence
// of its own, sharing the pair's first word.
func withNegatives(t *testing.T, cfg compute.Config, b *compute.Batch) *compute.Batch {
	t.Helper()
	rng := rand.New(rand.NewPCG(4, 4))
	negs := make([][]int32, b.N())
	for i := range negs {
		negs[i] = []int32{b.A[i][0]}
		for range 1 + i%5 {
			negs[i] = append(negs[i], rng.Int32N(int32(cfg.Vocab)))
		}
	}
	nb, err := compute.NewContextBatch(cfg, compute.Pairs{A: b.A, B: b.B, Neg: negs}, rand.New(rand.NewPCG(11, 9)))
	if err != nil {
		t.Fatal(err)
	}
	return nb
}

// TestSelfCheckFindsMNRLFault: prefix_normalize's twin on the fake device
// leaves half each row's norm (the gradient through the normalisation is
// then twice what it is): the device check's mnrl case fails, eager and
// replayed, with its symmetric loss and Matryoshka prefixes on.
func TestSelfCheckFindsMNRLFault(t *testing.T) {
	b := cuda.EmulatorPlanted(cuda.Options{}, "prefix_normalize", 0.5)
	cc := cuda.DeviceCheck()
	cc.Cases = []cuda.CheckCase{{Encoder: compute.EncAvg, Loss: compute.LossMNRL}, {Encoder: compute.EncDAN, Loss: compute.LossMNRL, Graphs: true}}
	rep, err := b.SelfCheck(context.Background(), cc)
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range rep.Results {
		if r.Pass() || r.MaxRelDiff < 0.05 {
			t.Errorf("%s: pass %v, max rel diff %.2g at %s: want a failure", r.Case, r.Pass(), r.MaxRelDiff, r.Worst)
		}
	}
}
