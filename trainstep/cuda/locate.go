package cuda

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
)

// Env is where the loader looks for the CUDA libraries, taken from the
// process's flags and environment by the caller (EnvFromOS) so that the
// package reads no globals.
type Env struct {
	// LibDir is the explicit directory (--cuda-lib-dir or
	// PARASTREAM_CUDA_LIB_DIR), searched first.
	LibDir string
	// LDLibraryPath is $LD_LIBRARY_PATH.
	LDLibraryPath string
	// VirtualEnv is $VIRTUAL_ENV (NVIDIA's pip wheels in a virtualenv).
	VirtualEnv string
	// Home is the user's home directory (~/.local pip installs).
	Home string
	// Root prefixes every fixed location (/usr/lib/..., /usr/local/cuda...,
	// the python directories); empty in use, a temporary directory in tests.
	Root string
	// noLoaderCache skips asking the dynamic loader by bare name (tests).
	noLoaderCache bool
}

// LibDirEnv is the environment variable naming the CUDA library directory.
const LibDirEnv = "PARASTREAM_CUDA_LIB_DIR"

// EnvFromOS is the process's Env: libDir if not empty (a flag), else
// $PARASTREAM_CUDA_LIB_DIR, and the other variables.
func EnvFromOS(libDir string) Env {
	if libDir == "" {
		libDir = os.Getenv(LibDirEnv)
	}
	home, _ := os.UserHomeDir()
	return Env{LibDir: libDir, LDLibraryPath: os.Getenv("LD_LIBRARY_PATH"), VirtualEnv: os.Getenv("VIRTUAL_ENV"), Home: home}
}

// library is one shared library the backend loads, by its file names in
// order of preference.
type library struct {
	what  string   // for messages
	names []string // sonames, newest first
	wheel []string // subdirectories of site-packages/nvidia holding it
}

// libCUDA is the NVIDIA driver library.
func libCUDA() library {
	return library{what: "the NVIDIA driver library", names: []string{"libcuda.so.1", "libcuda.so"}}
}

// libCUBLAS is cuBLAS; its libcublasLt of the same major version is loaded
// first, from the same directory (see loadCUBLAS).
func libCUBLAS() library {
	return library{what: "cuBLAS", names: []string{"libcublas.so.13", "libcublas.so.12"}, wheel: []string{"cu13/lib", "cublas/lib"}}
}

// libNVRTC is NVRTC. Debian's nvidia-cuda-toolkit 11.8 ships it as
// libnvrtc.so.11.2.
func libNVRTC() library {
	return library{what: "NVRTC (the CUDA runtime compiler)", names: []string{"libnvrtc.so.13", "libnvrtc.so.12", "libnvrtc.so.11.2", "libnvrtc.so"},
		wheel: []string{"cu13/lib", "cuda_nvrtc/lib"}}
}

// SearchDirs lists the directories searched for lib, in order: the
// explicit directory, $LD_LIBRARY_PATH, the usual install locations
// (Debian/Ubuntu multiarch, /usr/lib64, /usr/local/cuda and versioned
// /usr/local/cuda-1*, WSL), then NVIDIA's pip wheels under every python
// site directory (the virtualenv's, ~/.local's, /usr/local's, /usr's).
// Directories that do not exist are kept: the error lists where it looked.
func (e Env) searchDirs(lib library) []string {
	var dirs []string
	add := func(ds ...string) {
		for _, d := range ds {
			if d != "" && !slices.Contains(dirs, d) {
				dirs = append(dirs, d)
			}
		}
	}
	add(e.LibDir)
	add(strings.Split(e.LDLibraryPath, ":")...)
	root := func(p string) string { return filepath.Join(e.Root, p) }
	add(root("/usr/lib/x86_64-linux-gnu"), root("/usr/lib64"), root("/usr/local/cuda/lib64"))
	versioned, _ := filepath.Glob(root("/usr/local/cuda-1*/lib64"))
	slices.SortFunc(versioned, func(a, b string) int { return strings.Compare(b, a) }) // newest first
	add(versioned...)
	add(root("/usr/lib/wsl/lib"))
	if len(lib.wheel) > 0 {
		var sites []string
		glob := func(pattern string) {
			m, _ := filepath.Glob(pattern)
			slices.SortFunc(m, func(a, b string) int { return strings.Compare(b, a) })
			sites = append(sites, m...)
		}
		if e.VirtualEnv != "" {
			glob(filepath.Join(e.VirtualEnv, "lib", "python3*", "site-packages"))
		}
		if e.Home != "" {
			glob(filepath.Join(e.Home, ".local", "lib", "python3*", "site-packages"))
		}
		glob(root("/usr/local/lib/python3*/dist-packages"))
		glob(root("/usr/local/lib/python3*/site-packages"))
		glob(root("/usr/lib/python3*/site-packages"))
		glob(root("/usr/lib/python3/dist-packages"))
		for _, s := range sites {
			for _, w := range lib.wheel {
				add(filepath.Join(s, "nvidia", w))
			}
		}
	}
	return dirs
}

// candidates are the existing files that may be lib, in search order.
func (e Env) candidates(lib library) (found []string, dirs []string) {
	dirs = e.searchDirs(lib)
	for _, d := range dirs {
		for _, n := range lib.names {
			p := filepath.Join(d, n)
			if st, err := os.Stat(p); err == nil && !st.IsDir() {
				found = append(found, p)
			}
		}
	}
	return found, dirs
}
