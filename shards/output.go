package shards

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path"
	"path/filepath"
	"strings"
)

// Names of what a run keeps in an output directory besides the files the
// manifest names. Each starts with a dot, so that globs of shards and
// directory readers (DuckDB, pandas) pass them by.
const (
	// LockName is the file a run locks (flock) for as long as it writes
	// the directory. It stays, empty, after the run.
	LockName = ".parastream.lock"
	// StagePrefix starts the name of a commit's staging directory,
	// <root>/.stage-<random>/, which holds the new version's files until
	// they are placed, and the commit's plan.
	StagePrefix = ".stage-"
	// WorkPrefix starts the name of a run's default work directory,
	// <root>/.work-<...>/ (spill files, unplaced shards, receipts).
	WorkPrefix = ".work-"
)

// planName is the commit's plan in its staging directory.
const planName = "commit.json"

// OutputOptions configure OpenOutput. The zero value is ready to use.
type OutputOptions struct {
	// Logger receives a line for each leftover of a dead run that opening
	// removes and for a cleanup that a commit leaves to the next run. nil
	// discards them.
	Logger *slog.Logger
	// Failpoint, when set, is called before each file operation of a
	// commit with its name ("stage <path>", "place <path>", "manifest
	// rename", "remove <path>", ...); an error it returns fails that
	// operation as the file system would. It exists for fault-injection
	// tests.
	Failpoint func(op string) error
}

// Output is an output directory that this process holds: shards, rejects
// and model files, and the manifest that names them. It is the one owner
// of every file a version of the directory holds: a run stages a complete
// new version with a Commit, and Commit.Done switches to it in one atomic
// step (the manifest, replaced by rename), then removes the version it
// superseded. A reader that follows the manifest sees the old version or
// the new one, complete, whenever a run dies.
//
// OpenOutput locks the directory, so that one run at a time writes it, and
// removes what dead runs left. Close releases the lock.
type Output struct {
	root string
	lock *Lock
	opts OutputOptions
	// store is the object store of a root on one (s3://...; see
	// remote.go), nil for a local directory.
	store objectStore
}

// OpenOutput creates root if needed, locks it for this process and removes
// what runs that died in it left: their staging directories (a file they
// placed that the manifest does not name, or one they superseded that it no
// longer names, goes too) and their default work directories (.work-*). A
// directory held by another live run gives an error wrapping ErrLocked.
//
// A root on an object store (s3://bucket/prefix, and gs:// in the dataflow
// build) is not locked, and is never created as a local directory: see
// remote.go for its commit.
func OpenOutput(root string, opts OutputOptions) (*Output, error) {
	if Scheme(root) != "" {
		return openRemote(root, opts)
	}
	if err := os.MkdirAll(root, 0o755); err != nil {
		return nil, fmt.Errorf("creating output directory: %w", err)
	}
	lock, err := lockDir(root, true)
	if err != nil {
		return nil, err
	}
	if opts.Logger == nil {
		opts.Logger = slog.New(slog.DiscardHandler)
	}
	o := &Output{root: root, lock: lock, opts: opts}
	if err := o.clean(); err != nil {
		lock.Unlock()
		return nil, err
	}
	return o, nil
}

// Root is the output directory.
func (o *Output) Root() string { return o.root }

// Close releases the directory's lock. A Commit not yet done is left for
// the next run to remove.
func (o *Output) Close() error { return o.lock.Unlock() }

// Manifest reads the current manifest, or returns nil, nil when the
// directory has none yet.
func (o *Output) Manifest() (*Manifest, error) {
	if o.store != nil {
		m, _, err := o.remoteManifest(context.Background())
		return m, err
	}
	m, err := ReadManifest(o.root)
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	return m, err
}

