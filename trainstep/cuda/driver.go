package cuda

import (
	"fmt"
	"unsafe"
)

// Device attributes (CUdevice_attribute) read by the backend.
const (
	attrMaxThreadsPerBlock = 1
	attrMaxGridDimX        = 5
	attrComputeCapMajor    = 75
	attrComputeCapMinor    = 76
)

// driver is the part of the CUDA driver API (libcuda.so.1) the backend
// uses, bound at run time with purego. The C types: CUresult, CUdevice and
// enums are int32; CUcontext, CUmodule, CUfunction, CUstream are pointers
// (uintptr); CUdeviceptr is a 64-bit integer (uintptr); size_t is uintptr.
type driver struct {
	path      string
	streamAPI // driver_graph.go

	cuInit                    func(flags uint32) int32
	cuDriverGetVersion        func(v *int32) int32
	cuGetErrorString          func(res int32, str **byte) int32
	cuDeviceGetCount          func(n *int32) int32
	cuDeviceGet               func(dev *int32, ordinal int32) int32
	cuDeviceGetName           func(name *byte, n int32, dev int32) int32
	cuDeviceGetAttribute      func(v *int32, attr int32, dev int32) int32
	cuDeviceTotalMem          func(bytes *uintptr, dev int32) int32
	cuDevicePrimaryCtxRetain  func(ctx *uintptr, dev int32) int32
	cuDevicePrimaryCtxRelease func(dev int32) int32
	cuCtxSetCurrent           func(ctx uintptr) int32
	cuCtxSynchronize          func() int32
	cuMemAlloc                func(p *uintptr, bytes uintptr) int32
	cuMemFree                 func(p uintptr) int32
	cuMemcpyHtoD              func(dst uintptr, src unsafe.Pointer, bytes uintptr) int32
	cuMemcpyDtoH              func(dst unsafe.Pointer, src uintptr, bytes uintptr) int32
	cuMemcpyDtoD              func(dst, src uintptr, bytes uintptr) int32
	cuMemsetD32               func(dst uintptr, v uint32, n uintptr) int32
	cuModuleLoadData          func(mod *uintptr, image unsafe.Pointer) int32
	cuModuleUnload            func(mod uintptr) int32
	cuModuleGetFunction       func(fn *uintptr, mod uintptr, name string) int32
	cuLaunchKernel            func(fn uintptr, gx, gy, gz, bx, by, bz, shared uint32, stream uintptr, params unsafe.Pointer, extra unsafe.Pointer) int32
	cuStreamSynchronize       func(stream uintptr) int32
}

// loadDriver opens libcuda and binds the functions (their current ABI
// versions: the _v2 entry points of CUDA 3.2 and later, still exported by
// CUDA 13 drivers).
func loadDriver(env Env) (*driver, error) {
	h, path, err := env.openLibrary(libCUDA())
	if err != nil {
		return nil, err
	}
	d := &driver{path: path}
	s := &symbols{lib: path, handle: h}
	s.bind(&d.cuInit, "cuInit")
	s.bind(&d.cuDriverGetVersion, "cuDriverGetVersion")
	s.bind(&d.cuGetErrorString, "cuGetErrorString")
	s.bind(&d.cuDeviceGetCount, "cuDeviceGetCount")
	s.bind(&d.cuDeviceGet, "cuDeviceGet")
	s.bind(&d.cuDeviceGetName, "cuDeviceGetName")
	s.bind(&d.cuDeviceGetAttribute, "cuDeviceGetAttribute")
	s.bind(&d.cuDeviceTotalMem, "cuDeviceTotalMem_v2")
	s.bind(&d.cuDevicePrimaryCtxRetain, "cuDevicePrimaryCtxRetain")
	s.bind(&d.cuDevicePrimaryCtxRelease, "cuDevicePrimaryCtxRelease_v2")
	s.bind(&d.cuCtxSetCurrent, "cuCtxSetCurrent")
	s.bind(&d.cuCtxSynchronize, "cuCtxSynchronize")
	s.bind(&d.cuMemAlloc, "cuMemAlloc_v2")
	s.bind(&d.cuMemFree, "cuMemFree_v2")
	s.bind(&d.cuMemcpyHtoD, "cuMemcpyHtoD_v2")
	s.bind(&d.cuMemcpyDtoH, "cuMemcpyDtoH_v2")
	s.bind(&d.cuMemcpyDtoD, "cuMemcpyDtoD_v2")
	s.bind(&d.cuMemsetD32, "cuMemsetD32_v2")
	s.bind(&d.cuModuleLoadData, "cuModuleLoadData")
	s.bind(&d.cuModuleUnload, "cuModuleUnload")
	s.bind(&d.cuModuleGetFunction, "cuModuleGetFunction")
	s.bind(&d.cuLaunchKernel, "cuLaunchKernel")
	s.bind(&d.cuStreamSynchronize, "cuStreamSynchronize")
	d.bindStreams(s)
	if s.err != nil {
		return nil, s.err
	}
	return d, nil
}

