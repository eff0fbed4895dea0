package atomicfile_test

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/parastream/parastream/internal/atomicfile"
)

func TestCommitAndAbort(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "sub", "out.txt")
	f, err := atomicfile.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	f.WriteString("hello")
	if _, err := os.Stat(path); !os.IsNotExist(err) {
		t.Fatalf("final name exists before commit: %v", err)
	}
	if err := f.Commit(); err != nil {
		t.Fatal(err)
	}
	f.Abort() // no-op after commit
	if b, _ := os.ReadFile(path); string(b) != "hello" {
		t.Fatalf("content = %q", b)
	}

	g, _ := atomicfile.Create(filepath.Join(dir, "gone.txt"))
	g.WriteString("partial")
	g.Abort()
	entries, _ := os.ReadDir(dir)
	for _, e := range entries {
		if e.Name() != "sub" {
			t.Errorf("left behind: %s", e.Name())
		}
	}
	if err := atomicfile.WriteFile(filepath.Join(dir, "w.txt"), []byte("x")); err != nil {
		t.Fatal(err)
	}
}
