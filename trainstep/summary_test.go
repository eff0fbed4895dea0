package trainstep_test

import (
	"context"
	"errors"
	"path/filepath"
	"testing"
	"time"

	"github.com/parastream/parastream/trainstep"
)

// TestRunSummaryLossOfAFailedRun: a run that fails before it printed a
// progress line or wrote a checkpoint (its first write fails) still
// reports the mean loss of the steps it trained, not 0.
func TestRunSummaryLossOfAFailedRun(t *testing.T) {
	cc, vocab := publishPairs(t, 300, true)
	failpoint := func(ck, file string) error {
		if filepath.Base(ck) == "step-00000005" {
			return errors.New("disk full")
		}
		return nil
	}
	sum, err := trainstep.Run(context.Background(), trainstep.WithCheckpointFailpoint(trainstep.RunConfig{
		Client: cc, Dataset: "para", Run: "lossy", Vocab: vocab,
		Model:  trainstep.Config{Dim: 8, BatchSize: 10},
		Epochs: 1, ShuffleBuffer: 10, Window: 2, CheckpointDir: t.TempDir(), CheckpointEvery: 5, ProgressEvery: time.Hour,
	}, failpoint))
	if err == nil {
		t.Fatal("the run succeeded with its first checkpoint failing")
	}
	if sum.Steps < 5 || !(sum.Loss > 0) {
		t.Errorf("summary after %d steps: loss %v, want the steps' mean loss", sum.Steps, sum.Loss)
	}
}
