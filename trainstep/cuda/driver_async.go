package cuda

import (
	"fmt"
	"runtime"
	"unsafe"
)

// gpuCopier is the GPU's copyQueue: a non-blocking copy stream, an event
// marking the model's work before the copies (ready) and one marking the
// copies' end (copied), and pinned host buffers, which cuMemcpyDtoHAsync
// fills without staging and the host reads in place.
type gpuCopier struct {
	g             *gpu
	stream        uintptr
	ready, copied uintptr
	pinned        []unsafe.Pointer
}

// newGPUCopier creates the copy stream and its events; the context must be
// current (the model's enter).
func newGPUCopier(g *gpu) (*gpuCopier, error) {
	c := &gpuCopier{g: g}
	if err := g.drv.check("cuStreamCreate", g.drv.cuStreamCreate(&c.stream, streamNonBlocking)); err != nil {
		return nil, fmt.Errorf("creating the snapshot's copy stream on %s: %w", g.info, err)
	}
	for _, ev := range []*uintptr{&c.ready, &c.copied} {
		if err := g.drv.check("cuEventCreate", g.drv.cuEventCreate(ev, eventDisableTiming)); err != nil {
			return nil, fmt.Errorf("creating the snapshot's events on %s: %w", g.info, err)
		}
	}
	return c, nil
}

// hostAlloc allocates page-locked host memory (cuMemHostAlloc, flags 0),
// which the copy engine writes by DMA: the asynchronous copy needs it.
func (c *gpuCopier) hostAlloc(words int) ([]float32, error) {
	var p unsafe.Pointer
	if err := c.g.drv.check("cuMemHostAlloc", c.g.drv.cuMemHostAlloc(&p, uintptr(4*max(words, 1)), 0)); err != nil {
		return nil, fmt.Errorf("allocating %d MiB of pinned host memory for a snapshot: %w", 4*words>>20, err)
	}
	c.pinned = append(c.pinned, p)
	return unsafe.Slice((*float32)(p), max(words, 1))[:words], nil
}

// begin makes the copy stream wait for the work issued so far on the
// model's compute stream (gpu.stream): the copies see the finished step.
func (c *gpuCopier) begin() error {
	if err := c.g.drv.check("cuEventRecord", c.g.drv.cuEventRecord(c.ready, c.g.stream)); err != nil {
		return err
	}
	return c.g.drv.check("cuStreamWaitEvent", c.g.drv.cuStreamWaitEvent(c.stream, c.ready, 0))
}

// copyOut issues the copy of words words at src into dst, pinned memory of
// hostAlloc, on the copy stream.
func (c *gpuCopier) copyOut(dst []float32, src ptr, words int) error {
	s, err := c.g.addr(src, words)
	if err != nil || words == 0 {
		return err
	}
	return c.g.drv.check("cuMemcpyDtoHAsync_v2", c.g.drv.cuMemcpyDtoHAsync(unsafe.Pointer(&dst[0]), s, uintptr(4*words), c.stream))
}

// end makes the model's later work (on its compute stream) wait for the
// copies: the next Update
// overwrites what they read. The host goes on at once; the device starts
// the next step's kernels when the copies are done (the parameters and
// state over PCIe: milliseconds).
func (c *gpuCopier) end() error {
	if err := c.g.drv.check("cuEventRecord", c.g.drv.cuEventRecord(c.copied, c.stream)); err != nil {
		return err
	}
	return c.g.drv.check("cuStreamWaitEvent", c.g.drv.cuStreamWaitEvent(c.g.stream, c.copied, 0))
}

// wait blocks until the copy stream's work is done, on any goroutine: it
// makes the context current on its own OS thread for the call.
func (c *gpuCopier) wait() error {
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	if err := c.g.drv.check("cuCtxSetCurrent", c.g.drv.cuCtxSetCurrent(c.g.ctx)); err != nil {
		return err
	}
	return c.g.drv.check("cuStreamSynchronize", c.g.drv.cuStreamSynchronize(c.stream))
}

// close waits for the copies and frees the pinned memory, the events and
// the stream; the context must be current.
func (c *gpuCopier) close() error {
	var errs []error
	if c.stream != 0 {
		errs = append(errs, c.g.drv.check("cuStreamSynchronize", c.g.drv.cuStreamSynchronize(c.stream)))
	}
	for _, p := range c.pinned {
		errs = append(errs, c.g.drv.check("cuMemFreeHost", c.g.drv.cuMemFreeHost(p)))
	}
	c.pinned = nil
	for _, ev := range []*uintptr{&c.ready, &c.copied} {
		if *ev != 0 {
			errs = append(errs, c.g.drv.check("cuEventDestroy_v2", c.g.drv.cuEventDestroy(*ev)))
			*ev = 0
		}
	}
	if c.stream != 0 {
		errs = append(errs, c.g.drv.check("cuStreamDestroy_v2", c.g.drv.cuStreamDestroy(c.stream)))
		c.stream = 0
	}
	for _, e := range errs {
		if e != nil {
			return e
		}
	}
	return nil
}
