package featurize

import (
	"context"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"runtime"
	"sync"
	"sync/atomic"

	"gonum.org/v1/gonum/floats"
)

// NMF defaults, applied where an NMFConfig field is zero.
const (
	DefaultNMFMaxIter = 200
	DefaultNMFTol     = 1e-4
)

// NMFConfig configures FitNMF. The zero value is not usable: set K.
type NMFConfig struct {
	// K is the number of topics (components), at least 1.
	K int
	// L1 is λ, the weight of the L1 penalty on the codes W in
	// 0.5·||X − WH||²_F + λ·||W||₁; 0 fits plain NMF. With the research's
	// objective ||X − DC||²_F + λ_r·||C||₁ (no one half), λ = λ_r / 2; with
	// scikit-learn's NMF(alpha_W=a, l1_ratio=1, alpha_H=0), λ = a ·
	// n_features (see docs/featurize.md).
	L1 float64
	// MaxIter bounds the outer iterations (one pass over W, one over H);
	// 0 means DefaultNMFMaxIter.
	MaxIter int
	// Tol stops the fit once an iteration lowers the objective by less than
	// Tol times its value; 0 means DefaultNMFTol, a negative value runs all
	// MaxIter iterations.
	Tol float64
	// StopAtRelError, when positive, also stops the fit once the relative
	// reconstruction error ||X − WH||_F/||X||_F is at or below it
	// (benchmarks use it to time a fit to a given quality).
	StopAtRelError float64
	// Seed seeds the random initialisation (see RandomInit).
	Seed uint64
	// Workers is the number of goroutines; 0 means runtime.GOMAXPROCS(0).
	// The result does not depend on it.
	Workers int
	// Init, when set, is the starting point instead of RandomInit(X, K,
	// Seed), as scikit-learn's init="custom". Topic rows of Init.H longer
	// than 1 are scaled to unit norm and the matching columns of Init.W
	// scaled up, which keeps the product.
	Init *NMFInit
	// Progress, when set, is called after each iteration with its number
	// (from 1) and the objective.
	Progress func(iter int, objective float64)
}

// NMFInit is a starting point of FitNMF: W is docs×K and H is K×terms,
// both row-major and non-negative.
type NMFInit struct {
	W, H []float32
}

// Validate reports what is wrong with the configuration and how to fix it.
func (c NMFConfig) Validate() error {
	switch {
	case c.K < 1:
		return fmt.Errorf("nmf: K = %d topics; set K to 1 or more", c.K)
	case c.L1 < 0 || math.IsNaN(c.L1) || math.IsInf(c.L1, 0):
		return fmt.Errorf("nmf: L1 = %v; the penalty must be a finite number ≥ 0", c.L1)
	case c.MaxIter < 0:
		return fmt.Errorf("nmf: MaxIter = %d; use 0 for the default (%d) or a positive bound", c.MaxIter, DefaultNMFMaxIter)
	case math.IsNaN(c.Tol):
		return errors.New("nmf: Tol is NaN; use 0 for the default or a negative value to run every iteration")
	case c.Workers < 0:
		return fmt.Errorf("nmf: Workers = %d; use 0 for GOMAXPROCS or a positive count", c.Workers)
	}
	return nil
}

func (c NMFConfig) withDefaults() NMFConfig {
	if c.MaxIter == 0 {
		c.MaxIter = DefaultNMFMaxIter
	}
	if c.Tol == 0 {
		c.Tol = DefaultNMFTol
	}
	if c.Workers == 0 {
		c.Workers = runtime.GOMAXPROCS(0)
	}
	return c
}

// FitResult describes a fit: the codes of the training rows and the
// course of the objective.
type FitResult struct {
	// W holds the codes, docs×K row-major.
	W []float32
	// Iters is the number of iterations run.
	Iters int
	// Converged reports that the fit stopped on Tol, not on MaxIter.
	Converged bool
	// Objective and RelErrors hold, per iteration, the objective
	// 0.5·||X − WH||²_F + λ·||W||₁ and the relative reconstruction error
	// ||X − WH||_F / ||X||_F.
	Objective []float64
	RelErrors []float64
	// RelError is the final relative reconstruction error.
	RelError float64
}

