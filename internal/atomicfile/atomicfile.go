// Package atomicfile writes files under a temporary name in the target's
// directory and renames them into place only once their bytes are durable,
// so a reader never sees a half-written file under its final name.
package atomicfile

import (
	"errors"
	"io"
	"os"
	"path/filepath"
)

// File is a file being written under a temporary name.
type File struct {
	*os.File
	path string
	done bool
}

// Create starts writing path, making its directory if needed.
func Create(path string) (*File, error) {
	dir := filepath.Dir(path)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, err
	}
	f, err := os.CreateTemp(dir, "."+filepath.Base(path)+".*.tmp")
	if err != nil {
		return nil, err
	}
	// CreateTemp makes the file private (0600); a finished output is as
	// readable as any other file.
	if err := f.Chmod(0o644); err != nil {
		f.Close()
		os.Remove(f.Name())
		return nil, err
	}
	return &File{File: f, path: path}, nil
}

// Path is the final name.
func (f *File) Path() string { return f.path }

// Commit syncs the file, renames it to its final name and syncs the
// directory.
func (f *File) Commit() error {
	if f.done {
		return errors.New("atomicfile: commit after commit or abort")
	}
	f.done = true
	if err := f.Sync(); err != nil {
		f.File.Close()
		os.Remove(f.Name())
		return err
	}
	if err := f.File.Close(); err != nil {
		os.Remove(f.Name())
		return err
	}
	if err := os.Rename(f.Name(), f.path); err != nil {
		os.Remove(f.Name())
		return err
	}
	return SyncDir(filepath.Dir(f.path))
}

// Abort removes the temporary file. It is a no-op after Commit, so it can be
// deferred.
func (f *File) Abort() {
	if f.done {
		return
	}
	f.done = true
	f.File.Close()
	os.Remove(f.Name())
}

// WriteFile writes data to path atomically.
func WriteFile(path string, data []byte) error {
	return WriteWith(path, func(w io.Writer) error {
		_, err := w.Write(data)
		return err
	})
}

// WriteWith writes path atomically with write: the file appears, whole,
// only when write returns nil.
func WriteWith(path string, write func(w io.Writer) error) error {
	f, err := Create(path)
	if err != nil {
		return err
	}
	defer f.Abort()
	if err := write(f); err != nil {
		return err
	}
	return f.Commit()
}

// SyncDir syncs a directory so that renames in it are durable.
func SyncDir(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return err
	}
	defer d.Close()
	if err := d.Sync(); err != nil && !errors.Is(err, os.ErrInvalid) {
		return err
	}
	return nil
}
