package cuda

import (
	"fmt"
	"runtime"
	"unsafe"
)

// gpu is a CUDA device: the primary context of one device, a cuBLAS handle
// and the kernels' module, all on the default stream.
type gpu struct {
	drv   *driver
	blas  *cublas
	rtc   *nvrtc
	dev   int32
	info  DeviceInfo
	ctx   uintptr
	mod   uintptr
	arch  int
	fns   map[string]uintptr
	depth int // nesting of enter
}

func (g *gpu) name() string { return fmt.Sprintf("cuda:%d", g.info.Ordinal) }

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

func (g *gpu) alloc(words int) (*buffer, error) {
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
	return g.drv.check("cuMemcpyHtoD_v2", g.drv.cuMemcpyHtoD(d, src, uintptr(4*words)))
}

func (g *gpu) download(dst unsafe.Pointer, src ptr, words int) error {
	s, err := g.addr(src, words)
	if err != nil || words == 0 {
		return err
	}
	return g.drv.check("cuMemcpyDtoH_v2", g.drv.cuMemcpyDtoH(dst, s, uintptr(4*words)))
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
	return g.drv.check("cuMemcpyDtoD_v2", g.drv.cuMemcpyDtoD(d, s, uintptr(4*words)))
}

func (g *gpu) zero(dst ptr, words int) error {
	d, err := g.addr(dst, words)
	if err != nil || words == 0 {
		return err
	}
	return g.drv.check("cuMemsetD32_v2", g.drv.cuMemsetD32(d, 0, uintptr(words)))
}

func (g *gpu) gemm(transA, transB bool, m, n, k int, alpha float32, a ptr, lda int, b ptr, ldb int, beta float32, c ptr, ldc int) error {
	wa, wb, wc, err := gemmSpans(transA, transB, m, n, k, lda, ldb, ldc)
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
func (g *gpu) launch(k *kernel, a []arg) error {
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
	res := g.drv.cuLaunchKernel(fn, uint32(grid), 1, 1, uint32(block), 1, 1, 0, 0, unsafe.Pointer(&params[0]), nil)
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
	if g.blas != nil && g.blas.handle != 0 {
		errs = append(errs, g.blas.check("cublasDestroy_v2", g.blas.cublasDestroy(g.blas.handle)))
		g.blas.handle = 0
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