// WorkDir creates the work directory of a run and returns it: dir where
// it is given (on a cluster, a directory every worker reaches), or else
// <root>/.work-<name>-<random>, which the next run into root removes if
// this one dies before RemoveWorkDir.
func (o *Output) WorkDir(dir, name string) (string, error) {
	if Scheme(dir) != "" {
		return "", fmt.Errorf("work directory %s: give a local directory (on a cluster, one every worker mounts)", dir)
	}
	if dir == "" && o.store != nil {
		return os.MkdirTemp("", "parastream"+WorkPrefix+name+"-")
	}
	if dir == "" {
		dir = filepath.Join(o.root, WorkPrefix+name+"-"+randomHex())
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", fmt.Errorf("creating work directory: %w", err)
	}
	return dir, nil
}

// RemoveWorkDir removes a work directory WorkDir gave, with whatever the
// run left in it (spills, staged shards the commit did not take, receipts).
func (o *Output) RemoveWorkDir(dir string) error {
	return os.RemoveAll(dir)
}

func randomHex() string {
	var b [6]byte
	rand.Read(b[:])
	return hex.EncodeToString(b[:])
}

// plan is what a commit writes in its staging directory before it places
// the first file: the files it places and those it supersedes, so that a
// run that finds the staging directory of a dead one knows what to remove.
type plan struct {
	Place     []string `json:"place"`
	Supersede []string `json:"supersede"`
}

// clean removes the leftovers of dead runs. The lock is held, so every
// staging and work directory under root belongs to a run that is gone.
func (o *Output) clean() error {
	entries, err := os.ReadDir(o.root)
	if err != nil {
		return fmt.Errorf("listing output directory: %w", err)
	}
	var current *Manifest
	read := false
	for _, e := range entries {
		name, full := e.Name(), filepath.Join(o.root, e.Name())
		switch {
		case e.IsDir() && strings.HasPrefix(name, StagePrefix):
			if !read {
				if current, err = o.Manifest(); err != nil {
					return fmt.Errorf("cleaning %s: %w", full, err)
				}
				read = true
			}
			if err := o.rollStage(full, current); err != nil {
				return err
			}
			o.opts.Logger.Info("removed the staging directory of a run that died", "dir", full)
		case e.IsDir() && IsWorkDirName(name): // a user's .work-* is not a run's
			if err := os.RemoveAll(full); err != nil {
				return fmt.Errorf("removing the work directory of a dead run: %w", err)
			}
			o.opts.Logger.Info("removed the work directory of a run that died", "dir", full)
		case !e.IsDir() && strings.HasPrefix(name, "."+ManifestName+".") && strings.HasSuffix(name, ".tmp"):
			if err := os.Remove(full); err != nil {
				return fmt.Errorf("removing a dead run's temporary manifest: %w", err)
			}
		}
	}
	return syncDir(o.root)
}

// rollStage finishes what a dead run's commit left, whichever side of the
// switch it died on: every file its plan names that the current manifest
// does not own goes, then the staging directory.
func (o *Output) rollStage(stage string, current *Manifest) error {
	b, err := os.ReadFile(filepath.Join(stage, planName))
	if err == nil {
		var p plan
		if err := json.Unmarshal(b, &p); err != nil {
			return fmt.Errorf("reading the plan of %s: %w", stage, err)
		}
		own := newOwnership(current)
		if err := removeUnowned(o.root, append(p.Place, p.Supersede...), own, nil); err != nil {
			return err
		}
	} else if !errors.Is(err, os.ErrNotExist) {
		return fmt.Errorf("reading the plan of %s: %w", stage, err)
	}
	if err := os.RemoveAll(stage); err != nil {
		return fmt.Errorf("removing staging directory: %w", err)
	}
	return nil
}

