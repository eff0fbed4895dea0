package shards

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/apache/beam/sdks/v2/go/pkg/beam/io/filesystem"
)

// An output on an object store (s3://bucket/prefix, gs://bucket/prefix)
// has the same layout and the same commit as a local one, with what the
// store gives in place of renames and locks:
//
//   - every object is written whole under its content's name (a PUT is
//     atomic), through Beam's filesystems, before the manifest names it;
//   - the manifest is the commit point: written last with a conditional
//     write (S3 If-None-Match or If-Match on the ETag of the manifest the
//     run began from; GCS generation preconditions), so that of two runs
//     from the same version only the first commits, and the second is
//     refused with ErrConflict;
//   - there is no lock: runs may overlap, and only their commits are
//     ordered;
//   - what no manifest names is removed by sweep, which removes only
//     versioned names (see LogicalPath) that the current manifest does not
//     own and that the store wrote before it wrote the current manifest: a
//     run that wrote them began from an older version, so its commit is
//     refused whatever it does next.
//
// The commit's staging directory is a local temporary directory; the
// workers of a run write to a staging prefix of the output (stage.go).

// objectStore is what a commit needs of a store beyond Beam's
// filesystems: the manifest's version, its conditional write, and a
// listing that says when each object was written.
type objectStore interface {
	// get reads the object at url with its version; an absent object
	// gives an error wrapping os.ErrNotExist.
	get(ctx context.Context, url string) ([]byte, objectInfo, error)
	// head is the version of the object at url (os.ErrNotExist when
	// absent).
	head(ctx context.Context, url string) (objectInfo, error)
	// putIf writes data at url if the object's version is still token, or
	// if there is no object when token is "". Otherwise it writes nothing
	// and returns an error wrapping ErrConflict.
	putIf(ctx context.Context, url string, data []byte, token string) error
	// list lists every object whose url starts with prefix.
	list(ctx context.Context, prefix string) ([]objectInfo, error)
}

// objectInfo is an object of a store: its url, its version (an S3 ETag, a
// GCS generation) and when the store wrote it.
type objectInfo struct {
	URL      string
	Token    string
	Modified time.Time
}

// Scheme returns the scheme of a location ("s3" for
// "s3://bucket/prefix"), or "" for a local path.
func Scheme(loc string) string {
	i := strings.Index(loc, "://")
	if i <= 0 {
		return ""
	}
	s := loc[:i]
	for j, c := range s {
		letter := c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z'
		if !letter && (j == 0 || (c < '0' || c > '9') && c != '+' && c != '-' && c != '.') {
			return ""
		}
	}
	return strings.ToLower(s)
}

// schemeBuilds names, for each scheme that some build of parastream
// writes, the build that has it.
func schemeBuilds() map[string]string {
	return map[string]string{
		"s3": "every build",
		"gs": "the dataflow build (go build -tags dataflow, make build-dataflow)",
	}
}

// CheckLocation says whether this program can write the location: a
// local path, or one on an object store it has (s3:// in every build, gs://
// in the dataflow build). A scheme it lacks gives an error wrapping
// ErrScheme that names the build that has it. It does no I/O.
func CheckLocation(loc string) error {
	scheme := Scheme(loc)
	if scheme == "" {
		return nil
	}
	if _, ok := stores()[scheme]; !ok {
		if build, ok := schemeBuilds()[scheme]; ok {
			return fmt.Errorf("%w: %s: this binary has no %s:// filesystem; %s has it", ErrScheme, loc, scheme, build)
		}
		return fmt.Errorf("%w: %s: parastream writes local paths, s3:// and (in the dataflow build) gs://, not %s://", ErrScheme, loc, scheme)
	}
	bucket, _, _ := strings.Cut(strings.TrimPrefix(loc, loc[:len(scheme)+3]), "/")
	if bucket == "" {
		return fmt.Errorf("%w: %s names no bucket: give %s://BUCKET/PREFIX", ErrScheme, loc, scheme)
	}
	return nil
}

