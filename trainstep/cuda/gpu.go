package cuda

import (
	"errors"
	"fmt"
	"runtime"
	"unsafe"
)

// gpu is a CUDA device: the primary context of one device, a cuBLAS handle
// and the kernels' module. Its work runs on one compute stream (a
// blocking stream: the legacy default stream's work and its own are
// ordered), the batch uploads on a copy stream.
type gpu struct {
	stream     uintptr // compute: kernels, cuBLAS, copies, memsets
	copyStream uintptr // uploads from page-locked memory
	capturing  bool    // a stream capture is under way on stream
	blasWS     uintptr // cuBLAS's workspace (cublasSetWorkspace)
	drv        *driver
	blas       *cublas
	rtc        *nvrtc
	dev        int32
	info       DeviceInfo
	ctx        uintptr
	mod        uintptr
	arch       int
	cached     bool         // the kernels' PTX came from the cache
	kernels    *kernelTable // by ID: names and parameter lists
	fns        map[string]uintptr
	depth      int // nesting of enter
}

func (g *gpu) name() string { return fmt.Sprintf("cuda:%d", g.info.Ordinal) }

func (g *gpu) versions() Versions {
	return Versions{Driver: g.info.DriverVersion, NVRTC: g.rtc.version(), CUBLAS: g.blas.version(),
		Arch: g.arch, PTXCached: g.cached, Kernels: len(g.fns)}
}

// enter locks the goroutine to its OS thread and makes the context current
// there: CUDA contexts are current per thread, goroutines move.
func (g *gpu) enter() error {
	runtime.LockOSThread()
	g.depth++
	if err := g.drv.check("cuCtxSetCurrent", g.drv.cuCtxSetCurrent(g.ctx)); err != nil {
		g.exit()
		return err
	}
	return nil
}

func (g *gpu) exit() {
	g.depth--
	runtime.UnlockOSThread()
}

// refuse is errCaptureUnsupported for call during a capture: cuMemAlloc,
// cuMemFree, and copies to or from pageable memory would invalidate it.
func (g *gpu) refuse(call string) error {
	if g.capturing {
		return fmt.Errorf("%s: %w", call, errCaptureUnsupported)
	}
	return nil
}

func (g *gpu) alloc(words int) (*buffer, error) {
	if err := g.refuse("cuMemAlloc_v2"); err != nil {
		return nil, err
	}
	var p uintptr
	if err := g.drv.check("cuMemAlloc_v2", g.drv.cuMemAlloc(&p, uintptr(4*max(words, 1)))); err != nil {
		return nil, fmt.Errorf("allocating %d MiB on %s: %w", 4*words>>20, g.info, err)
	}
	return &buffer{words: words, dev: p}, nil
}

func (g *gpu) free(b *buffer) error {
	if b.dev == 0 {
		return nil
	}
	if err := g.refuse("cuMemFree_v2"); err != nil {
		return err
	}
	// Work queued on the streams may still use the buffer.
	if err := g.drv.check("cuCtxSynchronize", g.drv.cuCtxSynchronize()); err != nil {
		return err
	}
	err := g.drv.check("cuMemFree_v2", g.drv.cuMemFree(b.dev))
	b.dev = 0
	return err
}

func (g *gpu) addr(p ptr, words int) (uintptr, error) {
	if p.null() {
		return 0, nil
	}
	if p.b.dev == 0 {
		return 0, fmt.Errorf("cuda: use of a freed buffer")
	}
	if p.off < 0 || p.off+words > p.b.words {
		return 0, fmt.Errorf("cuda: %d words at offset %d of a %d-word buffer", words, p.off, p.b.words)
	}
	return p.b.dev + uintptr(4*p.off), nil
}

func (g *gpu) upload(dst ptr, src unsafe.Pointer, words int) error {
	d, err := g.addr(dst, words)
	if err != nil || words == 0 {
		return err
	}
	if err := g.refuse("cuMemcpyHtoDAsync_v2 from pageable memory"); err != nil {
		return err
	}
	// From pageable memory the driver stages src before it returns: src
	// may be reused at once, the copy is ordered on the compute stream.
	return g.drv.check("cuMemcpyHtoDAsync_v2", g.drv.cuMemcpyHtoDAsync(d, src, uintptr(4*words), g.stream))
}

