package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"
	"runtime/debug"
	"strconv"
	"strings"

	"github.com/parastream/parastream/internal/sysmem"
	"github.com/parastream/parastream/trainstep/compute"
	"github.com/parastream/parastream/trainstep/cpu"
	"github.com/parastream/parastream/trainstep/cpu/cblas"
	"github.com/parastream/parastream/trainstep/cuda"
)

// deviceFlags are --device, --cuda-lib-dir and the CPU's --memory-budget,
// --max-graphs, --blas and --blas-threads.
type deviceFlags struct {
	device, libDir, blas   *string
	maxGraphs, blasThreads *int
	memoryBudget           *string
	cudaGraphs, tf32       *bool
	// limit is the memory this process may use (sysmem.Limit); tests set
	// it.
	limit func() (int64, error)
}

// defaultMemoryFraction is the part of the memory this process may use
// (its cgroup's limit or the machine's memory, the smaller) that
// --memory-budget 0 gives the CPU trainer: the machines it runs on are
// shared.
const defaultMemoryFraction = 8

// memoryReserve is what the budget keeps for the process beside the
// model: the Go runtime, the consumer's shuffle buffer and window, the
// program itself.
const memoryReserve = 256 << 20

func addDeviceFlags(fs *flag.FlagSet) deviceFlags {
	return deviceFlags{
		device:      fs.String("device", "cpu", "where to train: cpu, cuda (GPU 0), cuda:N, or auto (the GPU when a driver and device are found and the model is one the CUDA backend has, else the CPU)"),
		libDir:      fs.String("cuda-lib-dir", "", "directory of libcuda.so.1, libcublas and libnvrtc, searched before LD_LIBRARY_PATH and the usual places (default $"+cuda.LibDirEnv+")"),
		maxGraphs:   fs.Int("max-graphs", 0, "CPU: most compiled graphs kept, one per batch shape, least recently used dropped first (0: no bound but --memory-budget's)"),
		blas:        fs.String("blas", cpu.BLASAuto, "CPU: the BLAS of the matrix products: auto (OpenBLAS, loaded at run time, when the machine has it, else gonum's pure-Go BLAS), go (gonum), or openblas (an error without it; Debian: apt-get install libopenblas0); $"+cblas.LibEnv+" names the library's file"),
		blasThreads: fs.Int("blas-threads", 0, "CPU: OpenBLAS's threads (0: its default, $OPENBLAS_NUM_THREADS or one a core)"),
		memoryBudget: fs.String("memory-budget", "0", fmt.Sprintf("CPU: most memory training takes, as 4GiB or 3000MB: parameters, optimiser state, compiled graphs (least recently used dropped first) and %s for the rest; a batch whose graph alone passes it stops the run at once (0: 1/%d of the memory this process may use, from its cgroup's limit and /proc/meminfo)",
			compute.FormatBytes(memoryReserve), defaultMemoryFraction)),
		cudaGraphs: fs.Bool("cuda-graphs", true, "CUDA: capture a training step once per batch shape (rows, length) as a CUDA graph and replay it, one launch a step instead of hundreds (false: launch every kernel and GEMM one by one)"),
		tf32:       fs.Bool("tf32", false, "CUDA: let cuBLAS multiply on TF32 tensor cores (Ampere and later): faster products whose inputs keep 10 of float32's 23 mantissa bits, sums in float32 (docs/gpu.md gives the accuracy against fp32)"),
		limit:      sysmem.Limit,
	}
}

// cudaOptions are the CUDA backend's options from the flags.
func (d deviceFlags) cudaOptions(ordinal int, log *slog.Logger) cuda.Options {
	return cuda.Options{Device: ordinal, Env: cuda.EnvFromOS(*d.libDir), Logger: log, NoGraphs: !*d.cudaGraphs, TF32: *d.tf32}
}

// budget is --memory-budget in bytes, and how it was chosen (for a note).
func (d deviceFlags) budget() (int64, string, error) {
	b, err := sysmem.ParseSize(*d.memoryBudget)
	if err != nil {
		return 0, "", fmt.Errorf("%w: --memory-budget: %v", errUsage, err)
	}
	if b > 0 {
		if b <= 2*memoryReserve {
			return 0, "", fmt.Errorf("%w: --memory-budget %s: give more than %s (%s of it are kept for the process beside the model)",
				errUsage, *d.memoryBudget, compute.FormatBytes(2*memoryReserve), compute.FormatBytes(memoryReserve))
		}
		return b, "--memory-budget", nil
	}
	limit, err := d.limit()
	if err != nil {
		return 0, "", fmt.Errorf("choosing the memory budget: %w; give --memory-budget", err)
	}
	b = max(limit/defaultMemoryFraction, 2*memoryReserve+1)
	return b, fmt.Sprintf("1/%d of the %s this process may use; --memory-budget sets it", defaultMemoryFraction, compute.FormatBytes(limit)), nil
}

// useBLAS routes the CPU backend's products through the BLAS of --blas,
// with a one-line note when auto falls back to gonum.
func (d deviceFlags) useBLAS(note io.Writer) error {
	if *d.blasThreads < 0 {
		return fmt.Errorf("%w: --blas-threads %d: use 0 for OpenBLAS's default or a positive count", errUsage, *d.blasThreads)
	}
	switch *d.blas {
	case cpu.BLASAuto, cpu.BLASGo, cpu.BLASOpenBLAS:
	default:
		return fmt.Errorf("%w: --blas %q: use auto, go or openblas", errUsage, *d.blas)
	}
	opts := cblas.Options{Threads: *d.blasThreads}
	if lib := os.Getenv(cblas.LibEnv); lib != "" {
		opts.Names = []string{lib}
	}
	info, err := cpu.UseBLAS(*d.blas, opts)
	if err != nil {
		return err
	}
	if info.Fallback != "" {
		fmt.Fprintf(note, "train: --blas auto: no OpenBLAS found, the CPU runs on gonum's pure-Go BLAS (slower; apt-get install libopenblas0; --blas openblas says what was tried)\n")
	}
	return nil
}