// openStore opens the store of a location's scheme.
func openStore(ctx context.Context, loc string) (objectStore, error) {
	if err := CheckLocation(loc); err != nil {
		return nil, err
	}
	return stores()[Scheme(loc)](ctx)
}

// openRemote opens an output on an object store: no lock (runs order
// their commits by the manifest's conditional write), and a sweep of what
// dead runs left.
func openRemote(root string, opts OutputOptions) (*Output, error) {
	root = strings.TrimSuffix(root, "/")
	if opts.Logger == nil {
		opts.Logger = slog.New(slog.DiscardHandler)
	}
	store, err := openStore(context.Background(), root)
	if err != nil {
		return nil, err
	}
	o := &Output{root: root, opts: opts, store: store}
	if err := o.sweep(context.Background(), nil); err != nil {
		return nil, fmt.Errorf("cleaning %s: %w", root, err)
	}
	return o, nil
}

// url is the location of rel (slash-separated) under the output.
func (o *Output) url(rel string) string { return o.root + "/" + rel }

// remoteManifest reads the output's manifest and its version: nil and ""
// when there is none.
func (o *Output) remoteManifest(ctx context.Context) (*Manifest, objectInfo, error) {
	data, info, err := o.store.get(ctx, o.url(ManifestName))
	if errors.Is(err, os.ErrNotExist) {
		return nil, objectInfo{}, nil
	}
	if err != nil {
		return nil, objectInfo{}, fmt.Errorf("reading manifest: %w", err)
	}
	m, err := parseManifest(o.url(ManifestName), data)
	return m, info, err
}

// doneRemote is Done on an object store: it uploads what the current
// version lacks, writes the manifest on the condition that it is still the
// one the commit began from (the switch), then sweeps what the new
// version does not name. The commit's operations run to their end once
// begun, whatever happens to the run's context: the store is left as
// consistent by any stop, and a partial commit is cleaned by the next.
func (c *Commit) doneRemote() error {
	ctx := context.Background()
	p, err := c.prepare()
	if err == nil {
		err = c.upload(ctx, p)
	}
	if err == nil {
		err = c.putManifest(ctx)
	}
	if err != nil {
		os.RemoveAll(c.stage)
		// What it uploaded stays, unnamed, until a later commit's sweep
		// can prove that no run will name it.
		return fmt.Errorf("committing %s: %w", c.out.root, err)
	}
	if err := c.restore(ctx, p); err != nil {
		c.out.opts.Logger.Warn("the new version is in place; checking its objects failed", "prefix", c.out.root, "err", err)
	}
	os.RemoveAll(c.stage)
	if err := c.out.sweep(ctx, c.hook); err != nil {
		c.out.opts.Logger.Warn("the new version is in place; removing the old one failed, the next run under the prefix finishes it", "prefix", c.out.root, "err", err)
	}
	return nil
}

// upload writes each staged file the plan places to its object, through
// Beam's filesystems, with the failpoints "place <path>" before and
// "placed <path>" after each write.
func (c *Commit) upload(ctx context.Context, p *plan) error {
	for _, rel := range p.Place {
		from, _ := localPath(c.stage, rel)
		if err := c.hook("place " + rel); err != nil {
			return fmt.Errorf("placing %s: %w", rel, err)
		}
		if err := c.placeObject(ctx, from, rel); err != nil {
			return fmt.Errorf("placing %s: %w", rel, err)
		}
		if err := c.hook("placed " + rel); err != nil {
			return fmt.Errorf("placing %s: %w", rel, err)
		}
	}
	return nil
}

