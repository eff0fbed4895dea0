package trainstep

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// plantRun writes a step-N directory of run under dir with its run.json
// (the rest of a checkpoint is not read by these checks).
func plantRun(t *testing.T, dir, run string, step int) string {
	t.Helper()
	ck := filepath.Join(dir, fmt.Sprintf("step-%08d", step))
	if err := os.MkdirAll(ck, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(ck, FileRun), []byte(`{"run": "`+run+`"}`), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(ck, FileTrainer), []byte(`{}`), 0o644); err != nil {
		t.Fatal(err)
	}
	return ck
}

// TestCheckpointDirOfAnotherRun: a new run given a directory holding
// another run's checkpoints fails before training, in one line naming the
// other run and the flags to use; its own run's directory, and a resume of
// the run there, are taken.
func TestCheckpointDirOfAnotherRun(t *testing.T) {
	dir := t.TempDir()
	avg := plantRun(t, dir, "quora-avg-1", 711)
	lock, _, err := lockCheckpointDir(RunConfig{Run: "quora-gran-2", CheckpointDir: dir})
	if err == nil {
		lock.Unlock()
		t.Fatal("a second run's checkpoints in the first run's directory were accepted")
	}
	msg := err.Error()
	for _, want := range []string{"quora-avg-1", avg, "--checkpoint-dir", "--resume " + dir} {
		if !strings.Contains(msg, want) {
			t.Errorf("error %q does not name %q", msg, want)
		}
	}
	if strings.Contains(msg, "\n") {
		t.Errorf("error is not one line: %q", msg)
	}
	for _, cfg := range []RunConfig{{Run: "quora-avg-1", CheckpointDir: dir}, {Run: "renamed", Resume: avg, CheckpointDir: dir}} {
		lock, _, err := lockCheckpointDir(cfg)
		if err != nil {
			t.Errorf("run %s (resume %q): %v", cfg.Run, cfg.Resume, err)
			continue
		}
		lock.Unlock()
	}
}

// TestFindCheckpointOfSeveralRuns: a directory with the checkpoints of
// two runs is not resolved to either: the error names both.
func TestFindCheckpointOfSeveralRuns(t *testing.T) {
	dir := t.TempDir()
	a := plantRun(t, dir, "run-a", 100)
	plantRun(t, dir, "run-a", 200)
	b := plantRun(t, dir, "run-b", 60)
	_, err := FindCheckpoint(dir, nil)
	if err == nil {
		t.Fatal("a directory of two runs resolved to one checkpoint")
	}
	for _, want := range []string{"2 runs", "run-a (2 checkpoints", "run-b (1 checkpoint,", b} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q does not name %q", err, want)
		}
	}
	if got, err := FindCheckpoint(a, nil); err != nil || got != a {
		t.Errorf("a checkpoint named itself: %q, %v", got, err)
	}
}
