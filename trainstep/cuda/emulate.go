package cuda

import (
	"fmt"
	"math"
	"slices"
	"unsafe"
)

// emulator is the host device: buffers are Go slices, kernels run their Go
// twins thread by thread over the grid that a GPU launch would have
// (blocks of BlockSize threads, the same guards), and gemm follows
// cublasSgemm's column-major contract. It exists to check the model's
// kernels and calls without a GPU; it is slow.
//
// It models the GPU's streams as far as the model's correctness depends
// on them: during a capture the compute stream's work is recorded, not
// run, and calls a capture cannot hold are refused; a graph replays the
// recording; uploads on the copy stream are held back until an event
// recorded after them is waited for (so a step that read its batch
// without waiting would read the previous one), and they read the
// page-locked host buffer when they run, not when issued.
type emulator struct {
	kernels  *kernelTable // the Go twins, by ID
	launches map[string]int
	tf32     bool       // gemm rounds its operands to TF32, as cuBLAS's TF32 mode
	rec      *recording // the capture under way
	copyQ    []func()   // uploads issued on the copy stream, not yet run
	copyDone int        // uploads run so far (copyQ holds those after)
}

func newEmulator() *emulator {
	return &emulator{kernels: newKernels(), launches: map[string]int{}}
}

// recording is a captured graph: the compute stream's calls, replayed in
// order.
type recording struct {
	ops       []func() error
	destroyed bool
}

// emuEvent marks the work issued on a stream when recorded: on the copy
// stream, the uploads up to upto; the compute stream's work is done when
// issued.
type emuEvent struct {
	onCopy bool
	upto   int
}

// capture records op instead of running it during a capture.
func (e *emulator) capture(op func() error) (bool, error) {
	if e.rec == nil {
		return false, nil
	}
	e.rec.ops = append(e.rec.ops, op)
	return true, nil
}

// refuse is errCaptureUnsupported for call during a capture.
func (e *emulator) refuse(call string) error {
	if e.rec != nil {
		return fmt.Errorf("emulator: %s: %w", call, errCaptureUnsupported)
	}
	return nil
}

func (e *emulator) beginCapture() error {
	if e.rec != nil {
		return fmt.Errorf("emulator: a capture is already under way")
	}
	e.rec = &recording{}
	return nil
}

func (e *emulator) endCapture() (graph, error) {
	r := e.rec
	e.rec = nil
	if r == nil {
		return nil, fmt.Errorf("emulator: no capture under way")
	}
	return r, nil
}

func (e *emulator) launchGraph(g graph) error {
	if err := e.refuse("launching a graph"); err != nil {
		return err
	}
	r := g.(*recording)
	if r.destroyed {
		return fmt.Errorf("emulator: launch of a destroyed graph")
	}
	for _, op := range r.ops {
		if err := op(); err != nil {
			return fmt.Errorf("replaying a graph: %w", err)
		}
	}
	return nil
}

func (e *emulator) destroyGraph(g graph) error {
	r := g.(*recording)
	r.ops, r.destroyed = nil, true
	return nil
}

func (e *emulator) allocHost(words int) (*hostBuffer, error) {
	if err := e.refuse("cuMemHostAlloc"); err != nil {
		return nil, err
	}
	return &hostBuffer{words: words, host: make([]float32, words)}, nil
}

func (e *emulator) freeHost(h *hostBuffer) error { h.host = nil; return nil }

func (e *emulator) uploadAsync(dst ptr, src *hostBuffer, off, words int) error {
	d, err := e.span(dst, words)
	if err != nil {
		return err
	}
	if off < 0 || off+words > len(src.host) {
		return fmt.Errorf("emulator: %d words at offset %d of a %d-word host buffer", words, off, len(src.host))
	}
	e.copyQ = append(e.copyQ, func() { copy(d, src.host[off:off+words]) })
	return nil
}

func (e *emulator) newEvent() (event, error) { return &emuEvent{}, nil }
func (e *emulator) destroyEvent(event) error { return nil }
func (e *emulator) wait(x event) error       { return e.flush(x.(*emuEvent)) }
func (e *emulator) sync(x event) error       { return e.flush(x.(*emuEvent)) }
func (e *emulator) issuedCopies() int        { return e.copyDone + len(e.copyQ) }
func (e *emulator) record(x event, c bool) error {
	*x.(*emuEvent) = emuEvent{onCopy: c, upto: e.issuedCopies()}
	return nil
}

// flush runs the copy stream's uploads up to those ev follows.
func (e *emulator) flush(ev *emuEvent) error {
	if !ev.onCopy {
		return nil // the compute stream's work is done when issued
	}
	for e.copyDone < ev.upto {
		e.copyQ[0]()
		e.copyQ = e.copyQ[1:]
		e.copyDone++
	}
	return nil
}

func (e *emulator) name() string { return "cuda-emulator" }
func (e *emulator) enter() error { return nil }
func (e *emulator) exit()        {}
func (e *emulator) close() error { return nil }

