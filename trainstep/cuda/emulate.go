package cuda

import (
	"fmt"
	"unsafe"
)

// emulator is the host device: buffers are Go slices, kernels run their Go
// twins thread by thread over the grid that a GPU launch would have
// (blocks of BlockSize threads, the same guards), and gemm follows
// cublasSgemm's column-major contract. It exists to check the model's
// kernels and calls without a GPU; it is slow.
type emulator struct{ launches map[string]int }

func newEmulator() *emulator { return &emulator{launches: map[string]int{}} }

func (e *emulator) name() string { return "cuda-emulator" }
func (e *emulator) enter() error { return nil }
func (e *emulator) exit()        {}
func (e *emulator) close() error { return nil }

func (e *emulator) alloc(words int) (*buffer, error) {
	// One spare word keeps 8-byte alignment for double views.
	return &buffer{words: words, host: make([]float32, words, words+1)}, nil
}

func (e *emulator) free(b *buffer) error { b.host = nil; return nil }

func (e *emulator) span(p ptr, words int) ([]float32, error) {
	if p.null() || p.b.host == nil {
		return nil, fmt.Errorf("emulator: access through a NULL or freed pointer")
	}
	if p.off < 0 || p.off+words > p.b.words {
		return nil, fmt.Errorf("emulator: %d words at offset %d of a %d-word buffer", words, p.off, p.b.words)
	}
	return p.b.host[p.off : p.off+words], nil
}

func (e *emulator) upload(dst ptr, src unsafe.Pointer, words int) error {
	d, err := e.span(dst, words)
	if err != nil {
		return err
	}
	copy(d, unsafe.Slice((*float32)(src), words))
	return nil
}

func (e *emulator) download(dst unsafe.Pointer, src ptr, words int) error {
	s, err := e.span(src, words)
	if err != nil {
		return err
	}
	copy(unsafe.Slice((*float32)(dst), words), s)
	return nil
}

func (e *emulator) copy(dst, src ptr, words int) error {
	d, err := e.span(dst, words)
	if err != nil {
		return err
	}
	s, err := e.span(src, words)
	if err != nil {
		return err
	}
	copy(d, s)
	return nil
}

func (e *emulator) zero(dst ptr, words int) error {
	d, err := e.span(dst, words)
	if err != nil {
		return err
	}
	clear(d)
	return nil
}

// gemm is the reference semantics of cublasSgemm (column-major).
func (e *emulator) gemm(transA, transB bool, m, n, k int, alpha float32, a ptr, lda int, b ptr, ldb int, beta float32, c ptr, ldc int) error {
	wa, wb, wc, err := gemmSpans(transA, transB, m, n, k, lda, ldb, ldc)
	if err != nil {
		return err
	}
	A, err := e.span(a, wa)
	if err != nil {
		return fmt.Errorf("gemm A: %w", err)
	}
	B, err := e.span(b, wb)
	if err != nil {
		return fmt.Errorf("gemm B: %w", err)
	}
	C, err := e.span(c, wc)
	if err != nil {
		return fmt.Errorf("gemm C: %w", err)
	}
	for j := range n {
		for i := range m {
			var s float32
			for l := range k {
				var av, bv float32
				if transA {
					av = A[l+i*lda]
				} else {
					av = A[i+l*lda]
				}
				if transB {
					bv = B[j+l*ldb]
				} else {
					bv = B[l+j*ldb]
				}
				s += av * bv
			}
			if beta == 0 {
				C[i+j*ldc] = alpha * s
			} else {
				C[i+j*ldc] = alpha*s + beta*C[i+j*ldc]
			}
		}
	}
	return nil
}

// gemmSpans checks a cublasSgemm call's sizes as cuBLAS does
// (CUBLAS_STATUS_INVALID_VALUE) and returns how many words of A, B and C
// it reads or writes from their start.
func gemmSpans(transA, transB bool, m, n, k, lda, ldb, ldc int) (wa, wb, wc int, err error) {
	ar, ac := m, k // A as stored, column-major
	if transA {
		ar, ac = k, m
	}
	br, bc := k, n
	if transB {
		br, bc = n, k
	}
	if m <= 0 || n <= 0 || k <= 0 || lda < max(1, ar) || ldb < max(1, br) || ldc < max(1, m) {
		return 0, 0, 0, fmt.Errorf("gemm: invalid sizes m %d n %d k %d lda %d ldb %d ldc %d (transA %v, transB %v)", m, n, k, lda, ldb, ldc, transA, transB)
	}
	return lda*(ac-1) + ar, ldb*(bc-1) + br, ldc*(n-1) + m, nil
}

// launch runs k's Go twin for every thread of the grid, block by block.
func (e *emulator) launch(k *kernel, a []arg) error {
	if err := checkArgs(k, a); err != nil {
		return err
	}
	grid, block, err := launchDims(k, a)
	if err != nil {
		return err
	}
	ha := make([]hostArg, len(a))
	for i, x := range a {
		switch x.kind {
		case pInt:
			ha[i].n = int(x.n)
		case pFloat:
			ha[i].s = x.s
		default:
			if x.p.null() {
				continue
			}
			if _, err := e.span(x.p, 0); err != nil {
				return fmt.Errorf("kernel %s argument %s: %w", k.name, k.params[i][2:], err)
			}
			s := x.p.b.host[x.p.off:x.p.b.words]
			switch x.kind {
			case pFloats:
				ha[i].f = s
			case pInts:
				ha[i].i = unsafe.Slice((*int32)(unsafe.Pointer(unsafe.SliceData(s))), len(s))
			case pDoubles:
				if uintptr(unsafe.Pointer(unsafe.SliceData(s)))%8 != 0 {
					return fmt.Errorf("kernel %s argument %s: double pointer not 8-byte aligned", k.name, k.params[i][2:])
				}
				ha[i].d = unsafe.Slice((*float64)(unsafe.Pointer(unsafe.SliceData(s))), len(s)/2)
			}
		}
	}
	e.launches[k.name]++
	for bx := range grid {
		for tx := range block {
			k.body(bx*block+tx, grid*block, ha)
		}
	}
	return nil
}
