package shards_test

import (
	"context"
	"errors"
	"maps"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/parastream/parastream/internal/testenv"
	"github.com/parastream/parastream/shards"
	"github.com/parastream/parastream/shards/shardstest"
)

// remoteView is what a reader of the output at url sees: its copy
// (shards.Fetch, which checks every file against the manifest) read as a
// reader reads it.
func remoteView(t testing.TB, url string) map[string]string {
	t.Helper()
	dir := t.TempDir()
	if _, err := shards.Fetch(context.Background(), url, dir); err != nil {
		t.Fatalf("fetching %s: %v", url, err)
	}
	return shardstest.ReaderView(t, dir)
}

// remoteFixture is fixture on an object store: the objects and reader
// views of version 1 and of version 2 committed over it, and the
// operations of that commit.
type remoteFixture struct {
	srv              *testenv.S3Server
	oldObjs, newObjs map[string]string
	oldVer, newVer   map[string]string
	ops              []string
}

func newRemoteFixture(t *testing.T) remoteFixture {
	t.Helper()
	f := remoteFixture{srv: testenv.StartS3(t, "bucket")}
	root, work := "s3://bucket/fixture", t.TempDir()
	out := open(t, root, shards.OutputOptions{Failpoint: func(op string) error { f.ops = append(f.ops, op); return nil }})
	if err := commitVersion(t, out, work, 1); err != nil {
		t.Fatal(err)
	}
	f.oldObjs, f.oldVer, f.ops = f.srv.Objects(t, root), remoteView(t, root), nil
	if err := commitVersion(t, out, work, 2); err != nil {
		t.Fatal(err)
	}
	f.newObjs, f.newVer = f.srv.Objects(t, root), remoteView(t, root)
	if maps.Equal(f.oldVer, f.newVer) || len(f.ops) < 10 {
		t.Fatalf("the versions do not differ, or the commit has only %d operations", len(f.ops))
	}
	return f
}

// oldVersion commits version 1 under a new prefix.
func (f remoteFixture) oldVersion(t *testing.T, name string) (root, work string) {
	t.Helper()
	root, work = "s3://bucket/"+name, t.TempDir()
	if err := commitVersion(t, open(t, root, shards.OutputOptions{}), work, 1); err != nil {
		t.Fatal(err)
	}
	return root, work
}

// after checks what a failed or killed commit left under root: a reader
// sees the old version or the new, complete; a following run commits and
// leaves exactly the new version's objects. It returns whether the new
// version stood.
func (f remoteFixture) after(t *testing.T, root, work, what string) bool {
	t.Helper()
	v := remoteView(t, root)
	isNew := maps.Equal(v, f.newVer)
	if !isNew && !maps.Equal(v, f.oldVer) {
		t.Fatalf("%s: the output is neither the old version nor the new", what)
	}
	if err := commitVersion(t, open(t, root, shards.OutputOptions{}), work, 2); err != nil {
		t.Fatalf("%s: the following commit: %v", what, err)
	}
	if got := f.srv.Objects(t, root); !maps.Equal(got, f.newObjs) {
		t.Fatalf("%s: the following commit left objects %v, want %v", what, slices.Sorted(maps.Keys(got)), slices.Sorted(maps.Keys(f.newObjs)))
	}
	return isNew
}

// A commit on S3 holds the new version's objects and manifest, and no
// object of the version it superseded.
func TestRemoteCommit(t *testing.T) {
	f := newRemoteFixture(t)
	for _, want := range []string{"manifest.json", "rejects/c.", "c/train/part-00000-of-00003.", "featurize/"} {
		if !slices.ContainsFunc(slices.Collect(maps.Keys(f.newObjs)), func(k string) bool { return strings.HasPrefix(k, want) }) {
			t.Errorf("no object %s* in %v", want, slices.Sorted(maps.Keys(f.newObjs)))
		}
	}
	for k := range f.oldObjs {
		if _, ok := f.newObjs[k]; !ok && k != "manifest.json" && shards.LogicalPath(k) == k {
			t.Errorf("%s: an unversioned object that is not the manifest", k)
		}
	}
	stale := 0
	for k := range f.oldObjs {
		if _, ok := f.newObjs[k]; !ok {
			stale++
		}
	}
	if stale == 0 {
		t.Error("version 2 shares every object with version 1: the test shows nothing")
	}
	for _, op := range []string{"manifest put", "manifest put done"} {
		if !slices.Contains(f.ops, op) {
			t.Errorf("no failpoint %q among %v", op, f.ops)
		}
	}
}

// Every operation of a commit on S3 fails in turn (before and after each
// object's write, at the manifest's conditional write, at each removal):
// before the switch the commit fails and the old version stays; after it
// the new one stands; a following run cleans up.
func TestRemoteCommitFailpoints(t *testing.T) {
	f := newRemoteFixture(t)
	f.faultRun(t, "fail").failEach(t, f.ops)
}

// A commit on S3 killed (SIGKILL) at each of its operations leaves the old
// version or the new one, and the next run cleans up.
func TestRemoteCommitKilled(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a process per operation")
	}
	f := newRemoteFixture(t)
	f.faultRun(t, "kill").killEach(t, f.ops)
}

