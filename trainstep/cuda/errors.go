package cuda

import (
	"errors"
	"fmt"
	"strings"
)

// ErrLibrary is wrapped by every error about a CUDA library that could not
// be found or loaded (a *LibraryError says which and where).
var ErrLibrary = errors.New("CUDA library not available")

// ErrNoDevice is returned when the driver loads but reports no usable
// device (or not the one asked for).
var ErrNoDevice = errors.New("no CUDA device")

// ErrUnsupported is returned by Build for a configuration the CUDA backend
// does not implement; the CPU backend does.
var ErrUnsupported = errors.New("not implemented by the cuda backend")

// LibraryError says which library could not be loaded, every directory
// searched and every file that was found but failed to load.
type LibraryError struct {
	What   string   // "the NVIDIA driver library", "cuBLAS", ...
	Names  []string // file names looked for
	Dirs   []string // directories searched, in order
	Failed []string // "PATH: why" for files found that did not load
	Cache  string   // result of asking the dynamic loader by name ("" when not asked)
}

func (e *LibraryError) Error() string {
	var b strings.Builder
	fmt.Fprintf(&b, "cuda: %s (%s) ", e.What, strings.Join(e.Names, " or "))
	if len(e.Failed) > 0 {
		fmt.Fprintf(&b, "found but not loadable: %s; ", strings.Join(e.Failed, "; "))
	} else {
		b.WriteString("not found; ")
	}
	fmt.Fprintf(&b, "looked in %s", strings.Join(e.Dirs, ", "))
	if e.Cache != "" {
		fmt.Fprintf(&b, " and asked the dynamic loader (%s)", e.Cache)
	}
	fmt.Fprintf(&b, "; point --cuda-lib-dir or %s at the directory that holds it", LibDirEnv)
	if e.What == libCUDA().what {
		b.WriteString(" (it comes with the NVIDIA driver, not the CUDA toolkit)")
	} else {
		b.WriteString(" (CUDA toolkit, or pip install nvidia-cublas-cu12 nvidia-cuda-nvrtc-cu12)")
	}
	return b.String()
}

func (e *LibraryError) Unwrap() error { return ErrLibrary }

// Error is a failed CUDA driver, cuBLAS or NVRTC call.
type Error struct {
	Call string // "cuMemAlloc_v2"
	Code int    // CUresult, cublasStatus_t or nvrtcResult
	Msg  string // the library's description of Code
}

func (e *Error) Error() string {
	return fmt.Sprintf("cuda: %s: error %d: %s", e.Call, e.Code, e.Msg)
}

// ErrSelfCheck is wrapped by the error of a self-check that found the
// device disagreeing with the emulator (a *CheckError says where).
var ErrSelfCheck = errors.New("the GPU disagrees with the emulator")

// errOverTolerance is a self-check case's difference over its tolerance
// (the report's line says where and how much).
var errOverTolerance = errors.New("over the tolerance")
