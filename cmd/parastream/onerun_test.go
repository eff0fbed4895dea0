package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/parastream/parastream/trainstep"
)

// TestOneRunPerCheckpointDir: a second run given the first run's
// --checkpoint-dir fails in one line naming that run and the flags to use;
// `train --resume` says what it resumes, and refuses (exit 1, a line on
// how to train further) to "resume" a finished run into zero steps; embed
// of a directory holding two runs' checkpoints names both.
func TestOneRunPerCheckpointDir(t *testing.T) {
	addr := publishedRows(t, 200)
	dir := filepath.Join(t.TempDir(), "ck")
	common := []string{"--brokers", addr, "--dataset", "para", "--dim", "8", "--batch", "50", "--epochs", "1", "--checkpoint-dir", dir, "--quiet"}
	if code, _, stderr := runCLI(t, append([]string{"train", "--run", "first", "--model", "avg"}, common...)...); code != 0 {
		t.Fatalf("train: %s", stderr)
	}
	code, _, stderr := runCLI(t, append([]string{"train", "--run", "second", "--model", "gran"}, common...)...)
	if line := errorLine(stderr); code == 0 || !strings.Contains(line, "another run's checkpoints: first") || !strings.Contains(line, "--checkpoint-dir") {
		t.Fatalf("a second run in the first run's directory: exit %d, stderr %q; want one line naming run first", code, stderr)
	}
	t.Logf("second run: %s", stderr)

	code, _, stderr = runCLI(t, "train", "--resume", dir)
	if code == 0 || !strings.Contains(stderr, "resuming from "+dir) || !strings.Contains(stderr, "run first") ||
		!strings.Contains(stderr, "had finished") || !strings.Contains(stderr, "--epochs") {
		t.Fatalf("resume of a finished run: exit %d, stderr %q; want it refused with how to train further", code, stderr)
	}
	t.Logf("finished run: %s", stderr)
	if code, _, stderr = runCLI(t, "train", "--resume", dir, "--epochs", "2"); code != 0 {
		t.Fatalf("resume with --epochs 2: %s", stderr)
	}

	// A second run's checkpoint placed beside the first's by hand.
	cks, _ := filepath.Glob(filepath.Join(dir, "step-*"))
	newest := cks[len(cks)-1]
	other := filepath.Join(dir, "step-99999999")
	if err := os.CopyFS(other, os.DirFS(newest)); err != nil {
		t.Fatal(err)
	}
	info, err := trainstep.ReadRunConfig(other)
	if err != nil {
		t.Fatal(err)
	}
	info.Run = "intruder"
	data, _ := json.Marshal(info)
	if err := os.WriteFile(filepath.Join(other, trainstep.FileRun), data, 0o644); err != nil {
		t.Fatal(err)
	}
	os.Remove(filepath.Join(other, trainstep.FileSums))
	code, _, stderr = runCLI(t, "embed", "--checkpoint", dir)
	if code == 0 || !strings.Contains(stderr, "2 runs") || !strings.Contains(stderr, "first (") || !strings.Contains(stderr, "intruder (") {
		t.Errorf("embed of a directory of two runs: exit %d, stderr %q; want both named", code, stderr)
	}
	t.Logf("embed: %s", stderr)
}

// errorLine is the line of stderr that holds the command's error.
func errorLine(stderr string) string {
	for l := range strings.Lines(stderr) {
		if strings.HasPrefix(l, "parastream ") {
			return l
		}
	}
	return ""
}

// publishedRows starts an embedded broker and publishes n featurized rows of the
// dataset "para" to it; it returns the broker's address.
func publishedRows(t *testing.T, n int) string {
	t.Helper()
	root := writeFeaturized(t, n, 0)
	addr := startBroker(t)
	if code, _, stderr := runCLI(t, "publish", "--shards", root, "--brokers", addr, "--quiet"); code != 0 {
		t.Fatalf("publish: %s", stderr)
	}
	return addr
}
