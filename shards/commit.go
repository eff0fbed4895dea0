package shards

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strings"

	"github.com/parastream/parastream/internal/atomicfile"
)

// Commit stages a complete new version of an Output beside the current one
// and switches to it. Put* methods move the new files into the staging
// directory under the names they will have, each named after its content
// (see LogicalPath), and record them in the new manifest (Manifest); Done
// places them and replaces the manifest. Abort, or a crash, before the
// switch leaves the current version as it was; after it, the new one.
//
// A Commit is not safe for concurrent use.
type Commit struct {
	out   *Output
	stage string // <root>/.stage-<random>
	base  *Manifest
	next  *Manifest
	// staged maps the path (relative to the root) of each staged file to
	// its sha256, "" for the unnamed members of a group.
	staged map[string]string
	over   bool
	// baseToken is the version (ETag, generation) of the manifest an
	// object store's commit began from, "" for none.
	baseToken string
	// remote maps each staged file that is an object of the output's
	// store (a worker's, under a staging prefix) to its location: it is
	// copied there, not held in the staging directory.
	remote map[string]string
}

// StagedShard is a finished shard to stage: the file at Path (anywhere on
// this machine: it is moved, or copied across file systems; or an object
// under a staging prefix of an output on a store, which its commit copies
// on the store) and what its
// writer reported of it (Rows, Bytes, SHA256; Info.Path is ignored).
type StagedShard struct {
	Path string
	Info ShardInfo
}

// Staged is the shard a writer rooted at root reported as info (a Writer's
// ShardInfo, its Path relative to root, slash-separated), to stage.
func Staged(root string, info ShardInfo) StagedShard {
	return StagedShard{Path: JoinPath(root, filepath.FromSlash(info.Path)), Info: info}
}

// Begin starts a commit. Its new manifest starts as a copy of from (the
// manifest a derived output, such as featurize's, describes) or, when from
// is nil, of the output's current manifest (an empty one when there is
// none), created by command and this program's versions.
func (o *Output) Begin(from *Manifest, command []string) (*Commit, error) {
	base, err := o.Manifest()
	var token string
	if o.store != nil {
		var info objectInfo
		base, info, err = o.remoteManifest(context.Background())
		token = info.Token
	}
	if err != nil {
		return nil, err
	}
	if from == nil {
		from = base
	}
	next := NewManifest(command)
	if from != nil {
		created := next.CreatedBy
		next = from.clone()
		next.CreatedBy = created
		next.SchemaVersion = SchemaVersion
	}
	stage := filepath.Join(o.root, StagePrefix+randomHex())
	if o.store != nil {
		stage, err = os.MkdirTemp("", "parastream"+StagePrefix)
	} else {
		err = os.Mkdir(stage, 0o755)
	}
	if err != nil {
		return nil, fmt.Errorf("creating staging directory: %w", err)
	}
	return &Commit{out: o, stage: stage, base: base, next: next, staged: map[string]string{}, baseToken: token, remote: map[string]string{}}, nil
}

// clone copies the manifest deeply enough that changing the copy's lists
// and maps leaves m alone.
func (m *Manifest) clone() *Manifest {
	c := *m
	c.Files = slices.Clone(m.Files)
	c.Rejects = slices.Clone(m.Rejects)
	c.Splits = make(map[string]SplitInfo, len(m.Splits))
	for k, s := range m.Splits {
		s.Shards = slices.Clone(s.Shards)
		c.Splits[k] = s
	}
	c.Stats = make(map[string]int64, len(m.Stats))
	for k, v := range m.Stats {
		c.Stats[k] = v
	}
	for _, a := range []**Artifact{&c.Vocabulary, &c.Topics, &c.Featurize} {
		if *a != nil {
			v := **a
			*a = &v
		}
	}
	return &c
}

// Manifest is the new version's manifest, for the caller to complete
// (stats, the model's artifacts). Done writes it.
func (c *Commit) Manifest() *Manifest { return c.next }

// Base is the output's current manifest, nil when it has none.
func (c *Commit) Base() *Manifest { return c.base }

