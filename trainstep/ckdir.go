package trainstep

import (
	"cmp"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/parastream/parastream/shards"
	"github.com/parastream/parastream/stream"
)

// lockCheckpointDir creates the run's checkpoint directory and takes its
// lock, the one shards outputs have (a flock the kernel releases when the
// process ends, however it ends): one trainer at a time writes a
// checkpoint directory, so a second trainer of the run (or of another run
// given the same directory) fails here, before its first step, with one
// line naming the holder; a directory holding another run's checkpoints
// is refused (checkDirRun). Under the lock, the hidden .step-N.*.tmp
// directories of trainers killed while writing a checkpoint are removed.
//
// It returns the lock, and whether it created the directory: a run that
// writes no checkpoint removes the directory it created (release).
func lockCheckpointDir(cfg RunConfig) (*shards.Lock, bool, error) {
	dir := cfg.CheckpointDir
	fi, err := os.Stat(dir)
	if err == nil && !fi.IsDir() {
		return nil, false, fmt.Errorf("checkpoint directory %s is a file: give a directory with --checkpoint-dir", dir)
	}
	created := errors.Is(err, fs.ErrNotExist)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, false, fmt.Errorf("checkpoint directory %s: %w: give a directory with --checkpoint-dir", dir, err)
	}
	holder := fmt.Sprintf("pid %d, parastream train --run %s, since %s", os.Getpid(), cfg.Run, time.Now().UTC().Format(time.RFC3339))
	lock, err := shards.LockHeld(dir, holder)
	if err != nil {
		if errors.Is(err, shards.ErrLocked) {
			return nil, false, fmt.Errorf("checkpoint directory %w: one trainer at a time writes a run's checkpoints", err)
		}
		return nil, false, fmt.Errorf("checkpoint directory %s: %w", dir, err)
	}
	if err := checkDirRun(cfg); err != nil {
		lock.Unlock()
		return nil, false, err
	}
	if n, err := removeLeftovers(dir); err != nil {
		cfg.Logger.Warn("removing the leftovers of killed trainers", "dir", dir, "err", err)
	} else if n > 0 {
		cfg.Logger.Info("removed the unfinished checkpoints of killed trainers", "dir", dir, "removed", n)
	}
	return lock, created, nil
}

// releaseCheckpointDir removes the checkpoint directory a run created
// (lockCheckpointDir) when it wrote no checkpoint in it, then releases
// the lock.
func releaseCheckpointDir(dir string, lock *shards.Lock, created, wrote bool) {
	if created && !wrote {
		if cks, err := stepCheckpoints(dir); err == nil && len(cks) == 0 {
			os.RemoveAll(dir)
		}
	}
	lock.Unlock()
}

// removeLeftovers removes dir's .step-N.*.tmp directories: checkpoints a
// killed trainer had begun and not renamed into place. Call it with the
// directory's lock held and no checkpoint being written. It returns how
// many it removed.
func removeLeftovers(dir string) (int, error) {
	tmps, err := filepath.Glob(filepath.Join(dir, ".step-*.tmp"))
	if err != nil {
		return 0, err
	}
	var errs []error
	n := 0
	for _, t := range tmps {
		if fi, err := os.Lstat(t); err != nil || !fi.IsDir() {
			continue
		}
		if err := os.RemoveAll(t); err != nil {
			errs = append(errs, err)
			continue
		}
		n++
	}
	return n, errors.Join(errs...)
}

// ClaimCheckpoint claims the checkpoint dir for a reader that must not
// see it removed (a watcher evaluating it): until release is called (or
// the process ends), the trainer's pruning (--keep-checkpoints) passes it
// over, and removes it at a later prune. The claim is a shared flock on
// the checkpoint's trainer.json. It fails, with an error wrapping
// fs.ErrNotExist, for a checkpoint that is gone or being removed, and with
// the reason for one whose files do not match its sha256sums.txt.
func ClaimCheckpoint(dir string) (release func(), err error) {
	name := filepath.Join(dir, FileTrainer)
	lock, err := shards.LockFile(name, false)
	if errors.Is(err, shards.ErrLocked) {
		return nil, fmt.Errorf("checkpoint %s is being removed: %w", dir, fs.ErrNotExist)
	}
	if err != nil {
		return nil, fmt.Errorf("checkpoint %s: %w", dir, err)
	}
	release = func() { lock.Unlock() }
	// Claimed after the pruner removed it, the file is no longer dir's.
	held, err1 := lock.File().Stat()
	now, err2 := os.Stat(name)
	if err1 != nil || err2 != nil || !os.SameFile(held, now) {
		release()
		return nil, fmt.Errorf("checkpoint %s was removed: %w", dir, fs.ErrNotExist)
	}
	if err := checkCheckpoint(dir); err != nil {
		release()
		return nil, fmt.Errorf("checkpoint %s cannot be read: %w", dir, err)
	}
	return release, nil
}

