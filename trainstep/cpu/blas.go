package cpu

import (
	"fmt"
	"sync"

	"gonum.org/v1/gonum/blas"
	"gonum.org/v1/gonum/blas/blas32"
	"gonum.org/v1/gonum/blas/blas64"
	"gonum.org/v1/gonum/blas/gonum"
	G "gorgonia.org/gorgonia"

	"github.com/parastream/parastream/trainstep/cpu/cblas"
)

// The BLAS choices of UseBLAS (train --blas).
const (
	// BLASAuto is a CBLAS library (OpenBLAS first) when one loads, else
	// gonum's pure-Go BLAS.
	BLASAuto = "auto"
	// BLASGo is gonum's pure-Go BLAS.
	BLASGo = "go"
	// BLASOpenBLAS is a CBLAS library (cblas.DefaultNames), and an error
	// when none loads.
	BLASOpenBLAS = "openblas"
)

// BLASInfo says which BLAS the backend's matrix products run on.
type BLASInfo struct {
	// Name is "openblas" (OpenBLAS loaded), "cblas" (another CBLAS) or
	// "gonum".
	Name string
	// Library describes the loaded library (version, file, threads);
	// empty for gonum.
	Library string
	// Fallback says why auto runs on gonum: the libraries tried and why
	// none loaded; empty otherwise.
	Fallback string
}

// String is the one-line description: the library, or gonum and why.
func (b BLASInfo) String() string {
	switch {
	case b.Library != "":
		return b.Library
	case b.Fallback != "":
		return "gonum (pure Go; " + b.Fallback + ")"
	}
	return "gonum (pure Go)"
}

var blasState struct {
	sync.Mutex
	chosen bool
	info   BLASInfo
}

// UseBLAS routes the matrix products of gorgonia (every graph of this
// backend) and of gonum's blas32 and blas64 (gonum/mat) through the BLAS
// that choice names: BLASAuto, BLASGo or BLASOpenBLAS; opts say which
// libraries to try and OpenBLAS's threads. The choice is the process's
// (gorgonia's BLAS is a global); BLAS says what runs. BLASOpenBLAS fails
// with an error wrapping cblas.ErrNotFound when no library loads, and
// BLASAuto then falls back to gonum, saying why in BLASInfo.Fallback.
func UseBLAS(choice string, opts cblas.Options) (BLASInfo, error) {
	blasState.Lock()
	defer blasState.Unlock()
	info, err := useBLAS(choice, opts)
	if err != nil {
		return BLASInfo{}, err
	}
	blasState.chosen, blasState.info = true, info
	return info, nil
}

func useBLAS(choice string, opts cblas.Options) (BLASInfo, error) {
	var info BLASInfo
	switch choice {
	case BLASGo:
	case BLASAuto, BLASOpenBLAS:
		lib, err := cblas.Open(opts)
		if err != nil {
			if choice == BLASOpenBLAS {
				return BLASInfo{}, fmt.Errorf("--blas openblas: %w", err)
			}
			info.Fallback = err.Error()
			break
		}
		info.Name, info.Library = "cblas", lib.String()
		if lib.OpenBLAS() {
			info.Name = "openblas"
		}
		route(cblas.New(lib))
		return info, nil
	default:
		return BLASInfo{}, fmt.Errorf("BLAS %q: use %s, %s or %s", choice, BLASAuto, BLASGo, BLASOpenBLAS)
	}
	info.Name = "gonum"
	route(gonum.Implementation{})
	return info, nil
}

// route makes impl gorgonia's, gorgonia tensor's and gonum's BLAS.
func route(impl interface {
	G.BLAS
	blas.Float32
	blas.Float64
}) {
	G.Use(impl) // gorgonia and gorgonia.org/tensor
	blas32.Use(impl)
	blas64.Use(impl)
}

// BLAS is the BLAS the backend's products run on: the one UseBLAS chose,
// or, before any choice, BLASAuto's, chosen now (Backend.Build does the
// same).
func BLAS() BLASInfo {
	blasState.Lock()
	defer blasState.Unlock()
	if !blasState.chosen {
		blasState.info, _ = useBLAS(BLASAuto, cblas.Options{}) // auto never fails
		blasState.chosen = true
	}
	return blasState.info
}
