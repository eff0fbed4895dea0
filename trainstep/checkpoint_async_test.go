package trainstep_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/segmentio/kafka-go"

	"github.com/parastream/parastream/shards"
	"github.com/parastream/parastream/stream"
	"github.com/parastream/parastream/trainstep"
	"github.com/parastream/parastream/trainstep/cuda"
)

// committedOffsets reads the offsets group committed on the two partitions
// of dataset para's train split (-1 where none).
func committedOffsets(t *testing.T, cc stream.ClientConfig, group string) []int64 {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	topic := stream.RowTopic(stream.DefaultPrefix, "para", stream.DefaultSplit)
	tr := &kafka.Transport{} // its own: the shared one caches the topics it saw
	defer tr.CloseIdleConnections()
	c := &kafka.Client{Addr: kafka.TCP(cc.Brokers...), Transport: tr}
	resp, err := c.OffsetFetch(ctx, &kafka.OffsetFetchRequest{GroupID: group, Topics: map[string][]int{topic: {0, 1}}})
	if err == nil {
		err = resp.Error
	}
	if err != nil {
		t.Errorf("reading the offsets of group %s: %v", group, err)
		return nil
	}
	out := []int64{-1, -1}
	for _, p := range resp.Topics[topic] {
		if p.Error == nil && p.Partition >= 0 && p.Partition < 2 {
			out[p.Partition] = p.CommittedOffset
		}
	}
	return out
}

// checkpointOffsets are the partition offsets of checkpoint dir's position.
func checkpointOffsets(t *testing.T, dir string) []int64 {
	t.Helper()
	ck, err := trainstep.ReadCheckpoint(dir)
	if err != nil {
		t.Fatal(err)
	}
	var rp trainstep.RunPosition
	if err := json.Unmarshal(ck.State.Position, &rp); err != nil {
		t.Fatal(err)
	}
	out := []int64{-1, -1}
	for _, p := range rp.Stream.Partitions {
		out[p.Partition] = p.Offset
	}
	return out
}

// waitTraced waits until the ids trace holds a step at least step; false
// after 30 seconds.
func waitTraced(trace string, step int64) bool {
	for range 3000 {
		if lastStep(trace) >= step {
			return true
		}
		time.Sleep(10 * time.Millisecond)
	}
	return false
}

// lastStep is the step of the trace's last complete line (0: none).
func lastStep(path string) int64 {
	data, _ := os.ReadFile(path)
	lines := strings.Split(strings.TrimSpace(string(data)), "\n")
	var step int64
	fmt.Sscan(strings.SplitN(lines[len(lines)-1], "\t", 2)[0], &step)
	return step
}

// TestRunCheckpointWritesInBackground holds the write of the checkpoint of
// step 10 until the trainer has traced step 14: training goes on while
// the write is in flight. Meanwhile the group's committed offsets are
// still those of step 5's checkpoint and step 10's directory does not
// exist; once it is durable they move on, and at the end they are the
// final checkpoint's. The run's checkpoints are all there and whole.
func TestRunCheckpointWritesInBackground(t *testing.T) {
	cc, vocab := publishPairs(t, 400, true)
	dir, trace := t.TempDir(), filepath.Join(t.TempDir(), "ids.tsv")
	held := false
	var during []int64
	failpoint := func(ck, file string) error {
		if filepath.Base(ck) != "step-00000010" || held {
			return nil
		}
		held = true
		if !waitTraced(trace, 14) {
			return errors.New("training did not go on while the checkpoint was written")
		}
		if _, err := os.Stat(ck); !errors.Is(err, os.ErrNotExist) {
			t.Errorf("%s exists before its files are written (%v)", ck, err)
		}
		during = committedOffsets(t, cc, "background")
		return nil
	}
	sum, err := trainstep.Run(context.Background(), trainstep.WithCheckpointFailpoint(trainstep.RunConfig{
		Client: cc, Dataset: "para", Run: "background", Vocab: vocab,
		Model:  trainstep.Config{Dim: 8, BatchSize: 10, LR: 0.01},
		Epochs: 1, ShuffleBuffer: 10, Window: 2, CheckpointDir: dir, CheckpointEvery: 5, TraceIDs: trace,
	}, failpoint))
	if err != nil {
		t.Fatal(err)
	}
	if !held {
		t.Fatal("the checkpoint of step 10 was never written")
	}
	at5, at10 := checkpointOffsets(t, filepath.Join(dir, "step-00000005")), checkpointOffsets(t, filepath.Join(dir, "step-00000010"))
	if !slices.Equal(during, at5) {
		t.Errorf("offsets committed while step 10's checkpoint was written: %v, want step 5's %v (step 10's: %v)", during, at5, at10)
	}
	if slices.Equal(at5, at10) {
		t.Errorf("steps 5 and 10 have the same offsets %v: the check above cannot tell them apart", at5)
	}
	if got, want := committedOffsets(t, cc, "background"), checkpointOffsets(t, sum.Checkpoint); !slices.Equal(got, want) {
		t.Errorf("offsets committed at the end: %v, want the final checkpoint's %v", got, want)
	}
	for step := int64(5); step < sum.TotalSteps; step += 5 {
		if _, err := trainstep.ReadCheckpoint(filepath.Join(dir, fmt.Sprintf("step-%08d", step))); err != nil {
			t.Errorf("checkpoint of step %d: %v", step, err)
		}
	}
	trainedOnce(t, trace, 0, 0, 400, 1)
}

