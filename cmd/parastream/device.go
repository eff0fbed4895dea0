package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"
	"strconv"
	"strings"

	"github.com/parastream/parastream/trainstep/compute"
	"github.com/parastream/parastream/trainstep/cpu"
	"github.com/parastream/parastream/trainstep/cpu/cblas"
	"github.com/parastream/parastream/trainstep/cuda"
)

// deviceFlags are --device, --cuda-lib-dir and the CPU's --max-graphs,
// --blas and --blas-threads.
type deviceFlags struct {
	device, libDir, blas   *string
	maxGraphs, blasThreads *int
}

func addDeviceFlags(fs *flag.FlagSet) deviceFlags {
	return deviceFlags{
		device:      fs.String("device", "cpu", "where to train: cpu, cuda (GPU 0), cuda:N, or auto (the GPU when a driver and device are found and the model is one the CUDA backend has, else the CPU)"),
		libDir:      fs.String("cuda-lib-dir", "", "directory of libcuda.so.1, libcublas and libnvrtc, searched before LD_LIBRARY_PATH and the usual places (default $"+cuda.LibDirEnv+")"),
		maxGraphs:   fs.Int("max-graphs", 0, "CPU: most compiled graphs kept, one per batch shape, least recently used dropped first (0: all); bounds the memory of recurrent models"),
		blas:        fs.String("blas", cpu.BLASAuto, "CPU: the BLAS of the matrix products: auto (OpenBLAS, loaded at run time, when the machine has it, else gonum's pure-Go BLAS), go (gonum), or openblas (an error without it; Debian: apt-get install libopenblas0); $"+cblas.LibEnv+" names the library's file"),
		blasThreads: fs.Int("blas-threads", 0, "CPU: OpenBLAS's threads (0: its default, $OPENBLAS_NUM_THREADS or one a core)"),
	}
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

// backend opens the device the flags name. It returns nil for the CPU
// (the trainer's default), a function that releases the device, and
// writes one line to note about the device chosen.
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
	var onCPU compute.Backend // nil: the trainer's default CPU backend
	if *d.maxGraphs > 0 {
		onCPU = &cpu.Backend{MaxGraphs: *d.maxGraphs}
	}
	if kind == "cpu" {
		return onCPU, none, nil
	}
	gpu, err := cuda.Open(cuda.Options{Device: ordinal, Env: cuda.EnvFromOS(*d.libDir), Logger: log})
	if err != nil {
		if kind == "auto" {
			fmt.Fprintf(note, "train: --device auto: no usable GPU (%s); training on the CPU\n", shortReason(err))
			return onCPU, none, nil
		}
		return nil, nil, fmt.Errorf("--device %s: %w", *d.device, err)
	}
	fmt.Fprintf(note, "train: on %s\n", gpu.Device())
	if kind == "auto" {
		fallback := onCPU
		if fallback == nil {
			fallback = cpu.New()
		}
		return &autoBackend{gpu: gpu, cpu: fallback, note: note}, gpu.Close, nil
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
	gpu  *cuda.Backend
	cpu  compute.Backend
	note io.Writer
	used compute.Backend
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
		fmt.Fprintf(a.note, "train: --device auto: %s/%s is not on the GPU backend yet; training on the CPU\n", cfg.Encoder, cfg.Loss)
		a.used = a.cpu
	}
	return a.used.Build(cfg, params)
}
