package main

// The fault suite (`make test-faults`, part of `make test-long`): the
// commands run as processes beside what a careful user would run beside
// them, and killed (SIGKILL) at moments drawn from their progress. Each
// probe prints one line, "probe NAME: kills K, rows checked N, lost 0,
// duplicated 0, leftovers 0", and fails unless the last three are 0.

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/parastream/parastream/cmd/parastream/internal/outdir"
	"github.com/parastream/parastream/internal/testenv"
	"github.com/parastream/parastream/stream"
	"github.com/parastream/parastream/trainstep"
)

// probe prints a probe's line and fails the test unless nothing was lost,
// duplicated or left behind.
func probe(t *testing.T, name string, kills, rows, lost, dup, leftovers int) {
	t.Helper()
	line := fmt.Sprintf("probe %s: kills %d, rows checked %d, lost %d, duplicated %d, leftovers %d", name, kills, rows, lost, dup, leftovers)
	fmt.Println(line)
	if lost != 0 || dup != 0 || leftovers != 0 {
		t.Error(line)
	}
}

// onceAnEpoch reads an ids trace ("<step> <epoch> <row id>" a line) and
// counts the rows checked (epochs × rows expected), the rows missing from
// an epoch and the rows trained more than once in one.
func onceAnEpoch(t *testing.T, trace string, epochs, rows int) (checked, lost, dup int) {
	t.Helper()
	data, err := os.ReadFile(trace)
	if err != nil {
		t.Fatal(err)
	}
	seen := map[string]int{}
	for _, line := range strings.Split(strings.TrimSuffix(string(data), "\n"), "\n") {
		f := strings.Split(line, "\t")
		if len(f) != 3 {
			t.Fatalf("trace line %q", line)
		}
		seen[f[1]+"\t"+f[2]]++
	}
	for _, n := range seen {
		dup += n - 1
	}
	return epochs * rows, epochs*rows - len(seen), dup
}

// tmpLeftovers counts the .step-N.*.tmp directories in a checkpoint
// directory.
func tmpLeftovers(t *testing.T, dir string) int {
	t.Helper()
	m, err := filepath.Glob(filepath.Join(dir, ".step-*.tmp"))
	if err != nil {
		t.Fatal(err)
	}
	return len(m)
}

// waitTraced waits until the trainer's trace reaches step, failing if the
// trainer ends first.
func waitTraced(t *testing.T, trace string, step int64, done chan error, stderr *bytes.Buffer) {
	t.Helper()
	tick := time.NewTicker(5 * time.Millisecond)
	defer tick.Stop()
	for lastTracedStepOr0(trace) < step {
		select {
		case err := <-done:
			t.Fatalf("the trainer ended (%v) before step %d:\n%s", err, step, stderr)
		case <-tick.C:
		}
	}
}

// startTraced starts the trainer c and waits until it has traced its
// first step to trace; done receives its end, stderr holds what it
// printed there.
func startTraced(t *testing.T, c *exec.Cmd, trace string) (done chan error, stderr *bytes.Buffer) {
	t.Helper()
	done, stderr = startCmd(t, c)
	waitTraced(t, trace, 1, done, stderr)
	return done, stderr
}

// lastTracedStepOr0 is lastTracedStep of a trace that may not exist yet.
func lastTracedStepOr0(trace string) int64 {
	if fi, err := os.Stat(trace); err != nil || fi.Size() == 0 {
		return 0
	}
	return lastTracedStep(trace)
}

// restartableBroker starts a `parastream broker` on a data directory it
// returns, so that it can be restarted on it, and publishes root's shards
// to it in messages of 100 rows; the context ends the test's commands
// after 3 minutes.
func restartableBroker(t *testing.T, bin, root string) (context.Context, *brokerProc, string) {
	t.Helper()
	data := t.TempDir()
	b := startBrokerProc(t, bin, "127.0.0.1:0", data)
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	t.Cleanup(cancel)
	if out, err := exec.CommandContext(ctx, bin, "publish", "--shards", root, "--brokers", b.addr, "--batch-rows", "100", "--quiet").CombinedOutput(); err != nil {
		t.Fatalf("publish: %v\n%s", err, out)
	}
	return ctx, b, data
}

