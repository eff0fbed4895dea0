package main

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/parastream/parastream/corpora"
)

func genCLI(t *testing.T, args ...string) (int, string, string) {
	t.Helper()
	var out, errb bytes.Buffer
	code := run(context.Background(), args, &env{stdout: &out, stderr: &errb})
	return code, out.String(), errb.String()
}

// TestGenEveryCorpus writes each corpus through the command, compressed
// several ways, and reads it back with its reader.
func TestGenEveryCorpus(t *testing.T) {
	dir := t.TempDir()
	for _, c := range []struct {
		args   []string
		format string
		files  []string
	}{
		{[]string{"reddit", "--out", "RC_2024-02.zst", "--submissions", "RS_2024-02.gz"}, "reddit-comments", []string{"RC_2024-02.zst"}},
		{[]string{"europarl", "--out", "europarl-v7.fr-en", "--compress", "bz2"}, "europarl", []string{"europarl-v7.fr-en.en.bz2", "europarl-v7.fr-en.fr.bz2"}},
		{[]string{"ppdb", "--out", "ppdb-2.0-s-all", "--ppdb-version", "1"}, "ppdb", []string{"ppdb-2.0-s-all"}},
		{[]string{"quora", "--out", "quora.tsv.gz"}, "quora", []string{"quora.tsv.gz"}},
		{[]string{"simpwiki", "--out", "normal.aligned", "--compress", "zstd"}, "simpwiki", []string{"normal.aligned.zst", "simple.aligned.zst"}},
	} {
		args := append([]string{"gen"}, c.args...)
		for i, a := range args {
			if i > 0 && (args[i-1] == "--out" || args[i-1] == "--submissions") {
				args[i] = filepath.Join(dir, a)
			}
		}
		args = append(args, "--rows", "1.2k", "--seed", "5", "--malformed-rate", "0.01")
		code, out, errOut := genCLI(t, args...)
		if code != 0 {
			t.Fatalf("%v: exit %d: %s", args, code, errOut)
		}
		m := regexp.MustCompile(`: (\d+) rows, (\d+) malformed`).FindStringSubmatch(out)
		if m == nil || m[1] != "1200" {
			t.Fatalf("%v: summary %q", args, out)
		}
		malformed, _ := strconv.Atoi(m[2])
		paths := make([]string, len(c.files))
		for i, f := range c.files {
			paths[i] = filepath.Join(dir, f)
		}
		r, err := corpora.OpenFormat(c.format, paths, corpora.Options{})
		if err != nil {
			t.Fatalf("%v: %v (wrote %s)", args, err, out)
		}
		if err := corpora.Drain(r, nil, nil); err != nil {
			t.Fatal(err)
		}
		st := r.Stats()
		r.Close()
		if st.Examples != int64(1200-malformed) || st.RejectedTotal() != int64(malformed) {
			t.Errorf("%v: read %d examples and %d rejects, want %d and %d", args, st.Examples, st.RejectedTotal(), 1200-malformed, malformed)
		}
	}
	subs, err := corpora.OpenFormat("reddit-submissions", []string{filepath.Join(dir, "RS_2024-02.gz")}, corpora.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer subs.Close()
	if err := corpora.Drain(subs, nil, nil); err != nil || subs.Stats().Examples == 0 {
		t.Errorf("submissions: %v, %d examples", err, subs.Stats().Examples)
	}
	entries, _ := os.ReadDir(dir)
	for _, e := range entries {
		if strings.HasSuffix(e.Name(), ".tmp") {
			t.Errorf("temporary file left: %s", e.Name())
		}
	}
}

func TestGenMistakes(t *testing.T) {
	out := filepath.Join(t.TempDir(), "x")
	for _, args := range [][]string{
		{"gen"},
		{"gen", "reddit"},
		{"gen", "wikipedia", "--out", out},
		{"gen", "reddit", "--out", out, "--rows", "ten"},
		{"gen", "reddit", "--out", out, "--era", "1999"},
		{"gen", "reddit", "--out", out, "--compress", "lz4"},
		{"gen", "ppdb", "--out", out, "--out-b", out},
		{"gen", "quora", "--out", out, "--submissions", out},
		{"gen", "reddit", "--out", out, "extra"},
		{"gen", "europarl", "--out", "-"},
		{"gen", "europarl", "--out", out, "--out-b", out},
		{"gen", "reddit", "--out", "-", "--submissions", "-"},
	} {
		if code, _, errOut := genCLI(t, args...); code != 2 || !strings.Contains(errOut, "usage:") {
			t.Errorf("%v: exit %d, %q", args, code, errOut)
		}
	}
	if _, err := os.Stat(out); !os.IsNotExist(err) {
		t.Errorf("a failed run left %s", out)
	}
}

// TestGenToDevices: a device such as /dev/null is written in place, never
// replaced by a renamed file; "-" is standard output.
func TestGenToDevices(t *testing.T) {
	fi, err := os.Stat(os.DevNull)
	if err != nil || fi.Mode().IsRegular() {
		t.Skipf("no %s device", os.DevNull)
	}
	if code, _, errOut := genCLI(t, "gen", "quora", "--rows", "10", "--out", os.DevNull); code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	if fi, err := os.Stat(os.DevNull); err != nil || fi.Mode().IsRegular() {
		t.Fatalf("%s is now a regular file", os.DevNull)
	}
	code, out, errOut := genCLI(t, "gen", "quora", "--rows", "3", "--out", "-", "--malformed-rate", "0")
	if code != 0 || strings.Count(out, "\n") != 4 || !strings.HasPrefix(out, "id\tqid1") || !strings.Contains(errOut, "gen quora: 3 rows") {
		t.Errorf("exit %d, stdout %q, stderr %q", code, out, errOut)
	}
}
