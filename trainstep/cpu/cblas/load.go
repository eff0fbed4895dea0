package cblas

import (
	"errors"
	"fmt"
	"strings"

	"github.com/ebitengine/purego"
)

// ErrNotFound is wrapped by Open's error when no library could be loaded
// (a *LoadError says which names were tried and why each failed).
var ErrNotFound = errors.New("no CBLAS library")

// DefaultNames returns the libraries Open tries, in order, through the dynamic
// loader's own search (LD_LIBRARY_PATH, ld.so.cache, /lib, /usr/lib):
// OpenBLAS (Debian: libopenblas0), then the system's BLAS (libblas.so.3:
// Debian's alternatives point it at OpenBLAS, BLIS or the reference BLAS,
// all of which export CBLAS), then a separate CBLAS (ATLAS).
func DefaultNames() []string {
	return []string{"libopenblas.so.0", "libopenblas.so", "libblas.so.3", "libcblas.so.3"}
}

// LibEnv is the environment variable naming the library's file (or name)
// to load instead of DefaultNames; the command line reads it.
const LibEnv = "PARASTREAM_BLAS_LIB"

// LoadError says which libraries Open tried and why each did not load.
type LoadError struct {
	Tried []string // "NAME: why", in order
}

func (e *LoadError) Error() string {
	return "cblas: no CBLAS library could be loaded (" + strings.Join(e.Tried, "; ") +
		"); install OpenBLAS (Debian/Ubuntu: apt-get install libopenblas0) or name the library's file in $" + LibEnv
}

func (e *LoadError) Unwrap() error { return ErrNotFound }

// Options say what Open loads.
type Options struct {
	// Names are the files (paths) or library names tried in order; nil
	// means DefaultNames.
	Names []string
	// Threads, when positive, sets OpenBLAS's thread count
	// (openblas_set_num_threads); 0 keeps the library's own default
	// (OPENBLAS_NUM_THREADS, else one a core). Ignored by libraries other
	// than OpenBLAS.
	Threads int
}

// Library is a loaded CBLAS. It stays loaded for the life of the process.
type Library struct {
	// Path is the name or file that loaded.
	Path string
	// Config is OpenBLAS's description of itself (openblas_get_config:
	// version, build options, core), empty for other libraries.
	Config string

	handle uintptr
	sgemm  func(order, tA, tB, m, n, k int32, alpha float32, a *float32, lda int32, b *float32, ldb int32, beta float32, c *float32, ldc int32)
	dgemm  func(order, tA, tB, m, n, k int32, alpha float64, a *float64, lda int32, b *float64, ldb int32, beta float64, c *float64, ldc int32)
	sgemv  func(order, tA, m, n int32, alpha float32, a *float32, lda int32, x *float32, incX int32, beta float32, y *float32, incY int32)
	dgemv  func(order, tA, m, n int32, alpha float64, a *float64, lda int32, x *float64, incX int32, beta float64, y *float64, incY int32)

	getThreads func() int32
}

// OpenBLAS reports whether the library is OpenBLAS (it has
// openblas_get_config).
func (l *Library) OpenBLAS() bool { return l.getThreads != nil }

// Threads is OpenBLAS's thread count (0 for other libraries).
func (l *Library) Threads() int {
	if l.getThreads == nil {
		return 0
	}
	return int(l.getThreads())
}

// String names the library, its version and its threads, for a log line.
func (l *Library) String() string {
	if !l.OpenBLAS() {
		return "CBLAS " + l.Path
	}
	cfg := strings.TrimSpace(l.Config)
	if !strings.HasPrefix(cfg, "OpenBLAS") {
		cfg = "OpenBLAS " + cfg
	}
	return fmt.Sprintf("%s (%s, %d threads)", cfg, l.Path, l.Threads())
}

// Open loads the first library of opts.Names that loads and exports the
// CBLAS routines Implementation calls.
func Open(opts Options) (*Library, error) {
	names := opts.Names
	if names == nil {
		names = DefaultNames()
	}
	le := &LoadError{}
	for _, name := range names {
		lib, err := open(name)
		if err != nil {
			le.Tried = append(le.Tried, err.Error())
			continue
		}
		if opts.Threads > 0 && lib.OpenBLAS() {
			if err := lib.setThreads(opts.Threads); err != nil {
				return nil, err
			}
		}
		return lib, nil
	}
	if len(le.Tried) == 0 {
		le.Tried = []string{"no names given"}
	}
	return nil, le
}

func open(name string) (*Library, error) {
	h, err := purego.Dlopen(name, purego.RTLD_NOW|purego.RTLD_LOCAL)
	if err != nil {
		why := err.Error() // glibc's dlerror starts with the name
		if !strings.HasPrefix(why, name) {
			why = name + ": " + why
		}
		return nil, errors.New(why)
	}
	l := &Library{Path: name, handle: h}
	var missing []string
	bind := func(fptr any, sym string) {
		addr, err := purego.Dlsym(h, sym)
		if err != nil {
			missing = append(missing, sym)
			return
		}
		purego.RegisterFunc(fptr, addr)
	}
	bind(&l.sgemm, "cblas_sgemm")
	bind(&l.dgemm, "cblas_dgemm")
	bind(&l.sgemv, "cblas_sgemv")
	bind(&l.dgemv, "cblas_dgemv")
	if len(missing) > 0 {
		_ = purego.Dlclose(h)
		return nil, fmt.Errorf("%s: loaded, but has no %s (not a CBLAS)", name, strings.Join(missing, ", "))
	}
	if addr, err := purego.Dlsym(h, "openblas_get_config"); err == nil {
		var getConfig func() string
		purego.RegisterFunc(&getConfig, addr)
		l.Config = getConfig()
		bind(&l.getThreads, "openblas_get_num_threads")
		if len(missing) > 0 {
			l.getThreads = nil
		}
	}
	return l, nil
}

// setThreads sets OpenBLAS's thread count.
func (l *Library) setThreads(n int) error {
	addr, err := purego.Dlsym(l.handle, "openblas_set_num_threads")
	if err != nil {
		return fmt.Errorf("cblas: %s has no openblas_set_num_threads: %w", l.Path, err)
	}
	var set func(int32)
	purego.RegisterFunc(&set, addr)
	set(int32(n))
	return nil
}
