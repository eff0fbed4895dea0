package shards

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/apache/beam/sdks/v2/go/pkg/beam/io/filesystem"

	"github.com/parastream/parastream/internal/atomicfile"
)

// Workers that write straight to an object store.
//
// A run whose output is on an object store gives its workers a staging
// prefix of the output, <out>/.parastream-staging/<run>/ (Output.Staging),
// and they write there, through Beam's filesystems, whatever the launching
// machine commits: shards (PutShards), receipts (WriteReceipt), rejects
// parts (WriteObject). Each object is written whole, from a file of the
// worker's own temporary directory, so that a worker needs no filesystem
// that another machine sees. The launching machine reads the receipts and
// rejects from the prefix (Glob, ReadFile), and its commit copies the staged
// shards to their content's names on the store (Staged with a root on a
// store) before the manifest's conditional write, as for files of its own.
//
// No manifest names an object under the staging prefix. The run removes its
// prefix when it ends (Output.RemoveStaging); the prefix of a run that died
// is removed by the sweep of a later run (see sweep) once every object in
// it is older than the current manifest.

// StagingDir is the prefix, under an output on an object store, of the
// staging prefixes of runs' workers: <out>/.parastream-staging/<run>/.
const StagingDir = ".parastream-staging"

// Staging returns a new staging prefix under the output for the workers
// of a run (<root>/.parastream-staging/<name>-<random>), or "" for an
// output that is a local directory. Nothing is written until the workers
// write.
func (o *Output) Staging(name string) string {
	if o.store == nil {
		return ""
	}
	return o.url(StagingDir + "/" + name + "-" + time.Now().UTC().Format("20060102T150405") + "-" + randomHex())
}

// RemoveStaging removes every object under a staging prefix Staging gave.
func (o *Output) RemoveStaging(ctx context.Context, prefix string) error {
	if !strings.HasPrefix(prefix, o.url(StagingDir+"/")) {
		return fmt.Errorf("shards: %s is no staging prefix of %s", prefix, o.root)
	}
	objs, err := o.store.list(ctx, prefix+"/")
	if err != nil {
		return fmt.Errorf("listing %s: %w", prefix, err)
	}
	for _, obj := range objs {
		if err := removeObject(ctx, obj.URL); err != nil {
			return err
		}
	}
	return nil
}

// stagingRun is the staging prefix of a run that rel (relative to an
// output's root) is under, "" when it is under none.
func stagingRun(rel string) string {
	rest, ok := strings.CutPrefix(rel, StagingDir+"/")
	if !ok {
		return ""
	}
	run, _, ok := strings.Cut(rest, "/")
	if !ok {
		return ""
	}
	return StagingDir + "/" + run
}

// deadStaging returns the objects of the staging prefixes whose newest
// object the store wrote in a second before the one it wrote the
// manifest in (before): their runs wrote nothing since the current
// version was committed, and no manifest names them.
func deadStaging(objs []objectInfo, root string, before time.Time) []objectInfo {
	newest := map[string]time.Time{}
	for _, obj := range objs {
		if run := stagingRun(strings.TrimPrefix(obj.URL, root+"/")); run != "" && obj.Modified.After(newest[run]) {
			newest[run] = obj.Modified
		}
	}
	var dead []objectInfo
	for _, obj := range objs {
		run := stagingRun(strings.TrimPrefix(obj.URL, root+"/"))
		if run != "" && newest[run].Truncate(time.Second).Before(before) {
			dead = append(dead, obj)
		}
	}
	return dead
}

// JoinPath joins path elements to a location: with filepath.Join for a
// local path, and with slashes after the bucket for a location on an
// object store (s3://bucket/prefix), whose "//" filepath.Join would fold.
func JoinPath(loc string, elem ...string) string {
	if Scheme(loc) == "" {
		return filepath.Join(append([]string{loc}, elem...)...)
	}
	return strings.TrimSuffix(loc, "/") + "/" + path.Join(elem...)
}

// workerFailpointKey is the context key of a worker failpoint.
type workerFailpointKey struct{}

