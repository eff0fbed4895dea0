package pipelines_test

import (
	"context"
	"errors"
	"io/fs"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/apache/beam/sdks/v2/go/pkg/beam"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/testing/ptest"

	"github.com/parastream/parastream/corpora/synth"
	"github.com/parastream/parastream/internal/testenv"
	"github.com/parastream/parastream/pipelines"
	"github.com/parastream/parastream/shards"
	"github.com/parastream/parastream/shards/shardstest"
)

// workersInput writes a generated Quora file with malformed lines, so
// that the workers write rejects as well as shards.
func workersInput(t *testing.T) string {
	t.Helper()
	quora := filepath.Join(t.TempDir(), "quora.tsv")
	f, err := os.Create(quora)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := synth.Quora(f, synth.Config{Rows: 2000, Seed: 9}); err != nil {
		t.Fatal(err)
	}
	f.Close()
	return quora
}

// startBucket starts an S3-compatible server with a bucket "bucket", and
// points the temporary directory (TMPDIR) at a new directory, which it
// returns.
func startBucket(t *testing.T) (*testenv.S3Server, string) {
	srv := testenv.StartS3(t, "bucket")
	tmp := t.TempDir()
	t.Setenv("TMPDIR", tmp)
	return srv, tmp
}

// workerOps records the workers' object writes of a run (see
// shards.WithWorkerFailpoint), failing the one numbered fail (from 1; 0
// fails none).
type workerOps struct {
	mu   sync.Mutex
	ops  []string
	fail int
}

var errPlanted = errors.New("planted failure")

func (w *workerOps) hook(op string) error {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.ops = append(w.ops, op)
	if len(w.ops) == w.fail {
		return errPlanted
	}
	return nil
}

// staged counts the objects the workers wrote under the staging prefix of
// out, by the first element of their path in the run's prefix (shards,
// receipts, rejects, counts.gob).
func (w *workerOps) staged(out string) map[string]int {
	puts := map[string]int{}
	for _, op := range w.ops {
		if rel, ok := strings.CutPrefix(op, "worker put done "+out+"/"+shards.StagingDir+"/"); ok {
			_, rel, _ = strings.Cut(rel, "/")
			kind, _, _ := strings.Cut(rel, "/")
			puts[kind]++
		}
	}
	return puts
}

// An extraction into a bucket whose workers share no directory with the
// launching machine: once the pipeline has run, every file under the
// temporary directory (where the launching machine and, in this process,
// the workers keep their local scratch) is removed, after checking that
// only spill files are there. The commit then takes the shards, receipts
// and rejects from the objects the workers wrote under the output's
// staging prefix alone; the manifest verifies against the objects, the
// shards are byte for byte those of a run into a local directory, and no
// staging object is left.
func TestWorkersWriteToBucket(t *testing.T) {
	srv, tmp := startBucket(t)
	quora := workersInput(t)

	c := cfg("quora", quora, "")
	c.Out = "s3://bucket/workers"
	var w workerOps
	var local []string
	opts := pipelines.RunOptions{Failpoint: func(op string) error {
		if op != "workers done" {
			return nil
		}
		filepath.WalkDir(tmp, func(p string, d fs.DirEntry, err error) error {
			if err == nil && !d.IsDir() {
				local = append(local, strings.TrimPrefix(p, tmp+"/"))
			}
			return nil
		})
		entries, _ := os.ReadDir(tmp)
		for _, e := range entries {
			if err := os.RemoveAll(filepath.Join(tmp, e.Name())); err != nil {
				return err
			}
		}
		return nil
	}}
	ctx := shards.WithWorkerFailpoint(context.Background(), w.hook)
	sum, err := pipelines.RunExtract(ctx, c, opts)
	if err != nil {
		t.Fatalf("extract into %s, the workers' local files removed before the commit: %v", c.Out, err)
	}
	for _, p := range local {
		// Beam's in-process worker keeps a file of its own there.
		if !strings.HasSuffix(p, ".spill") && !strings.HasPrefix(p, "beamloopbackworker") {
			t.Errorf("a worker left %s on this machine's temporary directory: only spill files belong there", p)
		}
	}
	puts := w.staged(c.Out)
	if puts["shards"] == 0 || puts["receipts"] == 0 || puts["rejects"] == 0 {
		t.Fatalf("the workers wrote %v to the staging prefix, want shards, receipts and rejects", puts)
	}
	if sum.RejectCount == 0 {
		t.Fatal("no rejects: the test does not exercise the workers' rejects")
	}

	dir := t.TempDir()
	m, err := shards.Fetch(context.Background(), c.Out, dir) // verifies every object
	if err != nil {
		t.Fatal(err)
	}
	for key := range srv.Objects(t, c.Out) {
		if strings.HasPrefix(key, shards.StagingDir) {
			t.Errorf("%s left behind", key)
		}
	}
	c.Out = filepath.Join(t.TempDir(), "local")
	if _, err := pipelines.RunExtract(context.Background(), c, pipelines.RunOptions{}); err != nil {
		t.Fatal(err)
	}
	want, err := shards.ReadManifest(c.Out)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(m.Paths(), want.Paths()) { // names carry the content's sha256
		t.Errorf("the bucket holds %v, a local run %v", m.Paths(), want.Paths())
	}
	t.Logf("the workers wrote %v objects to the staging prefix; %d spill files stayed local", puts, len(local))
}