// faultRun runs the fault tests under prefixes named name-<operation>.
func (f remoteFixture) faultRun(t *testing.T, name string) faultRun {
	return faultRun{setup: func(k int) (string, string) { return f.oldVersion(t, name+"-"+strconv.Itoa(k)) },
		after: func(root, work, what string) bool { return f.after(t, root, work, what) }}
}

// Two runs from the same version: the first to commit wins; the second's
// commit is refused with one line, and leaves the first's version whole.
func TestRemoteConcurrentCommit(t *testing.T) {
	f := newRemoteFixture(t)
	root, work := f.oldVersion(t, "race")
	second := open(t, root, shards.OutputOptions{})
	// The second run begins from version 1, then the first commits
	// version 2 while it runs.
	var errSecond error
	first := open(t, root, shards.OutputOptions{Failpoint: func(op string) error {
		if op == "manifest put" && errSecond == nil {
			errSecond = commitVersion(t, second, filepath.Join(work, "second"), 3)
			if errSecond == nil {
				errSecond = errors.New("committed")
			}
		}
		return nil
	}})
	_ = first
	// Here the second run commits first (it is called from within the
	// first's commit, before its manifest's write): the first is refused.
	err := commitVersion(t, first, work, 2)
	if errSecond.Error() != "committed" {
		t.Fatalf("the second run: %v", errSecond)
	}
	if !errors.Is(err, shards.ErrConflict) {
		t.Fatalf("the run that committed second: %v, want ErrConflict", err)
	}
	if msg := err.Error(); strings.Contains(msg, "\n") || !strings.Contains(msg, root) {
		t.Errorf("the refusal is not one line naming the prefix: %q", msg)
	}
	t.Logf("refused: %v", err)
	v3 := remoteView(t, root)
	if maps.Equal(v3, f.oldVer) || maps.Equal(v3, f.newVer) {
		t.Fatal("the output is not the version the winner committed")
	}
	if err := commitVersion(t, open(t, root, shards.OutputOptions{}), work, 2); err != nil {
		t.Fatalf("a run after both: %v", err)
	}
	if got := f.srv.Objects(t, root); !maps.Equal(got, f.newObjs) {
		t.Fatalf("a run after both left objects %v, want %v", slices.Sorted(maps.Keys(got)), slices.Sorted(maps.Keys(f.newObjs)))
	}
}

// A location on a store this build lacks, or on none, is refused in one
// line that names the build that has it, and nothing is written locally.
func TestCheckLocation(t *testing.T) {
	t.Chdir(t.TempDir())
	for loc, want := range map[string]string{
		"gs://bucket/x":  gsRefusal,
		"hdfs://nn/x":    "not hdfs://",
		"s3:///x":        "names no bucket",
		"s3://bucket/x":  "",
		"relative/dir":   "",
		"/abs/dir":       "",
		"C:/windows/dir": "",
	} {
		err := shards.CheckLocation(loc)
		if want == "" {
			if err != nil {
				t.Errorf("%s: %v", loc, err)
			}
			continue
		}
		if !errors.Is(err, shards.ErrScheme) || !strings.Contains(err.Error(), want) || strings.Contains(err.Error(), "\n") {
			t.Errorf("%s: %v, want ErrScheme saying %q", loc, err, want)
		}
		if _, err := shards.OpenOutput(loc, shards.OutputOptions{}); !errors.Is(err, shards.ErrScheme) {
			t.Errorf("OpenOutput(%s): %v, want ErrScheme", loc, err)
		}
	}
	testenv.NoSchemeDirs(t, ".")
}

// A run that opens the output while another run is between its uploads
// and its commit removes none of that run's objects: the other commits,
// and its version is whole.
func TestRemoteOpenSparesRunningCommit(t *testing.T) {
	f := newRemoteFixture(t)
	root, work := f.oldVersion(t, "spare")
	out := open(t, root, shards.OutputOptions{Failpoint: func(op string) error {
		if op == "manifest put" {
			open(t, root, shards.OutputOptions{})
		}
		return nil
	}})
	if err := commitVersion(t, out, work, 2); err != nil {
		t.Fatal(err)
	}
	if v := remoteView(t, root); !maps.Equal(v, f.newVer) {
		t.Fatal("the output is not the new version")
	}
}

// An object the commit placed that another run's sweep removes around the
// switch (as one with the same name, unnamed, that an earlier run left) is
// placed again: the version the commit leaves is whole.
func TestRemoteCommitRestoresSweptObject(t *testing.T) {
	f := newRemoteFixture(t)
	root, work := f.oldVersion(t, "restore")
	var placed []string
	out := open(t, root, shards.OutputOptions{Failpoint: func(op string) error {
		if rel, ok := strings.CutPrefix(op, "placed "); ok {
			placed = append(placed, rel)
		}
		if op == "manifest put done" {
			if err := f.srv.Remove(root + "/" + placed[0]); err != nil {
				t.Fatal(err)
			}
		}
		return nil
	}})
	if err := commitVersion(t, out, work, 2); err != nil {
		t.Fatal(err)
	}
	if v := remoteView(t, root); !maps.Equal(v, f.newVer) {
		t.Fatal("the output is not the new version")
	}
}