// removeUnclaimed removes the checkpoint dir unless a reader claimed it
// (ClaimCheckpoint): it holds trainer.json locked exclusively while it
// removes, so that no claim begins meanwhile. It reports whether it
// removed the checkpoint.
func removeUnclaimed(dir string) (bool, error) {
	lock, err := shards.LockFile(filepath.Join(dir, FileTrainer), true)
	switch {
	case errors.Is(err, shards.ErrLocked):
		return false, nil
	case err != nil && !errors.Is(err, fs.ErrNotExist):
		return false, err
	}
	defer lock.Unlock()
	return true, os.RemoveAll(dir)
}

// lockRun takes this machine's lock of the run's consumer group (the run
// on its brokers and topic prefix): a second trainer of the run on this
// machine given another checkpoint directory fails here, naming the
// holder, instead of sharing the group. The lock is a directory under
// the user's cache directory, parastream/runs/<hash>, holding the flock
// of lockCheckpointDir's kind; release removes it. Trainers on other
// machines are not seen.
func lockRun(cfg RunConfig) (release func(), err error) {
	base, err := os.UserCacheDir()
	if err != nil || base == "" {
		base = os.TempDir()
	}
	brokers := slices.Sorted(slices.Values(cfg.Client.Brokers))
	prefix := cmp.Or(cfg.Prefix, stream.DefaultPrefix)
	key := sha256.Sum256([]byte(strings.Join(brokers, ",") + "\x00" + prefix + "\x00" + cfg.Run))
	dir := filepath.Join(base, "parastream", "runs", hex.EncodeToString(key[:8]))
	name := filepath.Join(dir, shards.LockName)
	holder := fmt.Sprintf("pid %d, parastream train --run %s --checkpoint-dir %s", os.Getpid(), cfg.Run, cfg.CheckpointDir)
	for range 5 {
		if err = os.MkdirAll(dir, 0o755); err != nil {
			return nil, fmt.Errorf("run %s: creating its lock: %w", cfg.Run, err)
		}
		lock, err := shards.LockHeld(dir, holder)
		if errors.Is(err, shards.ErrLocked) {
			return nil, fmt.Errorf("run %s (consumer group %s on %s) is being trained by another process on this machine: %w: one trainer a run; give another --run for a run of its own",
				cfg.Run, cfg.Run, strings.Join(brokers, ","), err)
		}
		if errors.Is(err, fs.ErrNotExist) {
			continue // the holder released and removed it meanwhile
		}
		if err != nil {
			return nil, err
		}
		// Locked after the holder before released and removed it: the
		// file is no longer the lock; take the new one.
		held, err1 := lock.File().Stat()
		now, err2 := os.Stat(name)
		if err1 == nil && err2 == nil && os.SameFile(held, now) {
			return func() {
				os.Remove(name) // while held: a process waiting on it takes a new one
				os.Remove(dir)
				lock.Unlock()
			}, nil
		}
		lock.Unlock()
	}
	return nil, fmt.Errorf("run %s: its lock %s keeps being removed", cfg.Run, name)
}

// joinRun makes this trainer the one live member of the run's consumer
// group on the brokers (stream.JoinGroup), for as long as it trains: a
// second trainer of the run, on this machine or another, fails there
// naming this one (host, pid, checkpoint directory). A trainer killed
// without leaving holds the group for cfg.GroupSession after its last
// heartbeat.
func joinRun(ctx context.Context, cfg RunConfig) (*stream.Member, error) {
	host, _ := os.Hostname()
	dir, err := filepath.Abs(cfg.CheckpointDir)
	if err != nil {
		dir = cfg.CheckpointDir
	}
	topics := make([]string, 0, len(cfg.datasets()))
	for _, n := range cfg.datasets() {
		topics = append(topics, stream.RowTopic(cfg.Prefix, n, cfg.Split))
	}
	here := fmt.Sprintf("parastream train on host %s, pid ", host)
	m, err := stream.JoinGroup(ctx, stream.MemberConfig{
		Client: cfg.Client, Group: cfg.Run, Topics: topics, Session: cfg.GroupSession, Logger: cfg.Logger,
		Holder: fmt.Sprintf("%s%d, --checkpoint-dir %s, since %s", here, os.Getpid(), dir, time.Now().UTC().Format(time.RFC3339)),
		Gone:   func(holder string) bool { return endedHere(here, holder) },
	})
	if err != nil {
		return nil, fmt.Errorf("run %s: %w", cfg.Run, err)
	}
	return m, nil
}

// endedHere reports whether holder names a trainer of this host (its
// holder starts with here) whose process has ended: one killed, whose
// membership the group keeps until its session expires.
func endedHere(here, holder string) bool {
	rest, ok := strings.CutPrefix(holder, here)
	if !ok {
		return false
	}
	pid, err := strconv.Atoi(rest[:strings.IndexFunc(rest+",", func(r rune) bool { return r < '0' || r > '9' })])
	if err != nil || pid == os.Getpid() {
		return false
	}
	p, err := os.FindProcess(pid)
	return err != nil || errors.Is(p.Signal(syscall.Signal(0)), os.ErrProcessDone)
}
