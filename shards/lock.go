package shards

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
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
				return nil, fmt.Errorf("%s is in use by another parastream run (it holds %s): wait for that run to end, or write elsewhere: %w", root, name, err)
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
