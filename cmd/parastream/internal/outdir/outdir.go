// Package outdir decides whether a directory may receive a parastream
// output: a command that writes an output directory (extract, featurize,
// demo, eval) refuses one that holds something else, before it writes.
package outdir

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/parastream/parastream/shards"
)

// ErrRefused reports an output directory that a command must not write
// into.
var ErrRefused = errors.New("output directory refused")

// Check refuses dir as an output directory when it is the file system's
// root, the home directory, not a directory, or a non-empty directory that
// is not a parastream output. An output is recognised by any of what
// parastream writes at its top: manifest.json (shards), results.csv or
// parts/*.parquet (evaluation tables), rejects/*.jsonl, shards at
// <corpus>/<split>/part-*.parquet, or a work directory a killed run left
// (shards.IsWorkDirName). An output that also holds something parastream
// does not write at its top (a user's notes.txt, or .work-mine) is
// refused, naming it: the run would leave it beside the shards. A
// directory that does not exist yet, or is empty, is accepted.
func Check(dir string) error {
	if dir == "" {
		return fmt.Errorf("%w: no directory given", ErrRefused)
	}
	if shards.Scheme(dir) != "" {
		return fmt.Errorf("%w: %s: this command writes a local directory (extract and featurize write object stores)", ErrRefused, dir)
	}
	abs, err := filepath.Abs(dir)
	if err != nil {
		return fmt.Errorf("%w: %s: %v", ErrRefused, dir, err)
	}
	real := abs
	if r, err := filepath.EvalSymlinks(abs); err == nil {
		real = r
	}
	if real == filepath.VolumeName(real)+string(filepath.Separator) {
		return fmt.Errorf("%w: %s is the root of the file system: give a directory of its own, such as %s", ErrRefused, dir, filepath.Join(real, "parastream-out"))
	}
	if home, err := os.UserHomeDir(); err == nil && home != "" {
		if h, err := filepath.EvalSymlinks(home); err == nil {
			home = h
		}
		if filepath.Clean(home) == real {
			return fmt.Errorf("%w: %s is the home directory: give a directory of its own, such as %s", ErrRefused, dir, filepath.Join(dir, "parastream-out"))
		}
	}
	fi, err := os.Stat(real)
	if errors.Is(err, os.ErrNotExist) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("%w: %v", ErrRefused, err)
	}
	if !fi.IsDir() {
		return fmt.Errorf("%w: %s is a file, not a directory", ErrRefused, dir)
	}
	entries, err := os.ReadDir(real)
	if err != nil {
		return fmt.Errorf("%w: %v", ErrRefused, err)
	}
	if len(entries) == 0 {
		return nil
	}
	if isOutput(real, entries) {
		if f := foreign(entries); f != "" {
			return fmt.Errorf("%w: %s is a parastream output, but %s in it is not parastream's: move it out of the directory, or give another --out",
				ErrRefused, dir, f)
		}
		return nil
	}
	return fmt.Errorf("%w: %s holds %d entries (%s, ...) and is not a parastream output (no manifest.json, shards, rejects or results): give an empty or new directory",
		ErrRefused, dir, len(entries), entries[0].Name())
}

// isOutput reports whether a directory holding entries looks like what
// parastream writes (see Check).
func isOutput(dir string, entries []os.DirEntry) bool {
	for _, e := range entries {
		switch name := e.Name(); {
		case (name == "manifest.json" || name == "results.csv") && e.Type().IsRegular():
			return true
		case (shards.IsWorkDirName(name) || strings.HasPrefix(name, shards.StagePrefix)) && e.IsDir():
			return true
		case name == shards.LockName && e.Type().IsRegular():
			return true
		}
	}
	for _, pattern := range []string{"rejects/*.jsonl", "parts/*.parquet", "*/*/part-*.parquet"} {
		if m, _ := filepath.Glob(filepath.Join(dir, pattern)); len(m) > 0 {
			return true
		}
	}
	return false
}

// foreign returns the name of the first entry at the top of an output
// that no parastream command writes there, or "": a hidden entry other
// than the lock, a staging or work directory of a run, or the temporary
// file of one of the files below; a file other than the manifest, the
// results table and the report. Directories not hidden are taken as the output's own (corpora,
// rejects, parts, plots, a demo's stages).
func foreign(entries []os.DirEntry) string {
	files := []string{shards.ManifestName, "results.csv", "report.md"}
	// tmp: the temporary file of an atomic write of one of them, which a
	// killed run leaves.
	tmp := func(name string) bool {
		return strings.HasSuffix(name, ".tmp") && slices.ContainsFunc(files, func(f string) bool { return strings.HasPrefix(name, "."+f+".") })
	}
	for _, e := range entries {
		name := e.Name()
		switch {
		case name == shards.LockName, shards.IsWorkDirName(name), strings.HasPrefix(name, shards.StagePrefix), tmp(name):
		case strings.HasPrefix(name, "."):
			return name
		case e.IsDir():
		case slices.Contains(files, name):
		default:
			return name
		}
	}
	return ""
}

// Created is called before a command creates dir, its output: when dir
// does not exist yet, the function it returns removes dir again, with
// everything the run wrote in it, for a run that failed (failed true), so
// that a failed run leaves no output holding only its lock. For a
// directory that existed it does nothing.
func Created(dir string) func(failed bool) {
	if _, err := os.Lstat(dir); shards.Scheme(dir) != "" || !errors.Is(err, os.ErrNotExist) {
		return func(bool) {}
	}
	return func(failed bool) {
		if failed {
			os.RemoveAll(dir)
		}
	}
}
