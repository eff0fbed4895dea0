package outdir_test

import (
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/parastream/parastream/cmd/parastream/internal/outdir"
)

func TestCheck(t *testing.T) {
	home, err := os.UserHomeDir()
	if err != nil {
		t.Skip("no home directory:", err)
	}
	mk := func(files ...string) string {
		dir := t.TempDir()
		for _, f := range files {
			p := filepath.Join(dir, filepath.FromSlash(f))
			if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
				t.Fatal(err)
			}
			if f[len(f)-1] == '/' {
				continue
			}
			if err := os.WriteFile(p, []byte("x"), 0o644); err != nil {
				t.Fatal(err)
			}
		}
		return dir
	}
	file := filepath.Join(mk("f"), "f")
	for _, tc := range []struct {
		name string
		dir  string
		ok   bool
	}{
		{"root", "/", false},
		{"home", home, false},
		{"a file", file, false},
		{"new", filepath.Join(t.TempDir(), "new"), true},
		{"empty", mk(), true},
		{"someone's files", mk("notes.txt", "src/main.go"), false},
		{"shards output", mk("manifest.json", "quora/train/part-00000-of-00001.parquet"), true},
		{"killed before its manifest", mk("quora/train/part-00000-of-00002.parquet", "rejects/quora.jsonl"), true},
		{"work directory left", mk(".work-extract-0a1b2c3d4e5f/spill"), true},
		{"a user's .work-* directory", mk(".work-mine/f"), false},
		{"an output and a user's .work-* directory", mk("manifest.json", ".work-mine/f"), false},
		{"an output and a user's notes", mk("manifest.json", "quora/train/part-00000-of-00001.parquet", "notes.txt"), false},
		{"an output with its lock and a work directory", mk("manifest.json", ".parastream.lock", ".work-featurize-00aa11bb22cc/x"), true},
		{"results with a killed write's temporary file", mk("results.csv", "report.md", ".results.csv.123.tmp", "parts/part-1.parquet"), true},
		{"results and a user's hidden file", mk("results.csv", ".notes.tmp"), false},
		{"results", mk("results.csv", "report.md"), true},
	} {
		err := outdir.Check(tc.dir)
		if (err == nil) != tc.ok || (err != nil && !errors.Is(err, outdir.ErrRefused)) {
			t.Errorf("%s (%s): %v, want accepted %v", tc.name, tc.dir, err, tc.ok)
		}
	}
}
