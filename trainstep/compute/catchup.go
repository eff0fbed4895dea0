package compute

import (
	"fmt"
	"math"
	"sort"
)

// The sparse embedding update steps only the rows a batch touches. Dense
// Adam also moves every other row, each step, along its decaying first
// moment: a row touched once goes on moving for about 1/(1 − β1/√β2)
// steps, in all about ten times as far as its one step (β1 0.9, β2 0.999).
// PyTorch's SparseAdam drops those moves, so rare words, which most of a
// phrase table's are, learn at a tenth of the rate (on the PPDB lexical
// pairs, 2.1 points of STS under dense Adam; docs/trainstep.md).
//
// CatchUp gives a row what dense Adam would have done in the steps it was
// skipped, when it is next touched, in closed form. Between its last
// update at step t0 and the current step t the gradient was 0, so for the
// steps u = t0+1 … t−1 (j = u − t0):
//
//	m_u = β1^j·m,  v_u = β2^j·v
//	w  -= Σ_j lr_u·c1(u)/√c2(u) · (β1/√β2)^j · m/√v
//
// with c1, c2 Adam's bias corrections: one scalar a row times m/√v, which
// is exact but for Adam's ε (left out of the skipped steps' denominators).
// The terms fall geometrically, so the sum stops after N steps, where
// (β1/√β2)^N < 1e-7 (153 steps at the defaults). RMSProp's skipped steps
// move nothing (its step is proportional to g) and only decay v; SGD's do
// nothing. λw's pull stays lazy (docs/trainstep.md).
//
// The step of every row's last update is optimiser state
// ("lazy.last/<param>", float32: exact to 2^24 steps, then rounded by at
// most a step per 2^24), as are the learning rates of the steps
// ("lazy.lr/<param>": each rate and its first step, a pair a change); a
// checkpoint written before them has none, and the restored run counts
// its rows as updated at the step it resumes from.
type CatchUp struct {
	kind              string
	beta1, beta2, rho float64
	last              []float32 // by row: the step of its last update, 0 before the first
	known             bool      // false after a restore without last: set at the next step
	seen              int64     // the last step Factors or Flush saw
	n                 int64     // the series' cut
	// lrs are the learning rates from step from on, in order of from
	// (Factors records them; before the first recorded, the first's).
	lrs       []lrFrom
	d1, d2, s []float32 // factors of the last Factors call, by listed row
	// hs caches h(u) = lr_u·√(1−β2^u)/(1−β1^u) at u mod len(hs): rows
	// last updated together share their terms.
	hs []hEntry
	// pows caches math.Pow(β1, k), math.Pow(β2, k) and math.Pow(ρ, k) for
	// the skipped steps k seen, the same bits as the call (math.Pow was
	// 0.11 s of factors' 0.19 s in a profile of 648 steps at batch 1,000).
	pows [3][]float64
	// sums caches, by t0 at t0 mod len(sums), the whole series of a row
	// last updated at t0 and owed at least n steps, Σ_{j=1..n} h(t0+j)·r^j:
	// the rows updated at one step come back at many later ones, and the
	// n-term sum was most of a sparse run's catch-up (rare words).
	sums []hEntry
}

// fullSum is Σ_{j=1..n} h(t0+j)·r^j, computed once for each t0 (the same
// bits as the loop it replaces).
func (c *CatchUp) fullSum(t0 int64, r float64) float64 {
	if c.sums == nil {
		c.sums = make([]hEntry, 1<<14)
	}
	e := &c.sums[t0&(1<<14-1)]
	if e.u != t0 { // t0 > 0: a row never updated owes nothing
		e.u, e.h = t0, c.series(t0, c.n, r)
	}
	return e.h
}

// series is Σ_{j=1..k} h(t0+j)·r^j.
func (c *CatchUp) series(t0, k int64, r float64) float64 {
	sum, rj := 0.0, 1.0
	for j := int64(1); j <= k; j++ {
		rj *= r
		sum += c.h(t0+j) * rj
	}
	return sum
}

// pow is math.Pow(base, k) of the optimiser's base i (0: β1, 1: β2, 2:
// ρ), from the cache below k = 65,536.
func (c *CatchUp) pow(i int, base float64, k int64) float64 {
	const most = 1 << 16
	if k >= most {
		return math.Pow(base, float64(k))
	}
	p := c.pows[i]
	for int64(len(p)) <= k {
		p = append(p, math.Pow(base, float64(len(p))))
	}
	c.pows[i] = p
	return p[k]
}

