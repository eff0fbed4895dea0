package main

import (
	"context"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/parastream/parastream/trainstep"
	"github.com/parastream/parastream/trainstep/compute"
)

// TestCSAEEndToEnd trains the context-sensitive autoencoder from a broker
// (`train --model csae --loss recon --context topics`) on generated Quora
// pairs featurized with 4 topics, stopped after 6 steps and resumed for the
// rest of the epoch (a changed --csae-lambda refused), fine-tuned with a
// margin loss in a new run that starts from it (--init-from), then embeds
// plain text, exports the word vectors and evaluates the checkpoint.
func TestCSAEEndToEnd(t *testing.T) {
	bin := binary(t)
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	eval, _ := evalFixtures(t, bin)
	quora := filepath.Join(t.TempDir(), "quora.tsv")
	steps := [][]string{
		{"gen", "quora", "--rows", "1000", "--seed", "7", "--malformed-rate", "0", "--out", quora},
		{"extract", "--corpus", "quora", "--input", quora, "--out", eval},
	}
	feat := filepath.Join(t.TempDir(), "featurized")
	steps = append(steps, []string{"featurize", "--in", eval, "--out", feat, "--oov-buckets", "50", "--topics", "4", "--quiet"})
	for _, args := range steps {
		if out, err := exec.CommandContext(ctx, bin, args...).CombinedOutput(); err != nil {
			t.Fatalf("%s: %v\n%s", args[0], err, out)
		}
	}
	b := startBrokerProc(t, bin, "127.0.0.1:0", t.TempDir())
	if out, err := exec.CommandContext(ctx, bin, "publish", "--shards", feat, "--brokers", b.addr, "--quiet").CombinedOutput(); err != nil {
		t.Fatalf("publish: %v\n%s", err, out)
	}
	ckDir := filepath.Join(t.TempDir(), "ck")
	train := []string{"train", "--brokers", b.addr, "--dataset", "quora", "--model", "csae", "--loss", "recon", "--context", "topics",
		"--dim", "8", "--csae-layers", "6", "--csae-top-k", "40", "--word-dropout", "0.1", "--batch", "20",
		"--checkpoint-dir", ckDir, "--checkpoint-every", "3", "--quiet"}
	if out, err := exec.CommandContext(ctx, bin, append(train, "--max-steps", "6")...).CombinedOutput(); err != nil {
		t.Fatalf("train: %v\n%s", err, out)
	}
	if code, _, stderr := runCLI(t, "train", "--resume", ckDir, "--csae-lambda", "0.9"); code == 0 || !strings.Contains(stderr, "csae-lambda") {
		t.Errorf("resume with another --csae-lambda: exit %d, stderr %q; want it refused", code, stderr)
	}
	if out, err := exec.CommandContext(ctx, bin, "train", "--resume", ckDir, "--brokers", b.addr, "--quiet").CombinedOutput(); err != nil {
		t.Fatalf("train --resume: %v\n%s", err, out)
	}
	last, err := trainstep.LatestCheckpoint(ckDir)
	if err != nil {
		t.Fatal(err)
	}
	ck, err := trainstep.ReadCheckpoint(last)
	if err != nil {
		t.Fatal(err)
	}
	c := ck.Config
	if c.Encoder != compute.EncCSAE || c.Loss != compute.LossRecon || c.Topics != 4 || c.CSAETopK != 40 || len(c.CSAELayers) != 1 || ck.State.Step <= 6 {
		t.Fatalf("final checkpoint %s: config %+v, step %d", last, c, ck.State.Step)
	}
	// Fine-tuning from the pretrained stack: a new run with a pair loss.
	ftDir := filepath.Join(t.TempDir(), "ft")
	ft := append(slices.Clone(train[:len(train)-5]), "--loss", "margin", "--csae-recon-weight", "0.1", "--init-from", last,
		"--run", "csae-ft", "--checkpoint-dir", ftDir, "--max-steps", "3", "--quiet")
	if out, err := exec.CommandContext(ctx, bin, ft...).CombinedOutput(); err != nil {
		t.Fatalf("train --init-from: %v\n%s", err, out)
	}
	if _, err := trainstep.LatestCheckpoint(ftDir); err != nil {
		t.Errorf("the fine-tuning run wrote no checkpoint: %v", err)
	}
	cmd := exec.CommandContext(ctx, bin, "embed", "--checkpoint", last)
	cmd.Stdin = strings.NewReader("how do i learn go\n")
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("embed: %v", err)
	}
	if n := len(strings.Fields(string(out))); n != 6 {
		t.Errorf("embed printed %d values, want h_n's 6: %q", n, out)
	}
	vecs := filepath.Join(t.TempDir(), "v.txt")
	if code, stdout, stderr := runCLI(t, "export", "--checkpoint", last, "--format", "glove", "--out", vecs); code != 0 ||
		!strings.HasPrefix(stdout, "export: ") || !strings.Contains(stdout, " to "+vecs+": ") || !strings.Contains(stdout, " words × 8 dimensions") {
		t.Errorf("export: exit %d, want a summary naming what was written where and how big\n%s\n%s", code, stdout, stderr)
	} else {
		t.Logf("export: %s", stdout)
	}
	if code, stdout, stderr := runCLI(t, "eval", "run", "--checkpoint", last, "--eval", feat, "--out", t.TempDir()); code != 0 {
		t.Errorf("eval run: exit %d\n%s\n%s", code, stdout, stderr)
	}
}
