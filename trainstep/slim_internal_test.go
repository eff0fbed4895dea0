package trainstep

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/parastream/parastream/shards"
	"github.com/parastream/parastream/trainstep/compute"
)

// TestSlimCheckpoints: the optimiser state of all but the newest keep
// checkpoints is dropped (a claimed one at a later call); a slimmed
// checkpoint passes its sha256 check and reads as a model, and resuming
// it fails in one line saying what to do; the newest keep resume.
func TestSlimCheckpoints(t *testing.T) {
	tr, err := New(Config{Encoder: compute.EncGRAN, Dim: 4, Hidden: 3, BatchSize: 2, LambdaW: 1e-2}, Options{Vocab: []string{"<unk>", "the", "cat", "sat"}})
	if err != nil {
		t.Fatal(err)
	}
	defer tr.Close()
	dir := t.TempDir()
	var cks []string
	for _, name := range []string{"step-00000001", "step-00000002", "step-00000003", "step-00000004"} {
		ck := filepath.Join(dir, name)
		if _, err := tr.save(ck, []byte(`{}`), nil, nil); err != nil {
			t.Fatal(err)
		}
		cks = append(cks, ck)
	}
	claim, err := shards.LockFile(filepath.Join(cks[0], FileTrainer), false)
	if err != nil {
		t.Fatal(err)
	}
	if n, err := slimCheckpoints(dir, 2); err != nil || n != 1 {
		t.Fatalf("slimming with step 1 claimed: %d slimmed, %v; want step 2 alone", n, err)
	}
	claim.Unlock()
	if n, err := slimCheckpoints(dir, 2); err != nil || n != 1 {
		t.Fatalf("slimming again: %d slimmed, %v; want step 1", n, err)
	}
	for i, ck := range cks {
		_, statErr := os.Stat(filepath.Join(ck, FileOptimizer))
		got, err := ReadCheckpoint(ck)
		if err != nil {
			t.Fatalf("%s: %v", ck, err)
		}
		tr2, _, rerr := Resume(ck, nil)
		if i < 2 {
			if statErr == nil || !got.ModelOnly || rerr == nil || !strings.Contains(rerr.Error(), "--init-from") || strings.Contains(rerr.Error(), "\n") {
				t.Errorf("%s: optimiser file %v, model only %v, resume %v; want it dropped and the resume refused in one line", ck, statErr, got.ModelOnly, rerr)
			}
			if err := checkCheckpoint(ck); err != nil {
				t.Errorf("%s: slimmed, it fails its check: %v", ck, err)
			}
			continue
		}
		if statErr != nil || got.ModelOnly || rerr != nil {
			t.Errorf("%s: optimiser file %v, model only %v, resume %v; want it kept and resumable", ck, statErr, got.ModelOnly, rerr)
		}
		if tr2 != nil {
			tr2.Close()
		}
	}
}
