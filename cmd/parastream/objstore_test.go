package main

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/parastream/parastream/internal/testenv"
	"github.com/parastream/parastream/shards"
	"github.com/parastream/parastream/trainstep"
)

// TestObjectStoreEndToEnd runs the commands against an S3-compatible
// server in this process, as a cluster's user would with a bucket: extract
// and featurize to s3://, publish from s3:// to the embedded broker, one
// epoch of training from the topics; the manifest verifies against the
// objects, and no command writes a directory named after a scheme. A
// checkpoint directory on s3:// and a gs:// output (not in this build) are
// refused in one line.
func TestObjectStoreEndToEnd(t *testing.T) {
	bin := binary(t)
	srv := testenv.StartS3(t, "bucket")
	work := t.TempDir()
	t.Chdir(work)
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	run := func(args ...string) string {
		t.Helper()
		out, err := exec.CommandContext(ctx, bin, args...).CombinedOutput()
		if err != nil {
			t.Fatalf("%s: %v\n%s", strings.Join(args, " "), err, out)
		}
		return string(out)
	}
	run("gen", "quora", "--rows", "1500", "--seed", "5", "--malformed-rate", "0", "--out", "quora.tsv")
	sum := run("extract", "--corpus", "quora", "--input", "quora.tsv", "--out", "s3://bucket/data", "--quiet")
	if !strings.Contains(sum, "s3://bucket/data/quora/<split>/") {
		t.Errorf("extract's summary does not name the bucket:\n%s", sum)
	}
	// Pairs of an earlier output in the bucket are dropped from a new one.
	dup := run("extract", "--corpus", "quora", "--input", "quora.tsv", "--out", "s3://bucket/dup", "--dedupe-against", "s3://bucket/data")
	if !strings.Contains(dup, "kept      0 pairs") {
		t.Errorf("extract --dedupe-against s3://bucket/data of the same input kept pairs:\n%s", dup)
	}
	run("featurize", "--in", "s3://bucket/data", "--out", "s3://bucket/feat", "--oov-buckets", "100", "--topics", "4", "--quiet")

	// The manifest verifies against the objects (Fetch checks every file's
	// size and sha256), and names every object under the prefix.
	m, err := shards.Fetch(ctx, "s3://bucket/feat", t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	objs := srv.Objects(t, "s3://bucket/feat")
	named := append(m.Paths(), shards.ManifestName)
	for k := range objs {
		if !slices.Contains(named, k) && !strings.HasPrefix(k, "featurize/") {
			t.Errorf("object %s is not named by the manifest", k)
		}
	}
	if m.Vocabulary == nil || len(m.Files) == 0 || m.Splits["quora/train"].Rows == 0 {
		t.Fatalf("the featurized manifest lacks its vocabulary, shards or train rows: %+v", m.Splits)
	}

	t.Logf("s3://bucket/feat: %d objects, %d shards, %d train rows", len(objs), len(m.Files), m.Splits["quora/train"].Rows)
	// A saved model on the store applies as a local one does.
	run("featurize", "--in", "s3://bucket/data", "--out", "s3://bucket/again", "--model", "s3://bucket/feat", "--quiet")
	again, err := shards.Fetch(ctx, "s3://bucket/again", t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	if again.Vocabulary == nil || again.Vocabulary.SHA256 != m.Vocabulary.SHA256 {
		t.Errorf("featurize --model s3://bucket/feat: vocabulary %+v, want the model's %+v", again.Vocabulary, m.Vocabulary)
	}
	b := startBrokerProc(t, bin, "127.0.0.1:0", t.TempDir())
	pub := run("publish", "--shards", "s3://bucket/feat", "--brokers", b.addr, "--quiet")
	if !strings.Contains(pub, "parastream.quora.train:") {
		t.Errorf("publish did not publish the train split:\n%s", pub)
	}
	ck := filepath.Join(work, "ck")
	run("train", "--brokers", b.addr, "--dataset", "quora", "--dim", "16", "--epochs", "1", "--checkpoint-dir", ck, "--quiet")
	if _, err := trainstep.LatestCheckpoint(ck); err != nil {
		t.Fatalf("no checkpoint after one epoch: %v", err)
	}

	if out := run("eval", "run", "--checkpoint", ck, "--eval", "s3://bucket/data", "--out", "results"); !strings.Contains(out, "quora") {
		t.Errorf("eval run --eval s3://bucket/data evaluated no quora set:\n%s", out)
	}
	for _, args := range [][]string{
		{"train", "--brokers", b.addr, "--dataset", "quora", "--dim", "16", "--epochs", "1", "--checkpoint-dir", "s3://bucket/ck", "--quiet"},
		{"extract", "--corpus", "quora", "--input", "quora.tsv", "--out", unbuiltOut},
		{"featurize", "--in", unbuiltOut, "--out", "local-out"},
		{"eval", "run", "--checkpoint", ck, "--eval", "s3://bucket/feat", "--out", "s3://bucket/results"},
	} {
		start := time.Now()
		out, err := exec.CommandContext(ctx, bin, args...).CombinedOutput()
		var lines []string
		for l := range strings.Lines(string(out)) {
			if strings.Contains(l, "://bucket/") {
				lines = append(lines, strings.TrimSpace(l))
			}
		}
		t.Logf("%s %s: %v in %v: %q", args[0], args[len(args)-2], err, time.Since(start).Round(time.Millisecond), lines)
		if err == nil || len(lines) != 1 || !strings.HasPrefix(lines[0], "parastream ") {
			t.Errorf("%s: %v, output %q; want a failure, its error in one line naming the location", strings.Join(args, " "), err, out)
		}
	}
	if _, ok := srv.Objects(t, "s3://bucket/ck")["config.json"]; ok {
		t.Error("train wrote a checkpoint into the bucket")
	}
	if _, err := os.Stat("local-out"); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("featurize of an unbuilt store made its local --out: %v", err)
	}
	testenv.NoSchemeDirs(t, work)
	testenv.NoSchemeDirs(t, filepath.Dir(ck))
}
