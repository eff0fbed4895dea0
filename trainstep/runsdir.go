package trainstep

import (
	"fmt"
	"path/filepath"
	"slices"
	"strings"
)

// DirRun is one run whose step-N checkpoints a checkpoint directory holds.
type DirRun struct {
	Run    string
	Newest string // the path of its newest checkpoint
	Count  int
}

// DirRuns lists the runs whose checkpoints dir holds (by run.json's run
// name; a checkpoint without one counts as the run ""), newest first. A
// directory that is itself a checkpoint, or holds none, gives none.
func DirRuns(dir string) ([]DirRun, error) {
	cks, err := stepCheckpoints(dir)
	if err != nil {
		return nil, err
	}
	var runs []DirRun
	for _, c := range cks { // newest first
		path := filepath.Join(dir, c.name)
		name := ""
		if rc, err := ReadRunConfig(path); err == nil && rc != nil {
			name = rc.Run
		}
		i := slices.IndexFunc(runs, func(r DirRun) bool { return r.Run == name })
		if i < 0 {
			runs = append(runs, DirRun{Run: name, Newest: path})
			i = len(runs) - 1
		}
		runs[i].Count++
	}
	return runs, nil
}

// describeRuns names runs for an error: "avg-x (newest ckpt/step-00000711)".
func describeRuns(runs []DirRun) string {
	parts := make([]string, len(runs))
	for i, r := range runs {
		name := r.Run
		if name == "" {
			name = "a run without run.json"
		}
		noun := "checkpoints"
		if r.Count == 1 {
			noun = "checkpoint"
		}
		parts[i] = fmt.Sprintf("%s (%d %s, newest %s)", name, r.Count, noun, r.Newest)
	}
	return strings.Join(parts, "; ")
}

// oneRun fails when dir holds the checkpoints of several runs, naming
// them and how to choose one: a checkpoint directory is one run's.
func oneRun(dir string) error {
	runs, err := DirRuns(dir)
	if err != nil || len(runs) < 2 {
		return nil // unreadable: FindCheckpoint says why
	}
	return fmt.Errorf("%s holds the checkpoints of %d runs: %s: name the checkpoint to use, e.g. %s", dir, len(runs), describeRuns(runs), runs[0].Newest)
}

// checkDirRun fails when cfg's checkpoint directory holds the checkpoints
// of a run other than cfg's (or, when resuming, the run of the checkpoint
// resumed), naming it and the flags to use instead.
func checkDirRun(cfg RunConfig) error {
	runs, err := DirRuns(cfg.CheckpointDir)
	if err != nil {
		return nil
	}
	allowed := []string{cfg.Run}
	if cfg.Resume != "" {
		if rc, err := ReadRunConfig(cfg.Resume); err == nil && rc != nil {
			allowed = append(allowed, rc.Run)
		}
	}
	var other []DirRun
	for _, r := range runs {
		if !slices.Contains(allowed, r.Run) {
			other = append(other, r)
		}
	}
	if len(other) == 0 {
		return nil
	}
	return fmt.Errorf("checkpoint directory %s holds another run's checkpoints: %s: give this run its own --checkpoint-dir, or continue that run with --resume %s",
		cfg.CheckpointDir, describeRuns(other), cfg.CheckpointDir)
}

// nothingTrained is the error of a resumed run that trained no step: the
// checkpoint resumed was its run's end.
func nothingTrained(cfg RunConfig, steps int64) error {
	return fmt.Errorf("resuming %s: run %s had finished (step %d, --epochs %d): nothing was trained; to train it further give a larger --epochs (or --max-steps, --duration) with --resume",
		cfg.Resume, cfg.Run, steps, cfg.Epochs)
}
