package trainstep

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/parastream/parastream/internal/atomicfile"
	"github.com/parastream/parastream/shards"
)

// FileModelOnly marks a checkpoint whose optimiser state (FileOptimizer)
// was dropped: it keeps the model, for evaluation, embedding and export,
// and cannot be resumed.
const FileModelOnly = "model-only.txt"

// DefaultKeepOptimizer is how many of the newest checkpoints keep their
// optimiser state (RunConfig.KeepOptimizer's default).
const DefaultKeepOptimizer = 2

// errModelOnly is the error of resuming a checkpoint whose optimiser state
// was dropped.
func errModelOnly(dir string) error {
	return fmt.Errorf("resuming %s: it keeps the model only (only the newest checkpoints keep the optimiser state, --keep-optimizer): resume from a newer checkpoint, or start a new run from its model with --init-from", dir)
}

// slimCheckpoints drops the optimiser state of dir's step-N checkpoints
// but the newest keep (dropOptimizer). It returns how many it slimmed.
func slimCheckpoints(dir string, keep int) (int, error) {
	cks, err := stepCheckpoints(dir)
	if err != nil || len(cks) <= keep {
		return 0, err
	}
	var errs []error
	n := 0
	for _, c := range cks[keep:] {
		ok, err := dropOptimizer(filepath.Join(dir, c.name))
		if err != nil {
			errs = append(errs, err)
		}
		if ok {
			n++
		}
	}
	return n, errors.Join(errs...)
}

// dropOptimizer removes the optimiser state of the checkpoint ck, unless
// a reader claimed it (ClaimCheckpoint: a later call drops it) or it was
// dropped already: it writes FileModelOnly, then FileSums without the
// optimiser's line (and with the marker's), each atomically, then removes
// FileOptimizer, holding trainer.json locked exclusively meanwhile so
// that no claim begins. A crash in between leaves a checkpoint that reads
// as model-only, and the next call finishes the removal. It reports
// whether it removed the file.
func dropOptimizer(ck string) (bool, error) {
	opt := filepath.Join(ck, FileOptimizer)
	if _, err := os.Stat(opt); errors.Is(err, fs.ErrNotExist) {
		return false, nil
	}
	lock, err := shards.LockFile(filepath.Join(ck, FileTrainer), true)
	switch {
	case errors.Is(err, shards.ErrLocked), errors.Is(err, fs.ErrNotExist):
		return false, nil
	case err != nil:
		return false, err
	}
	defer lock.Unlock()
	marker := []byte("This checkpoint keeps the model only: its optimiser state was dropped once newer checkpoints kept theirs.\n" +
		"Evaluate, embed and export it; to train from it, start a new run with --init-from.\n")
	if err := atomicfile.WriteFile(filepath.Join(ck, FileModelOnly), marker); err != nil {
		return false, err
	}
	sums, err := os.ReadFile(filepath.Join(ck, FileSums))
	switch {
	case err == nil:
		var b strings.Builder
		for line := range strings.Lines(string(sums)) {
			_, name, _ := strings.Cut(strings.TrimSuffix(line, "\n"), "  ")
			if name != FileOptimizer && name != FileModelOnly {
				b.WriteString(line)
			}
		}
		_, sum, err := shards.HashFile(filepath.Join(ck, FileModelOnly))
		if err != nil {
			return false, err
		}
		fmt.Fprintf(&b, "%s  %s\n", sum, FileModelOnly)
		if err := atomicfile.WriteFile(filepath.Join(ck, FileSums), []byte(b.String())); err != nil {
			return false, err
		}
	case !errors.Is(err, fs.ErrNotExist):
		return false, err
	}
	return true, os.Remove(opt)
}

// modelOnly reports whether checkpoint dir's optimiser state was dropped.
func modelOnly(dir string) bool {
	_, err := os.Stat(filepath.Join(dir, FileModelOnly))
	return err == nil
}