// FitNMF factorises the documents×terms matrix X ≈ W·H, W ≥ 0 (docs×K,
// the codes) and H ≥ 0 (K×terms, the topics), minimising
//
//	0.5·||X − WH||²_F + λ·||W||₁  subject to  ||H_t||₂ ≤ 1 for each topic t,
//
// by cyclic coordinate descent, as scikit-learn's solver "cd": each
// iteration updates every code W[i,t] once (rows in parallel, topics in
// order), then every topic H[t,:] as one block (topics in order, terms in
// parallel); each step is the exact minimiser of the objective in the
// variables it updates, so the objective never increases. The bound on the
// topic norms removes the scale ambiguity that would otherwise let the
// penalty shrink to nothing (W/c, cH for any c > 1); with λ > 0 the bound is
// met with equality by every topic in use.
//
// The result is deterministic for a given configuration: it does not depend
// on Workers or on scheduling. The returned model holds H as float32;
// FitResult holds W and the objective trace. ctx is checked between the
// steps of each iteration.
func FitNMF(ctx context.Context, X *CSR, cfg NMFConfig) (*NMF, *FitResult, error) {
	if err := cfg.Validate(); err != nil {
		return nil, nil, err
	}
	cfg = cfg.withDefaults()
	if err := X.Validate(); err != nil {
		return nil, nil, fmt.Errorf("nmf: %w", err)
	}
	if err := X.checkNonNegative(); err != nil {
		return nil, nil, fmt.Errorf("nmf: %w", err)
	}
	if X.Rows == 0 || X.Cols == 0 || X.Sum() == 0 {
		return nil, nil, fmt.Errorf("nmf: the %d×%d matrix has no positive entry to factorise", X.Rows, X.Cols)
	}
	init := cfg.Init
	if init == nil {
		ri := RandomInit(X, cfg.K, cfg.Seed)
		init = &ri
	}
	s, err := newNMFSolver(X, cfg, init)
	if err != nil {
		return nil, nil, err
	}
	res := &FitResult{}
	prev := math.Inf(1)
	for it := 1; it <= cfg.MaxIter; it++ {
		if err := ctx.Err(); err != nil {
			return nil, nil, fmt.Errorf("nmf: iteration %d: %w", it, err)
		}
		obj, recon, err := s.iterate(ctx)
		if err != nil {
			return nil, nil, fmt.Errorf("nmf: iteration %d: %w", it, err)
		}
		res.Iters = it
		res.Objective = append(res.Objective, obj)
		res.RelErrors = append(res.RelErrors, s.relError(recon))
		if cfg.Progress != nil {
			cfg.Progress(it, obj)
		}
		if res.RelErrors[it-1] <= cfg.StopAtRelError {
			break
		}
		if it > 1 && cfg.Tol > 0 && prev-obj <= cfg.Tol*math.Abs(prev) {
			res.Converged = true
			break
		}
		prev = obj
	}
	res.RelError = res.RelErrors[len(res.RelErrors)-1]
	res.W = toFloat32(s.w)
	m := &NMF{K: s.k, Terms: s.terms, H: transpose32(s.ht, s.terms, s.k), L1: cfg.L1,
		Iters: res.Iters, Objective: res.Objective[len(res.Objective)-1], RelError: res.RelError, Seed: cfg.Seed}
	return m, res, nil
}

