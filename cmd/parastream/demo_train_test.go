package main

import (
	"bytes"
	"context"
	"path/filepath"
	"strings"
	"testing"

	"github.com/parastream/parastream/cmd/parastream/internal/demo"

	"github.com/parastream/parastream/trainstep"
)

func TestDemoTrain(t *testing.T) {
	root := writeFeaturized(t, 300, 20)
	out := filepath.Join(t.TempDir(), "checkpoints")
	var stdout, stderr bytes.Buffer
	if err := (demo.Config{Stdout: &stdout, Stderr: &stderr}).TrainStream(context.Background(), root, out); err != nil {
		t.Fatalf("%v\n%s%s", err, stdout.String(), stderr.String())
	}
	last, err := trainstep.LatestCheckpoint(out)
	if err != nil {
		t.Fatal(err)
	}
	ck, err := trainstep.ReadCheckpoint(last)
	if err != nil {
		t.Fatal(err)
	}
	if ck.State.Step == 0 || ck.Run == nil || ck.Run.Dataset != "para" || ck.Config.OOVBuckets != 20 || ck.Config.Vocab != 424 ||
		!strings.Contains(stdout.String(), "last checkpoint "+last) {
		t.Errorf("checkpoint %s at step %d, run %+v, %d buckets, vocab %d; output:\n%s", last, ck.State.Step, ck.Run, ck.Config.OOVBuckets, ck.Config.Vocab, stdout.String())
	}
}