// startTrain starts `parastream train` with args; done receives its end,
// stderr holds what it printed there.
func startTrain(ctx context.Context, t *testing.T, bin string, args ...string) (done chan error, stderr *bytes.Buffer) {
	t.Helper()
	return startCmd(t, exec.CommandContext(ctx, bin, append([]string{"train"}, args...)...))
}

// startCmd starts c; done receives its end, stderr holds what it printed
// there.
func startCmd(t *testing.T, c *exec.Cmd) (done chan error, stderr *bytes.Buffer) {
	t.Helper()
	stderr = &bytes.Buffer{}
	c.Stderr = stderr
	if err := c.Start(); err != nil {
		t.Fatal(err)
	}
	done = make(chan error, 1)
	go func() { done <- c.Wait() }()
	return done, stderr
}

// onceAcrossResume counts, in a trace a run failed or was killed in (before:
// the trace then) and was resumed from the checkpoint of step resumedAt,
// the rows of epochs×rows missing and those trained twice, dropping the
// lost work (tracedLines).
func onceAcrossResume(t *testing.T, trace string, before []byte, resumedAt int64, epochs, rows int) (lost, dup int) {
	t.Helper()
	seen := map[string]int{}
	for _, f := range tracedLines(t, trace, before, resumedAt, func(f []string) bool { return len(f) == 3 }) {
		seen[f[1]+"\t"+f[2]]++
	}
	for _, n := range seen {
		dup += n - 1
	}
	return epochs*rows - len(seen), dup
}

// failedAt reads the trace of a run that failed, cut back to whole lines,
// and the step of the last checkpoint in dir it resumes from.
func failedAt(t *testing.T, trace, dir string) (before []byte, resumedAt int64) {
	t.Helper()
	before, err := os.ReadFile(trace)
	if err != nil {
		t.Fatal(err)
	}
	before = before[:bytes.LastIndexByte(before, '\n')+1]
	if err := os.WriteFile(trace, before, 0o644); err != nil {
		t.Fatal(err)
	}
	last, err := trainstep.LatestCheckpoint(dir)
	if err != nil {
		t.Fatal(err)
	}
	ck, err := trainstep.ReadCheckpoint(last)
	if err != nil {
		t.Fatal(err)
	}
	return before, ck.State.Step
}

// TestFaultBrokerRestart kills the broker (SIGKILL) under a running
// trainer three times, in each epoch, and restarts it on the same data
// directory 1.5 s later: the trainer carries on through each restart
// (fetches, listing offsets at an epoch's start, committing a
// checkpoint's offsets are tried again) and trains every row once an
// epoch.
func TestFaultBrokerRestart(t *testing.T) {
	if testing.Short() {
		t.Skip("a fault probe: make test-faults")
	}
	bin := binary(t)
	const rows, epochs, batch = 6000, 3, 20
	ctx, b, data := restartableBroker(t, bin, writeFeaturized(t, rows, 0))
	dir, trace := filepath.Join(t.TempDir(), "ck"), filepath.Join(t.TempDir(), "ids.tsv")
	done, stderr := startTrain(ctx, t, bin, "--brokers", b.addr, "--dataset", "para", "--run", "restart",
		"--model", "avg", "--dim", "32", "--batch", strconv.Itoa(batch), "--epochs", strconv.Itoa(epochs), "--checkpoint-dir", dir,
		"--checkpoint-every", "7", "--shuffle-buffer", "500", "--trace-ids", trace, "--broker-retry", "60s", "--quiet")
	steps := int64(rows / batch)
	kills := 0
	// Mid-epoch 1, just before epoch 2 ends (its end and epoch 3's start
	// fall in the outage), mid-epoch 3.
	for _, at := range []int64{steps / 3, 2*steps - 3, 2*steps + steps/2} {
		waitTraced(t, trace, at, done, stderr)
		b.stop(t, syscall.SIGKILL)
		kills++
		time.Sleep(1500 * time.Millisecond)
		b = startBrokerProc(t, bin, b.addr, data)
	}
	if err := <-done; err != nil {
		t.Fatalf("the trainer failed across the broker's restarts: %v\n%s", err, stderr.String())
	}
	t.Logf("the trainer's warnings: %d lines", strings.Count(stderr.String(), "level=WARN"))
	checked, lost, dup := onceAnEpoch(t, trace, epochs, rows)
	probe(t, "broker-restart", kills, checked, lost, dup, tmpLeftovers(t, dir))
}