// RandomInit is FitNMF's default starting point, scikit-learn's "random"
// initialisation made deterministic: with a = sqrt(mean(X)/k), H (k×terms)
// and then W (docs×k) are filled with a·|N(0,1)| drawn from a PCG generator
// seeded with seed; each topic row of H is then scaled to unit norm and the
// matching column of W multiplied by the old norm (the product WH is
// unchanged). Values are rounded to float32.
func RandomInit(X *CSR, k int, seed uint64) NMFInit {
	a := math.Sqrt(X.Sum() / float64(X.Rows) / float64(X.Cols) / float64(k))
	rng := rand.New(rand.NewPCG(seed, seed^0x9e3779b97f4a7c15))
	h := make([]float64, k*X.Cols)
	w := make([]float64, X.Rows*k)
	for n := range h {
		h[n] = a * math.Abs(rng.NormFloat64())
	}
	for n := range w {
		w[n] = a * math.Abs(rng.NormFloat64())
	}
	normaliseTopics(w, h, k)
	return NMFInit{W: toFloat32(w), H: toFloat32(h)}
}

// normaliseTopics scales each row of h (k×terms) longer than 1 to unit
// norm, multiplying the matching column of w (docs×k) by its old norm.
func normaliseTopics(w, h []float64, k int) {
	terms := len(h) / k
	for t := range k {
		row := h[t*terms : (t+1)*terms]
		n := floats.Norm(row, 2)
		if n <= 1 {
			continue
		}
		floats.Scale(1/n, row)
		for i := t; i < len(w); i += k {
			w[i] *= n
		}
	}
}

// Chunk sizes of the parallel loops. They are fixed, not derived from the
// worker count, so that every reduction adds the same partial sums in the
// same order whatever the number of workers.
const (
	rowChunk  = 64
	termChunk = 512
	gramChunk = 1024
)

// nmfSolver holds the state of one fit, all float64.
type nmfSolver struct {
	x, xt          *CSR
	k, docs, terms int
	l1             float64
	workers        int
	xx             float64 // ||X||²_F

	w   []float64 // docs×k, the codes
	ht  []float64 // terms×k: Hᵀ, row j the loadings of term j
	g   []float64 // terms×k: gradient of the H block, Hᵀ·WᵀW − XᵀW
	old []float64 // terms: a topic's previous values during its update

	hht, wtw []float64 // k×k Gram matrices H·Hᵀ and Wᵀ·W
	scratch  [][]float64
	nzs      [][]int32
	sums     []float64 // per-chunk partial sums
	parts    []float64 // per-chunk partial Gram matrices
}

func newNMFSolver(X *CSR, cfg NMFConfig, init *NMFInit) (*nmfSolver, error) {
	k := cfg.K
	if len(init.W) != X.Rows*k || len(init.H) != k*X.Cols {
		return nil, fmt.Errorf("nmf: initial W has %d values and H %d; want %d×%d = %d and %d×%d = %d",
			len(init.W), len(init.H), X.Rows, k, X.Rows*k, k, X.Cols, k*X.Cols)
	}
	w := toFloat64(init.W)
	h := toFloat64(init.H)
	for _, v := range [][]float64{w, h} {
		for _, x := range v {
			if !(x >= 0) || math.IsInf(x, 1) {
				return nil, fmt.Errorf("nmf: initial factors hold %v; they must be finite and ≥ 0", x)
			}
		}
	}
	normaliseTopics(w, h, k)
	s := &nmfSolver{
		x: X, xt: X.Transpose(), k: k, docs: X.Rows, terms: X.Cols,
		l1: cfg.L1, workers: cfg.Workers, xx: X.FrobeniusNorm2(),
		w: w, ht: transpose64(h, k, X.Cols),
		g: make([]float64, X.Cols*k), old: make([]float64, X.Cols),
		hht: make([]float64, k*k), wtw: make([]float64, k*k),
		scratch: make([][]float64, cfg.Workers), nzs: make([][]int32, cfg.Workers),
		sums: make([]float64, max(chunks(X.Rows, rowChunk), chunks(X.Cols, termChunk))),
	}
	s.parts = make([]float64, max(chunks(X.Rows, gramChunk), chunks(X.Cols, gramChunk))*k*k)
	for i := range s.scratch {
		s.scratch[i] = make([]float64, 2*k)
		s.nzs[i] = make([]int32, 0, k)
	}
	s.gram(s.hht, s.ht, s.terms)
	return s, nil
}

