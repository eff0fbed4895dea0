package cblas_test

import (
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"strings"
	"testing"

	"gonum.org/v1/gonum/blas"
	"gonum.org/v1/gonum/blas/gonum"

	"github.com/parastream/parastream/trainstep/cpu/cblas"
)

// RequireEnv, when set (CI sets it), makes a missing library a failure
// instead of a skip.
const RequireEnv = "PARASTREAM_REQUIRE_OPENBLAS"

// open loads the machine's CBLAS, or skips (fails under RequireEnv).
func open(t *testing.T) *cblas.Library {
	t.Helper()
	lib, err := cblas.Open(cblas.Options{})
	if err != nil {
		if os.Getenv(RequireEnv) != "" {
			t.Fatalf("%s is set and %v", RequireEnv, err)
		}
		t.Skipf("no CBLAS on this machine, comparisons with gonum skipped (apt-get install libopenblas0): %v", err)
	}
	t.Logf("comparing %v with gonum", lib)
	return lib
}

var transposes = []blas.Transpose{blas.NoTrans, blas.Trans, blas.ConjTrans}

func randSlice[T float32 | float64](rng *rand.Rand, n int) []T {
	s := make([]T, n)
	for i := range s {
		s[i] = T(rng.NormFloat64())
	}
	return s
}

// gemmCase is one GEMM: sizes, leading dimensions (possibly wider than the
// matrix) and scalars.
type gemmCase struct {
	tA, tB        blas.Transpose
	m, n, k       int
	lda, ldb, ldc int
	alpha, beta   float64
	rowsA, rowsB  int
}

func gemmCases(rng *rand.Rand) []gemmCase {
	var cs []gemmCase
	sizes := [][3]int{{0, 3, 4}, {3, 0, 4}, {3, 4, 0}, {1, 1, 1}, {1, 7, 5}, {7, 1, 5}, {5, 6, 1}, {17, 33, 9}, {64, 48, 80}, {100, 120, 300}}
	for _, sz := range sizes {
		for _, tA := range transposes {
			for _, tB := range transposes {
				for _, wide := range []bool{false, true} {
					m, n, k := sz[0], sz[1], sz[2]
					c := gemmCase{tA: tA, tB: tB, m: m, n: n, k: k, alpha: rng.NormFloat64(), beta: rng.NormFloat64()}
					colsA, colsB := k, n
					c.rowsA, c.rowsB = m, k
					if tA != blas.NoTrans {
						colsA, c.rowsA = m, k
					}
					if tB != blas.NoTrans {
						colsB, c.rowsB = k, n
					}
					c.lda, c.ldb, c.ldc = max(1, colsA), max(1, colsB), max(1, n)
					if wide {
						c.lda += 1 + rng.IntN(5)
						c.ldb += 1 + rng.IntN(5)
						c.ldc += 1 + rng.IntN(5)
					}
					cs = append(cs, c)
				}
			}
		}
	}
	// The scalars BLAS treats specially.
	for _, ab := range [][2]float64{{0, 1}, {0, 0}, {1, 0}, {0, 2.5}, {1, 1}} {
		cs = append(cs, gemmCase{tA: blas.NoTrans, tB: blas.Trans, m: 9, n: 11, k: 13, lda: 13, ldb: 13, ldc: 12, alpha: ab[0], beta: ab[1], rowsA: 9, rowsB: 11})
	}
	return cs
}

func (c gemmCase) String() string {
	return fmt.Sprintf("%c%c m=%d n=%d k=%d lda=%d ldb=%d ldc=%d alpha=%.3g beta=%.3g", c.tA, c.tB, c.m, c.n, c.k, c.lda, c.ldb, c.ldc, c.alpha, c.beta)
}

// span is the length of a matrix of rows rows with leading dimension ld
// whose last row holds cols values (0 for no rows).
func span(rows, cols, ld int) int {
	if rows == 0 || cols == 0 {
		return 0
	}
	return (rows-1)*ld + cols
}

// closeTo compares got with want element by element within tol times the
// size of the terms summed into each (bound); NaN matches NaN (the gaps
// of a leading dimension, which neither writes).
func closeTo[T float32 | float64](t *testing.T, what string, got, want, bound []T, tol float64) {
	t.Helper()
	if len(got) != len(want) {
		t.Fatalf("%s: %d values, want %d", what, len(got), len(want))
	}
	for i := range got {
		if math.IsNaN(float64(got[i])) && math.IsNaN(float64(want[i])) {
			continue // a gap between rows, left alone by both
		}
		if d := math.Abs(float64(got[i]) - float64(want[i])); d > tol*(float64(bound[i])+1) || math.IsNaN(d) {
			t.Fatalf("%s: [%d] = %g, gonum %g (difference %g)", what, i, got[i], want[i], d)
		}
	}
}

