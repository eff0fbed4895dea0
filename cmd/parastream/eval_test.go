package main

import (
	"bufio"
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/parastream/parastream/evalsink"
	"github.com/parastream/parastream/internal/testenv"
	"github.com/parastream/parastream/stream"
	"github.com/parastream/parastream/trainstep"
)

// evalFixtures extracts the repository's STS, STS Benchmark and SICK
// fixtures with the binary, and returns the shards directory and a
// vocabulary of their tokens.
func evalFixtures(t *testing.T, bin string) (string, []string) {
	t.Helper()
	dir := t.TempDir()
	for corpus, input := range map[string]string{"sts": "sts/*/STS.input.*.txt", "stsb": "stsb/sts-*.csv", "sick": "sick/SICK_*.txt"} {
		if out, err := exec.Command(bin, "extract", "--corpus", corpus, "--input", testenv.Fixture(input), "--out", dir).CombinedOutput(); err != nil {
			t.Fatalf("extract %s: %v\n%s", corpus, err, out)
		}
	}
	sets, err := evalsink.LoadSets(context.Background(), dir, nil)
	if err != nil {
		t.Fatal(err)
	}
	vocab := []string{"<pad>", "<unk>"}
	seen := map[string]bool{}
	for _, s := range sets.Sets {
		for _, p := range s.Pairs {
			for _, w := range append(append([]string{}, p.A...), p.B...) {
				if !seen[w] {
					seen[w] = true
					vocab = append(vocab, w)
				}
			}
		}
	}
	return dir, vocab
}

// saveCheckpoint saves a word-averaging model with random embeddings.
func saveCheckpoint(t *testing.T, dir string, vocab []string, seed uint64) string {
	t.Helper()
	tr, err := trainstep.New(trainstep.Config{Encoder: "avg", Dim: 16, BatchSize: 2, Seed: seed}, trainstep.Options{Vocab: vocab})
	if err != nil {
		t.Fatal(err)
	}
	defer tr.Close()
	if err := tr.Save(dir, nil); err != nil {
		t.Fatal(err)
	}
	return dir
}

func TestEvalRunTwice(t *testing.T) {
	bin := binary(t)
	eval, vocab := evalFixtures(t, bin)
	ck := saveCheckpoint(t, filepath.Join(t.TempDir(), "run-x", "step-0"), vocab, 1)
	out := t.TempDir()
	code, stdout, stderr := runCLI(t, "eval", "run", "--checkpoint", ck, "--eval", eval, "--out", out)
	if code != 0 || !strings.Contains(stdout, "| Dataset | n | run-x (avg, step 0) |") || !strings.Contains(stdout, "| STS Benchmark ") {
		t.Fatalf("eval run: exit %d\n%s\n%s", code, stdout, stderr)
	}
	code, stdout, stderr = runCLI(t, "eval", "run", "--checkpoint", ck, "--eval", eval, "--out", out)
	if code != 0 || !strings.Contains(stdout, "evaluated before: no rows added") {
		t.Fatalf("eval run again: exit %d\n%s\n%s", code, stdout, stderr)
	}
	if parts, _ := filepath.Glob(filepath.Join(out, evalsink.PartsDir, "*.parquet")); len(parts) != 1 {
		t.Errorf("parts after evaluating twice: %v", parts)
	}
	if code, _, stderr := runCLI(t, "eval", "run", "--eval", eval); code != 2 || !strings.Contains(stderr, "--checkpoint") {
		t.Errorf("eval run without a checkpoint: exit %d, %q", code, stderr)
	}
}

// watchProc is a `parastream eval watch` process; evaluated receives the
// checkpoint directory of each evaluation it logs.
type watchProc struct {
	cmd       *exec.Cmd
	evaluated chan string
	done      chan error
	stdout    *bytes.Buffer // read once done
}

func startWatch(t *testing.T, bin, broker, eval, out string) *watchProc {
	t.Helper()
	cmd := exec.Command(bin, "eval", "watch", "--brokers", broker, "--topic-prefix", "evt", "--eval", eval, "--out", out, "-v")
	stderr, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	stdout := new(bytes.Buffer)
	cmd.Stdout = stdout
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	w := &watchProc{cmd: cmd, evaluated: make(chan string, 16), done: make(chan error, 1), stdout: stdout}
	go func() {
		lines := bufio.NewScanner(stderr)
		for lines.Scan() {
			line := lines.Text()
			if strings.Contains(line, "evaluated announced checkpoint") {
				_, dir, _ := strings.Cut(line, " dir=")
				dir, _, _ = strings.Cut(dir, " ")
				w.evaluated <- dir
			} else if strings.Contains(line, "level=WARN") || strings.Contains(line, "level=ERROR") {
				t.Log("watch: " + line)
			}
		}
		w.done <- cmd.Wait()
	}()
	t.Cleanup(func() {
		if cmd.ProcessState == nil {
			cmd.Process.Kill()
			<-w.done
		}
	})
	return w
}