func (g *gpu) download(dst unsafe.Pointer, src ptr, words int) error {
	s, err := g.addr(src, words)
	if err != nil || words == 0 {
		return err
	}
	if err := g.refuse("cuMemcpyDtoHAsync_v2 to pageable memory"); err != nil {
		return err
	}
	// After the compute stream's work before it; to pageable memory the
	// call returns once the copy is done (the synchronize makes sure).
	if err := g.drv.check("cuMemcpyDtoHAsync_v2", g.drv.cuMemcpyDtoHAsync(dst, s, uintptr(4*words), g.stream)); err != nil {
		return err
	}
	return g.drv.check("cuStreamSynchronize", g.drv.cuStreamSynchronize(g.stream))
}

func (g *gpu) copy(dst, src ptr, words int) error {
	d, err := g.addr(dst, words)
	if err != nil {
		return err
	}
	s, err := g.addr(src, words)
	if err != nil || words == 0 {
		return err
	}
	return g.drv.check("cuMemcpyDtoDAsync_v2", g.drv.cuMemcpyDtoDAsync(d, s, uintptr(4*words), g.stream))
}

func (g *gpu) zero(dst ptr, words int) error {
	d, err := g.addr(dst, words)
	if err != nil || words == 0 {
		return err
	}
	return g.drv.check("cuMemsetD32Async", g.drv.cuMemsetD32Async(d, 0, uintptr(words), g.stream))
}

func (g *gpu) gemm(transA, transB bool, m, n, k int, alpha float32, a ptr, lda int, b ptr, ldb int, beta float32, c ptr, ldc int) error {
	wa, wb, wc, err := gemmArgs{transA, transB, m, n, k, alpha, matrix{a, lda}, matrix{b, ldb}, beta, matrix{c, ldc}}.spans()
	if err != nil {
		return err
	}
	pa, err := g.addr(a, wa)
	if err != nil {
		return fmt.Errorf("gemm A: %w", err)
	}
	pb, err := g.addr(b, wb)
	if err != nil {
		return fmt.Errorf("gemm B: %w", err)
	}
	pc, err := g.addr(c, wc)
	if err != nil {
		return fmt.Errorf("gemm C: %w", err)
	}
	return g.blas.sgemm(transA, transB, m, n, k, alpha, pa, lda, pb, ldb, beta, pc, ldc)
}

// launch calls cuLaunchKernel with the arguments laid out as the driver
// reads them: an array of pointers to each argument's value, in Go memory
// pinned for the call.
func (g *gpu) launch(id kernelID, a []arg) error {
	k := g.kernels[id]
	if err := checkArgs(k, a); err != nil {
		return err
	}
	grid, block, err := launchDims(k, a)
	if err != nil {
		return err
	}
	fn, ok := g.fns[k.name]
	if !ok {
		return fmt.Errorf("cuda: kernel %s not in the module", k.name)
	}
	vals := make([]uint64, len(a))
	params := make([]unsafe.Pointer, len(a))
	var pin runtime.Pinner
	defer pin.Unpin()
	pin.Pin(&vals[0])
	for i, x := range a {
		switch x.kind {
		case pInt:
			*(*int32)(unsafe.Pointer(&vals[i])) = x.n
		case pFloat:
			*(*float32)(unsafe.Pointer(&vals[i])) = x.s
		default:
			p, err := g.addr(x.p, 0)
			if err != nil {
				return fmt.Errorf("kernel %s argument %s: %w", k.name, k.params[i][2:], err)
			}
			vals[i] = uint64(p)
		}
		params[i] = unsafe.Pointer(&vals[i])
	}
	pin.Pin(&params[0])
	res := g.drv.cuLaunchKernel(fn, uint32(grid), 1, 1, uint32(block), 1, 1, 0, g.stream, unsafe.Pointer(&params[0]), nil)
	runtime.KeepAlive(vals)
	runtime.KeepAlive(params)
	if err := g.drv.check("cuLaunchKernel", res); err != nil {
		return fmt.Errorf("launching %s (%d blocks of %d): %w", k.name, grid, block, err)
	}
	return nil
}