// TestFaultSecondTrainer starts a second trainer of a running run, on its
// checkpoint directory: it fails at once, naming the holder, and every
// checkpoint is the first one's. Two trainers of different runs on the
// same topics run together, each training every row once an epoch.
func TestFaultSecondTrainer(t *testing.T) {
	if testing.Short() {
		t.Skip("a fault probe: make test-faults")
	}
	bin := binary(t)
	// The first trainer runs 8 epochs (seconds), so that the refused
	// ones start while it runs.
	const rows, epochs, firstEpochs = 3000, 2, 8
	root := writeFeaturized(t, rows, 0)
	ctx, b := publishedBroker(t, bin, root)
	train := func(run, dir, trace, seed string, epochs int) *exec.Cmd {
		return exec.CommandContext(ctx, bin, "train", "--brokers", b.addr, "--dataset", "para", "--run", run,
			"--model", "avg", "--dim", "32", "--batch", "20", "--epochs", strconv.Itoa(epochs), "--checkpoint-dir", dir,
			"--checkpoint-every", "10", "--shuffle-buffer", "500", "--seed", seed, "--trace-ids", trace, "--quiet")
	}
	dir, trace := filepath.Join(t.TempDir(), "ck"), filepath.Join(t.TempDir(), "ids.tsv")
	first := train("dup", dir, trace, "1", firstEpochs)
	done, stderr := startTraced(t, first, trace)
	out, err := train("dup", dir, filepath.Join(t.TempDir(), "ids2.tsv"), "2", epochs).CombinedOutput()
	holder := fmt.Sprintf("held by pid %d", first.Process.Pid)
	if err == nil || !strings.Contains(string(out), "in use by another parastream run") || !strings.Contains(string(out), holder) {
		t.Errorf("a second trainer of the run: %v, %q; want a failure naming the holder (%s)", err, out, holder)
	}
	// The run's consumer group too: the same run in another directory.
	other := filepath.Join(t.TempDir(), "ck")
	out, err = train("dup", other, filepath.Join(t.TempDir(), "ids3.tsv"), "1", epochs).CombinedOutput()
	if err == nil || !strings.Contains(string(out), "run dup (consumer group dup on") || !strings.Contains(string(out), holder) {
		t.Errorf("a second trainer of the run in another directory: %v, %q; want a failure naming the holder (%s)", err, out, holder)
	}
	if _, err := os.Stat(other); err == nil {
		t.Errorf("the refused trainer left its checkpoint directory %s", other)
	}
	if err := <-done; err != nil {
		t.Fatalf("the first trainer: %v\n%s", err, stderr.String())
	}
	cks, _ := filepath.Glob(filepath.Join(dir, "step-*"))
	for _, ck := range cks {
		c, err := trainstep.ReadCheckpoint(ck)
		if err != nil || c.Config.Seed != 1 {
			t.Errorf("checkpoint %s: %v; want the first trainer's (seed 1)", ck, err)
		}
	}
	checked, lost, dup := onceAnEpoch(t, trace, firstEpochs, rows)
	probe(t, "second-trainer", 0, checked, lost, dup, tmpLeftovers(t, dir))

	// Two runs at once on the same topics: independent.
	var cmds []*exec.Cmd
	var traces, dirs []string
	for _, run := range []string{"one", "two"} {
		d, tr := filepath.Join(t.TempDir(), run), filepath.Join(t.TempDir(), run+".tsv")
		c := train(run, d, tr, "3", epochs)
		c.Stderr = os.Stderr
		if err := c.Start(); err != nil {
			t.Fatal(err)
		}
		cmds, traces, dirs = append(cmds, c), append(traces, tr), append(dirs, d)
	}
	checked, lost, dup, left := 0, 0, 0, 0
	for i, c := range cmds {
		if err := c.Wait(); err != nil {
			t.Fatalf("trainer %d of two runs at once: %v", i, err)
		}
		n, l, d := onceAnEpoch(t, traces[i], epochs, rows)
		checked, lost, dup, left = checked+n, lost+l, dup+d, left+tmpLeftovers(t, dirs[i])
	}
	probe(t, "two-runs", 0, checked, lost, dup, left)
}