// TestRunCheckpointWriteFails: a background write that fails fails the
// run, naming the checkpoint; the last durable checkpoint and the group's
// offsets stay those of the checkpoint before.
func TestRunCheckpointWriteFails(t *testing.T) {
	cc, vocab := publishPairs(t, 300, true)
	dir := t.TempDir()
	failpoint := func(ck, file string) error {
		if filepath.Base(ck) == "step-00000010" {
			return errors.New("disk full")
		}
		return nil
	}
	sum, err := trainstep.Run(context.Background(), trainstep.WithCheckpointFailpoint(trainstep.RunConfig{
		Client: cc, Dataset: "para", Run: "fails", Vocab: vocab,
		Model:  trainstep.Config{Dim: 8, BatchSize: 10},
		Epochs: 1, ShuffleBuffer: 10, Window: 2, CheckpointDir: dir, CheckpointEvery: 5,
	}, failpoint))
	if err == nil || !strings.Contains(err.Error(), "disk full") || !strings.Contains(err.Error(), "step-00000010") {
		t.Fatalf("err %v, want the write of step 10's checkpoint failing", err)
	}
	last, lerr := trainstep.LatestCheckpoint(dir)
	if lerr != nil || last != filepath.Join(dir, "step-00000005") || sum.Checkpoint != last {
		t.Errorf("latest checkpoint %q (%v), summary's %q: want step 5's", last, lerr, sum.Checkpoint)
	}
	if got, want := committedOffsets(t, cc, "fails"), checkpointOffsets(t, last); !slices.Equal(got, want) {
		t.Errorf("committed offsets %v, want step 5's %v", got, want)
	}
}

// TestRunKilledDuringCheckpointWrite runs a trainer in a child process
// (TestKilledTrainerHelper) that SIGKILLs itself while the background
// write of its checkpoint of step 14 is under way and it has trained on to
// step 17; then resumes the run from its directory. The killed write left
// no step-14 checkpoint, the resumed run starts from step 7's, and with
// the trace lines of the lost steps dropped every row is trained exactly
// once in each epoch.
func TestRunKilledDuringCheckpointWrite(t *testing.T) {
	const rows = 500
	cc, _ := publishPairs(t, rows, true)
	dir, trace := t.TempDir(), filepath.Join(t.TempDir(), "ids.tsv")
	cmd := exec.Command(os.Args[0], "-test.run=^TestKilledTrainerHelper$", "-test.v")
	cmd.Env = append(os.Environ(), "TRAINSTEP_KILL_BROKER="+cc.Brokers[0], "TRAINSTEP_KILL_DIR="+dir, "TRAINSTEP_KILL_TRACE="+trace)
	out, err := cmd.CombinedOutput()
	var exit *exec.ExitError
	if !errors.As(err, &exit) || exit.Sys().(syscall.WaitStatus).Signal() != syscall.SIGKILL {
		t.Fatalf("trainer: %v, want killed by SIGKILL\n%s", err, out)
	}
	killedAt := lastStep(trace)
	firstRun := len(readTrace(t, trace))
	last, err := trainstep.LatestCheckpoint(dir)
	if err != nil || last != filepath.Join(dir, "step-00000007") {
		t.Fatalf("latest checkpoint after the kill %q (%v), want step 7's: step 14's was being written", last, err)
	}
	t.Logf("killed at step %d during the write of step 14's checkpoint; resuming from %s", killedAt, last)
	sum, err := trainstep.Run(context.Background(), trainstep.RunConfig{Client: cc, Dataset: "para", Resume: dir,
		Epochs: 2, ShuffleBuffer: 100, Window: 5, CheckpointEvery: 7, TraceIDs: trace})
	if err != nil {
		t.Fatal(err)
	}
	trainedOnce(t, trace, firstRun, 7, rows, 2)
	if want := int64(2 * rows / 10); sum.TotalSteps != want {
		t.Errorf("%d steps in all, want %d", sum.TotalSteps, want)
	}
}