func (g *gpu) close() error {
	if g.ctx == 0 {
		return nil
	}
	if err := g.enter(); err != nil {
		return err
	}
	defer g.exit()
	var errs []error
	if g.stream != 0 {
		errs = append(errs, g.drv.check("cuStreamSynchronize", g.drv.cuStreamSynchronize(g.stream)))
	}
	if g.blas != nil && g.blas.handle != 0 {
		errs = append(errs, g.blas.check("cublasDestroy_v2", g.blas.cublasDestroy(g.blas.handle)))
		g.blas.handle = 0
	}
	if g.blasWS != 0 {
		errs = append(errs, g.drv.check("cuMemFree_v2", g.drv.cuMemFree(g.blasWS)))
		g.blasWS = 0
	}
	for _, s := range []*uintptr{&g.stream, &g.copyStream} {
		if *s != 0 {
			errs = append(errs, g.drv.check("cuStreamDestroy_v2", g.drv.cuStreamDestroy(*s)))
			*s = 0
		}
	}
	if g.mod != 0 {
		errs = append(errs, g.drv.check("cuModuleUnload", g.drv.cuModuleUnload(g.mod)))
		g.mod = 0
	}
	errs = append(errs, g.drv.check("cuDevicePrimaryCtxRelease_v2", g.drv.cuDevicePrimaryCtxRelease(g.dev)))
	g.ctx = 0
	for _, e := range errs {
		if e != nil {
			return e
		}
	}
	return nil
}

// cublasWorkspaceBytes is the workspace given to cuBLAS (NVIDIA's advice
// for Hopper: 32 MiB): with one set, cuBLAS allocates nothing during a
// capture.
const cublasWorkspaceBytes = 32 << 20

// setupStreams creates the compute and copy streams, puts cuBLAS on the
// compute stream with its own workspace, and selects TF32 tensor-core
// products when tf32.
func (g *gpu) setupStreams(tf32 bool) error {
	if err := g.drv.check("cuStreamCreate", g.drv.cuStreamCreate(&g.stream, streamDefault)); err != nil {
		return fmt.Errorf("creating the compute stream: %w", err)
	}
	if err := g.drv.check("cuStreamCreate", g.drv.cuStreamCreate(&g.copyStream, streamNonBlocking)); err != nil {
		return fmt.Errorf("creating the copy stream: %w", err)
	}
	if err := g.blas.check("cublasSetStream_v2", g.blas.cublasSetStream(g.blas.handle, g.stream)); err != nil {
		return err
	}
	if err := g.drv.check("cuMemAlloc_v2", g.drv.cuMemAlloc(&g.blasWS, cublasWorkspaceBytes)); err != nil {
		return fmt.Errorf("allocating cuBLAS's workspace: %w", err)
	}
	if err := g.blas.check("cublasSetWorkspace_v2", g.blas.cublasSetWorkspace(g.blas.handle, g.blasWS, cublasWorkspaceBytes)); err != nil {
		return err
	}
	mode := int32(cublasDefaultMath)
	if tf32 {
		mode = cublasTF32TensorOpMath
	}
	if err := g.blas.check("cublasSetMathMode", g.blas.cublasSetMathMode(g.blas.handle, mode)); err != nil {
		return fmt.Errorf("selecting cuBLAS math mode %d (TF32 %v): %w", mode, tf32, err)
	}
	return nil
}

// cublasMath_t values.
const (
	cublasDefaultMath      = 0
	cublasTF32TensorOpMath = 3
)

// gpuGraph is a captured graph and its executable instance.
type gpuGraph struct{ graph, exec uintptr }

// gpuEvent is a CUevent and the stream it was last recorded on.
type gpuEvent struct {
	e      uintptr
	onCopy bool
}

func (g *gpu) beginCapture() error {
	if g.capturing {
		return fmt.Errorf("cuda: a capture is already under way")
	}
	if err := g.drv.check("cuStreamBeginCapture_v2", g.drv.cuStreamBeginCapture(g.stream, captureThreadLocal)); err != nil {
		return err
	}
	g.capturing = true
	return nil
}