// TestFaultSecondMachine starts trainers of one run as if on two
// machines (each its own HOME and cache directory, so that this machine's
// run lock does not see the other): the second fails at once, naming the
// first by the run's consumer group, where the first is a live member.
// Once the first is killed (SIGKILL) and its group session has passed, a
// trainer of the run starts and trains every row once an epoch; once
// that one has ended (leaving the group), the next starts at once.
func TestFaultSecondMachine(t *testing.T) {
	if testing.Short() {
		t.Skip("a fault probe: make test-faults")
	}
	bin := binary(t)
	const rows, epochs, firstEpochs, session = 3000, 1, 50, "6s"
	ctx, b := publishedBroker(t, bin, writeFeaturized(t, rows, 0))
	train := func(machine, dir, trace string, epochs int) *exec.Cmd {
		c := exec.CommandContext(ctx, bin, "train", "--brokers", b.addr, "--dataset", "para", "--run", "far",
			"--model", "avg", "--dim", "32", "--batch", "20", "--epochs", strconv.Itoa(epochs), "--checkpoint-dir", dir,
			"--checkpoint-every", "10", "--shuffle-buffer", "500", "--trace-ids", trace, "--group-session", session, "--quiet")
		c.Env = append(os.Environ(), "HOME="+machine, "XDG_CACHE_HOME="+filepath.Join(machine, "cache"))
		return c
	}
	a, m2 := t.TempDir(), t.TempDir()
	dirA := filepath.Join(a, "ck")
	first := onAnotherHost(t, train(a, dirA, filepath.Join(a, "ids.tsv"), firstEpochs))
	done, _ := startTraced(t, first, filepath.Join(a, "ids.tsv"))

	dirB := filepath.Join(m2, "ck")
	out, err := train(m2, dirB, filepath.Join(m2, "ids.tsv"), epochs).CombinedOutput()
	holder := fmt.Sprintf("pid %d, --checkpoint-dir %s", first.Process.Pid, dirA)
	if err == nil || strings.Count(string(out), "parastream train:") != 1 || !strings.Contains(string(out), "consumer group far on") ||
		!strings.Contains(string(out), holder) || !strings.Contains(string(out), session) {
		t.Errorf("a second trainer of the run on another machine: %v, %q; want one line naming the holder (%s) and the session (%s)", err, out, holder, session)
	}
	if _, err := os.Stat(dirB); err == nil {
		t.Errorf("the refused trainer left its checkpoint directory %s", dirB)
	}

	// The first killed: its membership ends with its session; the run is
	// taken over after it (at most a few refusals meanwhile).
	first.Process.Signal(syscall.SIGKILL)
	<-done
	trace := filepath.Join(m2, "ids.tsv")
	for tries := 0; ; tries++ {
		os.Remove(trace)
		out, err = train(m2, dirB, trace, epochs).CombinedOutput()
		if err == nil {
			t.Logf("the run was taken over after %d refusals a second apart", tries)
			break
		}
		if tries == 20 || !strings.Contains(string(out), "live member") {
			t.Fatalf("a trainer of the run after the first was killed (try %d): %v\n%s", tries, err, out)
		}
		time.Sleep(time.Second)
	}
	checked, lost, dup := onceAnEpoch(t, trace, epochs, rows)
	// It left the group as it ended: the next starts at once.
	if out, err := train(a, filepath.Join(a, "ck2"), filepath.Join(a, "ids2.tsv"), epochs+1).CombinedOutput(); err != nil {
		t.Errorf("a trainer of the run after the last one ended: %v\n%s", err, out)
	}
	probe(t, "second-machine", 1, checked, lost, dup, tmpLeftovers(t, dirB))
}

// onAnotherHost makes c run under another host name (in a UTS namespace
// of its own, unshare -ru, where the machine allows it: c's pid is the
// same), so that a trainer on this host does not take it for one of its
// own killed trainers; else c runs here, and a kill of it is seen at once.
func onAnotherHost(t *testing.T, c *exec.Cmd) *exec.Cmd {
	t.Helper()
	unshare, err := exec.LookPath("unshare")
	if err == nil {
		err = exec.Command(unshare, "-ru", "hostname", "machine-a").Run()
	}
	if err != nil {
		t.Logf("the first trainer runs on this host (unshare -ru: %v)", err)
		return c
	}
	c.Args = append([]string{unshare, "-ru", "sh", "-c", `hostname machine-a && exec "$0" "$@"`}, c.Args...)
	c.Path = unshare
	return c
}

