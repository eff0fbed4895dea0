package cuda

import (
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"strings"
	"unsafe"

	"github.com/parastream/parastream/trainstep/compute"
)

// Options configure Open.
type Options struct {
	// Device is the ordinal of the GPU (cuda:N).
	Device int
	// Env says where the libraries are (EnvFromOS in a command).
	Env Env
	// CacheDir holds compiled PTX; "" means PTXCacheDir(), "-" no cache.
	CacheDir string
	// Logger receives what was loaded from where (nil: discarded).
	Logger *slog.Logger
	// NoGraphs turns CUDA graphs off: every step's kernels and GEMMs are
	// launched one by one. By default a step is captured the second time
	// its shape (rows, length) comes and replayed after (docs/gpu.md).
	NoGraphs bool
	// MaxGraphs bounds the captured steps a model keeps, least recently
	// used destroyed first (0: DefaultMaxGraphs).
	MaxGraphs int
	// TF32 lets cuBLAS multiply on TF32 tensor cores
	// (CUBLAS_TF32_TENSOR_OP_MATH): the products' inputs keep 10 of
	// float32's 23 mantissa bits, sums stay float32. Off by default.
	TF32 bool
	// SelfCheck makes Build check each model's encoder and loss, with its
	// settings, on a tiny model against the emulator first (one
	// forward-backward-update, replayed from a CUDA graph unless NoGraphs)
	// and refuse to build it, with a *CheckError, when they disagree:
	// what a training run sets, so that it never trains on numbers that
	// were not checked.
	SelfCheck bool
}

// Backend is the CUDA backend: compute.Backend on one GPU (Open) or on
// the host emulator of its kernels (Emulator). Models built by one
// Backend share its device; Close it after them.
type Backend struct {
	dev     device
	info    DeviceInfo
	opts    Options
	checked map[string]bool // encoder/loss passed the start-up self-check
}

// supportedEncoders are the encoders the CUDA backend implements: those
// of its table (encoderTable), in the order of compute.EncoderSpecs.
func supportedEncoders() []string {
	table := encoderTable()
	var out []string
	for _, spec := range compute.EncoderSpecs() {
		if _, ok := table[spec.Name]; ok {
			out = append(out, spec.Name)
		}
	}
	return out
}

// supportedLosses are the losses the CUDA backend implements.
func supportedLosses() []string {
	return []string{compute.LossMargin, compute.LossHinge, compute.LossSoftmax, compute.LossSim, compute.LossMNRL}
}

// Supports reports whether the backend implements cfg: every encoder,
// loss, negative strategy, regulariser and optimiser of the CPU backend
// is, but not a topic context nor the NLI head of multitask training; the
// error wraps ErrUnsupported and says what is missing.
func Supports(cfg compute.Config) error {
	var missing []string
	encoders, losses := supportedEncoders(), supportedLosses()
	if !slices.Contains(encoders, cfg.Encoder) {
		missing = append(missing, fmt.Sprintf("encoder %s (it has %s)", cfg.Encoder, strings.Join(encoders, ", ")))
	}
	if !slices.Contains(losses, cfg.Loss) {
		missing = append(missing, fmt.Sprintf("loss %s (it has %s)", cfg.Loss, strings.Join(losses, ", ")))
	}
	if cfg.Context != "" {
		missing = append(missing, fmt.Sprintf("context %s", cfg.Context))
	}
	if cfg.NLIHidden > 0 {
		missing = append(missing, "the NLI head of multitask training")
	}
	if len(missing) > 0 {
		return fmt.Errorf("%s: %w; train it with --device cpu", strings.Join(missing, " and "), ErrUnsupported)
	}
	return nil
}

// Emulator is the backend on the host emulator: the same model code, the
// kernels' Go twins run thread by thread and cublasSgemm's contract in Go.
// It checks the kernels without a GPU; it is far slower than the CPU
// backend.
func Emulator() *Backend { return EmulatorWith(Options{}) }

// EmulatorWith is the emulator with opts' NoGraphs, MaxGraphs, TF32,
// SelfCheck and Logger (the others are about a GPU and ignored).
func EmulatorWith(opts Options) *Backend {
	e := newEmulator()
	e.tf32 = opts.TF32
	return &Backend{dev: e, opts: opts}
}