func chunks(n, size int) int { return (n + size - 1) / size }

// parallel calls fn(worker, chunk, lo, hi) for the chunks [lo,hi) of size
// size covering [0,n), on up to workers goroutines.
func parallel(workers, n, size int, fn func(worker, chunk, lo, hi int)) {
	nc := chunks(n, size)
	workers = min(workers, nc)
	if workers <= 1 {
		for c := range nc {
			fn(0, c, c*size, min((c+1)*size, n))
		}
		return
	}
	var next atomic.Int64
	var wg sync.WaitGroup
	for wk := range workers {
		wg.Go(func() {
			for {
				c := int(next.Add(1) - 1)
				if c >= nc {
					return
				}
				fn(wk, c, c*size, min((c+1)*size, n))
			}
		})
	}
	wg.Wait()
}

// sumChunks adds the first n per-chunk sums in chunk order.
func (s *nmfSolver) sumChunks(n int) float64 {
	var t float64
	for _, v := range s.sums[:n] {
		t += v
	}
	return t
}

// iterate runs one iteration and returns the objective and its
// reconstruction part 0.5·||X − WH||²_F.
func (s *nmfSolver) iterate(ctx context.Context) (obj, recon float64, err error) {
	k := s.k
	parallel(s.workers, s.docs, rowChunk, s.updateW)
	l1 := s.sumChunks(chunks(s.docs, rowChunk))
	s.gram(s.wtw, s.w, s.docs)
	if err := ctx.Err(); err != nil {
		return 0, 0, err
	}
	parallel(s.workers, s.terms, termChunk, s.initHGradient)
	nc := chunks(s.terms, termChunk)
	for t := range k {
		a := s.wtw[t*k+t]
		if a <= 0 {
			continue // no document uses topic t: the objective does not depend on it
		}
		parallel(s.workers, s.terms, termChunk, func(_, c, lo, hi int) { s.stepTopic(c, lo, hi, t, a) })
		norm := math.Sqrt(s.sumChunks(nc))
		scale := 1.0
		if norm > 1 {
			scale = 1 / norm
		}
		parallel(s.workers, s.terms, termChunk, func(_, _, lo, hi int) { s.finishTopic(lo, hi, t, scale) })
	}
	s.gram(s.hht, s.ht, s.terms)
	// With G = Hᵀ·WᵀW − XᵀW exact for the final H: Σ_j h_j·G_j =
	// ||WH||² − <X, WH>, so 0.5||X − WH||² = 0.5||X||² − 0.5||WH||² + Σ_j h_j·G_j.
	parallel(s.workers, s.terms, termChunk, func(_, c, lo, hi int) {
		s.sums[c] = floats.Dot(s.ht[lo*k:hi*k], s.g[lo*k:hi*k])
	})
	hg := s.sumChunks(nc)
	whwh := floats.Dot(s.wtw, s.hht)
	recon = max(0, 0.5*s.xx-0.5*whwh+hg)
	return recon + s.l1*l1, recon, nil
}

func (s *nmfSolver) relError(recon float64) float64 { return math.Sqrt(2 * recon / s.xx) }

// updateW updates the codes of documents [lo,hi), one coordinate descent
// sweep over the topics of each, and stores the chunk's sum of codes.
func (s *nmfSolver) updateW(worker, chunk, lo, hi int) {
	k := s.k
	xh, g := s.scratch[worker][:k], s.scratch[worker][k:]
	var l1 float64
	for i := lo; i < hi; i++ {
		w := s.w[i*k : (i+1)*k]
		idx, val := s.x.Row(i)
		sparseTimes(xh, idx, val, s.ht, k)
		codeGradient(g, w, xh, s.hht, s.l1)
		cdSweep(w, g, s.hht)
		l1 += floats.Sum(w)
	}
	s.sums[chunk] = l1
}