// await waits for the watcher to evaluate the given checkpoints, in any
// order.
func (w *watchProc) await(t *testing.T, dirs ...string) {
	t.Helper()
	want := map[string]int{}
	for _, d := range dirs {
		want[d]++
	}
	timeout := time.After(60 * time.Second)
	for n := 0; n < len(dirs); n++ {
		select {
		case d := <-w.evaluated:
			if want[d] == 0 {
				t.Fatalf("the watcher evaluated %s, not one of %v", d, dirs)
			}
			want[d]--
		case err := <-w.done:
			t.Fatalf("the watcher exited (%v) before evaluating %v", err, dirs)
		case <-timeout:
			t.Fatalf("the watcher evaluated %d of %v in 60s", n, dirs)
		}
	}
}

func (w *watchProc) stop(t *testing.T) {
	t.Helper()
	w.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case err := <-w.done:
		if err != nil {
			t.Fatalf("the watcher after SIGTERM: %v", err)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("the watcher did not stop within 30s of SIGTERM")
	}
}

// TestEvalWatch runs a broker and `parastream eval watch` as processes:
// the watcher evaluates the checkpoints announced before it started and
// while it runs; stopped with SIGTERM and started again, it evaluates
// those announced meanwhile, and an announcement repeated adds no rows.
func TestEvalWatch(t *testing.T) {
	bin := binary(t)
	eval, vocab := evalFixtures(t, bin)
	b := startBrokerProc(t, bin, "127.0.0.1:0", t.TempDir())
	cc := stream.ClientConfig{Brokers: []string{b.addr}}
	runs, out := t.TempDir(), t.TempDir()
	ctx := context.Background()
	ck := func(step int64, seed uint64) (string, stream.CheckpointEvent) {
		dir := saveCheckpoint(t, filepath.Join(runs, "w", "step-"+string(rune('0'+step))), vocab, seed)
		return dir, stream.CheckpointEvent{Run: "watched", Model: "avg", Dataset: "fixture", Step: step, Epoch: 1, Dir: dir, Time: time.Now()}
	}
	announce := func(ev stream.CheckpointEvent) {
		t.Helper()
		if err := stream.AnnounceCheckpoint(ctx, cc, "evt", ev); err != nil {
			t.Fatal(err)
		}
	}
	d1, e1 := ck(1, 1)
	d2, e2 := ck(2, 2)
	announce(e1)
	w := startWatch(t, bin, b.addr, eval, out)
	w.await(t, d1)
	announce(e2)
	w.await(t, d2)
	w.stop(t)
	// On stdout: a line a checkpoint evaluated, with its headline figure
	// and, for the second, the verdict against the first; then a summary.
	lines := strings.Split(strings.TrimSpace(w.stdout.String()), "\n")
	t.Logf("eval watch's output:\n%s", w.stdout)
	if len(lines) != 4 || !strings.HasPrefix(lines[1], "watched step 1: ") || !strings.Contains(lines[1], "the run's first evaluation") ||
		!strings.HasPrefix(lines[2], "watched step 2: ") || !strings.Contains(lines[2], "; vs step ") ||
		!strings.HasPrefix(lines[3], "stopped: evaluated 2 checkpoints of 1 run, skipped 0; best ") {
		t.Errorf("eval watch's output: want the watching line, one line a checkpoint, the summary; got\n%s", w.stdout)
	}

	d3, e3 := ck(3, 3)
	announce(e3)
	announce(e1) // announced again: evaluated again, no rows added
	announce(e2) // and its comparison with e1 not recorded again
	w = startWatch(t, bin, b.addr, eval, out)
	w.await(t, d3, d1, d2)
	w.stop(t)

	rows, err := evalsink.ReadResults(out)
	if err != nil {
		t.Fatal(err)
	}
	perEval := map[string]int{}
	for _, r := range rows {
		perEval[r.EvalID]++
		if r.Run != "watched" {
			t.Errorf("row of run %q", r.Run)
		}
	}
	if len(perEval) != 3 {
		t.Errorf("%d evaluations in the results, want 3: %v", len(perEval), perEval)
	}
	if report, err := os.ReadFile(filepath.Join(out, evalsink.ReportName)); err != nil || !strings.Contains(string(report), "watched (avg, step 0)") ||
		!strings.Contains(string(report), "## Each run's latest checkpoint against the run's best before it (eval watch)\n\n| Run |") {
		t.Errorf("report: %v\n%s", err, report)
	}
	// Compared with the best before them: the second checkpoint (with the
	// first) and the third; the first has none before it, and the second
	// announced again records nothing new.
	comps, err := evalsink.ReadComparisons(out)
	if err != nil {
		t.Fatal(err)
	}
	byB := map[string]map[string]bool{}
	for _, c := range comps {
		if byB[c.CheckpointB] == nil {
			byB[c.CheckpointB] = map[string]bool{}
		}
		byB[c.CheckpointB][c.ComparisonID] = true
		if c.Origin != evalsink.OriginWatch || c.RunA != "watched" || c.RunB != "watched" {
			t.Errorf("comparison row %+v", c)
		}
	}
	if len(byB) != 2 || len(byB[d2]) != 1 || len(byB[d3]) != 1 {
		t.Errorf("comparisons by checkpoint: %v", byB)
	}
}

