package shards_test

import (
	"errors"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"

	"github.com/parastream/parastream/internal/testenv"
	"github.com/parastream/parastream/shards"
	"github.com/parastream/parastream/shards/shardstest"
)

// commitVersion commits version seed of corpus c into out: two splits (the
// train split in three shards), a rejects file and a model group with a
// file the manifest does not name. Its files are first written under work.
func commitVersion(t testing.TB, out *shards.Output, work string, seed uint64) error {
	t.Helper()
	work = filepath.Join(work, strconv.FormatUint(seed, 10))
	opts := shards.WriterOptions{MaxRows: 10, Overwrite: true}
	train := writeSplit(t, work, "c", "train", opts, testRows(seed, 30))
	dev := writeSplit(t, work, "c", "dev", opts, testRows(seed+100, 5))
	rejects := filepath.Join(work, "rejects.jsonl")
	model := filepath.Join(work, "model")
	os.MkdirAll(model, 0o755)
	for name, body := range map[string]string{rejects: fmt.Sprintf("{\"seed\":%d}\n", seed),
		filepath.Join(model, "vocab.tsv"): fmt.Sprintf("w%d\t1\n", seed), filepath.Join(model, "extra.tsv"): "x\n"} {
		if err := os.WriteFile(name, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	c, err := out.Begin(nil, []string{"test", strconv.FormatUint(seed, 10)})
	if err != nil {
		return err
	}
	defer c.Abort()
	m := c.Manifest()
	m.DropCorpus("c")
	if _, err := c.PutRejects("c", rejects, 1); err != nil {
		return err
	}
	for split, infos := range map[string][]shards.ShardInfo{"train": train, "dev": dev} {
		staged := make([]shards.StagedShard, len(infos))
		for i, info := range infos {
			staged[i] = shards.StagedShard{Path: filepath.Join(work, filepath.FromSlash(info.Path)), Info: info}
		}
		if err := c.PutSplit("c", split, staged); err != nil {
			return err
		}
	}
	arts, err := c.PutGroup("featurize", model, []string{"vocab.tsv", "extra.tsv"})
	if err != nil {
		return err
	}
	m.Vocabulary = &arts[0]
	m.Stats = map[string]int64{"c/seed": int64(seed)}
	return c.Done()
}

// tree reads every file under root but the lock file, by relative path.
func tree(t testing.TB, root string) map[string]string {
	t.Helper()
	files := testenv.Tree(t, root)
	delete(files, shards.LockName)
	return files
}

func open(t testing.TB, root string, opts shards.OutputOptions) *shards.Output {
	t.Helper()
	out, err := shards.OpenOutput(root, opts)
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// fixture holds the trees of version 1 (the old) and of version 2
// committed over it (the new), and the file operations of that commit.
type fixture struct {
	oldTree, newTree map[string]string
	oldVer, newVer   map[string]string
	ops              []string
}

func newFixture(t *testing.T) fixture {
	t.Helper()
	root, work := t.TempDir(), t.TempDir()
	var f fixture
	out := open(t, root, shards.OutputOptions{Failpoint: func(op string) error { f.ops = append(f.ops, op); return nil }})
	defer out.Close()
	if err := commitVersion(t, out, work, 1); err != nil {
		t.Fatal(err)
	}
	f.oldTree, f.oldVer, f.ops = tree(t, root), shardstest.ReaderView(t, root), nil
	if err := commitVersion(t, out, work, 2); err != nil {
		t.Fatal(err)
	}
	f.newTree, f.newVer = tree(t, root), shardstest.ReaderView(t, root)
	if maps.Equal(f.oldVer, f.newVer) || len(f.ops) < 10 {
		t.Fatalf("the versions do not differ, or the commit has only %d operations", len(f.ops))
	}
	return f
}

// leftovers lists the staging and work directories under root.
func leftovers(t testing.TB, root string) []string {
	entries, err := os.ReadDir(root)
	if err != nil {
		t.Fatal(err)
	}
	var left []string
	for _, e := range entries {
		if strings.HasPrefix(e.Name(), shards.StagePrefix) || shards.IsWorkDirName(e.Name()) || strings.HasSuffix(e.Name(), ".tmp") {
			left = append(left, e.Name())
		}
	}
	return left
}

// after checks what a failed or killed commit left: a reader sees the old
// version or the new, complete; the next OpenOutput leaves exactly that
// version's files; a following commit succeeds and leaves nothing else.
// It returns whether the new version stood.
func (f fixture) after(t *testing.T, root, work, what string) bool {
	t.Helper()
	v := shardstest.ReaderView(t, root)
	isNew := maps.Equal(v, f.newVer)
	if !isNew && !maps.Equal(v, f.oldVer) {
		t.Fatalf("%s: the output is neither the old version nor the new", what)
	}
	out := open(t, root, shards.OutputOptions{})
	defer out.Close()
	want := f.oldTree
	if isNew {
		want = f.newTree
	}
	if got := tree(t, root); !maps.Equal(got, want) {
		t.Fatalf("%s: after cleaning, files %v, want %v", what, slices.Sorted(maps.Keys(got)), slices.Sorted(maps.Keys(want)))
	}
	if err := commitVersion(t, out, work, 2); err != nil {
		t.Fatalf("%s: the following commit: %v", what, err)
	}
	if got := tree(t, root); !maps.Equal(got, f.newTree) {
		t.Fatalf("%s: the following commit left files %v", what, slices.Sorted(maps.Keys(got)))
	}
	if left := leftovers(t, root); len(left) > 0 {
		t.Fatalf("%s: left %v", what, left)
	}
	return isNew
}

var errInjected = errors.New("injected failure")

// oldVersion is a new output directory holding version 1, and its work
// directory.
func oldVersion(t *testing.T) (root, work string) {
	t.Helper()
	root, work = t.TempDir(), t.TempDir()
	out := open(t, root, shards.OutputOptions{})
	defer out.Close()
	if err := commitVersion(t, out, work, 1); err != nil {
		t.Fatal(err)
	}
	return root, work
}

// Every file operation of a commit fails in turn: before the switch the
// commit fails and the old version stays; after it the new one stands.
func TestCommitFailpoints(t *testing.T) {
	f := newFixture(t)
	faultRun{setup: func(int) (string, string) { return oldVersion(t) },
		after: func(root, work, what string) bool { return f.after(t, root, work, what) }}.failEach(t, f.ops)
}

// A commit killed (SIGKILL) at each of its file operations leaves the old
// version or the new one, and the next run cleans up.
func TestCommitKilled(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a process per operation")
	}
	f := newFixture(t)
	faultRun{setup: func(int) (string, string) { return oldVersion(t) },
		after: func(root, work, what string) bool { return f.after(t, root, work, what) }}.killEach(t, f.ops)
}

// TestCommitKilledHelper commits version 2 into SHARDS_KILL_ROOT (a
// directory, or a prefix on an object store) and kills itself at operation
// SHARDS_KILL_AT, for TestCommitKilled and TestRemoteCommitKilled.
func TestCommitKilledHelper(t *testing.T) {
	root := os.Getenv("SHARDS_KILL_ROOT")
	if root == "" {
		t.Skip("run by TestCommitKilled")
	}
	at, _ := strconv.Atoi(os.Getenv("SHARDS_KILL_AT"))
	n := 0
	out := open(t, root, shards.OutputOptions{Failpoint: func(string) error {
		if n++; n == at+1 {
			syscall.Kill(os.Getpid(), syscall.SIGKILL)
		}
		return nil
	}})
	commitVersion(t, out, os.Getenv("SHARDS_KILL_WORK"), 2)
	t.Fatal("not killed")
}

// A second run into a locked directory is refused, with a message that
// says why; a reader's shared lock keeps writers off, and the lock goes
// with the process that held it.
func TestOutputLock(t *testing.T) {
	root := t.TempDir()
	out := open(t, root, shards.OutputOptions{})
	_, err := shards.OpenOutput(root, shards.OutputOptions{})
	if !errors.Is(err, shards.ErrLocked) || !strings.Contains(err.Error(), "in use by another parastream run") {
		t.Fatalf("second OpenOutput: %v", err)
	}
	if _, err := shards.LockShared(root); !errors.Is(err, shards.ErrLocked) {
		t.Fatalf("LockShared on a directory being written: %v", err)
	}
	out.Close()
	r1, err := shards.LockShared(root)
	if err != nil {
		t.Fatal(err)
	}
	r2, err := shards.LockShared(root)
	if err != nil {
		t.Fatalf("two readers: %v", err)
	}
	if _, err := shards.OpenOutput(root, shards.OutputOptions{}); !errors.Is(err, shards.ErrLocked) {
		t.Fatalf("OpenOutput while read: %v", err)
	}
	r1.Unlock()
	r2.Unlock()
	open(t, root, shards.OutputOptions{}).Close()
}

// OpenOutput removes the staging and work directories of dead runs, and
// nothing else: a user's .work-* directory, not named as a run's
// (IsWorkDirName), stays.
func TestOutputCleansLeftovers(t *testing.T) {
	root := t.TempDir()
	for _, d := range []string{".work-extract-0a1b2c3d4e5f", ".work-featurize-2c3d4e5f6a7b/shards/000001", ".stage-4e5f/files", "keep/sub", ".keep-dir", ".work-mine"} {
		os.MkdirAll(filepath.Join(root, d), 0o755)
	}
	for _, name := range []string{".work-extract-0a1b2c3d4e5f/spill", ".stage-4e5f/files/x.parquet", "keep/sub/user.txt", ".keep-dir/f", ".hidden", "keep/.part-00000.parquet.tmp", ".work-mine/f"} {
		os.WriteFile(filepath.Join(root, name), []byte("x"), 0o644)
	}
	open(t, root, shards.OutputOptions{}).Close()
	got := slices.Sorted(maps.Keys(tree(t, root)))
	want := []string{".hidden", ".keep-dir/f", ".work-mine/f", "keep/.part-00000.parquet.tmp", "keep/sub/user.txt"}
	if !slices.Equal(got, want) {
		t.Fatalf("left %v, want %v", got, want)
	}
	if left := leftovers(t, root); len(left) > 0 {
		t.Fatalf("left %v", left)
	}
}

// An output written before versions (shards under their plain names, a
// manifest of WriteManifest) reads as it did, and a commit supersedes it.
func TestCommitOverUnversionedOutput(t *testing.T) {
	root, work := t.TempDir(), t.TempDir()
	infos := writeSplit(t, root, "c", "train", shards.WriterOptions{}, testRows(7, 10))
	m := shards.NewManifest([]string{"old"})
	m.AddSplit("c", "train", infos...)
	if err := shards.WriteManifest(root, m); err != nil {
		t.Fatal(err)
	}
	if _, err := shards.OpenSplit(root, "c", "train"); err != nil {
		t.Fatal(err)
	}
	out := open(t, root, shards.OutputOptions{})
	defer out.Close()
	if err := commitVersion(t, out, work, 3); err != nil {
		t.Fatal(err)
	}
	shardstest.ReaderView(t, root)
	if _, err := os.Stat(filepath.Join(root, infos[0].Path)); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("the superseded shard %s is still there: %v", infos[0].Path, err)
	}
}

func TestLogicalPath(t *testing.T) {
	for in, want := range map[string]string{
		"c/train/part-00000-of-00002.5f1d0c3e9a7b2d41.parquet": "c/train/part-00000-of-00002.parquet",
		"c/train/part-00000-of-00002.parquet":                  "c/train/part-00000-of-00002.parquet",
		"rejects/ppdb-pairs.0123456789abcdef.jsonl":            "rejects/ppdb-pairs.jsonl",
		"featurize/0123456789abcdef/vocab.tsv":                 "featurize/vocab.tsv",
		"featurize/vocab.tsv":                                  "featurize/vocab.tsv",
		"rejects/a.b.jsonl":                                    "rejects/a.b.jsonl",
	} {
		if got := shards.LogicalPath(in); got != want {
			t.Errorf("LogicalPath(%q) = %q, want %q", in, got, want)
		}
	}
}