// WithWorkerFailpoint gives ctx a failpoint that the workers' writes to an
// object store (WriteObject, PutShards, WriteReceipt) call before
// ("worker put <url>") and after ("worker put done <url>") each object's
// write, and their reads of input shards from one (OpenTask) before each
// ("worker get <url>"); an error it returns fails the write or read. It reaches the DoFns of an
// in-process (Prism) run, through the context given to beam.Run. It
// exists for fault-injection tests.
func WithWorkerFailpoint(ctx context.Context, fn func(op string) error) context.Context {
	return context.WithValue(ctx, workerFailpointKey{}, fn)
}

// workerHook runs the worker failpoint of ctx, if any.
func workerHook(ctx context.Context, op string) error {
	fn, _ := ctx.Value(workerFailpointKey{}).(func(string) error)
	if fn == nil {
		return nil
	}
	return fn(op)
}

// WriteObject writes data, whole, to loc: an object of a store, through
// Beam's filesystems (one PUT), or a local file, written under a
// temporary name and renamed.
func WriteObject(ctx context.Context, loc string, data []byte) error {
	if Scheme(loc) == "" {
		return atomicfile.WriteFile(loc, data)
	}
	return putObject(ctx, loc, func(w io.Writer) error {
		_, err := w.Write(data)
		return err
	})
}

// putObject writes the object at url whole, with what fill writes, and
// runs the worker failpoints around it.
func putObject(ctx context.Context, url string, fill func(io.Writer) error) error {
	if err := workerHook(ctx, "worker put "+url); err != nil {
		return fmt.Errorf("writing %s: %w", url, err)
	}
	err := writeObject(ctx, url, fill)
	if err == nil {
		err = workerHook(ctx, "worker put done "+url)
	}
	if err != nil {
		return fmt.Errorf("writing %s: %w", url, err)
	}
	return nil
}

// PutFile writes the local file from, whole, to the object at url, and
// removes from once it is written.
func PutFile(ctx context.Context, from, url string) error {
	f, err := os.Open(from)
	if err != nil {
		return err
	}
	err = putObject(ctx, url, copying(f))
	f.Close()
	if err != nil {
		return err
	}
	return os.Remove(from)
}

// PutShards writes the shards a Writer rooted at the local directory root
// reported (infos, their paths relative to root) to the same paths under
// dest, a location on an object store, each object whole, and removes
// each file once its object is written.
func PutShards(ctx context.Context, root, dest string, infos []ShardInfo) error {
	for _, info := range infos {
		from := filepath.Join(root, filepath.FromSlash(info.Path))
		if err := PutFile(ctx, from, JoinPath(dest, info.Path)); err != nil {
			return fmt.Errorf("staging shard %s: %w", info.Path, err)
		}
	}
	return nil
}

