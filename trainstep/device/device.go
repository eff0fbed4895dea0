// Package device opens the backend a training run computes on: the CPU
// (gorgonia, with its BLAS and memory budget), an NVIDIA GPU (the CUDA
// backend), or auto, the GPU when one is usable and the model is one the
// CUDA backend has, else the CPU with a one-line note. `parastream train`
// fills Config from its flags (--device, --cuda-lib-dir, --cuda-graphs,
// --tf32, --blas, --blas-threads, --memory-budget, --max-graphs), whose
// names the errors and notes use (cmd's trainflags declares them).
package device

import (
	"errors"
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

// Config is where to train and how.
type Config struct {
	// Device is cpu, cuda (GPU 0), cuda:N or auto.
	Device string
	// CUDALibDir is searched first for the CUDA libraries (else
	// $PARASTREAM_CUDA_LIB_DIR); CUDAGraphs captures steps as CUDA graphs;
	// TF32 lets cuBLAS use TF32 tensor cores.
	CUDALibDir       string
	CUDAGraphs, TF32 bool
	// BLAS is the CPU's BLAS (cpu.BLASAuto, BLASGo, BLASOpenBLAS) and
	// BLASThreads OpenBLAS's threads (0: its default).
	BLAS        string
	BLASThreads int
	// MaxGraphs bounds the CPU's compiled graphs (0: the budget's bound);
	// MemoryBudget is the CPU's budget as 4GiB or 3000MB ("0" or "": 1/8
	// of the memory this process may use).
	MaxGraphs    int
	MemoryBudget string
	// Limit is the memory this process may use (nil: sysmem.Limit).
	Limit func() (int64, error)
}

// InvalidError is a setting that is wrong as given (a usage error of the
// command line); its message names the flag and the fix.
type InvalidError struct{ msg string }

func (e *InvalidError) Error() string { return e.msg }

func invalid(format string, args ...any) error {
	return &InvalidError{msg: fmt.Sprintf(format, args...)}
}

// CUDAOptions are the CUDA backend's options for GPU ordinal: with the
// self-check on, so that a run's model is checked against the emulator on
// a tiny batch before it trains, and refused with one line naming the
// failing piece and the way round (cuda.CheckError).
func (c Config) CUDAOptions(ordinal int, log *slog.Logger) cuda.Options {
	return cuda.Options{Device: ordinal, Env: cuda.EnvFromOS(c.CUDALibDir), Logger: log, NoGraphs: !c.CUDAGraphs, TF32: c.TF32, SelfCheck: true}
}

// DefaultMemoryFraction is the part of the memory this process may use
// (its cgroup's limit or the machine's memory, the smaller) that
// --memory-budget 0 gives the CPU trainer: the machines it runs on are
// shared.
const DefaultMemoryFraction = 8

// MemoryReserve is what the budget keeps for the process beside the
// model: the Go runtime, the consumer's shuffle buffer and window, the
// program itself.
const MemoryReserve = 256 << 20

// Budget is the CPU's memory budget (MemoryBudget) in bytes, and how it was chosen (for a note).
func (c Config) Budget() (int64, string, error) {
	budget := c.MemoryBudget
	if budget == "" {
		budget = "0"
	}
	b, err := c.budget()
	if err != nil {
		return 0, "", err
	}
	if b > 0 {
		return b, "--memory-budget", nil
	}
	limit := c.Limit
	if limit == nil {
		limit = sysmem.Limit
	}
	avail, err := limit()
	if err != nil {
		return 0, "", fmt.Errorf("choosing the memory budget: %w; give --memory-budget", err)
	}
	b = max(avail/DefaultMemoryFraction, 2*MemoryReserve+1)
	return b, fmt.Sprintf("1/%d of the %s this process may use; --memory-budget sets it", DefaultMemoryFraction, compute.FormatBytes(avail)), nil
}

// budget is MemoryBudget in bytes as given (0: choose), checked.
func (c Config) budget() (int64, error) {
	budget := c.MemoryBudget
	if budget == "" {
		budget = "0"
	}
	b, err := sysmem.ParseSize(budget)
	if err != nil {
		return 0, invalid("--memory-budget: %v", err)
	}
	if b > 0 && b <= 2*MemoryReserve {
		return 0, invalid("--memory-budget %s: give more than %s (%s of it are kept for the process beside the model)",
			c.MemoryBudget, compute.FormatBytes(2*MemoryReserve), compute.FormatBytes(MemoryReserve))
	}
	return b, nil
}

// Validate reports the first setting that cannot work (an
// *InvalidError), saying how to fix it with the flag's name: the device,
// --max-graphs, the CPU's BLAS (unless the device is a GPU) and
// --memory-budget. Open validates c first.
func (c Config) Validate() error {
	kind, _, err := Parse(c.Device)
	if err != nil {
		return err
	}
	if c.MaxGraphs < 0 {
		return invalid("--max-graphs %d: use 0 for no bound or a positive count", c.MaxGraphs)
	}
	if kind != "cuda" {
		if err := c.validateBLAS(); err != nil {
			return err
		}
	}
	_, err = c.budget()
	return err
}

// validateBLAS checks --blas and --blas-threads.
func (c Config) validateBLAS() error {
	if c.BLASThreads < 0 {
		return invalid("--blas-threads %d: use 0 for OpenBLAS's default or a positive count", c.BLASThreads)
	}
	switch c.BLAS {
	case cpu.BLASAuto, cpu.BLASGo, cpu.BLASOpenBLAS:
		return nil
	}
	return invalid("--blas %q: use auto, go or openblas", c.BLAS)
}

// UseBLAS routes the CPU backend's products through the BLAS of --blas,
// with a one-line note when auto falls back to gonum.
func (c Config) UseBLAS(note io.Writer) error {
	if err := c.validateBLAS(); err != nil {
		return err
	}
	opts := cblas.Options{Threads: c.BLASThreads}
	if lib := os.Getenv(cblas.LibEnv); lib != "" {
		opts.Names = []string{lib}
	}
	info, err := cpu.UseBLAS(c.BLAS, opts)
	if err != nil {
		return err
	}
	if info.Fallback != "" {
		fmt.Fprintf(note, "train: --blas auto: no OpenBLAS found, the CPU runs on gonum's pure-Go BLAS (slower; apt-get install libopenblas0; --blas openblas says what was tried)\n")
	}
	return nil
}

// Parse reads a device: cpu, auto, cuda and cuda:N.
func Parse(s string) (kind string, ordinal int, err error) {
	switch {
	case s == "cpu" || s == "auto" || s == "cuda":
		return s, 0, nil
	case strings.HasPrefix(s, "cuda:"):
		n, err := strconv.Atoi(s[len("cuda:"):])
		if err != nil || n < 0 {
			return "", 0, invalid("--device %s: the GPU is cuda:N with N = 0, 1 and so on", s)
		}
		return "cuda", n, nil
	}
	return "", 0, invalid("--device %q: use cpu, cuda, cuda:N or auto", s)
}

// Open opens the device the configuration names. It returns the backend, a
// function that releases the device, and writes one line to note about the
// device chosen; on the CPU, one about the memory budget, which also
// becomes the Go runtime's memory limit (debug.SetMemoryLimit), so that the
// garbage collector keeps the heap under it.
func (c Config) Open(note io.Writer, log *slog.Logger) (compute.Backend, func() error, error) {
	if err := c.Validate(); err != nil {
		return nil, nil, err
	}
	kind, ordinal, _ := Parse(c.Device)
	none := func() error { return nil }
	if kind != "cuda" {
		if err := c.UseBLAS(note); err != nil {
			return nil, nil, err
		}
	}
	budget, why, err := c.Budget()
	if err != nil {
		return nil, nil, err
	}
	onCPU := &cpu.Backend{MaxGraphs: c.MaxGraphs, MemoryBudget: budget - MemoryReserve}
	useCPU := func() {
		debug.SetMemoryLimit(budget)
		fmt.Fprintf(note, "train: memory budget %s (%s): %s for the model, %s for the rest\n", compute.FormatBytes(budget), why, compute.FormatBytes(budget-MemoryReserve), compute.FormatBytes(MemoryReserve))
	}
	if kind == "cpu" {
		useCPU()
		return onCPU, none, nil
	}
	gpu, err := cuda.Open(c.CUDAOptions(ordinal, log))
	if err != nil {
		if kind == "auto" {
			fmt.Fprintf(note, "train: --device auto: no usable GPU (%s); training on the CPU\n", shortReason(err))
			useCPU()
			return onCPU, none, nil
		}
		return nil, nil, fmt.Errorf("--device %s: %w", c.Device, err)
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