// absBound is |alpha|·|op(A)|·|op(B)| + |beta|·|C| computed by gonum: the
// scale of each element's rounding error.
func absBound[T float32 | float64](gemm func(tA, tB blas.Transpose, m, n, k int, alpha T, a []T, lda int, b []T, ldb int, beta T, c []T, ldc int),
	cs gemmCase, a, b, c []T) []T {
	abs := func(s []T) []T {
		o := make([]T, len(s))
		for i, v := range s {
			o[i] = T(math.Abs(float64(v)))
		}
		return o
	}
	out := abs(c)
	gemm(cs.tA, cs.tB, cs.m, cs.n, cs.k, T(math.Abs(cs.alpha)), abs(a), cs.lda, abs(b), cs.ldb, T(math.Abs(cs.beta)), out, cs.ldc)
	return out
}

func testGemm[T float32 | float64](t *testing.T, name string, got, want func(tA, tB blas.Transpose, m, n, k int, alpha T, a []T, lda int, b []T, ldb int, beta T, c []T, ldc int), tol float64) {
	rng := rand.New(rand.NewPCG(1, 2))
	for _, cs := range gemmCases(rng) {
		a := randSlice[T](rng, span(cs.rowsA, max(1, cs.lda), cs.lda))
		b := randSlice[T](rng, span(cs.rowsB, max(1, cs.ldb), cs.ldb))
		c := randSlice[T](rng, span(cs.m, cs.ldc, cs.ldc))
		if cs.beta == 0 {
			for i := range c {
				c[i] = T(math.NaN()) // beta 0: C is not read
			}
		}
		cg, cw := append([]T(nil), c...), append([]T(nil), c...)
		got(cs.tA, cs.tB, cs.m, cs.n, cs.k, T(cs.alpha), a, cs.lda, b, cs.ldb, T(cs.beta), cg, cs.ldc)
		want(cs.tA, cs.tB, cs.m, cs.n, cs.k, T(cs.alpha), a, cs.lda, b, cs.ldb, T(cs.beta), cw, cs.ldc)
		cb := append([]T(nil), c...)
		if cs.beta == 0 {
			clear(cb)
		}
		bound := absBound(want, cs, a, b, cb)
		closeTo(t, name+" "+cs.String(), cg, cw, bound, tol)
	}
}

func TestGemm(t *testing.T) {
	im := cblas.New(open(t))
	var g gonum.Implementation
	testGemm(t, "Sgemm", im.Sgemm, g.Sgemm, 1e-5)
	testGemm(t, "Dgemm", im.Dgemm, g.Dgemm, 1e-13)
}

func testGemv[T float32 | float64](t *testing.T, name string, got, want func(tA blas.Transpose, m, n int, alpha T, a []T, lda int, x []T, incX int, beta T, y []T, incY int), tol float64) {
	rng := rand.New(rand.NewPCG(3, 4))
	for _, sz := range [][2]int{{0, 4}, {4, 0}, {1, 1}, {1, 9}, {9, 1}, {37, 23}, {300, 1200}} {
		for _, tA := range transposes {
			for _, inc := range [][2]int{{1, 1}, {2, 3}, {-1, 1}, {1, -2}, {-3, -2}} {
				for _, ab := range [][2]float64{{rng.NormFloat64(), rng.NormFloat64()}, {0, 1}, {0, 0}, {1.5, 0}} {
					m, n := sz[0], sz[1]
					lda := max(1, n) + rng.IntN(3)
					lenX, lenY := n, m
					if tA != blas.NoTrans {
						lenX, lenY = m, n
					}
					vec := func(l, inc int) []T {
						if l == 0 {
							return randSlice[T](rng, 1)
						}
						return randSlice[T](rng, (l-1)*abs(inc)+1)
					}
					a := randSlice[T](rng, span(m, n, lda))
					x, y := vec(lenX, inc[0]), vec(lenY, inc[1])
					yg, yw := append([]T(nil), y...), append([]T(nil), y...)
					got(tA, m, n, T(ab[0]), a, lda, x, inc[0], T(ab[1]), yg, inc[1])
					want(tA, m, n, T(ab[0]), a, lda, x, inc[0], T(ab[1]), yw, inc[1])
					// The bound: the same product on absolute values.
					absv := func(s []T) []T {
						o := make([]T, len(s))
						for i, v := range s {
							o[i] = T(math.Abs(float64(v)))
						}
						return o
					}
					bound := absv(y)
					want(tA, m, n, T(math.Abs(ab[0])), absv(a), lda, absv(x), inc[0], T(math.Abs(ab[1])), bound, inc[1])
					closeTo(t, fmt.Sprintf("%s %c m=%d n=%d lda=%d inc=%v alpha,beta=%.3g", name, tA, m, n, lda, inc, ab), yg, yw, bound, tol)
				}
			}
		}
	}
}

