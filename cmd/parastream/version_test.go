package main

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/parastream/parastream/shards"
	"github.com/parastream/parastream/trainstep"
)

// TestOneVersion builds parastream as `make build` does, with the version
// set by the linker, and checks that --version, an extract's manifest, a
// featurize's, a training run's run.json and an eval's result rows all
// record it.
func TestOneVersion(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the binary")
	}
	const v = "vTEST"
	bin := filepath.Join(t.TempDir(), "parastream")
	if out, err := exec.Command("go", "build", "-ldflags", "-X main.version="+v, "-o", bin, ".").CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	if out, err := exec.Command(bin, "--version").Output(); err != nil || !strings.HasPrefix(string(out), "parastream "+v+" ") {
		t.Fatalf("--version: %v, %q", err, out)
	}

	eval, vocab := evalFixtures(t, bin)
	if m, err := shards.ReadManifest(eval); err != nil || m.CreatedBy.Version != v {
		t.Errorf("extract's manifest: %v, version %q, want %q", err, m.CreatedBy.Version, v)
	}
	ck := saveCheckpoint(t, filepath.Join(t.TempDir(), "run-x", "step-0"), vocab, 1)
	results := t.TempDir()
	if out, err := exec.Command(bin, "eval", "run", "--checkpoint", ck, "--eval", eval, "--out", results).CombinedOutput(); err != nil {
		t.Fatalf("eval run: %v\n%s", err, out)
	}
	if csv, err := os.ReadFile(filepath.Join(results, "results.csv")); err != nil || !strings.Contains(string(csv), "parastream "+v+";") {
		t.Errorf("result rows: %v, want versions %q:\n%.600s", err, "parastream "+v, csv)
	}

	quora, extracted, featurized := filepath.Join(t.TempDir(), "quora.tsv"), t.TempDir(), t.TempDir()
	for _, args := range [][]string{{"gen", "quora", "--rows", "400", "--seed", "5", "--out", quora},
		{"extract", "--corpus", "quora", "--input", quora, "--out", extracted},
		{"featurize", "--in", extracted, "--out", featurized, "--topics", "4", "--quiet"}} {
		if out, err := exec.Command(bin, args...).CombinedOutput(); err != nil {
			t.Fatalf("%s: %v\n%s", args[0], err, out)
		}
	}
	for _, d := range []string{extracted, featurized} {
		if m, err := shards.ReadManifest(d); err != nil || m.CreatedBy.Version != v {
			t.Errorf("%s: %v, version %q, want %q", d, err, m.CreatedBy.Version, v)
		}
	}
	ctx, b := publishedBroker(t, bin, featurized)
	dir := filepath.Join(t.TempDir(), "ck")
	if out, err := exec.CommandContext(ctx, bin, "train", "--brokers", b.addr, "--dataset", "quora", "--model", "avg", "--dim", "8",
		"--batch", "20", "--epochs", "1", "--checkpoint-dir", dir, "--quiet").CombinedOutput(); err != nil {
		t.Fatalf("train: %v\n%s", err, out)
	}
	last, err := trainstep.LatestCheckpoint(dir)
	if err != nil {
		t.Fatal(err)
	}
	var run struct {
		Version string `json:"version"`
	}
	data, err := os.ReadFile(filepath.Join(last, trainstep.FileRun))
	if err == nil {
		err = json.Unmarshal(data, &run)
	}
	if err != nil || run.Version != v {
		t.Errorf("run.json: %v, version %q, want %q", err, run.Version, v)
	}
}
