package cpu

import (
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/parastream/parastream/trainstep/compute"
)

// TestCompactGradsSameSteps: a model keeping the embeddings' gradient as
// the batch's rows (the sparse update's default) steps to exactly the
// parameters and optimiser state of one keeping the vocabulary's table,
// over steps whose batches share some rows and not others, for Adam and
// RMSProp; and its Grads are the table's.
func TestCompactGradsSameSteps(t *testing.T) {
	for _, opt := range []string{compute.OptAdam, compute.OptRMSProp} {
		cfg := compute.Config{Encoder: compute.EncAvg, Dim: 16, Vocab: 300, BatchSize: 8, Margin: 0.4, Optimizer: opt}.Defaults()
		if !compactGrads(cfg) {
			t.Fatalf("%s: the default sparse update does not keep compact gradients", opt)
		}
		params := compute.InitParams(cfg, rand.New(rand.NewPCG(5, 6)))
		mk := func() *model[float32] {
			m, err := New().Build(cfg, params)
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { m.Close() })
			return m.(*model[float32])
		}
		compact, table := mk(), mk()
		table.compact = false // the vocabulary's table, as before
		table.grad[compute.ParamEmbeddings] = make([]float32, len(table.w[compute.ParamEmbeddings]))
		for step := int64(1); step <= 6; step++ {
			b := tinyBatch(t, cfg, uint64(step%3)) // batches come back: rows owed catch-ups
			for _, m := range []*model[float32]{compact, table} {
				if _, err := m.ForwardBackward(b); err != nil {
					t.Fatal(err)
				}
			}
			gc, gt := compact.Grads(), table.Grads()
			for i := range gc {
				if !slices.Equal(gc[i].Data, gt[i].Data) {
					t.Fatalf("%s step %d: gradient of %s differs between compact and table", opt, step, gc[i].Name)
				}
			}
			for _, m := range []*model[float32]{compact, table} {
				if err := m.Update(step, 0.05); err != nil {
					t.Fatal(err)
				}
			}
		}
		pc, pt := compact.Params(), table.Params()
		for i := range pc {
			if !slices.Equal(pc[i].Data, pt[i].Data) {
				t.Errorf("%s: parameter %s differs after 6 steps", opt, pc[i].Name)
			}
		}
		sc, st := compact.opt.State(), table.opt.State()
		for i := range sc {
			if !slices.Equal(sc[i].Data, st[i].Data) {
				t.Errorf("%s: optimiser state %s differs after 6 steps", opt, sc[i].Name)
			}
		}
	}
}

// TestCompactUpdateBeforeBatch: an update before any batch moves nothing
// and does not fail (a dense step from the empty compact buffer would
// read past it).
func TestCompactUpdateBeforeBatch(t *testing.T) {
	cfg := compute.Config{Encoder: compute.EncAvg, Dim: 8, Vocab: 50, BatchSize: 4, Margin: 0.4}.Defaults()
	params := compute.InitParams(cfg, rand.New(rand.NewPCG(1, 1)))
	m, err := New().Build(cfg, params)
	if err != nil {
		t.Fatal(err)
	}
	defer m.Close()
	if err := m.Update(1, 0.1); err != nil {
		t.Fatal(err)
	}
	for i, p := range m.Params() {
		if !slices.Equal(p.Data, params[i].Data) {
			t.Errorf("%s moved in an update before any batch", p.Name)
		}
	}
}