func abs(v int) int {
	if v < 0 {
		return -v
	}
	return v
}

func TestGemv(t *testing.T) {
	im := cblas.New(open(t))
	var g gonum.Implementation
	testGemv(t, "Sgemv", im.Sgemv, g.Sgemv, 1e-5)
	testGemv(t, "Dgemv", im.Dgemv, g.Dgemv, 1e-13)
}

// TestBadArguments: invalid arguments panic with gonum's messages (the
// library is never handed them).
func TestBadArguments(t *testing.T) {
	im := cblas.New(open(t))
	var g gonum.Implementation
	s := make([]float32, 100)
	for _, c := range []struct {
		name      string
		got, want func()
	}{
		{"lda < k", func() { im.Sgemm(blas.NoTrans, blas.NoTrans, 4, 4, 5, 1, s, 4, s, 4, 0, s, 4) },
			func() { g.Sgemm(blas.NoTrans, blas.NoTrans, 4, 4, 5, 1, s, 4, s, 4, 0, s, 4) }},
		{"short c", func() { im.Sgemm(blas.NoTrans, blas.NoTrans, 20, 20, 2, 1, s, 2, s, 20, 0, s, 20) },
			func() { g.Sgemm(blas.NoTrans, blas.NoTrans, 20, 20, 2, 1, s, 2, s, 20, 0, s, 20) }},
		{"bad transpose", func() { im.Sgemm('X', blas.NoTrans, 2, 2, 2, 1, s, 2, s, 2, 0, s, 2) },
			func() { g.Sgemm('X', blas.NoTrans, 2, 2, 2, 1, s, 2, s, 2, 0, s, 2) }},
		{"incX 0", func() { im.Sgemv(blas.NoTrans, 2, 2, 1, s, 2, s, 0, 0, s, 1) },
			func() { g.Sgemv(blas.NoTrans, 2, 2, 1, s, 2, s, 0, 0, s, 1) }},
		{"short x", func() { im.Sgemv(blas.Trans, 50, 2, 1, s, 2, s[:10], 1, 0, s, 1) },
			func() { g.Sgemv(blas.Trans, 50, 2, 1, s, 2, s[:10], 1, 0, s, 1) }},
	} {
		got, want := panicOf(c.got), panicOf(c.want)
		if want == "" || got != want {
			t.Errorf("%s: panic %q, gonum's %q", c.name, got, want)
		}
	}
}

func panicOf(f func()) (msg string) {
	defer func() {
		if r := recover(); r != nil {
			msg = fmt.Sprint(r)
		}
	}()
	f()
	return ""
}

// TestOpenMissing: names that do not load give ErrNotFound, naming each
// name tried and saying how to install one.
func TestOpenMissing(t *testing.T) {
	_, err := cblas.Open(cblas.Options{Names: []string{"libparastream-no-such-blas.so.0", "/nonexistent/libopenblas.so.0"}})
	var le *cblas.LoadError
	if !errors.Is(err, cblas.ErrNotFound) || !errors.As(err, &le) {
		t.Fatalf("error %v, want a *LoadError wrapping ErrNotFound", err)
	}
	for _, want := range []string{"libparastream-no-such-blas.so.0", "/nonexistent/libopenblas.so.0", "apt-get install libopenblas0"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("message lacks %q: %v", want, err)
		}
	}
}

// TestOpenNotCBLAS: a shared library without the cblas_ routines (the C
// math library) is refused, by name.
func TestOpenNotCBLAS(t *testing.T) {
	_, err := cblas.Open(cblas.Options{Names: []string{"libm.so.6"}})
	if err == nil || !strings.Contains(err.Error(), "not a CBLAS") || !strings.Contains(err.Error(), "cblas_sgemm") {
		t.Fatalf("error %v, want libm.so.6 refused as not a CBLAS", err)
	}
}

// TestThreads: Options.Threads sets OpenBLAS's thread count.
func TestThreads(t *testing.T) {
	lib := open(t)
	if !lib.OpenBLAS() {
		t.Skipf("%v is not OpenBLAS", lib)
	}
	before := lib.Threads()
	defer cblas.Open(cblas.Options{Threads: before})
	l1, err := cblas.Open(cblas.Options{Threads: 1})
	if err != nil {
		t.Fatal(err)
	}
	if got := l1.Threads(); got != 1 {
		t.Errorf("threads %d after asking for 1", got)
	}
	if !strings.Contains(l1.String(), "1 threads") {
		t.Errorf("String() = %q, want the thread count", l1.String())
	}
}