func (c *Commit) usable() error {
	if c.over {
		return fmt.Errorf("%w: used after Done or Abort", ErrCommit)
	}
	return nil
}

// hook runs the output's failpoint, if any.
func (c *Commit) hook(op string) error {
	if c.out.opts.Failpoint == nil {
		return nil
	}
	return c.out.opts.Failpoint(op)
}

// stageFile moves (copy: copies) the file src into the staging directory
// as rel.
func (c *Commit) stageFile(src, rel, sum string, copy bool) error {
	if Scheme(src) != "" {
		return c.stageObject(src, rel, sum)
	}
	dst, err := localPath(c.stage, rel)
	if err != nil {
		return err
	}
	if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
		return fmt.Errorf("staging %s: %w", rel, err)
	}
	if err := c.hook("stage " + rel); err != nil {
		return fmt.Errorf("staging %s: %w", rel, err)
	}
	move := moveFile
	if copy {
		move = copyFile
	}
	if err := move(src, dst); err != nil {
		return fmt.Errorf("staging %s from %s: %w", rel, src, err)
	}
	c.staged[rel] = sum
	return nil
}

// PutSplit stages the complete set of shards of one split of a corpus, in
// reading order, as <corpus>/<split>/part-<i>-of-<n>.<version>.parquet,
// and records them in the new manifest in place of the split's earlier
// shards (AddSplit). A split with no shards is recorded, empty.
func (c *Commit) PutSplit(corpus, split string, files []StagedShard) error {
	if err := c.usable(); err != nil {
		return err
	}
	for _, name := range []string{corpus, split} {
		if err := checkName(name); err != nil {
			return fmt.Errorf("shards: split %s: %w", SplitKey(corpus, split), err)
		}
	}
	infos := make([]ShardInfo, len(files))
	for i, f := range files {
		if len(f.Info.SHA256) != 2*sha256.Size {
			return fmt.Errorf("%w: shard %s has no sha256", ErrCommit, f.Path)
		}
		info := f.Info
		info.Corpus, info.Split = corpus, split
		info.Path = versionedName(path.Join(corpus, split, finalName(i, len(files))), info.SHA256)
		if err := c.stageFile(f.Path, info.Path, info.SHA256, false); err != nil {
			return err
		}
		infos[i] = info
	}
	c.next.AddSplit(corpus, split, infos...)
	return nil
}

// PutSplits stages the complete set of shards of each split of a corpus
// (PutSplit, the splits in name order; a split with no shards is recorded,
// empty) and returns the rows of each split.
func (c *Commit) PutSplits(corpus string, splits map[string][]StagedShard) (map[string]int64, error) {
	rows := make(map[string]int64, len(splits))
	for _, split := range slices.Sorted(maps.Keys(splits)) {
		files := splits[split]
		if err := c.PutSplit(corpus, split, files); err != nil {
			return nil, err
		}
		rows[split] = 0
		for _, f := range files {
			rows[split] += f.Info.Rows
		}
	}
	return rows, nil
}

// ReplaceShard stages a new file for the shard the new manifest lists at
// p, with the same rows (featurize adds columns): it keeps its place in
// its split and its logical name, with the new content's version.
func (c *Commit) ReplaceShard(p string, f StagedShard) error {
	if err := c.usable(); err != nil {
		return err
	}
	i := slices.IndexFunc(c.next.Files, func(s ShardInfo) bool { return s.Path == p })
	if i < 0 {
		return fmt.Errorf("%w: no shard %s to replace", ErrCommit, p)
	}
	old := c.next.Files[i]
	if f.Info.Rows != old.Rows {
		return fmt.Errorf("%w: shard %s has %d rows, the shard it replaces (%s) %d", ErrCommit, f.Path, f.Info.Rows, p, old.Rows)
	}
	if len(f.Info.SHA256) != 2*sha256.Size {
		return fmt.Errorf("%w: shard %s has no sha256", ErrCommit, f.Path)
	}
	info := old
	info.Path = versionedName(LogicalPath(p), f.Info.SHA256)
	info.Bytes, info.SHA256, info.BLAKE3 = f.Info.Bytes, f.Info.SHA256, f.Info.BLAKE3
	if err := c.stageFile(f.Path, info.Path, info.SHA256, false); err != nil {
		return err
	}
	c.next.Files[i] = info
	key := SplitKey(old.Corpus, old.Split)
	if s, ok := c.next.Splits[key]; ok {
		if j := slices.Index(s.Shards, p); j >= 0 {
			s.Shards[j] = info.Path
		}
	}
	c.next.sortFiles()
	return nil
}

