package pipelines_test

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/parastream/parastream/corpora/synth"
	"github.com/parastream/parastream/internal/testenv"
	"github.com/parastream/parastream/pipelines"
	"github.com/parastream/parastream/shards"
	"github.com/parastream/parastream/shards/shardstest"
)

// TestKilledRuns on an object store: extract and featurize into prefixes
// of an S3-compatible server in this process, SIGKILLed at random times
// and at random operations of their commits (before and after each
// object's write, at the manifest's conditional write): a reader sees the
// version before the run or the one it was writing, and the following run
// leaves exactly its version's objects. The input is generated, so the
// test needs no shared data.
func TestKilledRunsS3(t *testing.T) {
	if testing.Short() {
		t.Skip("runs extract and featurize many times")
	}
	srv := testenv.StartS3(t, "bucket")
	t.Setenv("TMPDIR", t.TempDir()) // the killed runs' local work directories
	quora := filepath.Join(t.TempDir(), "quora.tsv")
	f, err := os.Create(quora)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := synth.Quora(f, synth.Config{Rows: 3000, Seed: 4, MalformedRate: synth.NoMalformed}); err != nil {
		t.Fatal(err)
	}
	f.Close()
	extracted := filepath.Join(t.TempDir(), "extracted")
	where := outputs{
		location: func(t *testing.T, name string) string { return "s3://bucket/" + t.Name() + "/" + name },
		view: func(t testing.TB, loc string) map[string]string {
			dir := t.TempDir()
			if _, err := shards.Fetch(context.Background(), loc, dir); err != nil {
				t.Fatalf("reading %s: %v", loc, err)
			}
			return shardstest.ReaderView(t, dir)
		},
		tree: srv.Objects,
	}
	for _, r := range killedRuns(quora, extracted) {
		t.Run(r.name, func(t *testing.T) {
			if r.name == "featurize" {
				if err := killedRuns(quora, extracted)[0].run(context.Background(), extracted, 1, pipelines.RunOptions{}); err != nil {
					t.Fatal(err)
				}
			}
			testKilled(t, r, quora, extracted, where)
		})
	}
}
