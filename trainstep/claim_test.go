package trainstep_test

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"testing"

	"github.com/parastream/parastream/trainstep"
	"github.com/parastream/parastream/trainstep/compute"
)

// TestClaimCheckpoint: a good checkpoint is claimed; one gone, or half
// removed (the state a pruning trainer leaves it in for a moment), is
// refused with the reason, never read.
func TestClaimCheckpoint(t *testing.T) {
	vocab := []string{"<unk>", "the", "cat", "sat"}
	tr := newTrainerVocab(t, trainstep.Config{Encoder: compute.EncAvg, Dim: 4, BatchSize: 2}, vocab)
	root := t.TempDir()
	good, half := filepath.Join(root, "step-1"), filepath.Join(root, "step-2")
	for _, d := range []string{good, half} {
		if err := tr.Save(d, nil); err != nil {
			t.Fatal(err)
		}
	}
	release, err := trainstep.ClaimCheckpoint(good)
	if err != nil {
		t.Fatalf("claiming a good checkpoint: %v", err)
	}
	release()
	if err := os.Remove(filepath.Join(half, trainstep.FileVocab)); err != nil {
		t.Fatal(err)
	}
	if _, err := trainstep.ClaimCheckpoint(half); err == nil {
		t.Error("a checkpoint missing its vocabulary was claimed")
	}
	if _, err := trainstep.ClaimCheckpoint(filepath.Join(root, "step-3")); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("claiming a checkpoint that is gone: %v, want fs.ErrNotExist", err)
	}
}