// parseDevice reads cpu, auto, cuda and cuda:N.
func parseDevice(s string) (kind string, ordinal int, err error) {
	switch {
	case s == "cpu" || s == "auto" || s == "cuda":
		return s, 0, nil
	case strings.HasPrefix(s, "cuda:"):
		n, err := strconv.Atoi(s[len("cuda:"):])
		if err != nil || n < 0 {
			return "", 0, fmt.Errorf("%w: --device %s: the GPU is cuda:N with N = 0, 1 and so on", errUsage, s)
		}
		return "cuda", n, nil
	}
	return "", 0, fmt.Errorf("%w: --device %q: use cpu, cuda, cuda:N or auto", errUsage, s)
}

// backend opens the device the flags name. It returns the backend, a
// function that releases the device, and writes one line to note about the
// device chosen; on the CPU, one about the memory budget, which also
// becomes the Go runtime's memory limit (debug.SetMemoryLimit), so that the
// garbage collector keeps the heap under it.
func (d deviceFlags) backend(note io.Writer, log *slog.Logger) (compute.Backend, func() error, error) {
	kind, ordinal, err := parseDevice(*d.device)
	if err != nil {
		return nil, nil, err
	}
	none := func() error { return nil }
	if *d.maxGraphs < 0 {
		return nil, nil, fmt.Errorf("%w: --max-graphs %d: use 0 for no bound or a positive count", errUsage, *d.maxGraphs)
	}
	if kind != "cuda" {
		if err := d.useBLAS(note); err != nil {
			return nil, nil, err
		}
	}
	budget, why, err := d.budget()
	if err != nil {
		return nil, nil, err
	}
	onCPU := &cpu.Backend{MaxGraphs: *d.maxGraphs, MemoryBudget: budget - memoryReserve}
	useCPU := func() {
		debug.SetMemoryLimit(budget)
		fmt.Fprintf(note, "train: memory budget %s (%s): %s for the model, %s for the rest\n", compute.FormatBytes(budget), why, compute.FormatBytes(budget-memoryReserve), compute.FormatBytes(memoryReserve))
	}
	if kind == "cpu" {
		useCPU()
		return onCPU, none, nil
	}
	gpu, err := cuda.Open(d.cudaOptions(ordinal, log))
	if err != nil {
		if kind == "auto" {
			fmt.Fprintf(note, "train: --device auto: no usable GPU (%s); training on the CPU\n", shortReason(err))
			useCPU()
			return onCPU, none, nil
		}
		return nil, nil, fmt.Errorf("--device %s: %w", *d.device, err)
	}
	fmt.Fprintf(note, "train: on %s\n", gpu.Device())
	if kind == "auto" {
		return &autoBackend{gpu: gpu, cpu: onCPU, onCPU: useCPU, note: note}, gpu.Close, nil
	}
	return gpu, gpu.Close, nil
}

// shortReason is the gist of an Open error for a one-line note.
func shortReason(err error) string {
	var le *cuda.LibraryError
	if errors.As(err, &le) {
		if len(le.Failed) > 0 {
			return fmt.Sprintf("%s found but not loadable; --device cuda says why", le.Names[0])
		}
		return fmt.Sprintf("%s not found; --device cuda says where it looked", le.Names[0])
	}
	s := err.Error()
	if i := strings.IndexAny(s, ";\n"); i > 0 {
		s = s[:i]
	}
	return s
}

// autoBackend is --device auto on a machine with a GPU: models the CUDA
// backend implements go there, the others to the CPU, with a note.
type autoBackend struct {
	gpu   *cuda.Backend
	cpu   compute.Backend
	onCPU func() // sets the CPU's memory limit, with a note
	note  io.Writer
	used  compute.Backend
}

func (a *autoBackend) Name() string {
	if a.used != nil {
		return a.used.Name()
	}
	return a.gpu.Name()
}

// BLAS and BLASName describe the CPU backend's BLAS when the model went
// to the CPU (empty on the GPU).
func (a *autoBackend) BLAS() string {
	if b, ok := a.used.(interface{ BLAS() string }); ok {
		return b.BLAS()
	}
	return ""
}

func (a *autoBackend) BLASName() string {
	if b, ok := a.used.(interface{ BLASName() string }); ok {
		return b.BLASName()
	}
	return ""
}

func (a *autoBackend) Build(cfg compute.Config, params []compute.Tensor) (compute.Model, error) {
	a.used = a.gpu
	if err := cuda.Supports(cfg); err != nil {
		// Every encoder and loss is on the GPU; a topic context is not.
		why := fmt.Sprintf("%s/%s with a %s context is not on the GPU backend", cfg.Encoder, cfg.Loss, cfg.Context)
		if cfg.Context == "" {
			why = err.Error()
		}
		fmt.Fprintf(a.note, "train: --device auto: %s; training on the CPU\n", why)
		a.used = a.cpu
		if a.onCPU != nil {
			a.onCPU()
		}
	}
	return a.used.Build(cfg, params)
}
