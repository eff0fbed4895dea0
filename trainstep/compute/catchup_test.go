package compute_test

import (
	"math"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/parastream/parastream/trainstep/compute"
)

// TestCatchUpMatchesDense: a table stepped row by row (StepRows, the
// batch's rows each step) and flushed at the end ends where dense steps of
// the whole table (zero gradient for the rows not in the batch) end, for
// Adam and RMSProp, and each batch's rows, caught up before its forward
// pass (Prepare), read what dense Adam's hold, with rows skipped for 1 to
// 400 steps (beyond Adam's
// 153-step cut), a learning rate that changes, and a state flushed, saved
// and restored halfway through. Adam's ε is
// 1e-12 here: the catch-up leaves it out of the skipped steps.
func TestCatchUpMatchesDense(t *testing.T) {
	const rows, width, steps = 50, 3, 600
	for _, opt := range []string{compute.OptAdam, compute.OptRMSProp, compute.OptSGD} {
		cfg := compute.Config{Encoder: compute.EncAvg, Dim: width, Vocab: rows, Optimizer: opt, Eps: 1e-12}.Defaults()
		specs := []compute.ParamSpec{{Name: compute.ParamEmbeddings, Shape: []int{rows, width}}}
		sparse, dense := compute.NewOptimizer(cfg, specs), compute.NewOptimizer(cfg, specs)
		rng := rand.New(rand.NewPCG(5, 6))
		ws, wd := make([]float32, rows*width), make([]float32, rows*width)
		for i := range ws {
			ws[i] = float32(rng.NormFloat64())
			wd[i] = ws[i]
		}
		g := make([]float32, rows*width)
		worstRead := 0.0
		for step := int64(1); step <= steps; step++ {
			if step == steps/2 { // a checkpoint (flushed, as the trainer does) and a resume
				sparse.Flush(compute.ParamEmbeddings, ws, width, step-1)
				st := sparse.State()
				sparse = compute.NewOptimizer(cfg, specs)
				if _, err := sparse.SetState(st); err != nil {
					t.Fatal(err)
				}
			}
			lr := 0.01 / float64(1+step/100)
			clear(g)
			var batch []int32
			for r := range int32(rows) {
				// Row r is touched with probability 1/(r+1): row 0 every
				// step, row 49 about once in 50; rows 45-49 also sit out
				// steps 100-500.
				if rng.IntN(int(r)+1) == 0 && (r < 45 || step < 100 || step > 500) {
					batch = append(batch, r)
					for k := range width {
						g[int(r)*width+k] = float32(rng.NormFloat64())
					}
				}
			}
			// Before the forward pass the batch's rows are caught up: they
			// must read what dense Adam's rows hold after step-1.
			sparse.Prepare(compute.ParamEmbeddings, ws, width, batch)
			for _, r := range batch {
				for k := int(r) * width; k < int(r+1)*width; k++ {
					if d := math.Abs(float64(ws[k]-wd[k])) / max(1, math.Abs(float64(wd[k]))); d > worstRead {
						worstRead = d
					}
				}
			}
			sparse.StepRows(compute.ParamEmbeddings, compute.SparseRows{W: ws, G: g, Rows: batch, Width: width}, step, lr)
			dense.Step(compute.ParamEmbeddings, wd, g, step, lr)
		}
		if worstRead > 2e-5 {
			t.Errorf("%s: a batch's rows, caught up before its forward pass, were %.3g (relative) from dense Adam's", opt, worstRead)
		}
		sparse.Flush(compute.ParamEmbeddings, ws, width, steps) // as before the last checkpoint
		worst := 0.0
		for i := range ws {
			worst = max(worst, math.Abs(float64(ws[i]-wd[i]))/max(1, math.Abs(float64(wd[i]))))
		}
		if worst > 2e-5 {
			t.Errorf("%s: row-sparse steps with catch-up end %.3g (relative) from dense steps", opt, worst)
		}
		t.Logf("%s: largest relative difference %.3g", opt, worst)
	}
}

// TestCatchUpOldCheckpoint: a state without the rows' last steps (written
// before them) restores, and its rows count as updated at the step the run
// resumes from: the next step moves a row by one Adam step, not by a
// catch-up of every step since the start.
func TestCatchUpOldCheckpoint(t *testing.T) {
	cfg := compute.Config{Encoder: compute.EncAvg, Dim: 2, Vocab: 4}.Defaults()
	specs := []compute.ParamSpec{{Name: compute.ParamEmbeddings, Shape: []int{4, 2}}}
	o := compute.NewOptimizer(cfg, specs)
	w, g := []float32{1, 1, 1, 1, 1, 1, 1, 1}, []float32{1, 1, 0, 0, 0, 0, 0, 0}
	o.StepRows(compute.ParamEmbeddings, compute.SparseRows{W: w, G: g, Rows: []int32{0}, Width: 2}, 1, 0.1)
	var old []compute.Tensor
	for _, s := range o.State() {
		if s.Name == compute.CatchUpLastName(compute.ParamEmbeddings) {
			if s.Data[0] != 1 || s.Data[1] != 0 {
				t.Errorf("last steps %v, want row 0 at step 1", s.Data)
			}
			continue
		}
		old = append(old, s)
	}
	r := compute.NewOptimizer(cfg, specs)
	if rest, err := r.SetState(old); err != nil || len(rest) != 0 {
		t.Fatalf("restoring a state without the last steps: %v, rest %v", err, rest)
	}
	before := w[0]
	r.StepRows(compute.ParamEmbeddings, compute.SparseRows{W: w, G: make([]float32, 8), Rows: []int32{0}, Width: 2}, 1000, 0.1)
	// One Adam step with zero gradient from m = 0.1, v = 0.001, at step
	// 1000.
	m, v := 0.9*0.1, 0.999*0.001
	one := 0.1 * (m / (1 - math.Pow(0.9, 1000))) / math.Sqrt(v/(1-math.Pow(0.999, 1000)))
	if moved := float64(before - w[0]); math.Abs(moved-one) > 1e-4*one {
		t.Errorf("row 0 moved %g at the first step after the restore, want one step, %g", moved, one)
	}
}

// BenchmarkCatchUp is a sparse Adam run's host work a step: the distinct
// rows of a batch of 200 words drawn from a Zipf law over 58,000 (PPDB's
// lexical pairs, the GPU bundle's end-to-end run) caught up (Prepare),
// then given the step's factors (Factors). Most rows come back after more
// steps than the series' cut, so their sums are the long ones.
func BenchmarkCatchUp(b *testing.B) {
	const vocab, words = 58_000, 200
	cfg := compute.Config{Optimizer: compute.OptAdam}.Defaults()
	c := compute.NewCatchUp(cfg, vocab)
	rng := rand.New(rand.NewPCG(1, 2))
	zipf := rand.NewZipf(rng, 1.1, 1, vocab-1)
	seen := make([]bool, vocab)
	var rows []int32
	step := int64(0)
	next := func() {
		step++
		rows = rows[:0]
		for range words {
			if id := int32(zipf.Uint64()); !seen[id] {
				seen[id] = true
				rows = append(rows, id)
			}
		}
		for _, id := range rows {
			seen[id] = false
		}
		slices.Sort(rows)
		c.Prepare(rows)
		c.Factors(rows, step, 0.001)
	}
	for range 2000 { // past the first pass, where no row is owed anything
		next()
	}
	for b.Loop() {
		next()
	}
}
