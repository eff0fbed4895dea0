package cuda

import (
	"fmt"
	"path/filepath"
	"strings"

	"github.com/ebitengine/purego"
)

// cublas is the part of cuBLAS (libcublas.so.13 or .12) the backend uses.
// cublasSgemmStridedBatched takes 18 arguments, more than purego's 15, so
// the backend issues one cublasSgemm per product.
type cublas struct {
	path   string
	handle uintptr

	cublasCreate          func(h *uintptr) int32
	cublasDestroy         func(h uintptr) int32
	cublasSetStream       func(h uintptr, stream uintptr) int32
	cublasGetStatusString func(status int32) string
	cublasSetMathMode     func(h uintptr, mode int32) int32
	cublasSetWorkspace    func(h uintptr, ws uintptr, bytes uintptr) int32
	cublasGetVersion      func(h uintptr, v *int32) int32
	// cublasSgemm_v2(handle, transa, transb, m, n, k, *alpha, A, lda, B, ldb, *beta, C, ldc)
	cublasSgemm func(h uintptr, ta, tb int32, m, n, k int32, alpha *float32, a uintptr, lda int32,
		b uintptr, ldb int32, beta *float32, c uintptr, ldc int32) int32
}

// cublasOp values (cublasOperation_t).
const (
	cublasOpN = 0
	cublasOpT = 1
)

// loadCUBLAS opens cuBLASLt and then cuBLAS of the same major version from
// the same directory (libcublas needs libcublasLt; loading it first by
// path lets the dynamic linker resolve that dependency wherever it is).
func loadCUBLAS(env Env) (*cublas, error) {
	found, _ := env.candidates(libCUBLAS())
	// Prefer a directory where the matching cuBLASLt is present.
	for _, p := range found {
		major := strings.TrimPrefix(filepath.Base(p), "libcublas.so.")
		lt := filepath.Join(filepath.Dir(p), "libcublasLt.so."+major)
		if _, err := purego.Dlopen(lt, purego.RTLD_NOW|purego.RTLD_GLOBAL); err == nil {
			break
		}
	}
	h, path, err := env.openLibrary(libCUBLAS())
	if err != nil {
		return nil, err
	}
	c := &cublas{path: path}
	s := &symbols{lib: path, handle: h}
	s.bind(&c.cublasCreate, "cublasCreate_v2")
	s.bind(&c.cublasDestroy, "cublasDestroy_v2")
	s.bind(&c.cublasSetStream, "cublasSetStream_v2")
	s.bind(&c.cublasGetStatusString, "cublasGetStatusString")
	s.bind(&c.cublasSgemm, "cublasSgemm_v2")
	s.bind(&c.cublasSetMathMode, "cublasSetMathMode")
	s.bind(&c.cublasSetWorkspace, "cublasSetWorkspace_v2")
	s.bind(&c.cublasGetVersion, "cublasGetVersion_v2")
	if s.err != nil {
		return nil, s.err
	}
	return c, nil
}

func (c *cublas) check(call string, status int32) error {
	if status == 0 {
		return nil
	}
	return &Error{Call: call, Code: int(status), Msg: c.cublasGetStatusString(status)}
}

// init creates the handle on the current context, on the default stream.
func (c *cublas) init() error {
	if err := c.check("cublasCreate_v2", c.cublasCreate(&c.handle)); err != nil {
		return fmt.Errorf("creating the cuBLAS handle (%s): %w", c.path, err)
	}
	return c.check("cublasSetStream_v2", c.cublasSetStream(c.handle, 0))
}

// version is cuBLAS's version (CUBLAS_VERSION: major·10000 +
// minor·100 + patch), 0 when it cannot say.
func (c *cublas) version() int {
	var v int32
	if c.cublasGetVersion(c.handle, &v) != 0 {
		return 0
	}
	return int(v)
}

func op(t bool) int32 {
	if t {
		return cublasOpT
	}
	return cublasOpN
}

func (c *cublas) sgemm(transA, transB bool, m, n, k int, alpha float32, a uintptr, lda int, b uintptr, ldb int, beta float32, cp uintptr, ldc int) error {
	al, be := alpha, beta
	st := c.cublasSgemm(c.handle, op(transA), op(transB), int32(m), int32(n), int32(k), &al, a, int32(lda), b, int32(ldb), &be, cp, int32(ldc))
	return c.check("cublasSgemm_v2", st)
}