// restore uploads again each object the commit placed that is gone after
// its switch: one that another run's sweep removed as unnamed (an earlier
// run's, of the same content) between its listing and this commit's.
func (c *Commit) restore(ctx context.Context, p *plan) error {
	for _, rel := range p.Place {
		_, err := c.out.store.head(ctx, c.out.url(rel))
		if !errors.Is(err, os.ErrNotExist) {
			if err != nil {
				return err
			}
			continue
		}
		from, _ := localPath(c.stage, rel)
		if err := c.placeObject(ctx, from, rel); err != nil {
			return fmt.Errorf("placing %s again: %w", rel, err)
		}
		c.out.opts.Logger.Info("placed again an object removed during the commit", "object", c.out.url(rel))
	}
	return nil
}

// putManifest is the switch: the new manifest, written only if the
// output's manifest is still the commit's base.
func (c *Commit) putManifest(ctx context.Context) error {
	data, err := c.next.marshal()
	if err != nil {
		return err
	}
	if err := c.hook("manifest put"); err != nil {
		return err
	}
	if err := c.out.store.putIf(ctx, c.out.url(ManifestName), data, c.baseToken); err != nil {
		return fmt.Errorf("writing manifest: %w", err)
	}
	// The write is done: the new version is the current one, so a
	// failure from here on is not reported as a failed switch.
	if err := c.hook("manifest put done"); err != nil {
		c.out.opts.Logger.Warn("after writing the manifest", "err", err)
	}
	return nil
}

// sweep removes the objects under the output that no run can still name:
// versioned names (see LogicalPath) that the current manifest does not own
// and that the store wrote in a second before the one it wrote the
// manifest in, and the staging prefixes whose newest object it wrote
// before then (see stage.go). The manifest's version is checked again before each
// removal; sweep stops where it changed. hook, when set, runs before each
// removal ("remove <path>"). Without a manifest it removes nothing.
func (o *Output) sweep(ctx context.Context, hook func(string) error) error {
	m, info, err := o.remoteManifest(ctx)
	if err != nil || m == nil {
		return err
	}
	objs, err := o.store.list(ctx, o.root+"/")
	if err != nil {
		return fmt.Errorf("listing %s: %w", o.root, err)
	}
	own := newOwnership(m)
	before := info.Modified.Truncate(time.Second)
	slices.SortFunc(objs, func(a, b objectInfo) int { return strings.Compare(a.URL, b.URL) })
	var gone []objectInfo
	for _, obj := range objs {
		rel := strings.TrimPrefix(obj.URL, o.root+"/")
		if rel == ManifestName || LogicalPath(rel) == rel || own.owns(rel) || !obj.Modified.Truncate(time.Second).Before(before) {
			continue
		}
		gone = append(gone, obj)
	}
	// The staging prefixes of runs idle since the current version was
	// committed (see stage.go).
	for _, obj := range deadStaging(objs, o.root, before) {
		if !own.owns(strings.TrimPrefix(obj.URL, o.root+"/")) {
			gone = append(gone, obj)
		}
	}
	for _, obj := range gone {
		rel := strings.TrimPrefix(obj.URL, o.root+"/")
		now, err := o.store.head(ctx, o.url(ManifestName))
		if err != nil {
			return err
		}
		if now.Token != info.Token {
			return nil // another run committed: its sweep takes over
		}
		if hook != nil {
			if err := hook("remove " + rel); err != nil {
				return err
			}
		}
		if err := removeObject(ctx, obj.URL); err != nil {
			return err
		}
		o.opts.Logger.Info("removed an object no manifest names", "object", obj.URL)
	}
	return nil
}

// putFile copies the local file from to the object at url through Beam's
// filesystems.
func putFile(ctx context.Context, from, url string) error {
	src, err := os.Open(from)
	if err != nil {
		return err
	}
	defer src.Close()
	return writeObject(ctx, url, copying(src))
}

// copying is a fill of writeObject that copies r.
func copying(r io.Reader) func(io.Writer) error {
	return func(w io.Writer) error {
		_, err := io.Copy(w, r)
		return err
	}
}

// writeObject writes the object at url whole, with what fill writes,
// through Beam's filesystems.
func writeObject(ctx context.Context, url string, fill func(io.Writer) error) error {
	return withFS(ctx, url, func(fs filesystem.Interface) error {
		w, err := fs.OpenWrite(ctx, url)
		if err != nil {
			return err
		}
		if err := fill(w); err != nil {
			w.Close()
			return err
		}
		return w.Close()
	})
}

