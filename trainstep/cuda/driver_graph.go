package cuda

import "unsafe"

// The driver API of streams, stream capture into CUDA graphs, events and
// page-locked host memory (libcuda.so.1; CUDA 11.4 or later for
// cuGraphInstantiateWithFlags). C types as in driver.go: CUstream,
// CUgraph, CUgraphExec and CUevent are pointers (uintptr).
type streamAPI struct {
	cuStreamCreate              func(s *uintptr, flags uint32) int32
	cuStreamDestroy             func(s uintptr) int32
	cuStreamBeginCapture        func(s uintptr, mode int32) int32
	cuStreamEndCapture          func(s uintptr, graph *uintptr) int32
	cuGraphInstantiateWithFlags func(exec *uintptr, graph uintptr, flags uint64) int32
	cuGraphLaunch               func(exec uintptr, s uintptr) int32
	cuGraphExecDestroy          func(exec uintptr) int32
	cuGraphDestroy              func(graph uintptr) int32
	cuEventCreate               func(e *uintptr, flags uint32) int32
	cuEventRecord               func(e uintptr, s uintptr) int32
	cuEventSynchronize          func(e uintptr) int32
	cuEventDestroy              func(e uintptr) int32
	cuStreamWaitEvent           func(s uintptr, e uintptr, flags uint32) int32
	cuMemHostAlloc              func(p *unsafe.Pointer, bytes uintptr, flags uint32) int32
	cuMemFreeHost               func(p unsafe.Pointer) int32
	cuMemcpyHtoDAsync           func(dst uintptr, src unsafe.Pointer, bytes uintptr, s uintptr) int32
	cuMemcpyDtoHAsync           func(dst unsafe.Pointer, src uintptr, bytes uintptr, s uintptr) int32
	cuMemcpyDtoDAsync           func(dst, src uintptr, bytes uintptr, s uintptr) int32
	cuMemsetD32Async            func(dst uintptr, v uint32, n uintptr, s uintptr) int32
}

// Flags and modes of the calls above (cuda.h).
const (
	// streamDefault (CU_STREAM_DEFAULT) makes a blocking stream: work on
	// the legacy default stream waits for it and it for that work.
	streamDefault = 0
	// streamNonBlocking (CU_STREAM_NON_BLOCKING): the copy stream runs
	// beside the legacy default stream, ordered by events alone.
	streamNonBlocking = 1
	// captureThreadLocal (CU_STREAM_CAPTURE_MODE_THREAD_LOCAL) refuses
	// unsafe calls (a synchronous copy, cuMemAlloc) made by the capturing
	// thread only: the backend holds its OS thread for the whole capture
	// (gpu.enter), and other threads (a checkpoint writer) are left alone.
	captureThreadLocal = 1
	// eventDisableTiming (CU_EVENT_DISABLE_TIMING): events that only
	// order work are cheaper without timestamps.
	eventDisableTiming = 2
	// hostAllocPortable (CU_MEMHOSTALLOC_PORTABLE): the page-locked
	// memory is pinned for every context.
	hostAllocPortable = 1
)

// bindStreams binds the streamAPI from libcuda's symbols s.
func (a *streamAPI) bindStreams(s *symbols) {
	s.bind(&a.cuStreamCreate, "cuStreamCreate")
	s.bind(&a.cuStreamDestroy, "cuStreamDestroy_v2")
	s.bind(&a.cuStreamBeginCapture, "cuStreamBeginCapture_v2")
	s.bind(&a.cuStreamEndCapture, "cuStreamEndCapture")
	s.bind(&a.cuGraphInstantiateWithFlags, "cuGraphInstantiateWithFlags")
	s.bind(&a.cuGraphLaunch, "cuGraphLaunch")
	s.bind(&a.cuGraphExecDestroy, "cuGraphExecDestroy")
	s.bind(&a.cuGraphDestroy, "cuGraphDestroy")
	s.bind(&a.cuEventCreate, "cuEventCreate")
	s.bind(&a.cuEventRecord, "cuEventRecord")
	s.bind(&a.cuEventSynchronize, "cuEventSynchronize")
	s.bind(&a.cuEventDestroy, "cuEventDestroy_v2")
	s.bind(&a.cuStreamWaitEvent, "cuStreamWaitEvent")
	s.bind(&a.cuMemHostAlloc, "cuMemHostAlloc")
	s.bind(&a.cuMemFreeHost, "cuMemFreeHost")
	s.bind(&a.cuMemcpyHtoDAsync, "cuMemcpyHtoDAsync_v2")
	s.bind(&a.cuMemcpyDtoHAsync, "cuMemcpyDtoHAsync_v2")
	s.bind(&a.cuMemcpyDtoDAsync, "cuMemcpyDtoDAsync_v2")
	s.bind(&a.cuMemsetD32Async, "cuMemsetD32Async")
}
