package shards

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
)

// Lock is an advisory lock (flock) on an output directory, through the file
// LockName in it. The kernel releases it when the process ends, however it
// ends, so a killed run never leaves a directory locked.
type Lock struct {
	f *os.File
}

// LockShared takes a shared lock on root for a run that reads it (featurize
// reading its input): runs that only read may share it, a run that writes
// root (OpenOutput) is refused while it is held, and it is refused while
// such a run holds root. A directory this process may not create the lock
// file in (or that does not exist) gets no lock. Errors wrap ErrLocked when the directory
// is being written.
func LockShared(root string) (*Lock, error) { return lockDir(root, false) }

// LockHeld takes the exclusive lock on root, as OpenOutput does, for a
// directory that is not a shards output (a trainer's checkpoint
// directory), and writes holder (who holds it: a process id, a command) in
// the lock file, so that a run refused names it. root must exist. Errors
// wrap ErrLocked when another process holds the lock.
func LockHeld(root, holder string) (*Lock, error) {
	l, err := lockDir(root, true)
	if err != nil {
		return nil, err
	}
	if err := l.f.Truncate(0); err == nil {
		_, _ = l.f.WriteAt([]byte(holder+"\n"), 0)
	}
	return l, nil
}

// LockFile takes an advisory lock (flock) on the existing file path,
// opened read-only, without waiting: shared or exclusive. It claims what
// the file stands for (a checkpoint: a watcher evaluating it holds it
// shared, the trainer pruning it exclusive). Errors wrap fs.ErrNotExist
// when the file is not there, ErrLocked when the lock is held the other
// way. File reports the file locked, to check it is still the one at path.
func LockFile(path string, exclusive bool) (*Lock, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	if err := flock(f, exclusive); err != nil {
		f.Close()
		return nil, fmt.Errorf("locking %s: %w", path, err)
	}
	return &Lock{f: f}, nil
}

// File is the file a lock is held on (nil once unlocked).
func (l *Lock) File() *os.File { return l.f }

// holder is what a LockHeld holder wrote in the lock file name, as
// " (held by ...)", or "" when it wrote nothing.
func holder(name string) string {
	b, err := os.ReadFile(name)
	if s := strings.TrimSpace(string(b)); err == nil && s != "" && len(s) < 512 {
		return " (held by " + s + ")"
	}
	return ""
}

func lockDir(root string, exclusive bool) (*Lock, error) {
	name := filepath.Join(root, LockName)
	f, err := os.OpenFile(name, os.O_RDWR|os.O_CREATE, 0o644)
	if err != nil && !exclusive && (errors.Is(err, fs.ErrPermission) || errors.Is(err, fs.ErrNotExist)) {
		// A read-only directory, which no run can write, or none at all,
		// which the reader reports.
		if f, err = os.Open(name); err != nil {
			return &Lock{}, nil
		}
	}
	if err != nil {
		return nil, fmt.Errorf("opening lock file: %w", err)
	}
	if err := flock(f, exclusive); err != nil {
		f.Close()
		if errors.Is(err, ErrLocked) {
			if exclusive {
				return nil, fmt.Errorf("%s is in use by another parastream run%s (it holds %s): wait for that run to end, or write elsewhere: %w", root, holder(name), name, err)
			}
			return nil, fmt.Errorf("%s is being written by another parastream run (it holds %s): wait for that run to end: %w", root, name, err)
		}
		return nil, fmt.Errorf("locking %s: %w", root, err)
	}
	return &Lock{f: f}, nil
}

// Unlock releases the lock. It is safe to call more than once.
func (l *Lock) Unlock() error {
	if l == nil || l.f == nil {
		return nil
	}
	f := l.f
	l.f = nil
	return f.Close() // closing the last descriptor releases the flock
}
