package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"

	"github.com/parastream/parastream/internal/cli"
	"github.com/parastream/parastream/internal/sysmem"
	"github.com/parastream/parastream/trainstep/compute"
	"github.com/parastream/parastream/trainstep/cpu"
	"github.com/parastream/parastream/trainstep/cpu/cblas"
	"github.com/parastream/parastream/trainstep/cuda"
	"github.com/parastream/parastream/trainstep/device"
)

// deviceFlags are --device, --cuda-lib-dir, --cuda-graphs, --tf32 and the
// CPU's --memory-budget, --max-graphs, --blas and --blas-threads: a
// device.Config.
type deviceFlags struct {
	device, libDir, blas   *string
	maxGraphs, blasThreads *int
	memoryBudget           *string
	cudaGraphs, tf32       *bool
	// limit is the memory this process may use (sysmem.Limit); tests set
	// it.
	limit func() (int64, error)
}

func addDeviceFlags(fs *flag.FlagSet) deviceFlags {
	return deviceFlags{
		device:      fs.String("device", "cpu", "where to train: cpu, cuda (GPU 0), cuda:N, or auto (the GPU when a driver and device are found and the model is one the CUDA backend has, else the CPU)"),
		libDir:      fs.String("cuda-lib-dir", "", "directory of libcuda.so.1, libcublas and libnvrtc, searched before LD_LIBRARY_PATH and the usual places (default $"+cuda.LibDirEnv+")"),
		maxGraphs:   fs.Int("max-graphs", 0, "CPU: most compiled graphs kept, one per batch shape, least recently used dropped first (0: no bound but --memory-budget's)"),
		blas:        fs.String("blas", cpu.BLASAuto, "CPU: the BLAS of the matrix products: auto (OpenBLAS, loaded at run time, when the machine has it, else gonum's pure-Go BLAS), go (gonum), or openblas (an error without it; Debian: apt-get install libopenblas0); $"+cblas.LibEnv+" names the library's file"),
		blasThreads: fs.Int("blas-threads", 0, "CPU: OpenBLAS's threads (0: its default, $OPENBLAS_NUM_THREADS or one a core)"),
		memoryBudget: fs.String("memory-budget", "0", fmt.Sprintf("CPU: most memory training takes, as 4GiB or 3000MB: parameters, optimiser state, compiled graphs (least recently used dropped first) and %s for the rest; a batch whose graph alone passes it stops the run at once (0: 1/%d of the memory this process may use, from its cgroup's limit and /proc/meminfo)",
			compute.FormatBytes(device.MemoryReserve), device.DefaultMemoryFraction)),
		cudaGraphs: fs.Bool("cuda-graphs", true, "CUDA: capture a training step once per batch shape (rows, length) as a CUDA graph and replay it, one launch a step instead of hundreds (false: launch every kernel and GEMM one by one)"),
		tf32:       fs.Bool("tf32", false, "CUDA: let cuBLAS multiply on TF32 tensor cores (Ampere and later): faster products whose inputs keep 10 of float32's 23 mantissa bits, sums in float32 (docs/gpu.md gives the accuracy against fp32)"),
		limit:      sysmem.Limit,
	}
}

// config is the device.Config of the flags.
func (d deviceFlags) config() device.Config {
	return device.Config{Device: *d.device, CUDALibDir: *d.libDir, CUDAGraphs: *d.cudaGraphs, TF32: *d.tf32,
		BLAS: *d.blas, BLASThreads: *d.blasThreads, MaxGraphs: *d.maxGraphs, MemoryBudget: *d.memoryBudget, Limit: d.limit}
}

// usage makes a setting device refuses as given a usage error.
func usage(err error) error {
	var bad *device.InvalidError
	if errors.As(err, &bad) {
		return fmt.Errorf("%w: %v", cli.ErrUsage, err)
	}
	return err
}

func (d deviceFlags) budget() (int64, string, error) {
	b, why, err := d.config().Budget()
	return b, why, usage(err)
}

func (d deviceFlags) backend(note io.Writer, log *slog.Logger) (compute.Backend, func() error, error) {
	b, release, err := d.config().Open(note, log)
	return b, release, usage(err)
}
