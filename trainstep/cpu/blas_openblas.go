//go:build openblas

package cpu

// #cgo LDFLAGS: -lopenblas
import "C"

import (
	"gonum.org/v1/netlib/blas/netlib"
	"gorgonia.org/gorgonia"
)

// BLAS names the BLAS that the backend's matrix products run on: with the
// openblas build tag, OpenBLAS through gonum's netlib (cgo; Debian:
// libopenblas-dev).
const BLAS = "openblas"

func init() { gorgonia.Use(netlib.Implementation{}) }
