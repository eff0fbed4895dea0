package trainstep

import (
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/parastream/parastream/shards"
)

// TestPruneKeepsClaimedCheckpoints: --keep-checkpoints passes over a
// checkpoint a watcher holds (ClaimCheckpoint's shared lock on its
// trainer.json) and removes it at the next prune once released; it
// removes killed trainers' .step-N.*.tmp directories too.
func TestPruneKeepsClaimedCheckpoints(t *testing.T) {
	dir := t.TempDir()
	for _, name := range []string{"step-00000001", "step-00000002", "step-00000003", ".step-00000004.123.tmp"} {
		if err := os.MkdirAll(filepath.Join(dir, name), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, name, FileTrainer), []byte("{}"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	claim, err := shards.LockFile(filepath.Join(dir, "step-00000001", FileTrainer), false)
	if err != nil {
		t.Fatal(err)
	}
	removed, err := pruneCheckpoints(dir, 1)
	if err != nil {
		t.Fatal(err)
	}
	if got := names(t, dir); removed != 2 || !slices.Equal(got, []string{"step-00000001", "step-00000003"}) {
		t.Fatalf("after pruning to 1 with step 1 claimed: removed %d, left %v; want the claimed one and the newest", removed, got)
	}
	claim.Unlock()
	if removed, err := pruneCheckpoints(dir, 1); err != nil || removed != 1 {
		t.Fatalf("pruning after the claim ended: removed %d, %v; want 1", removed, err)
	}
	if got := names(t, dir); !slices.Equal(got, []string{"step-00000003"}) {
		t.Errorf("left %v, want the newest alone", got)
	}
}

func names(t *testing.T, dir string) []string {
	t.Helper()
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, e := range entries {
		out = append(out, e.Name())
	}
	return out
}