// check turns a CUresult into an error (nil for CUDA_SUCCESS).
func (d *driver) check(call string, res int32) error {
	if res == 0 {
		return nil
	}
	msg := "unknown error"
	var p *byte
	if d.cuGetErrorString(res, &p) == 0 && p != nil {
		msg = cString(p)
	}
	return &Error{Call: call, Code: int(res), Msg: msg}
}

// cString copies a NUL-terminated C string.
func cString(p *byte) string {
	if p == nil {
		return ""
	}
	n := 0
	for *(*byte)(unsafe.Add(unsafe.Pointer(p), n)) != 0 {
		n++
	}
	return string(unsafe.Slice(p, n))
}

// DeviceInfo describes a CUDA device.
type DeviceInfo struct {
	Ordinal       int
	Name          string
	Major, Minor  int // compute capability
	MemoryBytes   uint64
	DriverVersion int // e.g. 13000 for CUDA 13.0
}

func (i DeviceInfo) String() string {
	return fmt.Sprintf("cuda:%d %s (compute %d.%d, %.1f GiB, driver CUDA %d.%d)", i.Ordinal, i.Name, i.Major, i.Minor,
		float64(i.MemoryBytes)/(1<<30), i.DriverVersion/1000, i.DriverVersion%1000/10)
}

// device initialises the driver and describes device ordinal.
func (d *driver) device(ordinal int) (int32, DeviceInfo, error) {
	info := DeviceInfo{Ordinal: ordinal}
	if err := d.check("cuInit", d.cuInit(0)); err != nil {
		return 0, info, fmt.Errorf("%w: initialising the driver %s: %w", ErrNoDevice, d.path, err)
	}
	var v, n int32
	if err := d.check("cuDriverGetVersion", d.cuDriverGetVersion(&v)); err != nil {
		return 0, info, err
	}
	info.DriverVersion = int(v)
	if err := d.check("cuDeviceGetCount", d.cuDeviceGetCount(&n)); err != nil {
		return 0, info, err
	}
	if ordinal < 0 || ordinal >= int(n) {
		return 0, info, fmt.Errorf("%w: cuda:%d asked for, the driver %s sees %d device(s)", ErrNoDevice, ordinal, d.path, n)
	}
	var dev int32
	if err := d.check("cuDeviceGet", d.cuDeviceGet(&dev, int32(ordinal))); err != nil {
		return 0, info, err
	}
	name := make([]byte, 256)
	if err := d.check("cuDeviceGetName", d.cuDeviceGetName(&name[0], int32(len(name)), dev)); err != nil {
		return 0, info, err
	}
	info.Name = cString(&name[0])
	attr := func(a int32) (int, error) {
		var x int32
		err := d.check("cuDeviceGetAttribute", d.cuDeviceGetAttribute(&x, a, dev))
		return int(x), err
	}
	var err error
	if info.Major, err = attr(attrComputeCapMajor); err != nil {
		return 0, info, err
	}
	if info.Minor, err = attr(attrComputeCapMinor); err != nil {
		return 0, info, err
	}
	var mem uintptr
	if err := d.check("cuDeviceTotalMem_v2", d.cuDeviceTotalMem(&mem, dev)); err != nil {
		return 0, info, err
	}
	info.MemoryBytes = uint64(mem)
	threads, err := attr(attrMaxThreadsPerBlock)
	if err != nil {
		return 0, info, err
	}
	grid, err := attr(attrMaxGridDimX)
	if err != nil {
		return 0, info, err
	}
	if threads < BlockSize || grid < 65535 {
		return 0, info, fmt.Errorf("%w: %s allows %d threads a block and %d blocks; the kernels need %d and more", ErrNoDevice, info, threads, grid, BlockSize)
	}
	return dev, info, nil
}
