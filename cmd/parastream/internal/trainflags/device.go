package trainflags

import (
	"flag"
	"fmt"

	"github.com/parastream/parastream/trainstep/compute"
	"github.com/parastream/parastream/trainstep/cpu"
	"github.com/parastream/parastream/trainstep/cpu/cblas"
	"github.com/parastream/parastream/trainstep/cuda"
	"github.com/parastream/parastream/trainstep/device"
)

// DeviceFlagNames are the flags of Device, in the order of the help's
// "device" group.
func DeviceFlagNames() []string {
	return []string{"device", "cuda-lib-dir", "cuda-graphs", "tf32", "blas", "blas-threads", "memory-budget", "max-graphs"}
}

// Device declares c's flags on fs, with c's defaults: --device,
// --cuda-lib-dir, --cuda-graphs and --tf32, and the CPU's --max-graphs,
// --blas, --blas-threads and --memory-budget (the names device.Config's
// errors and notes use).
func Device(fs *flag.FlagSet, c *device.Config) {
	if c.Device == "" {
		c.Device = "cpu"
	}
	if c.BLAS == "" {
		c.BLAS = cpu.BLASAuto
	}
	if c.MemoryBudget == "" {
		c.MemoryBudget = "0"
	}
	fs.StringVar(&c.Device, "device", c.Device, "where to train: cpu, cuda (GPU 0), cuda:N, or auto (the GPU when a driver and device are found and the model is one the CUDA backend has, else the CPU)")
	fs.StringVar(&c.CUDALibDir, "cuda-lib-dir", c.CUDALibDir, "directory of libcuda.so.1, libcublas and libnvrtc, searched before LD_LIBRARY_PATH and the usual places (default $"+cuda.LibDirEnv+")")
	fs.IntVar(&c.MaxGraphs, "max-graphs", c.MaxGraphs, "CPU: most compiled graphs kept, one per batch shape, least recently used dropped first (0: no bound but --memory-budget's)")
	fs.StringVar(&c.BLAS, "blas", c.BLAS, "CPU: the BLAS of the matrix products: auto (OpenBLAS, loaded at run time, when the machine has it, else gonum's pure-Go BLAS), go (gonum), or openblas (an error without it; Debian: apt-get install libopenblas0); $"+cblas.LibEnv+" names the library's file")
	fs.IntVar(&c.BLASThreads, "blas-threads", c.BLASThreads, "CPU: OpenBLAS's threads (0: its default, $OPENBLAS_NUM_THREADS or one a core)")
	fs.StringVar(&c.MemoryBudget, "memory-budget", c.MemoryBudget, fmt.Sprintf("CPU: most memory training takes, as 4GiB or 3000MB: parameters, optimiser state, compiled graphs (least recently used dropped first) and %s for the rest; a batch whose graph alone passes it stops the run at once (0: 1/%d of the memory this process may use, from its cgroup's limit and /proc/meminfo)",
		compute.FormatBytes(device.MemoryReserve), device.DefaultMemoryFraction))
	fs.BoolVar(&c.CUDAGraphs, "cuda-graphs", true, "CUDA: capture a training step once per batch shape (rows, length) as a CUDA graph and replay it, one launch a step instead of hundreds (false: launch every kernel and GEMM one by one)")
	fs.BoolVar(&c.TF32, "tf32", c.TF32, "CUDA: let cuBLAS multiply on TF32 tensor cores (Ampere and later): faster products whose inputs keep 10 of float32's 23 mantissa bits, sums in float32 (docs/gpu.md gives the accuracy against fp32)")
}