// PutRejects stages a corpus's rejects file (JSON lines, records of them)
// as rejects/<corpus>.<version>.jsonl, in place of the corpus's earlier
// rejects file in the new manifest.
func (c *Commit) PutRejects(corpus, src string, records int64) (Artifact, error) {
	if err := c.usable(); err != nil {
		return Artifact{}, err
	}
	if err := checkName(corpus); err != nil {
		return Artifact{}, fmt.Errorf("shards: corpus %q: %w", corpus, err)
	}
	size, sum, err := HashFile(src)
	if err != nil {
		return Artifact{}, fmt.Errorf("hashing rejects file: %w", err)
	}
	logical := RejectsPath(corpus)
	a := Artifact{Path: versionedName(logical, sum), SHA256: sum, Bytes: size, Records: records}
	if err := c.stageFile(src, a.Path, sum, false); err != nil {
		return Artifact{}, err
	}
	c.next.Rejects = slices.DeleteFunc(c.next.Rejects, func(r Artifact) bool { return LogicalPath(r.Path) == logical })
	c.next.Rejects = append(c.next.Rejects, a)
	slices.SortFunc(c.next.Rejects, func(a, b Artifact) int { return strings.Compare(a.Path, b.Path) })
	return a, nil
}

// RejectsPath is the logical path of a corpus's rejects file,
// rejects/<corpus>.jsonl (see LogicalPath).
func RejectsPath(corpus string) string { return "rejects/" + corpus + ".jsonl" }

// PutGroup stages files that belong together under fixed names (a
// featurize model: vocab.tsv, topics.safetensors, ...) from the directory
// src into a version directory of their own, <dir>/<version>/<name>, the
// version a hash of the names and contents of them all. It returns their
// artifacts in the order of names, for the caller to record in the new
// manifest; a file of the group that the manifest does not name is still
// placed, and removed, with the group.
func (c *Commit) PutGroup(dir, src string, names []string) ([]Artifact, error) {
	if err := c.usable(); err != nil {
		return nil, err
	}
	arts := make([]Artifact, len(names))
	h := sha256.New()
	for i, name := range names {
		if err := checkName(name); err != nil {
			return nil, fmt.Errorf("shards: group file %q: %w", name, err)
		}
		size, sum, err := HashFile(filepath.Join(src, name))
		if err != nil {
			return nil, fmt.Errorf("hashing %s: %w", name, err)
		}
		arts[i] = Artifact{SHA256: sum, Bytes: size}
		fmt.Fprintf(h, "%s %s\n", name, sum)
	}
	version := hex.EncodeToString(h.Sum(nil))[:versionLen]
	for i, name := range names {
		arts[i].Path = path.Join(dir, version, name)
		if err := c.stageFile(filepath.Join(src, name), arts[i].Path, arts[i].SHA256, false); err != nil {
			return nil, err
		}
	}
	return arts, nil
}

// Carry stages a copy of every file the new manifest names that the
// output does not hold, from the directory from: the files of a derived
// output that stay as they were in its source (featurize's rejects files).
func (c *Commit) Carry(from string) error {
	if err := c.usable(); err != nil {
		return err
	}
	held := newOwnership(c.base)
	for _, f := range c.next.Files {
		if err := c.carry(from, f.Path, f.SHA256, held); err != nil {
			return err
		}
	}
	for _, a := range c.next.artifacts() {
		if err := c.carry(from, a.Path, a.SHA256, held); err != nil {
			return err
		}
	}
	return nil
}