// TestFaultTrainerKilled kills a trainer (SIGKILL) while it writes
// checkpoints and resumes it: the resume removes the .step-N.*.tmp
// directories the kill left, under the checkpoint directory's lock, and
// every row is trained once in the epoch.
func TestFaultTrainerKilled(t *testing.T) {
	if testing.Short() {
		t.Skip("a fault probe: make test-faults")
	}
	bin := binary(t)
	const rows = 4000
	root := writeFeaturized(t, rows, 0)
	ctx, b := publishedBroker(t, bin, root)
	dir, trace := filepath.Join(t.TempDir(), "ck"), filepath.Join(t.TempDir(), "ids.tsv")
	before, resumedAt := trainAndKill(ctx, t, bin, dir, trace, rows/20, "train", "--brokers", b.addr, "--dataset", "para", "--run", "killed",
		"--model", "avg", "--dim", "32", "--batch", "20", "--epochs", "1", "--checkpoint-dir", dir, "--checkpoint-every", "5",
		"--keep-checkpoints", "2", "--shuffle-buffer", "500", "--trace-ids", trace)
	// A kill while writing leaves such a directory; plant one, as the
	// moment is hard to draw.
	if err := os.MkdirAll(filepath.Join(dir, ".step-00009999.123456.tmp"), 0o755); err != nil {
		t.Fatal(err)
	}
	if out, err := exec.CommandContext(ctx, bin, "train", "--brokers", b.addr, "--dataset", "para", "--resume", dir, "--quiet").CombinedOutput(); err != nil {
		t.Fatalf("resumed train: %v\n%s", err, out)
	}
	lost, dup := onceAcrossResume(t, trace, before, resumedAt, 1, rows)
	probe(t, "trainer-killed", 1, rows, lost, dup, tmpLeftovers(t, dir))
}

