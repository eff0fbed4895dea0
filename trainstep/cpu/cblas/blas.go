package cblas

import (
	"math"

	"gonum.org/v1/gonum/blas"
	"gonum.org/v1/gonum/blas/gonum"
)

// CBLAS's enumerations (cblas.h).
const (
	rowMajor  = 101
	noTrans   = 111
	trans     = 112
	conjTrans = 113
)

// Implementation is gonum's BLAS with GEMM and GEMV, single and double
// precision, computed by the library. It satisfies gonum's blas.Float32
// and blas.Float64 (and the complex interfaces, all in gonum), so it can
// be given to gorgonia.Use, blas32.Use and blas64.Use.
type Implementation struct {
	gonum.Implementation
	Lib *Library
}

// New is the Implementation over lib.
func New(lib *Library) Implementation { return Implementation{Lib: lib} }

func cTrans(t blas.Transpose) int32 {
	switch t {
	case blas.Trans:
		return trans
	case blas.ConjTrans:
		return conjTrans
	}
	return noTrans
}

func validTrans(t blas.Transpose) bool {
	return t == blas.NoTrans || t == blas.Trans || t == blas.ConjTrans
}

// fits reports whether every value is positive and fits CBLAS's int.
func fits(vs ...int) bool {
	for _, v := range vs {
		if v <= 0 || v > math.MaxInt32 {
			return false
		}
	}
	return true
}

// gemmOK reports whether a GEMM call is valid and not empty, so that the
// library computes it; otherwise gonum's routine panics or returns as BLAS
// says.
func gemmOK(tA, tB blas.Transpose, m, n, k int, la, lda, lb, ldb, lc, ldc int) bool {
	if !validTrans(tA) || !validTrans(tB) || !fits(m, n, k, lda, ldb, ldc) {
		return false
	}
	aTrans, bTrans := tA != blas.NoTrans, tB != blas.NoTrans
	rowsA, colsA := m, k
	if aTrans {
		rowsA, colsA = k, m
	}
	rowsB, colsB := k, n
	if bTrans {
		rowsB, colsB = n, k
	}
	return lda >= colsA && ldb >= colsB && ldc >= n &&
		la >= (rowsA-1)*lda+colsA && lb >= (rowsB-1)*ldb+colsB && lc >= (m-1)*ldc+n
}

// gemvOK is gemmOK for GEMV; negative increments are valid (the vector is
// read from its end, as in gonum and the reference BLAS).
func gemvOK(tA blas.Transpose, m, n, la, lda, lx, incX, ly, incY int) bool {
	if !validTrans(tA) || !fits(m, n, lda) || incX == 0 || incY == 0 ||
		incX > math.MaxInt32 || incX < -math.MaxInt32 || incY > math.MaxInt32 || incY < -math.MaxInt32 {
		return false
	}
	lenX, lenY := n, m
	if tA != blas.NoTrans {
		lenX, lenY = m, n
	}
	span := func(l, inc int) int {
		if inc < 0 {
			inc = -inc
		}
		return (l-1)*inc + 1
	}
	return lda >= n && la >= (m-1)*lda+n && lx >= span(lenX, incX) && ly >= span(lenY, incY)
}

// Sgemm computes C = alpha * op(A) * op(B) + beta * C (row-major, as gonum).
func (im Implementation) Sgemm(tA, tB blas.Transpose, m, n, k int, alpha float32, a []float32, lda int, b []float32, ldb int, beta float32, c []float32, ldc int) {
	if !gemmOK(tA, tB, m, n, k, len(a), lda, len(b), ldb, len(c), ldc) {
		im.Implementation.Sgemm(tA, tB, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc)
		return
	}
	im.Lib.sgemm(rowMajor, cTrans(tA), cTrans(tB), int32(m), int32(n), int32(k), alpha, &a[0], int32(lda), &b[0], int32(ldb), beta, &c[0], int32(ldc))
}

// Dgemm computes C = alpha * op(A) * op(B) + beta * C (row-major, as gonum).
func (im Implementation) Dgemm(tA, tB blas.Transpose, m, n, k int, alpha float64, a []float64, lda int, b []float64, ldb int, beta float64, c []float64, ldc int) {
	if !gemmOK(tA, tB, m, n, k, len(a), lda, len(b), ldb, len(c), ldc) {
		im.Implementation.Dgemm(tA, tB, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc)
		return
	}
	im.Lib.dgemm(rowMajor, cTrans(tA), cTrans(tB), int32(m), int32(n), int32(k), alpha, &a[0], int32(lda), &b[0], int32(ldb), beta, &c[0], int32(ldc))
}

// Sgemv computes y = alpha * op(A) * x + beta * y (row-major, as gonum).
func (im Implementation) Sgemv(tA blas.Transpose, m, n int, alpha float32, a []float32, lda int, x []float32, incX int, beta float32, y []float32, incY int) {
	if !gemvOK(tA, m, n, len(a), lda, len(x), incX, len(y), incY) {
		im.Implementation.Sgemv(tA, m, n, alpha, a, lda, x, incX, beta, y, incY)
		return
	}
	im.Lib.sgemv(rowMajor, cTrans(tA), int32(m), int32(n), alpha, &a[0], int32(lda), &x[0], int32(incX), beta, &y[0], int32(incY))
}

// Dgemv computes y = alpha * op(A) * x + beta * y (row-major, as gonum).
func (im Implementation) Dgemv(tA blas.Transpose, m, n int, alpha float64, a []float64, lda int, x []float64, incX int, beta float64, y []float64, incY int) {
	if !gemvOK(tA, m, n, len(a), lda, len(x), incX, len(y), incY) {
		im.Implementation.Dgemv(tA, m, n, alpha, a, lda, x, incX, beta, y, incY)
		return
	}
	im.Lib.dgemv(rowMajor, cTrans(tA), int32(m), int32(n), alpha, &a[0], int32(lda), &x[0], int32(incX), beta, &y[0], int32(incY))
}