// sparseTimes sets dst (length k) to Σ_p val[p]·rows[idx[p]], the product
// of a sparse row vector with a row-major matrix of k columns.
func sparseTimes(dst []float64, idx []int32, val []float32, rows []float64, k int) {
	clear(dst)
	for p, j := range idx {
		floats.AddScaled(dst, float64(val[p]), rows[int(j)*k:int(j+1)*k])
	}
}

// codeGradient sets g to the gradient of 0.5||x − wH||² + λ·sum(w) at w:
// gram·w − xh + λ, with gram = H·Hᵀ and xh = H·x.
func codeGradient(g, w, xh, gram []float64, l1 float64) {
	k := len(w)
	for t := range g {
		g[t] = l1 - xh[t]
	}
	for t, v := range w {
		if v != 0 {
			floats.AddScaled(g, v, gram[t*k:(t+1)*k])
		}
	}
}

// cdSweep runs one cyclic coordinate descent sweep over w ≥ 0 for the
// quadratic with Hessian gram and gradient g (kept up to date), each step
// the exact minimiser along its coordinate. It returns the largest change.
func cdSweep(w, g, gram []float64) float64 {
	k := len(w)
	var most float64
	for t, v := range w {
		hess := gram[t*k+t]
		if hess <= 0 {
			continue
		}
		nv := v - g[t]/hess
		if nv < 0 {
			nv = 0
		}
		if d := nv - v; d != 0 {
			floats.AddScaled(g, d, gram[t*k:(t+1)*k])
			w[t] = nv
			most = max(most, math.Abs(d))
		}
	}
	return most
}

// initHGradient sets G_j = WᵀW·h_j − (XᵀW)_j for terms [lo,hi).
func (s *nmfSolver) initHGradient(worker, chunk, lo, hi int) {
	k := s.k
	for j := lo; j < hi; j++ {
		g := s.g[j*k : (j+1)*k]
		idx, val := s.xt.Row(j)
		sparseTimes(g, idx, val, s.w, k)
		floats.Scale(-1, g)
		for t, v := range s.ht[j*k : (j+1)*k] {
			if v != 0 {
				floats.AddScaled(g, v, s.wtw[t*k:(t+1)*k])
			}
		}
	}
}

// stepTopic computes the unconstrained block step of topic t for terms
// [lo,hi), max(0, h − G/a), remembering the old values, and stores the
// chunk's sum of squares of the new values.
func (s *nmfSolver) stepTopic(chunk, lo, hi, t int, a float64) {
	k := s.k
	var ss float64
	for j := lo; j < hi; j++ {
		v := s.ht[j*k+t]
		s.old[j] = v
		nv := v - s.g[j*k+t]/a
		if nv < 0 {
			nv = 0
		}
		s.ht[j*k+t] = nv
		ss += nv * nv
	}
	s.sums[chunk] = ss
}

// finishTopic scales topic t onto the unit ball for terms [lo,hi) and
// updates their gradients with the change.
func (s *nmfSolver) finishTopic(lo, hi, t int, scale float64) {
	k := s.k
	row := s.wtw[t*k : (t+1)*k]
	for j := lo; j < hi; j++ {
		nv := s.ht[j*k+t] * scale
		s.ht[j*k+t] = nv
		if d := nv - s.old[j]; d != 0 {
			floats.AddScaled(s.g[j*k:(j+1)*k], d, row)
		}
	}
}