func (c *Commit) carry(from, rel, sum string, held ownership) error {
	if _, ok := c.staged[rel]; ok || held.files[rel] {
		return nil
	}
	src, err := localPath(from, rel)
	if err != nil {
		return err
	}
	return c.stageFile(src, rel, sum, true)
}

// Abort removes the staging directory: the output stays as it was.
func (c *Commit) Abort() {
	if c.over {
		return
	}
	c.over = true
	os.RemoveAll(c.stage)
}

// Done switches the output to the new version:
//
//  1. it checks that every file the new manifest names is staged or held
//     by the current version, and writes its plan (what it places, what
//     it supersedes) into the staging directory;
//  2. it renames the staged files to their places, which no file of the
//     current version has (a name is its content's), and syncs their
//     directories;
//  3. it writes the new manifest under a temporary name, syncs it, renames
//     it over the current one and syncs the directory: the switch;
//  4. it removes the files of the superseded version that the new one does
//     not name, and the staging directory.
//
// An error before the switch leaves the current version, and removes what
// it staged and placed; a crash there leaves it too, and the next
// OpenOutput removes the rest. After the switch the new version stands:
// an error removing the old one is logged, and the next OpenOutput removes
// what is left.
func (c *Commit) Done() error {
	if err := c.usable(); err != nil {
		return err
	}
	c.over = true
	if c.out.store != nil {
		return c.doneRemote()
	}
	p, err := c.prepare()
	if err == nil {
		err = c.place(p)
	}
	if err == nil {
		err = c.writeManifest()
	}
	if err != nil {
		c.rollback(p)
		return fmt.Errorf("committing %s: %w", c.out.root, err)
	}
	own := newOwnership(c.next)
	if err := removeUnowned(c.out.root, p.Supersede, own, c.hook); err != nil {
		c.out.opts.Logger.Warn("the new version is in place; removing the old one failed, the next run into the directory finishes it", "dir", c.out.root, "err", err)
		return nil
	}
	if err := c.hook("remove staging directory"); err != nil {
		c.out.opts.Logger.Warn("the new version is in place; removing the staging directory failed, the next run into the directory finishes it", "dir", c.stage, "err", err)
		return nil
	}
	if err := os.RemoveAll(c.stage); err != nil {
		c.out.opts.Logger.Warn("the new version is in place; removing the staging directory failed, the next run into the directory finishes it", "dir", c.stage, "err", err)
		return nil
	}
	if err := syncDir(c.out.root); err != nil {
		c.out.opts.Logger.Warn("syncing the output directory", "err", err)
	}
	return nil
}

// prepare checks the new manifest against what is staged and held, and
// writes the plan.
func (c *Commit) prepare() (*plan, error) {
	if err := c.next.Validate(); err != nil {
		return nil, err
	}
	held := newOwnership(c.base)
	for _, f := range c.next.Files {
		if err := c.check(f.Path, f.SHA256, held); err != nil {
			return nil, err
		}
	}
	for _, a := range c.next.artifacts() {
		if err := c.check(a.Path, a.SHA256, held); err != nil {
			return nil, err
		}
	}
	p := &plan{Place: []string{}, Supersede: []string{}}
	for rel := range c.staged {
		if !held.owns(rel) { // a file of the same content already in place stays
			p.Place = append(p.Place, rel)
		}
	}
	slices.Sort(p.Place)
	if c.base != nil {
		own := newOwnership(c.next)
		for _, rel := range c.base.Paths() {
			if !own.owns(rel) {
				p.Supersede = append(p.Supersede, rel)
			}
		}
	}
	b, err := json.MarshalIndent(p, "", "  ")
	if err != nil {
		return nil, err
	}
	if err := c.hook("write plan"); err != nil {
		return nil, err
	}
	if err := atomicfile.WriteFile(filepath.Join(c.stage, planName), b); err != nil {
		return nil, fmt.Errorf("writing the commit's plan: %w", err)
	}
	return p, nil
}

