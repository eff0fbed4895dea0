package main

import (
	"context"
	"encoding/csv"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/parastream/parastream/internal/testenv"
	"github.com/parastream/parastream/trainstep"
)

// TestMultitaskOnSharedData is issue 23's multitask acceptance on the
// shared data: the Quora sample's duplicates and SNLI's first 1,024 train
// pairs, extracted and featurized together, published, trained in one run
// (`--dataset quora,snli --min-label 1`: the pairs loss on Quora, the NLI
// head on SNLI), SIGKILLed in its first epoch after a checkpoint and
// resumed: every row of each dataset is trained once in each of its
// passes (the trace), and the final checkpoint's NLI head scores SNLI dev
// (9,842 pairs) at least 10 points above its majority class (33.8%).
func TestMultitaskOnSharedData(t *testing.T) {
	if testing.Short() {
		t.Skip("extracts, trains three epochs and evaluates on the shared data")
	}
	quora := testenv.SharedData(t, "corpora/quora/quora_duplicate_questions.sample.tsv")
	snli := testenv.SharedData(t, "eval/snli")
	bin := binary(t)
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	tmp := t.TempDir()
	data, feat, eval := filepath.Join(tmp, "data"), filepath.Join(tmp, "data-f"), filepath.Join(tmp, "eval")
	for _, args := range [][]string{
		{"extract", "--corpus", "quora", "--input", quora, "--out", data},
		{"extract", "--corpus", "snli", "--input", filepath.Join(snli, "snli_1.0_train.first1024.jsonl.gz"), "--out", data},
		{"featurize", "--in", data, "--out", feat},
		{"extract", "--corpus", "snli", "--input", filepath.Join(snli, "snli_1.0_dev.jsonl.gz"), "--out", eval},
	} {
		if out, err := exec.CommandContext(ctx, bin, args...).CombinedOutput(); err != nil {
			t.Fatalf("%s: %v\n%s", strings.Join(args, " "), err, out)
		}
	}
	b := startBrokerProc(t, bin, "127.0.0.1:0", t.TempDir())
	if out, err := exec.CommandContext(ctx, bin, "publish", "--shards", feat, "--brokers", b.addr, "--quiet").CombinedOutput(); err != nil {
		t.Fatalf("publish: %v\n%s", err, out)
	}
	dir, trace := filepath.Join(tmp, "ck"), filepath.Join(tmp, "ids.tsv")
	flags := []string{"--brokers", b.addr, "--dataset", "quora,snli", "--epochs", "3", "--checkpoint-every", "10", "--window", "4", "--trace-ids", trace}
	// An epoch is one pass over each: 3,356 duplicates and 1,022 SNLI
	// pairs in batches of 100, about 46 steps.
	before, resumedAt := trainAndKill(ctx, t, bin, dir, trace, 40, append([]string{"train", "--run", "mt", "--model", "avg", "--dim", "100",
		"--min-label", "1", "--checkpoint-dir", dir}, flags...)...)
	out, err := exec.CommandContext(ctx, bin, append([]string{"train", "--resume", dir, "--quiet"}, flags...)...).CombinedOutput()
	if err != nil {
		t.Fatalf("resumed train: %v\n%s", err, out)
	}
	t.Logf("resumed: %s", out)

	type key struct{ dataset, pass, id string }
	count := map[key]int{}
	perPass := map[[2]string]int{}
	for _, f := range tracedLines(t, trace, before, resumedAt, func(f []string) bool { return len(f) == 5 }) {
		k := key{f[3], f[4], f[2]}
		if count[k] == 0 {
			perPass[[2]string{f[3], f[4]}]++
		}
		count[k]++
	}
	for k, n := range count {
		if n != 1 {
			t.Errorf("%s row %s trained %d times in pass %s", k.dataset, k.id, n, k.pass)
		}
	}
	// Every pass trains every row of the dataset but the few the batching
	// leaves out (a lone row of the last window: RunSummary.Skipped).
	for ds, n := range map[string]int{"quora": 3356, "snli": 1022} {
		for pass := 1; pass <= 3; pass++ {
			if got := perPass[[2]string{ds, strconv.Itoa(pass)}]; got > n || got < n-2 {
				t.Errorf("%s pass %d: %d rows trained, want %d (at most 2 skipped)", ds, pass, got, n)
			}
		}
	}

	final, err := trainstep.LatestCheckpoint(dir)
	if err != nil {
		t.Fatal(err)
	}
	results := filepath.Join(tmp, "results")
	if out, err := exec.CommandContext(ctx, bin, "eval", "run", "--checkpoint", final, "--eval", eval, "--out", results).CombinedOutput(); err != nil {
		t.Fatalf("eval run: %v\n%s", err, out)
	}
	f, err := os.Open(filepath.Join(results, "results.csv"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	rows, err := csv.NewReader(f).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	col := map[string]int{}
	for i, name := range rows[0] {
		col[name] = i
	}
	acc := -1.0
	for _, r := range rows[1:] {
		if r[col["kind"]] == "classification_head" && r[col["dataset"]] == "snli/dev" {
			if r[col["pairs"]] != "9842" {
				t.Errorf("snli/dev head row of %s pairs, want 9842", r[col["pairs"]])
			}
			acc, _ = strconv.ParseFloat(r[col["accuracy"]], 64)
		}
	}
	const majority = 100 * 3329.0 / 9842 // entailment
	if acc < majority+10 {
		t.Errorf("SNLI dev accuracy of the NLI head %.1f, want at least 10 points above the majority class's %.1f", acc, majority)
	}
	t.Logf("SNLI dev accuracy of the NLI head after 3 epochs: %.1f (majority class %.1f); rows per pass %v", acc, majority, perPass)
}