// withFS runs fn with the Beam filesystem of url, and closes it.
func withFS(ctx context.Context, url string, fn func(filesystem.Interface) error) error {
	fs, err := filesystem.New(ctx, url)
	if err != nil {
		return err
	}
	defer fs.Close()
	return fn(fs)
}

// removeObject removes the object at url through Beam's filesystems.
func removeObject(ctx context.Context, url string) error {
	return withFS(ctx, url, func(fs filesystem.Interface) error {
		rm, ok := fs.(filesystem.Remover)
		if !ok {
			return fmt.Errorf("removing %s: its filesystem cannot remove", url)
		}
		if err := rm.Remove(ctx, url); err != nil {
			return fmt.Errorf("removing %s: %w", url, err)
		}
		return nil
	})
}

// Fetch copies the manifest at src, a location on an object store
// (s3://bucket/prefix), and every file it names into the local directory
// dst, through Beam's filesystems, and checks them against it (Verify):
// the readers of shards (publish, featurize, eval) read a local copy. It
// returns the manifest. The files take the room they take at src.
func Fetch(ctx context.Context, src, dst string) (*Manifest, error) {
	src = strings.TrimSuffix(src, "/")
	if err := CheckLocation(src); err != nil {
		return nil, err
	}
	data, err := readObject(ctx, src+"/"+ManifestName)
	if err != nil {
		return nil, fmt.Errorf("reading the manifest of %s: %w", src, err)
	}
	m, err := parseManifest(src+"/"+ManifestName, data)
	if err != nil {
		return nil, err
	}
	for _, rel := range m.Paths() {
		to, err := localPath(dst, rel)
		if err != nil {
			return nil, err
		}
		if err := getFile(ctx, src+"/"+rel, to); err != nil {
			return nil, fmt.Errorf("fetching %s/%s: %w", src, rel, err)
		}
	}
	if err := os.WriteFile(filepath.Join(dst, ManifestName), data, 0o644); err != nil {
		return nil, err
	}
	if err := m.Verify(dst); err != nil {
		return nil, fmt.Errorf("checking the copy of %s against its manifest: %w", src, err)
	}
	return m, nil
}

// readObject reads the whole object at url through Beam's filesystems.
func readObject(ctx context.Context, url string) ([]byte, error) {
	var data []byte
	err := withFS(ctx, url, func(fs filesystem.Interface) (err error) {
		data, err = filesystem.Read(ctx, fs, url)
		return err
	})
	return data, err
}

// getFile copies the object at url to the local file to.
func getFile(ctx context.Context, url, to string) error {
	return withFS(ctx, url, func(fs filesystem.Interface) error {
		r, err := fs.OpenRead(ctx, url)
		if err != nil {
			return err
		}
		defer r.Close()
		if err := os.MkdirAll(filepath.Dir(to), 0o755); err != nil {
			return err
		}
		f, err := os.Create(to)
		if err != nil {
			return err
		}
		if _, err := io.Copy(f, r); err != nil {
			f.Close()
			return err
		}
		return f.Close()
	})
}

// LocalCopy gives a local directory holding the output at loc: loc itself
// when it is local, or else a new temporary directory that Fetch filled,
// which done removes.
func LocalCopy(ctx context.Context, loc string) (dir string, done func(), err error) {
	if Scheme(loc) == "" {
		return loc, func() {}, nil
	}
	if err := CheckLocation(loc); err != nil {
		return "", nil, err
	}
	dir, err = os.MkdirTemp("", "parastream-copy-")
	if err != nil {
		return "", nil, err
	}
	done = func() { os.RemoveAll(dir) }
	if _, err := Fetch(ctx, loc, dir); err != nil {
		done()
		return "", nil, err
	}
	return dir, done, nil
}