// Glob lists the files or objects that match pattern, in name order: a
// local glob, or one on an object store through Beam's filesystems.
func Glob(ctx context.Context, pattern string) ([]string, error) {
	if Scheme(pattern) == "" {
		return filepath.Glob(pattern)
	}
	var names []string
	err := withFS(ctx, pattern, func(fs filesystem.Interface) (err error) {
		names, err = fs.List(ctx, pattern)
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("listing %s: %w", pattern, err)
	}
	slices.Sort(names)
	return names, nil
}

// ReadFile reads the whole local file or object at loc.
func ReadFile(ctx context.Context, loc string) ([]byte, error) {
	if Scheme(loc) == "" {
		return os.ReadFile(loc)
	}
	return readObject(ctx, loc)
}

// copyObject copies the object at from to the object at to, on the
// store's side where its filesystem can (S3's CopyObject), or else
// through this machine.
func copyObject(ctx context.Context, from, to string) error {
	return withFS(ctx, to, func(fs filesystem.Interface) error {
		if cp, ok := fs.(filesystem.Copier); ok && Scheme(from) == Scheme(to) {
			return cp.Copy(ctx, from, to)
		}
		r, err := fs.OpenRead(ctx, from)
		if err != nil {
			return err
		}
		defer r.Close()
		return writeObject(ctx, to, copying(r))
	})
}

// stageObject stages the object at src, under a staging prefix of the
// output, as rel: the commit copies it on the store when it places it.
func (c *Commit) stageObject(src, rel, sum string) error {
	if c.out.store == nil || !strings.HasPrefix(src, c.out.url(StagingDir+"/")) {
		return fmt.Errorf("%w: %s is not under a staging prefix of %s", ErrCommit, src, c.out.root)
	}
	if err := c.hook("stage " + rel); err != nil {
		return fmt.Errorf("staging %s: %w", rel, err)
	}
	c.remote[rel] = src
	c.staged[rel] = sum
	return nil
}

// placeObject writes the object rel of the output: a copy on the store of
// the worker's object it was staged from, or else the file from of the
// staging directory.
func (c *Commit) placeObject(ctx context.Context, from, rel string) error {
	src, ok := c.remote[rel]
	if !ok {
		return putFile(ctx, from, c.out.url(rel))
	}
	err := copyObject(ctx, src, c.out.url(rel))
	if err != nil {
		if _, herr := c.out.store.head(ctx, src); errors.Is(herr, os.ErrNotExist) {
			return fmt.Errorf("%w: %s is gone (a later run into the same prefix removed a staging prefix it found idle since its commit): run again", ErrStagingGone, src)
		}
	}
	return err
}

// LocalRoot is the local directory a worker writes shards under that go to
// loc/rel: loc/rel itself where loc is local, or else a new temporary
// directory of the worker, from which StageShards puts them there. done
// removes the temporary directory.
func LocalRoot(loc, rel string) (root string, done func(), err error) {
	if Scheme(loc) == "" {
		return JoinPath(loc, rel), func() {}, nil
	}
	root, err = os.MkdirTemp("", "parastream-shards-")
	if err != nil {
		return "", nil, fmt.Errorf("writing shards: %w", err)
	}
	return root, func() { os.RemoveAll(root) }, nil
}

// StageShards puts the shards a Writer rooted at root (from LocalRoot)
// reported where the driver reads them, loc/rel, and returns the root to
// name in a receipt: root itself where loc is local, or else loc/rel on
// the object store, each shard one object written whole (PutShards).
func StageShards(ctx context.Context, root, loc, rel string, infos []ShardInfo) (string, error) {
	if Scheme(loc) == "" {
		return root, nil
	}
	dest := JoinPath(loc, rel)
	return dest, PutShards(ctx, root, dest, infos)
}

// OpenTask opens the shard at loc for a worker: a local file, or an object
// that it copies to its temporary directory first and checks against
// sha256 (the manifest's, when given). done closes the reader and removes
// the copy.
func OpenTask(ctx context.Context, loc, sha256 string) (r *FileReader, done func(), err error) {
	if Scheme(loc) == "" {
		if r, err = OpenFile(loc); err != nil {
			return nil, nil, err
		}
		return r, func() { r.Close() }, nil
	}
	dir, err := os.MkdirTemp("", "parastream-in-")
	if err != nil {
		return nil, nil, err
	}
	local := filepath.Join(dir, path.Base(loc))
	if err := workerHook(ctx, "worker get "+loc); err != nil {
		os.RemoveAll(dir)
		return nil, nil, fmt.Errorf("reading shard %s: %w", loc, err)
	}
	if err := getFile(ctx, loc, local); err != nil {
		os.RemoveAll(dir)
		return nil, nil, fmt.Errorf("reading shard %s: %w", loc, err)
	}
	if sha256 != "" {
		if _, sum, err := HashFile(local); err != nil || sum != sha256 {
			os.RemoveAll(dir)
			return nil, nil, fmt.Errorf("reading shard %s: its sha256 is not the manifest's (%v)", loc, err)
		}
	}
	if r, err = OpenFile(local); err != nil {
		os.RemoveAll(dir)
		return nil, nil, err
	}
	return r, func() { r.Close(); os.RemoveAll(dir) }, nil
}
