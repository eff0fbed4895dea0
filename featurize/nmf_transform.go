package featurize

import (
	"sync"

	"gonum.org/v1/gonum/floats"
)

// NMF is a fitted topic model, frozen: the topics H and the penalty λ that
// Transform uses. FitNMF and ReadNMF make one; WriteTo saves it.
type NMF struct {
	// K is the number of topics and Terms the number of columns of X.
	K, Terms int
	// H holds the topics, K×Terms row-major, non-negative, each row of
	// Euclidean norm at most 1. Do not modify it once NewTransformer has
	// been called.
	H []float32
	// L1 is λ, the penalty on the codes (see NMFConfig.L1).
	L1 float64
	// Iters, Objective and RelError describe the fit that produced the
	// model: iterations run, final objective, final relative
	// reconstruction error on the training matrix. Seed is its seed.
	Iters     int
	Objective float64
	RelError  float64
	Seed      uint64

	once sync.Once
	ht   []float64 // Terms×K: Hᵀ, float64
	hht  []float64 // K×K: H·Hᵀ
}

// prepare builds the float64 Hᵀ and H·Hᵀ that transformers share.
func (m *NMF) prepare() {
	m.once.Do(func() {
		k := m.K
		m.ht = transpose64(toFloat64(m.H), k, m.Terms)
		m.hht = make([]float64, k*k)
		nz := make([]int32, 0, k)
		for j := range m.Terms {
			nz = addOuter(m.hht, m.ht[j*k:(j+1)*k], nz)
		}
		for a := range k {
			for b := a + 1; b < k; b++ {
				m.hht[b*k+a] = m.hht[a*k+b]
			}
		}
	})
}

// Transformer defaults.
const (
	DefaultTransformMaxIter = 300
	DefaultTransformTol     = 1e-6
)

// Transformer computes topic vectors against a frozen model. It holds
// scratch space, so one Transformer serves one goroutine; make one per
// goroutine (or per DoFn instance) with NewTransformer. The model's shared
// tables are built once, on the first call.
type Transformer struct {
	// MaxIter bounds the coordinate descent sweeps per text
	// (DefaultTransformMaxIter).
	MaxIter int
	// Tol stops the sweeps once none changes a code by more than Tol times
	// the largest code (DefaultTransformTol).
	Tol float64

	m          *NMF
	xh, g, w64 []float64
}

// NewTransformer returns a Transformer for m with the default MaxIter and
// Tol.
func (m *NMF) NewTransformer() *Transformer {
	m.prepare()
	return &Transformer{
		MaxIter: DefaultTransformMaxIter, Tol: DefaultTransformTol, m: m,
		xh: make([]float64, m.K), g: make([]float64, m.K), w64: make([]float64, m.K),
	}
}

// Transform returns the topic vector w (length K) of one text given as a
// sparse bag of words over the model's terms (indices strictly below
// Terms, values its counts or weights): the solution of the L1-penalised
// non-negative least squares
//
//	min_w 0.5·||x − wH||² + λ·||w||₁  subject to  w ≥ 0,
//
// by coordinate descent from w = 0, the subproblem FitNMF solves for each
// training row. The result is written to dst, grown when it has less than
// K capacity, and returned; with a dst of capacity K, Transform does not
// allocate. An empty text gives the zero vector. It panics on an index
// outside the model's terms, or on indices and values of different
// lengths.
func (t *Transformer) Transform(dst []float32, indices []int32, values []float32) []float32 {
	m, k := t.m, t.m.K
	if len(indices) != len(values) {
		panic("featurize: Transform: indices and values differ in length")
	}
	for _, j := range indices {
		if j < 0 || int(j) >= m.Terms {
			panic("featurize: Transform: term index outside the model's terms")
		}
	}
	if cap(dst) < k {
		dst = make([]float32, k)
	}
	dst = dst[:k]
	w := t.w64
	clear(w)
	sparseTimes(t.xh, indices, values, m.ht, k)
	codeGradient(t.g, w, t.xh, m.hht, m.L1)
	for range t.MaxIter {
		most := cdSweep(w, t.g, m.hht)
		if most <= t.Tol*floats.Max(w) {
			break
		}
	}
	for i, v := range w {
		dst[i] = float32(v)
	}
	return dst
}