type hEntry struct {
	u int64
	h float64
}

// h is the size of Adam's step u per unit of m/√v: lr_u·c1(u)/√c2(u).
func (c *CatchUp) h(u int64) float64 {
	if c.hs == nil {
		c.hs = make([]hEntry, 1<<16)
	}
	e := &c.hs[u&(1<<16-1)]
	if e.u != u {
		e.u = u
		e.h = c.lrAt(u) * math.Sqrt(1-math.Pow(c.beta2, float64(u))) / (1 - math.Pow(c.beta1, float64(u)))
	}
	return e.h
}

type lrFrom struct {
	from int64
	lr   float64
}

// lrAt is the learning rate of step u.
func (c *CatchUp) lrAt(u int64) float64 {
	i := sort.Search(len(c.lrs), func(i int) bool { return c.lrs[i].from > u })
	return c.lrs[max(i-1, 0)].lr
}

// SparseParam reports whether cfg updates the parameter name row by row
// (the word embeddings and DAN's bigram table, unless embedding_update is
// dense).
func SparseParam(cfg Config, name string) bool {
	return cfg.EmbeddingUpdate != UpdateDense && (name == ParamEmbeddings || name == ParamBigrams)
}

// CatchUpLastName is the state tensor of the rows' last update steps.
func CatchUpLastName(param string) string { return "lazy.last/" + param }

// catchUpTol is where the skipped steps' geometric series is cut.
const catchUpTol = 1e-7

// catchUpMaxSteps bounds the history for β1/√β2 close to 1.
const catchUpMaxSteps = 4096

// NewCatchUp returns the catch-up of a table of rows rows under cfg's
// optimiser, or nil for SGD, which needs none.
func NewCatchUp(cfg Config, rows int) *CatchUp {
	if cfg.Optimizer != OptAdam && cfg.Optimizer != OptRMSProp {
		return nil
	}
	c := &CatchUp{kind: cfg.Optimizer, beta1: cfg.Beta1, beta2: cfg.Beta2, rho: cfg.Rho, last: make([]float32, rows), known: true}
	c.n = catchUpMaxSteps
	if r := cfg.Beta1 / math.Sqrt(cfg.Beta2); r > 0 && r < 1 {
		c.n = max(1, min(catchUpMaxSteps, int64(math.Ceil(math.Log(catchUpTol)/math.Log(r)))))
	}
	return c
}

// Factors returns, for each of rows, the factors that catch it up to step
// (not included): d1 and d2 multiply its m and v, and s is the step that
// w takes along m/√v first (0 for RMSProp); then it marks the rows updated
// at step. lr is step's learning rate. The slices are reused by the next
// call.
func (c *CatchUp) Factors(rows []int32, step int64, lr float64) (d1, d2, s []float32) {
	if !c.known {
		for i := range c.last {
			c.last[i] = float32(step - 1)
		}
		c.known = true
	}
	// The rates are kept as float32, as the checkpoint keeps them, so that
	// a resumed run sums what an uninterrupted one does.
	if lr32 := float64(float32(lr)); len(c.lrs) == 0 || c.lrs[len(c.lrs)-1].lr != lr32 {
		c.lrs = append(c.lrs, lrFrom{step, lr32})
	}
	c.seen = step
	return c.factors(rows, step-1, step)
}

// Prepare returns those of rows that are owed steps (updated before the
// last step seen, and after 0) with the factors that catch them up through
// that step, and marks them updated then. A backend prepares a batch's
// rows before its forward pass: dense Adam has moved them by then, and the
// gradient must be taken where dense Adam's is; Factors then owes them
// nothing. The slices are reused by the next call.
func (c *CatchUp) Prepare(rows []int32) (owed []int32, d1, d2, s []float32) {
	if !c.known || c.seen == 0 {
		return nil, nil, nil, nil
	}
	for _, r := range rows {
		if t := int64(c.last[r]); t > 0 && t < c.seen {
			owed = append(owed, r)
		}
	}
	d1, d2, s = c.factors(owed, c.seen, c.seen)
	return owed, d1, d2, s
}