func (g *gpu) endCapture() (graph, error) {
	g.capturing = false
	var gr gpuGraph
	if err := g.drv.check("cuStreamEndCapture", g.drv.cuStreamEndCapture(g.stream, &gr.graph)); err != nil {
		return nil, fmt.Errorf("ending the capture of a step: %w", err)
	}
	if err := g.drv.check("cuGraphInstantiateWithFlags", g.drv.cuGraphInstantiateWithFlags(&gr.exec, gr.graph, 0)); err != nil {
		return nil, errors.Join(fmt.Errorf("instantiating a step's graph: %w", err),
			g.drv.check("cuGraphDestroy", g.drv.cuGraphDestroy(gr.graph)))
	}
	return &gr, nil
}

func (g *gpu) launchGraph(x graph) error {
	gr := x.(*gpuGraph)
	return g.drv.check("cuGraphLaunch", g.drv.cuGraphLaunch(gr.exec, g.stream))
}

func (g *gpu) destroyGraph(x graph) error {
	gr := x.(*gpuGraph)
	var errs []error
	if gr.exec != 0 {
		errs = append(errs, g.drv.check("cuGraphExecDestroy", g.drv.cuGraphExecDestroy(gr.exec)))
	}
	if gr.graph != 0 {
		errs = append(errs, g.drv.check("cuGraphDestroy", g.drv.cuGraphDestroy(gr.graph)))
	}
	*gr = gpuGraph{}
	return errors.Join(errs...)
}

func (g *gpu) allocHost(words int) (*hostBuffer, error) {
	if err := g.refuse("cuMemHostAlloc"); err != nil {
		return nil, err
	}
	var p unsafe.Pointer
	if err := g.drv.check("cuMemHostAlloc", g.drv.cuMemHostAlloc(&p, uintptr(4*words), hostAllocPortable)); err != nil {
		return nil, fmt.Errorf("allocating %d KiB of page-locked host memory: %w", 4*words>>10, err)
	}
	return &hostBuffer{words: words, host: unsafe.Slice((*float32)(p), words), p: p}, nil
}

func (g *gpu) freeHost(h *hostBuffer) error {
	if h.p == nil {
		return nil
	}
	if err := g.refuse("cuMemFreeHost"); err != nil {
		return err
	}
	err := g.drv.check("cuMemFreeHost", g.drv.cuMemFreeHost(h.p))
	h.p, h.host = nil, nil
	return err
}

func (g *gpu) uploadAsync(dst ptr, src *hostBuffer, off, words int) error {
	d, err := g.addr(dst, words)
	if err != nil || words == 0 {
		return err
	}
	if off < 0 || off+words > src.words || src.p == nil {
		return fmt.Errorf("cuda: %d words at offset %d of a %d-word host buffer", words, off, src.words)
	}
	return g.drv.check("cuMemcpyHtoDAsync_v2", g.drv.cuMemcpyHtoDAsync(d, unsafe.Add(src.p, 4*off), uintptr(4*words), g.copyStream))
}

func (g *gpu) newEvent() (event, error) {
	var e gpuEvent
	if err := g.drv.check("cuEventCreate", g.drv.cuEventCreate(&e.e, eventDisableTiming)); err != nil {
		return nil, err
	}
	return &e, nil
}

func (g *gpu) destroyEvent(x event) error {
	e := x.(*gpuEvent)
	if e.e == 0 {
		return nil
	}
	err := g.drv.check("cuEventDestroy_v2", g.drv.cuEventDestroy(e.e))
	e.e = 0
	return err
}

func (g *gpu) record(x event, onCopy bool) error {
	e := x.(*gpuEvent)
	s := g.stream
	if onCopy {
		s = g.copyStream
	}
	e.onCopy = onCopy
	return g.drv.check("cuEventRecord", g.drv.cuEventRecord(e.e, s))
}

func (g *gpu) wait(x event) error {
	e := x.(*gpuEvent)
	s := g.copyStream
	if e.onCopy {
		s = g.stream
	}
	return g.drv.check("cuStreamWaitEvent", g.drv.cuStreamWaitEvent(s, e.e, 0))
}

func (g *gpu) sync(x event) error {
	return g.drv.check("cuEventSynchronize", g.drv.cuEventSynchronize(x.(*gpuEvent).e))
}