// Each object write of the workers into a bucket fails in turn, before and
// after it is written: the run fails, the prefix holds the version before
// it, byte for byte, and no staging object is left; the run after commits
// its version.
func TestWorkerWriteFailures(t *testing.T) {
	srv := testenv.StartS3(t, "bucket")
	t.Setenv("TMPDIR", t.TempDir())
	quora := workersInput(t)
	out := "s3://bucket/failures"
	run := func(v, fail int) (*workerOps, error) {
		c := cfg("quora", quora, "")
		c.Out, c.Seed = out, uint64(v)
		w := &workerOps{fail: fail}
		_, err := pipelines.RunExtract(shards.WithWorkerFailpoint(context.Background(), w.hook), c, pipelines.RunOptions{})
		return w, err
	}
	view := func() map[string]string {
		dir := t.TempDir()
		if _, err := shards.Fetch(context.Background(), out, dir); err != nil {
			t.Fatal(err)
		}
		return shardstest.ReaderView(t, dir)
	}
	if _, err := run(1, 0); err != nil {
		t.Fatal(err)
	}
	before := srv.Objects(t, out)
	first := view()
	clean, err := run(2, 0)
	if err != nil {
		t.Fatal(err)
	}
	second := srv.Objects(t, out)
	if maps.Equal(before, second) {
		t.Fatal("the two versions are the same")
	}
	if _, err := run(1, 0); err != nil { // back to the first version
		t.Fatal(err)
	}
	n := len(clean.ops)
	for k := 1; k <= n; k++ {
		w, err := run(2, k)
		if !errors.Is(err, errPlanted) && (err == nil || !strings.Contains(err.Error(), errPlanted.Error())) {
			t.Fatalf("failing worker write %d of %d (%s): the run gave %v", k, n, w.ops[min(k, len(w.ops))-1], err)
		}
		if got := view(); !maps.Equal(got, first) {
			t.Fatalf("failing worker write %d (%s): the output is not the version before the run", k, w.ops[k-1])
		}
		if got := srv.Objects(t, out); !maps.Equal(got, before) {
			t.Fatalf("failing worker write %d (%s): the prefix holds %v, want %v", k, w.ops[k-1], slices.Sorted(maps.Keys(got)), slices.Sorted(maps.Keys(before)))
		}
	}
	if _, err := run(2, 0); err != nil {
		t.Fatal(err)
	}
	if got := srv.Objects(t, out); !maps.Equal(got, second) {
		t.Fatalf("after the failures, the run holds %v, want %v", slices.Sorted(maps.Keys(got)), slices.Sorted(maps.Keys(second)))
	}
	t.Logf("each of the %d worker operations failed in turn: each run failed and left the version before", n)
}

// The extraction pipeline as a cluster's runner gets it for an output in a
// bucket without --work-dir: the spill files, which one stage writes and a
// later one (on other workers) reads, go to the staging prefix too, through
// Beam's filesystems, as do the shards, receipts and rejects; a worker's
// temporary directory keeps nothing.
func TestClusterSpillsToBucket(t *testing.T) {
	srv, tmp := startBucket(t)
	c := cfg("quora", workersInput(t), "")
	c.Out = "s3://bucket/cluster"
	c.Stage = c.Out + "/" + shards.StagingDir + "/extract-run"
	c.WorkDir, c.Buckets = shards.JoinPath(c.Stage, "spill"), 4
	p, s := beam.NewPipelineWithRoot()
	pipelines.Extract(s, c)
	if err := ptest.Run(p); err != nil {
		t.Fatal(err)
	}
	kinds := map[string]int{}
	for key := range srv.Objects(t, c.Stage) {
		kind, _, _ := strings.Cut(key, "/")
		kinds[kind]++
	}
	for _, kind := range []string{"spill", "shards", "receipts", "rejects"} {
		if kinds[kind] == 0 {
			t.Errorf("no %s objects under the staging prefix: %v", kind, kinds)
		}
	}
	filepath.WalkDir(tmp, func(p string, d fs.DirEntry, err error) error {
		if err == nil && !d.IsDir() && !strings.HasPrefix(d.Name(), "beamloopbackworker") {
			t.Errorf("a worker left %s in its temporary directory", p)
		}
		return nil
	})
	testenv.NoSchemeDirs(t, ".")
	t.Logf("objects under the staging prefix: %v", kinds)
}