// TestKilledTrainerHelper is the trainer TestRunKilledDuringCheckpointWrite
// kills.
func TestKilledTrainerHelper(t *testing.T) {
	broker := os.Getenv("TRAINSTEP_KILL_BROKER")
	if broker == "" {
		t.Skip("run by TestRunKilledDuringCheckpointWrite")
	}
	dir, trace := os.Getenv("TRAINSTEP_KILL_DIR"), os.Getenv("TRAINSTEP_KILL_TRACE")
	failpoint := func(ck, file string) error {
		if filepath.Base(ck) == "step-00000014" { // its first file
			if !waitTraced(trace, 17) {
				t.Error("training did not go on while the checkpoint was written")
				return nil
			}
			syscall.Kill(os.Getpid(), syscall.SIGKILL)
			select {}
		}
		return nil
	}
	vocab := make([]string, 60)
	for i := range vocab {
		vocab[i] = fmt.Sprint("w", i)
	}
	_, err := trainstep.Run(context.Background(), trainstep.WithCheckpointFailpoint(trainstep.RunConfig{
		Client: stream.ClientConfig{Brokers: []string{broker}}, Dataset: "para", Run: "killed", Vocab: vocab,
		Model:  trainstep.Config{Dim: 8, BatchSize: 10, LR: 0.01},
		Epochs: 2, ShuffleBuffer: 100, Window: 5, CheckpointDir: dir, CheckpointEvery: 7, TraceIDs: trace,
	}, failpoint))
	t.Fatalf("the run ended (%v) before it was killed", err)
}

// TestRunBackgroundCheckpointsOnCUDAEmulator trains on the CUDA backend's
// emulator, whose snapshots copy through the copy-stream code (held back
// until Wait), with background checkpoints every 3 steps and then with
// synchronous ones: every checkpoint's parameters and optimiser state are
// the same byte for byte.
func TestRunBackgroundCheckpointsOnCUDAEmulator(t *testing.T) {
	cc, vocab := publishPairs(t, 200, true)
	files := func(name string, sync bool) map[string]string {
		t.Helper()
		dir := t.TempDir()
		backend := cuda.Emulator()
		defer backend.Close()
		_, err := trainstep.Run(context.Background(), trainstep.RunConfig{
			Client: cc, Dataset: "para", Run: name, Vocab: vocab, Backend: backend,
			Model:  trainstep.Config{Dim: 8, BatchSize: 10, LR: 0.01, LambdaW: 0.001},
			Epochs: 1, ShuffleBuffer: 50, Window: 2, CheckpointDir: dir, CheckpointEvery: 3, CheckpointSync: sync, KeepOptimizer: 1000,
		})
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		out := map[string]string{}
		entries, _ := os.ReadDir(dir)
		for _, e := range entries {
			if e.Name() == shards.LockName { // the directory's lock
				continue
			}
			for _, f := range []string{trainstep.FileModel, trainstep.FileOptimizer, trainstep.FileInitial} {
				data, err := os.ReadFile(filepath.Join(dir, e.Name(), f))
				if err != nil {
					t.Fatal(err)
				}
				out[e.Name()+"/"+f] = string(data)
			}
		}
		return out
	}
	background, sync := files("emu-background", false), files("emu-sync", true)
	if len(sync) < 15 {
		t.Fatalf("%d checkpoint files, want at least 5 checkpoints", len(sync))
	}
	for name, data := range sync {
		if background[name] != data {
			t.Errorf("%s: the background checkpoint differs from the synchronous one", name)
		}
	}
}
