package cuda

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"unsafe"

	"github.com/ebitengine/purego"
)

// nvrtc is the part of NVRTC (libnvrtc.so.13, .12 or .11.2) the backend
// uses to compile its kernels to PTX for the device's architecture.
type nvrtc struct {
	path string

	nvrtcVersion              func(major, minor *int32) int32
	nvrtcGetErrorString       func(res int32) string
	nvrtcGetNumSupportedArchs func(n *int32) int32
	nvrtcGetSupportedArchs    func(archs *int32) int32
	nvrtcCreateProgram        func(prog *uintptr, src, name string, numHeaders int32, headers, includeNames unsafe.Pointer) int32
	nvrtcDestroyProgram       func(prog *uintptr) int32
	nvrtcCompileProgram       func(prog uintptr, numOptions int32, options unsafe.Pointer) int32
	nvrtcGetPTXSize           func(prog uintptr, n *uintptr) int32
	nvrtcGetPTX               func(prog uintptr, ptx *byte) int32
	nvrtcGetProgramLogSize    func(prog uintptr, n *uintptr) int32
	nvrtcGetProgramLog        func(prog uintptr, log *byte) int32
}

func loadNVRTC(env Env) (*nvrtc, error) {
	h, path, err := env.openLibrary(libNVRTC())
	if err != nil {
		return nil, err
	}
	// NVRTC loads its builtins library by name at compile time; loading it
	// from the same directory first makes that work outside the loader's
	// search path (pip wheels, --cuda-lib-dir).
	if builtins, _ := filepath.Glob(filepath.Join(filepath.Dir(path), "libnvrtc-builtins.so.*")); len(builtins) > 0 {
		slices.Sort(builtins)
		_, _ = purego.Dlopen(builtins[len(builtins)-1], purego.RTLD_NOW|purego.RTLD_GLOBAL)
	}
	r := &nvrtc{path: path}
	s := &symbols{lib: path, handle: h}
	s.bind(&r.nvrtcVersion, "nvrtcVersion")
	s.bind(&r.nvrtcGetErrorString, "nvrtcGetErrorString")
	s.bind(&r.nvrtcGetNumSupportedArchs, "nvrtcGetNumSupportedArchs")
	s.bind(&r.nvrtcGetSupportedArchs, "nvrtcGetSupportedArchs")
	s.bind(&r.nvrtcCreateProgram, "nvrtcCreateProgram")
	s.bind(&r.nvrtcDestroyProgram, "nvrtcDestroyProgram")
	s.bind(&r.nvrtcCompileProgram, "nvrtcCompileProgram")
	s.bind(&r.nvrtcGetPTXSize, "nvrtcGetPTXSize")
	s.bind(&r.nvrtcGetPTX, "nvrtcGetPTX")
	s.bind(&r.nvrtcGetProgramLogSize, "nvrtcGetProgramLogSize")
	s.bind(&r.nvrtcGetProgramLog, "nvrtcGetProgramLog")
	if s.err != nil {
		return nil, s.err
	}
	return r, nil
}

func (r *nvrtc) check(call string, res int32) error {
	if res == 0 {
		return nil
	}
	return &Error{Call: call, Code: int(res), Msg: r.nvrtcGetErrorString(res)}
}

// version is NVRTC's "major.minor".
func (r *nvrtc) version() string {
	var ma, mi int32
	if r.nvrtcVersion(&ma, &mi) != 0 {
		return "unknown"
	}
	return fmt.Sprintf("%d.%d", ma, mi)
}

// archs are the virtual architectures NVRTC compiles for (52, 60, ...).
func (r *nvrtc) archs() ([]int, error) {
	var n int32
	if err := r.check("nvrtcGetNumSupportedArchs", r.nvrtcGetNumSupportedArchs(&n)); err != nil {
		return nil, err
	}
	a := make([]int32, n)
	if n > 0 {
		if err := r.check("nvrtcGetSupportedArchs", r.nvrtcGetSupportedArchs(&a[0])); err != nil {
			return nil, err
		}
	}
	out := make([]int, n)
	for i, x := range a {
		out[i] = int(x)
	}
	return out, nil
}

// ChooseArch is the virtual architecture to compile for on a device of
// compute capability major.minor: the highest one NVRTC supports that is
// not above the device's (PTX of an older virtual architecture is
// JIT-compiled by the driver for a newer device).
func ChooseArch(major, minor int, supported []int) (int, error) {
	cc := 10*major + minor
	best := 0
	for _, a := range supported {
		if a <= cc && a > best {
			best = a
		}
	}
	if best == 0 {
		return 0, fmt.Errorf("%w: NVRTC compiles for %v, none at or below the device's compute capability %d.%d", ErrNoDevice, supported, major, minor)
	}
	return best, nil
}