// gram sets dst (k×k) to Σ_j m_j·m_jᵀ over the n rows of the row-major
// n×k matrix m, skipping zeros; chunk partials are added in chunk order.
func (s *nmfSolver) gram(dst, m []float64, n int) {
	k := s.k
	nc := chunks(n, gramChunk)
	parts := s.parts[:nc*k*k]
	clear(parts)
	parallel(s.workers, n, gramChunk, func(worker, c, lo, hi int) {
		p := parts[c*k*k : (c+1)*k*k]
		for j := lo; j < hi; j++ {
			s.nzs[worker] = addOuter(p, m[j*k:(j+1)*k], s.nzs[worker])
		}
	})
	clear(dst)
	for c := range nc {
		floats.Add(dst, parts[c*k*k:(c+1)*k*k])
	}
	for a := range k {
		for b := a + 1; b < k; b++ {
			dst[b*k+a] = dst[a*k+b]
		}
	}
}

// addOuter adds the upper triangle of v·vᵀ to p (k×k), using nz as
// scratch for v's non-zero positions, and returns nz.
func addOuter(p, v []float64, nz []int32) []int32 {
	k := len(v)
	nz = nz[:0]
	for t, x := range v {
		if x != 0 {
			nz = append(nz, int32(t))
		}
	}
	if 3*len(nz) > k {
		for _, a := range nz {
			floats.AddScaled(p[int(a)*k+int(a):int(a+1)*k], v[a], v[a:])
		}
		return nz
	}
	for n, a := range nz {
		va, row := v[a], p[int(a)*k:int(a+1)*k]
		for _, b := range nz[n:] {
			row[b] += va * v[b]
		}
	}
	return nz
}

// RelativeError is ||X − WH||_F / ||X||_F for W (docs×k) and H (k×terms),
// row-major, computed as ||X||² − 2<X,WH> + tr(WᵀW·HHᵀ) in float64 without
// forming WH. It panics when the shapes do not fit X.
func RelativeError(X *CSR, W, H []float32) float64 {
	if X.Cols == 0 || len(H)%X.Cols != 0 {
		panic("featurize: RelativeError: H does not have X.Cols columns")
	}
	k := len(H) / X.Cols
	if len(W) != X.Rows*k {
		panic("featurize: RelativeError: W is not X.Rows × k")
	}
	w, ht := toFloat64(W), transpose64(toFloat64(H), k, X.Cols)
	s := &nmfSolver{k: k, workers: runtime.GOMAXPROCS(0), nzs: make([][]int32, runtime.GOMAXPROCS(0)),
		parts: make([]float64, max(chunks(X.Rows, gramChunk), chunks(X.Cols, gramChunk))*k*k)}
	wtw, hht := make([]float64, k*k), make([]float64, k*k)
	s.gram(wtw, w, X.Rows)
	s.gram(hht, ht, X.Cols)
	var xwh float64
	for i := range X.Rows {
		idx, val := X.Row(i)
		wi := w[i*k : (i+1)*k]
		for p, j := range idx {
			xwh += float64(val[p]) * floats.Dot(wi, ht[int(j)*k:int(j+1)*k])
		}
	}
	xx := X.FrobeniusNorm2()
	return math.Sqrt(max(0, xx-2*xwh+floats.Dot(wtw, hht)) / xx)
}

func toFloat64(v []float32) []float64 {
	out := make([]float64, len(v))
	for i, x := range v {
		out[i] = float64(x)
	}
	return out
}

func toFloat32(v []float64) []float32 {
	out := make([]float32, len(v))
	for i, x := range v {
		out[i] = float32(x)
	}
	return out
}

// transpose64 returns the transpose of the row-major r×c matrix m.
func transpose64(m []float64, r, c int) []float64 {
	out := make([]float64, len(m))
	for i := range r {
		for j := range c {
			out[j*r+i] = m[i*c+j]
		}
	}
	return out
}

// transpose32 returns the transpose of the row-major r×c matrix m, as
// float32.
func transpose32(m []float64, r, c int) []float32 {
	out := make([]float32, len(m))
	for i := range r {
		for j := range c {
			out[j*r+i] = float32(m[i*c+j])
		}
	}
	return out
}
