// Package cuda is the CUDA backend of trainstep: compute.Backend on an
// NVIDIA GPU, with no cgo and no CUDA at build time.
//
// Open finds and dlopens the driver (libcuda.so.1), NVRTC and cuBLAS with
// purego (Env says where to look; errors say what is missing and where the
// loader looked), compiles the CUDA C kernels embedded from kernels/*.cu
// with NVRTC for the device (PTX cached per source, options and
// architecture) and returns a Backend whose models keep parameters,
// gradients, optimiser state and workspace on the device; matrix products
// are cuBLAS SGEMMs, the rest the kernels. Parameter and state names are
// the CPU backend's, so checkpoints move between devices.
//
// Every kernel has a Go twin run thread by thread by the host emulator
// (Emulator), which runs the same model code; the tests compare it with
// the gorgonia CPU backend on the same batches, which checks the kernels'
// arithmetic, launches and GEMM calls on machines without a GPU.
// docs/gpu.md lists what was checked that way and what needs a GPU.
package cuda