// CompileOptions are the NVRTC options of the kernels for a virtual
// architecture (e.g. 80 for compute_80). Full-precision division, square
// root and denormals (no --use_fast_math), so that results stay close to
// the CPU backend's.
func CompileOptions(arch int) []string {
	return []string{fmt.Sprintf("--gpu-architecture=compute_%d", arch), "--std=c++11"}
}

// compile compiles src with opts into PTX; the error carries the program log.
func (r *nvrtc) compile(src, name string, opts []string) (string, error) {
	var prog uintptr
	if err := r.check("nvrtcCreateProgram", r.nvrtcCreateProgram(&prog, src, name, 0, nil, nil)); err != nil {
		return "", err
	}
	defer r.nvrtcDestroyProgram(&prog)
	// The options as C strings: NUL-terminated Go bytes, pinned while
	// NVRTC reads them.
	cstrs := make([][]byte, len(opts))
	ptrs := make([]*byte, len(opts))
	var pin runtime.Pinner
	defer pin.Unpin()
	for i, o := range opts {
		cstrs[i] = append([]byte(o), 0)
		ptrs[i] = &cstrs[i][0]
		pin.Pin(ptrs[i])
	}
	var optp unsafe.Pointer
	if len(ptrs) > 0 {
		pin.Pin(&ptrs[0])
		optp = unsafe.Pointer(&ptrs[0])
	}
	res := r.nvrtcCompileProgram(prog, int32(len(opts)), optp)
	runtime.KeepAlive(cstrs)
	if res != 0 {
		return "", fmt.Errorf("compiling the kernels with %s (NVRTC %s, %s): %w\n%s", r.path, r.version(), strings.Join(opts, " "), r.check("nvrtcCompileProgram", res), r.log(prog))
	}
	var n uintptr
	if err := r.check("nvrtcGetPTXSize", r.nvrtcGetPTXSize(prog, &n)); err != nil {
		return "", err
	}
	ptx := make([]byte, n)
	if err := r.check("nvrtcGetPTX", r.nvrtcGetPTX(prog, &ptx[0])); err != nil {
		return "", err
	}
	return strings.TrimRight(string(ptx), "\x00"), nil
}

func (r *nvrtc) log(prog uintptr) string {
	var n uintptr
	if r.nvrtcGetProgramLogSize(prog, &n) != 0 || n <= 1 {
		return ""
	}
	b := make([]byte, n)
	if r.nvrtcGetProgramLog(prog, &b[0]) != 0 {
		return ""
	}
	return strings.TrimRight(string(b), "\x00")
}

// PTXCacheDir is the default directory of compiled kernels:
// os.UserCacheDir()/parastream/cuda.
func PTXCacheDir() (string, error) {
	d, err := os.UserCacheDir()
	if err != nil {
		return "", err
	}
	return filepath.Join(d, "parastream", "cuda"), nil
}

// ptxKey names the cached PTX of src compiled with opts by an NVRTC version.
func ptxKey(src string, opts []string, nvrtcVersion string) string {
	h := sha256.New()
	fmt.Fprintf(h, "%s\x00%s\x00", nvrtcVersion, strings.Join(opts, "\x00"))
	h.Write([]byte(src))
	return hex.EncodeToString(h.Sum(nil))[:32] + ".ptx"
}

// cachedPTX returns the PTX of src from the cache directory, compiling it
// (and writing it under a temporary name, then renaming) when absent. An
// empty dir disables the cache; a cache that cannot be written is not an
// error.
func (r *nvrtc) cachedPTX(dir, src string, opts []string) (ptx string, cached bool, err error) {
	var path string
	if dir != "" {
		path = filepath.Join(dir, ptxKey(src, opts, r.version()))
		if b, err := os.ReadFile(path); err == nil && strings.Contains(string(b), ".entry") {
			return string(b), true, nil
		}
	}
	ptx, err = r.compile(src, "parastream_kernels.cu", opts)
	if err != nil || path == "" {
		return ptx, false, err
	}
	if os.MkdirAll(dir, 0o755) == nil {
		if f, err := os.CreateTemp(dir, ".ptx-*"); err == nil {
			_, werr := f.WriteString(ptx)
			if cerr := f.Close(); werr == nil && cerr == nil {
				_ = os.Rename(f.Name(), path)
			} else {
				_ = os.Remove(f.Name())
			}
		}
	}
	return ptx, false, nil
}