// TestFaultUsersDirectory: extract --out into a directory of the user's
// own files beside an output is refused, naming the first foreign entry,
// and nothing of the user's is touched; a failed run that created --out
// leaves nothing.
func TestFaultUsersDirectory(t *testing.T) {
	if testing.Short() {
		t.Skip("a fault probe: make test-faults")
	}
	input := testenv.Fixture("quora/mini.tsv")
	u := t.TempDir()
	if out, err := exec.Command(binary(t), "extract", "--corpus", "quora", "--input", input, "--out", u).CombinedOutput(); err != nil {
		t.Fatalf("extract: %v\n%s", err, out)
	}
	if err := os.MkdirAll(filepath.Join(u, ".work-mine"), 0o755); err != nil {
		t.Fatal(err)
	}
	files := map[string]string{filepath.Join(u, ".work-mine", "f"): "keep\n", filepath.Join(u, "notes.txt"): "n\n"}
	for f, s := range files {
		if err := os.WriteFile(f, []byte(s), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	code, _, stderr := runCLI(t, "extract", "--corpus", "quora", "--input", input, "--out", u)
	if code != 2 || !strings.Contains(stderr, "is not parastream's") {
		t.Errorf("extract into an output holding the user's files: exit %d, %q; want 2, naming the file", code, stderr)
	}
	lost := 0
	for f, s := range files {
		if b, err := os.ReadFile(f); err != nil || string(b) != s {
			lost++
			t.Errorf("the user's %s: %v, %q", f, err, b)
		}
	}
	// A run that fails (a corrupt input) removes the --out it made.
	bad := filepath.Join(t.TempDir(), "corrupt.tsv.gz")
	if err := os.WriteFile(bad, []byte("\x1f\x8b\x08\x00not gzip at all"), 0o644); err != nil {
		t.Fatal(err)
	}
	made := filepath.Join(t.TempDir(), "new")
	if code, _, stderr := runCLI(t, "extract", "--corpus", "quora", "--input", bad, "--out", made); code == 0 {
		t.Errorf("extract of a corrupt input succeeded: %s", stderr)
	}
	left := 0
	if _, err := os.Stat(made); err == nil {
		left++
	}
	if err := outdir.Check(u); err == nil {
		t.Error("outdir.Check accepts the user's files beside the output")
	}
	probe(t, "users-directory", 0, len(files), lost, 0, left)
}

// TestFaultWatcherPruned runs `eval watch` beside checkpoints that vanish:
// one half removed (as a pruning trainer leaves it for a moment) and one
// gone are each skipped with a line, and the next is evaluated; then a
// trainer with --keep-checkpoints 2 prunes under the running watcher, which
// outlives it.
func TestFaultWatcherPruned(t *testing.T) {
	if testing.Short() {
		t.Skip("a fault probe: make test-faults")
	}
	bin := binary(t)
	eval, vocab := evalFixtures(t, bin)
	b := startBrokerProc(t, bin, "127.0.0.1:0", t.TempDir())
	cc := stream.ClientConfig{Brokers: []string{b.addr}}
	runs, out := t.TempDir(), t.TempDir()
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	ck := func(step int64) (string, stream.CheckpointEvent) {
		dir := saveCheckpoint(t, filepath.Join(runs, "w", fmt.Sprintf("step-%08d", step)), vocab, uint64(step))
		return dir, stream.CheckpointEvent{Run: "pruned", Model: "avg", Dataset: "fixture", Step: step, Epoch: 1, Dir: dir, Time: time.Now()}
	}
	half, e1 := ck(1)
	gone, e2 := ck(2)
	good, e3 := ck(3)
	// RemoveAll had taken sha256sums.txt and vocab.txt when the watcher
	// read it (the "holds no vocabulary").
	for _, f := range []string{trainstep.FileSums, trainstep.FileVocab} {
		if err := os.Remove(filepath.Join(half, f)); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.RemoveAll(gone); err != nil {
		t.Fatal(err)
	}
	w := startWatch(t, bin, b.addr, eval, out)
	for _, e := range []stream.CheckpointEvent{e1, e2, e3} {
		if err := stream.AnnounceCheckpoint(ctx, cc, "evt", e); err != nil {
			t.Fatal(err)
		}
	}
	w.await(t, good)

	// A trainer pruning under the watcher.
	const rows = 2000
	root := writeFeaturized(t, rows, 0)
	if out, err := exec.CommandContext(ctx, bin, "publish", "--shards", root, "--brokers", b.addr, "--topic-prefix", "evt", "--batch-rows", "100", "--quiet").CombinedOutput(); err != nil {
		t.Fatalf("publish: %v\n%s", err, out)
	}
	dir, trace := filepath.Join(t.TempDir(), "ck"), filepath.Join(t.TempDir(), "ids.tsv")
	if out, err := exec.CommandContext(ctx, bin, "train", "--brokers", b.addr, "--topic-prefix", "evt", "--dataset", "para", "--run", "pruning",
		"--model", "avg", "--dim", "16", "--batch", "20", "--epochs", "1", "--checkpoint-dir", dir, "--checkpoint-every", "2",
		"--keep-checkpoints", "2", "--shuffle-buffer", "500", "--trace-ids", trace, "--quiet").CombinedOutput(); err != nil {
		t.Fatalf("train: %v\n%s", err, out)
	}
	// The watcher works through the announcements, skipping the pruned.
	evaluated := 0
	for quiet := time.After(3 * time.Second); ; {
		select {
		case <-w.evaluated:
			evaluated++
			quiet = time.After(3 * time.Second)
			continue
		case err := <-w.done:
			t.Fatalf("the watcher exited: %v", err)
		case <-quiet:
		}
		break
	}
	t.Logf("the watcher evaluated %d of the pruning trainer's checkpoints", evaluated)
	w.stop(t)
	checked, lost, dup := onceAnEpoch(t, trace, 1, rows)
	probe(t, "watcher-pruned", 0, checked, lost, dup, tmpLeftovers(t, dir))
}

// TestFaultBrokerGone: a broker that stays away longer than --broker-retry
// fails the trainer with an error saying the broker is unreachable and
// giving the --resume command, which carries on once the broker is back.
func TestFaultBrokerGone(t *testing.T) {
	if testing.Short() {
		t.Skip("a fault probe: make test-faults")
	}
	bin := binary(t)
	const rows = 4000
	ctx, b, data := restartableBroker(t, bin, writeFeaturized(t, rows, 0))
	dir, trace := filepath.Join(t.TempDir(), "ck"), filepath.Join(t.TempDir(), "ids.tsv")
	done, stderr := startTrain(ctx, t, bin, "--brokers", b.addr, "--dataset", "para", "--run", "gone",
		"--model", "avg", "--dim", "32", "--batch", "20", "--epochs", "2", "--checkpoint-dir", dir,
		"--checkpoint-every", "7", "--shuffle-buffer", "500", "--trace-ids", trace, "--broker-retry", "2s", "--quiet")
	waitTraced(t, trace, rows/20/2, done, stderr)
	b.stop(t, syscall.SIGKILL)
	err := <-done
	want := "train: the broker is unreachable; once it is back, carry on from the last checkpoint with: parastream train --resume " + dir
	if err == nil || !strings.Contains(stderr.String(), "stream: the broker is unreachable") || !strings.Contains(stderr.String(), want) {
		t.Fatalf("the trainer with the broker gone: %v\n%s\nwant the error to say %q", err, stderr.String(), want)
	}
	// The work after the last checkpoint is lost, and done again.
	before, resumedAt := failedAt(t, trace, dir)
	startBrokerProc(t, bin, b.addr, data) // back on the same address
	if out, err := exec.CommandContext(ctx, bin, "train", "--resume", dir, "--quiet").CombinedOutput(); err != nil {
		t.Fatalf("the --resume the error gave: %v\n%s", err, out)
	}
	lost, dup := onceAcrossResume(t, trace, before, resumedAt, 2, rows)
	probe(t, "broker-gone", 1, 2*rows, lost, dup, tmpLeftovers(t, dir))
}

// TestFaultFullDisk trains with the checkpoint directory on a 2 MiB tmpfs
// (mounted in a user namespace, where the machine allows it): a
// checkpoint that does not fit fails the run with an error naming the
// file, the checkpoints written before it stay whole, and the run leaves no
// .step-N.*.tmp. The resume on a disk with room trains every row once.
func TestFaultFullDisk(t *testing.T) {
	if testing.Short() {
		t.Skip("a fault probe: make test-faults")
	}
	if err := exec.Command("unshare", "-rm", "sh", "-c", "mount -t tmpfs -o size=64k tmpfs /tmp").Run(); err != nil {
		t.Skipf("no tmpfs in a user namespace on this machine (unshare -rm: %v): the full-disk probe needs one", err)
	}
	bin := binary(t)
	const rows = 2000
	root := writeFeaturized(t, rows, 0)
	ctx, b := publishedBroker(t, bin, root)
	disk, trace := t.TempDir(), filepath.Join(t.TempDir(), "ids.tsv")
	// The run's checkpoints (dim 400: about 1.9 MiB with the optimiser's
	// state) fit once in 2 MiB at most; the shell lists what the run left
	// before the namespace, and its tmpfs, go, and copies it out.
	saved := filepath.Join(t.TempDir(), "ck")
	script := `mount -t tmpfs -o size=2m tmpfs "$0" && { "$@"; rc=$?; ls -a "$0/ck"; cp -a "$0/ck" "$SAVED"; exit $rc; }`
	cmd := exec.CommandContext(ctx, "unshare", "-rm", "sh", "-c", script, disk, bin, "train", "--brokers", b.addr,
		"--dataset", "para", "--run", "full", "--model", "avg", "--dim", "400", "--batch", "20", "--epochs", "1",
		"--checkpoint-dir", filepath.Join(disk, "ck"), "--checkpoint-every", "10", "--shuffle-buffer", "500", "--trace-ids", trace, "--quiet")
	cmd.Env = append(os.Environ(), "SAVED="+saved)
	out, err := cmd.CombinedOutput()
	if err == nil || !strings.Contains(string(out), "no space left on device") {
		t.Fatalf("train on a full disk: %v\n%s", err, out)
	}
	left := 0
	for _, line := range strings.Split(string(out), "\n") {
		if strings.HasPrefix(line, ".step-") {
			left++
		}
	}
	t.Logf("train on a full disk:\n%s", out)
	// Resumed from what it kept, on a disk with room.
	before, resumedAt := failedAt(t, trace, saved)
	if out, err := exec.CommandContext(ctx, bin, "train", "--resume", saved, "--quiet").CombinedOutput(); err != nil {
		t.Fatalf("resumed on a disk with room: %v\n%s", err, out)
	}
	lost, dup := onceAcrossResume(t, trace, before, resumedAt, 1, rows)
	probe(t, "full-disk", 0, rows, lost, dup, left)
}