// removeUnowned removes each of the paths (relative to root) that own does
// not own, and then the version directories they were in where own owns
// nothing in them. hook, when set, runs before each removal.
func removeUnowned(root string, rels []string, own ownership, hook func(string) error) error {
	dirs := map[string]bool{}
	for _, rel := range rels {
		if own.owns(rel) {
			continue
		}
		if hook != nil {
			if err := hook("remove " + rel); err != nil {
				return err
			}
		}
		name, err := localPath(root, rel)
		if err != nil {
			return err
		}
		if err := os.Remove(name); err != nil && !errors.Is(err, os.ErrNotExist) {
			return fmt.Errorf("removing superseded file: %w", err)
		}
		dirs[path.Dir(rel)] = true
	}
	for dir := range dirs {
		if isVersionDir(dir) && !own.dirs[dir] {
			if hook != nil {
				if err := hook("remove " + dir + "/"); err != nil {
					return err
				}
			}
			name, _ := localPath(root, dir)
			if err := os.RemoveAll(name); err != nil {
				return fmt.Errorf("removing superseded directory: %w", err)
			}
			dirs[path.Dir(dir)] = true
			delete(dirs, dir)
		}
	}
	for dir := range dirs {
		name, _ := localPath(root, dir)
		if err := syncDir(name); err != nil && !errors.Is(err, os.ErrNotExist) {
			return err
		}
	}
	return nil
}

// ownership is the set of files a manifest owns: those it names, and
// every file in a version directory (see PutGroup) where it names one.
type ownership struct {
	files map[string]bool
	dirs  map[string]bool
}

func newOwnership(m *Manifest) ownership {
	own := ownership{files: map[string]bool{}, dirs: map[string]bool{}}
	if m == nil {
		return own
	}
	for _, p := range m.Paths() {
		own.files[p] = true
		if d := path.Dir(p); isVersionDir(d) {
			own.dirs[d] = true
		}
	}
	return own
}

func (own ownership) owns(rel string) bool {
	return own.files[rel] || own.dirs[path.Dir(rel)]
}

// paths lists every file the manifest names: shards and artifacts.
// Paths lists the files the manifest names (shards, then artifacts and
// rejects), relative to the output root; the manifest itself is not one.
func (m *Manifest) Paths() []string {
	ps := make([]string, 0, len(m.Files)+len(m.Rejects)+3)
	for _, f := range m.Files {
		ps = append(ps, f.Path)
	}
	for _, a := range m.artifacts() {
		ps = append(ps, a.Path)
	}
	return ps
}

// versionLen is the number of hex digits of a file's sha256 in its name.
const versionLen = 16

// isVersionDir says whether a directory (relative, forward slashes) is the
// version directory of a group of files: its name is versionLen hex digits.
func isVersionDir(dir string) bool {
	return dir != "." && isVersion(path.Base(dir))
}

func isVersion(s string) bool {
	if len(s) != versionLen {
		return false
	}
	for _, c := range s {
		if (c < '0' || c > '9') && (c < 'a' || c > 'f') {
			return false
		}
	}
	return true
}

// versionedName gives a file its content's name: <stem>.<sha>.<ext>, from
// the logical <stem>.<ext> and the first versionLen digits of the file's
// sha256. The same bytes always get the same name, so that two runs that
// write the same output write the same names, and a name never means two
// contents.
func versionedName(logical, sha string) string {
	ext := path.Ext(logical)
	return strings.TrimSuffix(logical, ext) + "." + sha[:versionLen] + ext
}

// LogicalPath is the path of a file without the version versionedName or
// PutGroup gave it: "quora/train/part-00000-of-00002.parquet" for
// "quora/train/part-00000-of-00002.5f1d0c3e9a7b2d41.parquet",
// "featurize/vocab.tsv" for "featurize/5f1d0c3e9a7b2d41/vocab.tsv". A path
// without a version (written before versions) is its own logical path.
func LogicalPath(p string) string {
	dir, base := path.Split(p)
	if d := strings.TrimSuffix(dir, "/"); isVersionDir(d) {
		return path.Join(path.Dir(d), base)
	}
	ext := path.Ext(base)
	stem := strings.TrimSuffix(base, ext)
	if i := strings.LastIndexByte(stem, '.'); i >= 0 && isVersion(stem[i+1:]) {
		return dir + stem[:i] + ext
	}
	return p
}

// moveFile renames from to to, or copies it (synced) where the two are on
// different file systems.
func moveFile(from, to string) error {
	if err := os.Rename(from, to); err == nil {
		return nil
	}
	return copyFile(from, to)
}
