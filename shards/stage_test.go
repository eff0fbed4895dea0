package shards_test

import (
	"context"
	"maps"
	"slices"
	"strings"
	"testing"

	"github.com/parastream/parastream/shards"
)

// The staging prefix of a run that died (objects its workers wrote, which
// no manifest names) survives the opening of the output by a run that
// began after it, and goes with the next commit's sweep, once it is older
// than the current manifest; a prefix written after that commit stays.
// The version is never touched.
func TestStagingSweep(t *testing.T) {
	f := newRemoteFixture(t)
	root, work := f.oldVersion(t, "staging")
	ctx := context.Background()
	out := open(t, root, shards.OutputOptions{})
	dead := out.Staging("extract")
	if !strings.HasPrefix(dead, root+"/"+shards.StagingDir+"/extract-") {
		t.Fatalf("staging prefix %s", dead)
	}
	for _, rel := range []string{"receipts/train-000.json", "shards/g000/c/train/part-00000-of-00001.parquet", "rejects/0a.jsonl"} {
		if err := shards.WriteObject(ctx, shards.JoinPath(dead, rel), []byte(rel)); err != nil {
			t.Fatal(err)
		}
	}
	staged := func() []string {
		var keys []string
		for k := range f.srv.Objects(t, root) {
			if strings.HasPrefix(k, shards.StagingDir+"/") {
				keys = append(keys, k)
			}
		}
		return keys
	}
	open(t, root, shards.OutputOptions{}) // began after the dead run: spares it
	if got := staged(); len(got) != 3 {
		t.Fatalf("opening the output left staging objects %v, want the dead run's 3", got)
	}
	if err := commitVersion(t, open(t, root, shards.OutputOptions{}), work, 2); err != nil {
		t.Fatal(err)
	}
	if got := staged(); len(got) != 0 {
		t.Fatalf("the commit's sweep left %v", got)
	}
	if got := f.srv.Objects(t, root); !maps.Equal(got, f.newObjs) {
		t.Fatalf("the output holds %v, want %v", slices.Sorted(maps.Keys(got)), slices.Sorted(maps.Keys(f.newObjs)))
	}
	live := out.Staging("extract")
	if err := shards.WriteObject(ctx, shards.JoinPath(live, "receipts/a.json"), []byte("{}")); err != nil {
		t.Fatal(err)
	}
	open(t, root, shards.OutputOptions{})
	if got := staged(); len(got) != 1 {
		t.Fatalf("a staging prefix newer than the manifest was removed: %v left", got)
	}
	if err := out.RemoveStaging(ctx, live); err != nil {
		t.Fatal(err)
	}
	if got := staged(); len(got) != 0 {
		t.Fatalf("RemoveStaging left %v", got)
	}
}

// JoinPath keeps the "//" of a location on an object store.
func TestJoinPath(t *testing.T) {
	for _, c := range []struct{ loc, want string }{
		{"s3://bucket/x", "s3://bucket/x/a/b.json"},
		{"s3://bucket/x/", "s3://bucket/x/a/b.json"},
		{"/tmp/x", "/tmp/x/a/b.json"},
	} {
		if got := shards.JoinPath(c.loc, "a", "b.json"); got != c.want {
			t.Errorf("JoinPath(%q) = %q, want %q", c.loc, got, c.want)
		}
	}
}