// check says whether rel, with the sha256 sum, is staged or held.
func (c *Commit) check(rel, sum string, held ownership) error {
	if s, ok := c.staged[rel]; ok {
		if s != sum {
			return fmt.Errorf("%w: %s was staged with sha256 %s, the manifest says %s", ErrCommit, rel, s, sum)
		}
		return nil
	}
	if held.files[rel] {
		return nil
	}
	return fmt.Errorf("%w: the new manifest names %s, which is neither staged nor in the current version", ErrCommit, rel)
}

// place renames the staged files into the output and syncs the
// directories they went to.
func (c *Commit) place(p *plan) error {
	dirs := map[string]bool{}
	for _, rel := range p.Place {
		from, _ := localPath(c.stage, rel)
		to, err := localPath(c.out.root, rel)
		if err != nil {
			return err
		}
		if err := os.MkdirAll(filepath.Dir(to), 0o755); err != nil {
			return fmt.Errorf("placing %s: %w", rel, err)
		}
		if err := c.hook("place " + rel); err != nil {
			return fmt.Errorf("placing %s: %w", rel, err)
		}
		if err := os.Rename(from, to); err != nil {
			return fmt.Errorf("placing %s: %w", rel, err)
		}
		for d := filepath.Dir(to); len(d) >= len(c.out.root) && !dirs[d]; d = filepath.Dir(d) {
			dirs[d] = true
		}
	}
	for _, d := range slices.Sorted(maps.Keys(dirs)) {
		if err := c.hook("sync " + d); err != nil {
			return err
		}
		if err := syncDir(d); err != nil {
			return err
		}
	}
	return nil
}

// writeManifest is the switch: the new manifest, written under a temporary
// name, synced, renamed over the current one, the directory synced.
func (c *Commit) writeManifest() error {
	data, err := c.next.marshal()
	if err != nil {
		return err
	}
	root := c.out.root
	if err := c.hook("manifest create"); err != nil {
		return err
	}
	f, err := os.CreateTemp(root, "."+ManifestName+".*.tmp")
	if err != nil {
		return fmt.Errorf("writing manifest: %w", err)
	}
	tmp := f.Name()
	fail := func(err error) error {
		f.Close()
		os.Remove(tmp)
		return fmt.Errorf("writing manifest: %w", err)
	}
	if err := f.Chmod(0o644); err != nil {
		return fail(err)
	}
	if err := c.hook("manifest write"); err != nil {
		return fail(err)
	}
	if _, err := f.Write(data); err != nil {
		return fail(err)
	}
	if err := c.hook("manifest sync"); err != nil {
		return fail(err)
	}
	if err := f.Sync(); err != nil {
		return fail(err)
	}
	if err := f.Close(); err != nil {
		os.Remove(tmp)
		return fmt.Errorf("writing manifest: %w", err)
	}
	if err := c.hook("manifest rename"); err != nil {
		os.Remove(tmp)
		return err
	}
	if err := os.Rename(tmp, filepath.Join(root, ManifestName)); err != nil {
		os.Remove(tmp)
		return fmt.Errorf("writing manifest: %w", err)
	}
	// The rename is done: from here on the new version is the current one,
	// even if the directory's sync fails (it is then merely not yet
	// durable), so a failure is not reported as a failed switch.
	if err := c.hook("manifest sync directory"); err != nil {
		c.out.opts.Logger.Warn("syncing the output directory after the switch", "err", err)
		return nil
	}
	if err := syncDir(root); err != nil {
		c.out.opts.Logger.Warn("syncing the output directory after the switch", "err", err)
	}
	return nil
}

// rollback removes what a failed commit placed and staged: the current
// version stays.
func (c *Commit) rollback(p *plan) {
	if p != nil {
		removeUnowned(c.out.root, p.Place, newOwnership(c.base), nil)
	}
	os.RemoveAll(c.stage)
}

// copyFile copies from to to through a synced temporary file.
func copyFile(from, to string) error {
	src, err := os.Open(from)
	if err != nil {
		return err
	}
	defer src.Close()
	dst, err := atomicfile.Create(to)
	if err != nil {
		return err
	}
	defer dst.Abort()
	if _, err := io.Copy(dst, src); err != nil {
		return err
	}
	return dst.Commit()
}
