//go:build !openblas

package cpu

// BLAS names the BLAS that the backend's matrix products run on: gonum's
// pure-Go one by default; build with -tags openblas for OpenBLAS.
const BLAS = "gonum"