// Open loads the CUDA driver, NVRTC and cuBLAS, selects device
// opts.Device, compiles the kernels for it (or takes them from the PTX
// cache) and returns the backend. Errors say which library is missing and
// where the loader looked (*LibraryError, ErrLibrary) or that there is no
// such device (ErrNoDevice).
func Open(opts Options) (*Backend, error) {
	log := opts.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	drv, err := loadDriver(opts.Env)
	if err != nil {
		return nil, err
	}
	rtc, err := loadNVRTC(opts.Env)
	if err != nil {
		return nil, err
	}
	blas, err := loadCUBLAS(opts.Env)
	if err != nil {
		return nil, err
	}
	log.Info("cuda libraries", "driver", drv.path, "nvrtc", rtc.path, "nvrtc_version", rtc.version(), "cublas", blas.path)
	dev, info, err := drv.device(opts.Device)
	if err != nil {
		return nil, err
	}
	g := &gpu{drv: drv, blas: blas, rtc: rtc, dev: dev, info: info, kernels: newKernels(), fns: map[string]uintptr{}}
	if err := drv.check("cuDevicePrimaryCtxRetain", drv.cuDevicePrimaryCtxRetain(&g.ctx, dev)); err != nil {
		return nil, fmt.Errorf("%w: creating a context on %s: %w", ErrNoDevice, info, err)
	}
	if err := g.setup(opts, log); err != nil {
		return nil, errors.Join(err, g.close())
	}
	return &Backend{dev: g, info: info, opts: opts}, nil
}

// setup compiles and loads the kernels and creates the cuBLAS handle.
func (g *gpu) setup(opts Options, log *slog.Logger) error {
	if err := g.enter(); err != nil {
		return err
	}
	defer g.exit()
	archs, err := g.rtc.archs()
	if err != nil {
		return err
	}
	if g.arch, err = ChooseArch(g.info.Major, g.info.Minor, archs); err != nil {
		return err
	}
	dir := opts.CacheDir
	switch dir {
	case "":
		if dir, err = PTXCacheDir(); err != nil {
			dir = ""
		}
	case "-":
		dir = ""
	}
	ptx, cached, err := g.rtc.cachedPTX(dir, Source(), CompileOptions(g.arch))
	if err != nil {
		return err
	}
	g.cached = cached
	log.Info("cuda kernels", "device", g.info.String(), "arch", g.arch, "cached", cached, "cache_dir", dir)
	img := append([]byte(ptx), 0)
	if err := g.drv.check("cuModuleLoadData", g.drv.cuModuleLoadData(&g.mod, unsafe.Pointer(&img[0]))); err != nil {
		return fmt.Errorf("loading the kernels' PTX (compute_%d, NVRTC %s) into the driver (CUDA %d.%d): %w; an NVRTC newer than the driver makes PTX the driver cannot read: use the NVRTC of the driver's CUDA version",
			g.arch, g.rtc.version(), g.info.DriverVersion/1000, g.info.DriverVersion%1000/10, err)
	}
	for _, k := range g.kernels {
		var fn uintptr
		if err := g.drv.check("cuModuleGetFunction", g.drv.cuModuleGetFunction(&fn, g.mod, k.name)); err != nil {
			return fmt.Errorf("kernel %s: %w", k.name, err)
		}
		g.fns[k.name] = fn
	}
	if err := g.blas.init(); err != nil {
		return err
	}
	return g.setupStreams(opts.TF32)
}

// Name implements compute.Backend: "cuda:N", or "cuda-emulator".
func (b *Backend) Name() string { return b.dev.name() }

// Device describes the GPU (zero for the emulator).
func (b *Backend) Device() DeviceInfo { return b.info }

// Close releases the device: the context, cuBLAS and the kernels.
func (b *Backend) Close() error { return b.dev.close() }

// Build implements compute.Backend.
func (b *Backend) Build(cfg compute.Config, params []compute.Tensor) (compute.Model, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	if err := Supports(cfg); err != nil {
		return nil, err
	}
	if err := compute.CheckParams(cfg, params); err != nil {
		return nil, fmt.Errorf("building %s model: %w", cfg.Encoder, err)
	}
	if b.opts.SelfCheck {
		if err := b.startupCheck(cfg); err != nil {
			return nil, err
		}
	}
	return b.build(cfg, params, b.opts)
}
