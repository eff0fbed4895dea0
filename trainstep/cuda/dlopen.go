package cuda

import (
	"fmt"
	"strings"

	"github.com/ebitengine/purego"
)

// openLibrary dlopens lib from the first candidate file that loads (see
// Env.searchDirs), else by name through the dynamic loader's own search
// (ld.so.cache) unless e.noLoaderCache; preload are libraries to load
// first from the same directory (cuBLASLt beside cuBLAS).
func (e Env) openLibrary(lib library) (handle uintptr, path string, err error) {
	found, dirs := e.candidates(lib)
	le := &LibraryError{What: lib.what, Names: lib.names, Dirs: dirs}
	if e.LibDir == "" {
		le.Dirs = append([]string{"--cuda-lib-dir/" + LibDirEnv + " (unset)"}, dirs...)
	}
	for _, p := range found {
		h, err := purego.Dlopen(p, purego.RTLD_NOW|purego.RTLD_GLOBAL)
		if err == nil {
			return h, p, nil
		}
		why := err.Error() // glibc's dlerror starts with the path
		if !strings.HasPrefix(why, p) {
			why = p + ": " + why
		}
		le.Failed = append(le.Failed, why)
	}
	if !e.noLoaderCache {
		var why []string
		for _, n := range lib.names {
			h, err := purego.Dlopen(n, purego.RTLD_NOW|purego.RTLD_GLOBAL)
			if err == nil {
				return h, n, nil
			}
			why = append(why, err.Error())
		}
		le.Cache = why[0]
	}
	return 0, "", le
}

// symbols binds C functions of a library to Go function variables with
// purego.RegisterFunc; a missing symbol is an error naming it.
type symbols struct {
	lib    string
	handle uintptr
	err    error
}

func (s *symbols) bind(fptr any, name string) {
	if s.err != nil {
		return
	}
	addr, err := purego.Dlsym(s.handle, name)
	if err != nil {
		s.err = fmt.Errorf("cuda: %s has no %s (too old?): %w", s.lib, name, err)
		return
	}
	purego.RegisterFunc(fptr, addr)
}
