// Package testenv locates the files tests read: the repository's own
// fixtures under testdata/, and the real data sets in ../shared/data beside
// the repository, which tests skip with a message when they are absent.
package testenv

import (
	"os"
	"path/filepath"
	"runtime"
	"testing"

	"golang.org/x/mod/modfile"
)

// Root is the repository root, found from this file's location. A test
// binary built with -trimpath (the GPU bundle's) knows this file only as
// github.com/parastream/parastream/internal/testenv/testenv.go: its root
// is then the nearest folder above the working directory whose go.mod
// names this module (the bundle unpacks one beside the files its tests
// read), else the module path as a relative path, as before.
func Root() string {
	_, file, _, _ := runtime.Caller(0)
	root := filepath.Join(filepath.Dir(file), "..", "..")
	if filepath.IsAbs(root) {
		return root
	}
	if dir, err := os.Getwd(); err == nil {
		for {
			if b, err := os.ReadFile(filepath.Join(dir, "go.mod")); err == nil && modfile.ModulePath(b) == module {
				return dir
			}
			up := filepath.Dir(dir)
			if up == dir {
				break
			}
			dir = up
		}
	}
	return root
}

// module is this repository's module path.
const module = "github.com/parastream/parastream"

// Fixture is a path under the repository's testdata/.
func Fixture(rel string) string { return filepath.Join(Root(), "testdata", rel) }

// SharedData is a path under ../shared/data, or skips the test with a clear
// message when that folder is absent.
func SharedData(t testing.TB, rel string) string {
	t.Helper()
	p := filepath.Join(Root(), "..", "shared", "data", rel)
	if _, err := os.Stat(p); err != nil {
		t.Skipf("skipping: real data %s is absent (the ../shared/data folder beside the repository)", p)
	}
	return p
}

// Tree reads every regular file under root, keyed by its path relative to
// root with forward slashes.
func Tree(t testing.TB, root string) map[string]string {
	t.Helper()
	files := map[string]string{}
	err := filepath.WalkDir(root, func(p string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		b, err := os.ReadFile(p)
		rel, _ := filepath.Rel(root, p)
		files[filepath.ToSlash(rel)] = string(b)
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return files
}
