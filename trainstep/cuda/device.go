package cuda

import (
	"fmt"
	"unsafe"
)

// device is what the model runs on: the CUDA driver and cuBLAS (gpu.go)
// or the host emulator (emulate.go). Memory is counted in 4-byte words.
// The model's code (model.go, encoders.go, margin.go) is the same for both,
// so tests of the emulator against the CPU backend check the kernels'
// arithmetic, their launch arguments and the GEMM calls that a GPU runs.
type device interface {
	name() string
	// enter binds the device to the calling goroutine's OS thread for a
	// sequence of calls (CUDA contexts are per thread); exit releases it.
	enter() error
	exit()
	alloc(words int) (*buffer, error)
	free(b *buffer) error
	upload(dst ptr, src unsafe.Pointer, words int) error
	download(dst unsafe.Pointer, src ptr, words int) error
	copy(dst, src ptr, words int) error
	zero(dst ptr, words int) error
	// gemm is cublasSgemm: column-major C = alpha·op(A)·op(B) + beta·C,
	// op(A) m×k, op(B) k×n, C m×n; beta 0 ignores C's content.
	gemm(transA, transB bool, m, n, k int, alpha float32, a ptr, lda int, b ptr, ldb int, beta float32, c ptr, ldc int) error
	// launch runs kernel k of the device's table with arguments a.
	launch(k kernelID, a []arg) error
	close() error
	// versions are the libraries and the kernels' build (self-check).
	versions() Versions
	streams // graph.go
}

// matrix is a GEMM operand: its address and leading dimension (the row
// length of a row-major matrix, the column length of a column-major one).
type matrix struct {
	p  ptr
	ld int
}

// gemmArgs are a cublasSgemm call's arguments after the handle, as
// device.gemm takes them.
type gemmArgs struct {
	transA, transB bool
	m, n, k        int
	alpha          float32
	a, b           matrix
	beta           float32
	c              matrix
}

// buffer is one device allocation: a device pointer on a GPU, a host slice
// in the emulator.
type buffer struct {
	words int
	dev   uintptr
	host  []float32
}

// ptr is an address inside a buffer: off words from its start. The zero
// ptr is NULL.
type ptr struct {
	b   *buffer
	off int
}

// at is p advanced by words.
func (p ptr) at(words int) ptr { return ptr{p.b, p.off + words} }

func (p ptr) null() bool { return p.b == nil }

// arg is one kernel argument.
type arg struct {
	kind byte // pFloats, pInts, pDoubles (p), pInt (n), pFloat (s)
	p    ptr
	n    int32
	s    float32
}

func (a arg) int() int { return int(a.n) }

func argP(p ptr) arg      { return arg{kind: pFloats, p: p} }
func argI(p ptr) arg      { return arg{kind: pInts, p: p} }
func argD(p ptr) arg      { return arg{kind: pDoubles, p: p} }
func argN(n int) arg      { return arg{kind: pInt, n: int32(n)} }
func argS(s float32) arg  { return arg{kind: pFloat, s: s} }
func args(a ...arg) []arg { return a }
func checkArgs(k *kernel, a []arg) error {
	if len(a) != len(k.params) {
		return fmt.Errorf("kernel %s: %d arguments, its signature has %d", k.name, len(a), len(k.params))
	}
	for i, p := range k.params {
		if a[i].kind != p[0] {
			return fmt.Errorf("kernel %s: argument %d (%s) of kind %c, want %c", k.name, i, p[2:], a[i].kind, p[0])
		}
	}
	return nil
}

// hostArg is an argument as the emulator's kernel twins see it: pointers
// as slices from the address to the end of the allocation (nil for NULL).
type hostArg struct {
	f []float32
	i []int32
	d []float64
	n int
	s float32
}
