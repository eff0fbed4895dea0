// Package cblas loads a CBLAS shared library (OpenBLAS, or another that
// exports the cblas_ functions) at run time through purego, without cgo,
// and offers it as a gonum BLAS implementation: the routines that dominate
// training (single and double precision GEMM and GEMV) run in the library,
// every other routine in gonum's pure-Go implementation, which
// Implementation embeds.
//
// Arguments are checked before the call: invalid ones, empty products and
// sizes beyond the library's 32-bit integers go to gonum's routine, which
// panics with its own message or does what BLAS specifies, so that an
// Implementation behaves as gonum's does with every argument.
package cblas