func (e *emulator) versions() Versions { return Versions{Kernels: len(e.kernels)} }

func (e *emulator) alloc(words int) (*buffer, error) {
	if err := e.refuse("cuMemAlloc"); err != nil {
		return nil, err
	}
	// One spare word keeps 8-byte alignment for double views.
	return &buffer{words: words, host: make([]float32, words, words+1)}, nil
}

func (e *emulator) free(b *buffer) error {
	if err := e.refuse("cuMemFree"); err != nil {
		return err
	}
	b.host = nil
	return nil
}

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
	if err := e.refuse("a copy from pageable memory"); err != nil {
		return err
	}
	d, err := e.span(dst, words)
	if err != nil {
		return err
	}
	copy(d, unsafe.Slice((*float32)(src), words))
	return nil
}

func (e *emulator) download(dst unsafe.Pointer, src ptr, words int) error {
	if err := e.refuse("a copy to pageable memory"); err != nil {
		return err
	}
	s, err := e.span(src, words)
	if err != nil {
		return err
	}
	copy(unsafe.Slice((*float32)(dst), words), s)
	return nil
}

func (e *emulator) copy(dst, src ptr, words int) error {
	if ok, err := e.capture(func() error { return e.copyNow(dst, src, words) }); ok {
		return err
	}
	return e.copyNow(dst, src, words)
}

func (e *emulator) copyNow(dst, src ptr, words int) error {
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
	if ok, err := e.capture(func() error { return e.zeroNow(dst, words) }); ok {
		return err
	}
	return e.zeroNow(dst, words)
}

func (e *emulator) zeroNow(dst ptr, words int) error {
	d, err := e.span(dst, words)
	if err != nil {
		return err
	}
	clear(d)
	return nil
}

// gemm is the reference semantics of cublasSgemm (column-major); in TF32
// mode A and B are rounded to TF32 (10-bit mantissa, as cvt.rna.tf32.f32)
// and the products accumulated in float32, as tensor cores do.
func (e *emulator) gemm(transA, transB bool, m, n, k int, alpha float32, a ptr, lda int, b ptr, ldb int, beta float32, c ptr, ldc int) error {
	g := gemmArgs{transA, transB, m, n, k, alpha, matrix{a, lda}, matrix{b, ldb}, beta, matrix{c, ldc}}
	wa, wb, wc, err := g.spans()
	if err != nil {
		return err
	}
	for _, x := range []struct {
		what  string
		p     ptr
		words int
	}{{"A", a, wa}, {"B", b, wb}, {"C", c, wc}} {
		if _, err := e.span(x.p, x.words); err != nil {
			return fmt.Errorf("gemm %s: %w", x.what, err)
		}
	}
	if ok, err := e.capture(func() error { return e.gemmNow(g) }); ok {
		return err
	}
	return e.gemmNow(g)
}

func (e *emulator) gemmNow(g gemmArgs) error {
	transA, transB, m, n, k, alpha, beta := g.transA, g.transB, g.m, g.n, g.k, g.alpha, g.beta
	a, lda, b, ldb, c, ldc := g.a.p, g.a.ld, g.b.p, g.b.ld, g.c.p, g.c.ld
	wa, wb, wc, _ := g.spans()
	round := func(v float32) float32 { return v }
	if e.tf32 {
		round = TF32
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
				s += round(av) * round(bv)
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

// spans checks a cublasSgemm call's sizes as cuBLAS does
// (CUBLAS_STATUS_INVALID_VALUE) and returns how many words of A, B and C
// it reads or writes from their start.
func (g gemmArgs) spans() (wa, wb, wc int, err error) {
	transA, transB, m, n, k, lda, ldb, ldc := g.transA, g.transB, g.m, g.n, g.k, g.a.ld, g.b.ld, g.c.ld
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

// launch runs k's Go twin for every thread of the grid, block by block
// (during a capture: records the launch with a copy of its arguments, as
// cuLaunchKernel's parameters are copied into the graph's node).
func (e *emulator) launch(id kernelID, a []arg) error {
	k := e.kernels[id]
	if err := checkArgs(k, a); err != nil {
		return err
	}
	if _, _, err := launchDims(k, a); err != nil {
		return err
	}
	a = slices.Clone(a)
	if ok, err := e.capture(func() error { return e.launchNow(k, a) }); ok {
		return err
	}
	return e.launchNow(k, a)
}

func (e *emulator) launchNow(k *kernel, a []arg) error {
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

// TF32 rounds v to TF32 as cvt.rna.tf32.f32 does: the 13 low mantissa
// bits dropped, to nearest with ties away from zero (NaN and infinities
// kept).
func TF32(v float32) float32 {
	b := math.Float32bits(v)
	if b&0x7f800000 == 0x7f800000 {
		return v
	}
	return math.Float32frombits((b + 0x1000) &^ 0x1fff)
}
