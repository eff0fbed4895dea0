package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/parastream/parastream/internal/testenv"
)

// TestCommandLineMistakes: each mistake fails before any work, with the
// exit status of a command-line mistake (2) and one line saying the fix.
func TestCommandLineMistakes(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "file")
	if err := os.WriteFile(file, []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		args []string
		says string
	}{
		{[]string{"read", "--format", "nosuch", file}, "unknown format"},
		{[]string{"read", "--format", "quora", "--rejects", dir, "--force", testenv.Fixture("quora/mini.tsv")}, "is a directory: name a file"},
		{[]string{"featurize", "--in", file, "--out", filepath.Join(dir, "out")}, "is a file: give the directory extract wrote"},
		{[]string{"read", "--format", "quora", "--show", "-1", testenv.Fixture("quora/mini.tsv")}, "--show -1: give a count"},
		{[]string{"train", "--brokers", "127.0.0.1:1", "--dataset", "quora", "--checkpoint-every", "-3"}, "CheckpointEvery is -3"},
	} {
		code, _, stderr := runCLI(t, tc.args...)
		if code != 2 || !strings.Contains(stderr, tc.says) {
			t.Errorf("%q: exit %d, %q; want 2 saying %q", tc.args, code, stderr, tc.says)
		}
	}
}

// TestTrainCheckpointDirIsAFile: a --checkpoint-dir that is a file fails
// the run before its first step (before it even reaches the broker).
func TestTrainCheckpointDirIsAFile(t *testing.T) {
	file := filepath.Join(t.TempDir(), "file")
	if err := os.WriteFile(file, []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}
	code, _, stderr := runCLI(t, "train", "--brokers", "127.0.0.1:1", "--dataset", "quora", "--model", "avg", "--checkpoint-dir", file, "--quiet")
	if code == 0 || !strings.Contains(stderr, "give a directory with --checkpoint-dir") {
		t.Errorf("train --checkpoint-dir FILE: exit %d, %q", code, stderr)
	}
}

// TestExtractWrongFormatFails: extracting a file in another corpus's
// format keeps nothing, and fails, keeping the rejects to read.
func TestExtractWrongFormatFails(t *testing.T) {
	out := filepath.Join(t.TempDir(), "out")
	code, _, stderr := runCLI(t, "extract", "--corpus", "moses", "--input", testenv.Fixture("quora/mini.tsv"), "--out", out, "--quiet")
	if code == 0 || !strings.Contains(stderr, "no pairs kept: all 16 records were rejected as moses") {
		t.Errorf("extract --corpus moses of a Quora file: exit %d, %q", code, stderr)
	}
	if rejects, _ := filepath.Glob(filepath.Join(out, "rejects", "moses.*.jsonl")); len(rejects) != 1 {
		t.Errorf("rejects kept: %v, want the one file", rejects)
	}
}

// TestFeaturizeQuiet: --quiet prints the summary, not the topics' words.
func TestFeaturizeQuiet(t *testing.T) {
	out := t.TempDir()
	if code, _, stderr := runCLI(t, "extract", "--corpus", "quora", "--input", testenv.Fixture("quora/mini.tsv"), "--out", out, "--quiet"); code != 0 {
		t.Fatalf("extract: %s", stderr)
	}
	code, stdout, stderr := runCLI(t, "featurize", "--in", out, "--out", out, "--topics", "2", "--min-count", "1", "--quiet")
	if code != 0 || strings.Contains(stdout, "topic ") {
		t.Errorf("featurize --quiet: exit %d, stdout %q, stderr %q", code, stdout, stderr)
	}
}