// Flush returns the rows last updated before step (and after 0) with the
// factors that catch them up through step, and marks them updated at
// step: what dense Adam's steps until now did to them is then in w, m and
// v. The trainer flushes before it writes a checkpoint, so that the saved
// parameters are the dense optimiser's and a resumed run continues from
// them. The slices are reused by the next call.
func (c *CatchUp) Flush(step int64) (rows []int32, d1, d2, s []float32) {
	if !c.known {
		return nil, nil, nil, nil // restored without the rows' last steps: nothing owed yet
	}
	for r, t := range c.last {
		if t > 0 && int64(t) < step {
			rows = append(rows, int32(r))
		}
	}
	c.seen = max(c.seen, step)
	d1, d2, s = c.factors(rows, step, step)
	return rows, d1, d2, s
}

// factors computes the rows' factors for the steps after each one's last
// update through step through, and marks them updated at step mark.
func (c *CatchUp) factors(rows []int32, through, mark int64) (d1, d2, s []float32) {
	n := len(rows)
	c.d1, c.d2, c.s = grow(c.d1, n), grow(c.d2, n), grow(c.s, n)
	r := c.beta1 / math.Sqrt(c.beta2)
	for i, row := range rows {
		t0 := int64(c.last[row])
		skipped := max(through-t0, 0)
		c.last[row] = float32(mark)
		if t0 == 0 { // never updated: m = v = 0, nothing owed
			c.d1[i], c.d2[i], c.s[i] = 1, 1, 0
			continue
		}
		switch c.kind {
		case OptRMSProp:
			c.d1[i], c.d2[i], c.s[i] = 1, float32(c.pow(2, c.rho, skipped)), 0
		case OptAdam:
			c.d1[i] = float32(c.pow(0, c.beta1, skipped))
			c.d2[i] = float32(c.pow(1, c.beta2, skipped))
			// Σ_j h(t0+j)·r^j.
			if skipped >= c.n {
				c.s[i] = float32(c.fullSum(t0, r))
			} else {
				c.s[i] = float32(c.series(t0, skipped, r))
			}
		}
	}
	return c.d1, c.d2, c.s
}

// CatchUpRow applies the factors to one row: w steps along m/√v of the
// row's last update, and m and v decay, as dense Adam's steps with zero
// gradient would have done (v = 0: the row never had a gradient, and
// nothing moves).
func CatchUpRow(w, m, v []float32, d1, d2, s float32) {
	for i := range w {
		if s != 0 && v[i] > 0 {
			w[i] -= s * m[i] / float32(math.Sqrt(float64(v[i])))
		}
		m[i] *= d1
		v[i] *= d2
	}
}

// CatchUpLRName is the state tensor of the learning rates the catch-up
// has seen: pairs of (first step, rate).
func CatchUpLRName(param string) string { return "lazy.lr/" + param }

// LRs returns the learning rates seen, as pairs of first step and rate.
func (c *CatchUp) LRs() []float32 {
	out := make([]float32, 0, 2*len(c.lrs))
	for _, l := range c.lrs {
		out = append(out, float32(l.from), float32(l.lr))
	}
	return out
}

// SetLRs restores the learning rates seen (LRs).
func (c *CatchUp) SetLRs(v []float32) error {
	if len(v)%2 != 0 {
		return fmt.Errorf("optimizer state lazy.lr: %d values, want pairs of step and rate", len(v))
	}
	c.lrs, c.hs = c.lrs[:0], nil
	for i := 0; i < len(v); i += 2 {
		c.lrs = append(c.lrs, lrFrom{int64(v[i]), float64(v[i+1])})
	}
	return nil
}

// Last returns the rows' last update steps (the state tensor's data).
func (c *CatchUp) Last() []float32 { return c.last }

// SetLast restores the rows' last update steps.
func (c *CatchUp) SetLast(v []float32) error {
	if len(v) != len(c.last) {
		return fmt.Errorf("optimizer state %s: %d rows, want %d", "lazy.last", len(v), len(c.last))
	}
	copy(c.last, v)
	c.known = true
	c.seen = 0
	for _, t := range v {
		c.seen = max(c.seen, int64(t))
	}
	return nil
}

// Forget marks the rows' last steps unknown (a checkpoint without them):
// the next step counts every row as updated the step before.
func (c *CatchUp) Forget() { c.known = false }

func grow(v []float32, n int) []float32 {
	if cap(v) < n {
		return make([]float32, n)
	}
	return v[:n]
}