// Featurize from a bucket into a bucket: the workers read the input shards
// from the store (checked against the manifest) and write the counts, the
// featurized shards and their receipts to the output's staging prefix.
// When they are done, the temporary directory holds only the launching
// machine's files (its checked copy of the input, the model it fitted):
// nothing a worker wrote. The manifest verifies against the objects, and
// no staging object is left.
func TestFeaturizeWorkersWriteToBucket(t *testing.T) {
	srv, tmp := startBucket(t)
	e := cfg("quora", workersInput(t), "")
	e.Out = "s3://bucket/in"
	if _, err := pipelines.RunExtract(context.Background(), e, pipelines.RunOptions{}); err != nil {
		t.Fatal(err)
	}
	c := smallFeaturize(e.Out, "s3://bucket/featurized")
	var w workerOps
	opts := pipelines.RunOptions{Failpoint: func(op string) error {
		if op != "workers done" {
			return nil
		}
		return filepath.WalkDir(tmp, func(p string, d fs.DirEntry, err error) error {
			rel := strings.TrimPrefix(p, tmp+"/")
			launcher := strings.HasPrefix(rel, "parastream-copy-") || strings.HasPrefix(rel, "parastream"+shards.WorkPrefix+"featurize-") && strings.Contains(rel, "/model/")
			if err == nil && !d.IsDir() && !launcher && !strings.HasPrefix(rel, "beamloopbackworker") {
				t.Errorf("a worker left %s in the temporary directory", rel)
			}
			return nil
		})
	}}
	if _, err := pipelines.RunFeaturize(shards.WithWorkerFailpoint(context.Background(), w.hook), c, opts); err != nil {
		t.Fatal(err)
	}
	puts := w.staged(c.Out)
	gets := 0
	for _, op := range w.ops {
		if strings.HasPrefix(op, "worker get "+e.Out+"/quora/") {
			gets++
		}
	}
	if gets == 0 {
		t.Error("no worker read an input shard from the bucket")
	}
	if puts["counts.gob"] != 1 || puts["shards"] == 0 || puts["receipts"] != puts["shards"] {
		t.Fatalf("the workers wrote %v to the staging prefix, want the counts, and the shards with their receipts", puts)
	}
	if _, err := shards.Fetch(context.Background(), c.Out, t.TempDir()); err != nil {
		t.Fatal(err)
	}
	for key := range srv.Objects(t, c.Out) {
		if strings.HasPrefix(key, shards.StagingDir) {
			t.Errorf("%s left behind", key)
		}
	}
	t.Logf("the workers read %d input shards from the bucket and wrote %v objects to the staging prefix", gets, puts)
}

// Each read and object write of featurize's workers from and into buckets
// fails in turn: the run fails, the output holds the version before it,
// and no staging object is left. Under -short, the first, a middle and the
// last operation only.
func TestFeaturizeWorkerFailures(t *testing.T) {
	srv := testenv.StartS3(t, "bucket")
	t.Setenv("TMPDIR", t.TempDir())
	e := cfg("quora", workersInput(t), "")
	e.Out = "s3://bucket/in"
	if _, err := pipelines.RunExtract(context.Background(), e, pipelines.RunOptions{}); err != nil {
		t.Fatal(err)
	}
	out := "s3://bucket/featurized"
	run := func(v, fail int) (*workerOps, error) {
		c := smallFeaturize(e.Out, out)
		c.Topics, c.Seed = 3, uint64(v)
		w := &workerOps{fail: fail}
		_, err := pipelines.RunFeaturize(shards.WithWorkerFailpoint(context.Background(), w.hook), c, pipelines.RunOptions{})
		return w, err
	}
	if _, err := run(1, 0); err != nil {
		t.Fatal(err)
	}
	before := srv.Objects(t, out)
	clean, err := run(2, 0)
	if err != nil {
		t.Fatal(err)
	}
	if maps.Equal(before, srv.Objects(t, out)) {
		t.Fatal("the two versions are the same")
	}
	if _, err := run(1, 0); err != nil {
		t.Fatal(err)
	}
	n := len(clean.ops)
	at := []int{1, n / 2, n}
	if !testing.Short() {
		at = at[:0]
		for k := 1; k <= n; k++ {
			at = append(at, k)
		}
	}
	for _, k := range at {
		w, err := run(2, k)
		if err == nil || !strings.Contains(err.Error(), errPlanted.Error()) {
			t.Fatalf("failing worker operation %d of %d: the run gave %v", k, n, err)
		}
		if got := srv.Objects(t, out); !maps.Equal(got, before) {
			t.Fatalf("failing worker operation %d (%s): the output holds %v, want %v", k, w.ops[k-1], slices.Sorted(maps.Keys(got)), slices.Sorted(maps.Keys(before)))
		}
	}
	t.Logf("%d of the %d worker operations failed in turn: each run failed and left the version before", len(at), n)
}
