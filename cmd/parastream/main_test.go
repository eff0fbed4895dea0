package main

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/parastream/parastream/cmd/parastream/internal/demo"
)

func runCLI(t *testing.T, args ...string) (code int, stdout, stderr string) {
	t.Helper()
	var out, errb bytes.Buffer
	code = run(context.Background(), args, &env{stdout: &out, stderr: &errb})
	return code, out.String(), errb.String()
}

func TestHelpListsEveryCommand(t *testing.T) {
	code, out, _ := runCLI(t, "--help")
	if code != 0 {
		t.Fatalf("exit %d", code)
	}
	for _, c := range []string{"extract", "featurize", "publish", "consume", "broker", "train", "eval", "adapt", "gen", "demo", "version"} {
		if !strings.Contains(out, "\n  "+c+" ") {
			t.Errorf("help does not list %s:\n%s", c, out)
		}
		code, out, _ := runCLI(t, c, "--help")
		if code != 0 || !strings.Contains(out, "usage: parastream "+c) {
			t.Errorf("%s --help: exit %d, output %q", c, code, out)
		}
	}
}

func TestUnknownCommandAndBadFlag(t *testing.T) {
	if code, _, errOut := runCLI(t, "frobnicate"); code != 2 || !strings.Contains(errOut, "unknown command") {
		t.Errorf("unknown command: exit %d, %q", code, errOut)
	}
	if code, _, errOut := runCLI(t, "read", "--no-such-flag"); code != 2 || !strings.Contains(errOut, "unknown flag --no-such-flag") {
		t.Errorf("bad flag: exit %d, %q", code, errOut)
	}
	if code, _, errOut := runCLI(t, "read", "--format", "nope", "x"); code != 2 || !strings.Contains(errOut, "unknown format") {
		t.Errorf("unknown format: exit %d, %q", code, errOut)
	}
}

func TestReadWritesRejects(t *testing.T) {
	rejects := filepath.Join(t.TempDir(), "rejects.jsonl")
	code, out, errOut := runCLI(t, "read", "--format", "reddit-comments", "--rejects", rejects, "../../testdata/reddit/comments.jsonl.zst")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	if !strings.Contains(out, "records 24  examples 20  rejected 4") {
		t.Errorf("summary:\n%s", out)
	}
	b, err := os.ReadFile(rejects)
	if err != nil {
		t.Fatal(err)
	}
	if n := strings.Count(string(b), "\n"); n != 4 {
		t.Errorf("rejects file has %d lines, want 4:\n%s", n, b)
	}
}

func TestReadReportsTruncatedFile(t *testing.T) {
	b, _ := os.ReadFile("../../testdata/reddit/comments.jsonl.gz")
	path := filepath.Join(t.TempDir(), "cut.gz")
	os.WriteFile(path, b[:len(b)/2], 0o644)
	code, out, errOut := runCLI(t, "read", "--format", "reddit-comments", path)
	if code != 1 || !strings.Contains(errOut, path) || !strings.Contains(errOut, "truncated") || !strings.Contains(out, "ERROR") {
		t.Errorf("exit %d, stdout %q, stderr %q", code, out, errOut)
	}
}

func TestDemoReadsEveryFixture(t *testing.T) {
	out := t.TempDir()
	code, stdout, errOut := runCLI(t, "demo", "--data", "../../testdata", "--out", out)
	if code != 0 {
		t.Fatalf("exit %d: %s\n%s", code, errOut, stdout)
	}
	if strings.Contains(stdout, "ERROR") {
		t.Errorf("demo reported an error:\n%s", stdout)
	}
	if !strings.Contains(stdout, "total: 17 inputs") {
		t.Errorf("demo summary:\n%s", stdout)
	}
	entries, _ := os.ReadDir(filepath.Join(out, "rejects"))
	if len(entries) != len(demo.Inputs()) {
		t.Errorf("%d rejects files, want %d", len(entries), len(demo.Inputs()))
	}
}