func TestEvalCompare(t *testing.T) {
	code, out, errOut := runCLI(t, "eval", "compare", "--help")
	if code != 0 || errOut != "" || lines(out) > 40 || strings.Contains(out, "\nother:") {
		t.Fatalf("eval compare --help: exit %d, stderr %q, %d lines:\n%s", code, errOut, lines(out), out)
	}
	for _, want := range []string{"usage: parastream eval compare", "comparison:", "--headline", "--eval", "example:\n  parastream eval compare"} {
		if !strings.Contains(out, want) {
			t.Errorf("eval compare --help lacks %q:\n%s", want, out)
		}
	}
	bin := binary(t)
	eval, vocab := evalFixtures(t, bin)
	runs, results := t.TempDir(), t.TempDir()
	ck1 := saveCheckpoint(t, filepath.Join(runs, "run-x", "step-1"), vocab, 1)
	ck2 := saveCheckpoint(t, filepath.Join(runs, "run-x", "step-2"), vocab, 2)
	for _, tc := range []struct {
		args []string
		code int
		want string
	}{
		{[]string{"--out", results, ck1}, 2, "give A and B after the flags"},
		{[]string{"--out", results, ck1, ck2}, 2, "give --eval"},
		{[]string{"--headline", "stsb/dev", "--out", results, ck1, ck2}, 2, "--headline: evalsink: figure \"stsb/dev\": give DATASET:COLUMN"},
		{[]string{"--eval", eval, "--out", results, "0123abcd", ck2}, 1, "no checkpoint directory 0123abcd, nor an evaluation"},
	} {
		code, _, errOut := runCLI(t, append([]string{"eval", "compare"}, tc.args...)...)
		if code != tc.code || lines(errOut) > 3 || !strings.Contains(errOut, tc.want) {
			t.Errorf("eval compare %q: exit %d (want %d), stderr %q, want %q", tc.args, code, tc.code, errOut, tc.want)
		}
	}
	// A checkpoint against itself: within noise on every figure.
	code, out, errOut = runCLI(t, "eval", "compare", "--eval", eval, "--out", results, ck1, ck1)
	if code != 0 || !regexp.MustCompile(`\nB better on 0 figures, worse on 0, within noise on [1-9][0-9]*; headline .* \+0\.0 \(\+0\.0 to \+0\.0\), within noise\n$`).MatchString(out) {
		t.Fatalf("eval compare A A: exit %d\n%s\n%s", code, out, errOut)
	}
	// Two checkpoints, then the same two evaluations by eval_id prefix:
	// the comparison recorded before.
	if code, out, errOut = runCLI(t, "eval", "compare", "--eval", eval, "--out", results, ck1, ck2); code != 0 || !strings.Contains(out, "; recorded in ") {
		t.Fatalf("eval compare A B: exit %d\n%s\n%s", code, out, errOut)
	}
	comps, err := evalsink.ReadComparisons(results)
	if err != nil {
		t.Fatal(err)
	}
	var last evalsink.ComparisonRow
	for _, c := range comps {
		if c.EvalA != c.EvalB {
			last = c
		}
	}
	if last.ComparisonID == "" {
		t.Fatalf("no comparison of two evaluations in %d rows", len(comps))
	}
	code, out, _ = runCLI(t, "eval", "compare", "--out", results, last.EvalA[:8], last.EvalB[:10])
	if code != 0 || !strings.Contains(out, "; recorded before in ") {
		t.Errorf("eval compare by eval_id: exit %d\n%s", code, out)
	}
	for _, name := range []string{"part-" + last.ComparisonID + ".parquet", "comparison-" + last.ComparisonID + ".md"} {
		if _, err := os.Stat(filepath.Join(results, evalsink.ComparisonsDir, name)); err != nil {
			t.Error(err)
		}
	}
}
