package trainstep_test

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/parastream/parastream/shards"
	"github.com/parastream/parastream/trainstep"
)

// TestRunFeedAheadSameAsSerial trains the same seeded run twice from the
// stream's start, once with the serial feed and synchronous checkpoints and
// once with the feed ahead (one window, then four) and background
// checkpoints: the trained examples and their order (the ids trace), the
// checkpoints, the positions they hold (which rows each covers) and their
// parameters and optimiser state byte for byte, the
// skipped rows and the final parameters are the same. Window 3 with
// checkpoints every 4 steps puts checkpoints inside windows, while the feed
// has read the next ones.
func TestRunFeedAheadSameAsSerial(t *testing.T) {
	const rows = 600
	cc, vocab := publishPairs(t, rows, true)
	type result struct {
		sum       trainstep.RunSummary
		trace     []traceEntry
		positions map[string]string
		params    []byte
	}
	run := func(name string, ahead int, sync bool) result {
		t.Helper()
		dir, trace := t.TempDir(), filepath.Join(t.TempDir(), "ids.tsv")
		sum, err := trainstep.Run(context.Background(), trainstep.RunConfig{
			Client: cc, Dataset: "para", Run: name, Vocab: vocab,
			Model:  trainstep.Config{Dim: 8, BatchSize: 10, LR: 0.01, Seed: 11},
			Epochs: 2, ShuffleBuffer: 100, Window: 3, CheckpointDir: dir, CheckpointEvery: 4, KeepOptimizer: 1000,
			FeedAhead: ahead, CheckpointSync: sync, TraceIDs: trace,
		})
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		r := result{sum: sum, trace: readTrace(t, trace), positions: map[string]string{}}
		entries, err := os.ReadDir(dir)
		if err != nil {
			t.Fatal(err)
		}
		for _, e := range entries {
			if e.Name() == shards.LockName { // the directory's lock
				continue
			}
			ck, err := trainstep.ReadCheckpoint(filepath.Join(dir, e.Name()))
			if err != nil {
				t.Fatalf("%s: %v", name, err)
			}
			var rp trainstep.RunPosition
			if err := json.Unmarshal(ck.State.Position, &rp); err != nil {
				t.Fatal(err)
			}
			rp.Run = ""
			pos, _ := json.Marshal(rp)
			r.positions[e.Name()] = string(pos)
			// The parameters and optimiser state of each checkpoint: a
			// background write must hold those of its step, not of a later
			// one.
			for _, f := range []string{trainstep.FileModel, trainstep.FileOptimizer} {
				data, err := os.ReadFile(filepath.Join(dir, e.Name(), f))
				if err != nil {
					t.Fatal(err)
				}
				r.positions[e.Name()+"/"+f] = string(data)
			}
		}
		if r.params, err = os.ReadFile(filepath.Join(sum.Checkpoint, trainstep.FileModel)); err != nil {
			t.Fatal(err)
		}
		return r
	}
	serial := run("serial", -1, true)
	if len(serial.positions) < 30 {
		t.Fatalf("%d checkpoints: want checkpoints inside windows", len(serial.positions))
	}
	for _, ahead := range []int{1, 4} {
		got := run("ahead"+string(rune('0'+ahead)), ahead, false)
		if !slices.Equal(got.trace, serial.trace) {
			t.Errorf("feed %d ahead: the trained examples or their order differ from the serial feed's", ahead)
		}
		if len(got.positions) != len(serial.positions) {
			t.Errorf("feed %d ahead: %d checkpoints, serial %d", ahead, len(got.positions), len(serial.positions))
		}
		for name, pos := range serial.positions {
			switch {
			case got.positions[name] == pos:
			case strings.Contains(name, "/"):
				t.Errorf("feed %d ahead, background checkpoints: %s differs from the synchronous checkpoint's", ahead, name)
			default:
				t.Errorf("feed %d ahead: %s holds position\n%s\nserial\n%s", ahead, name, got.positions[name], pos)
			}
		}
		if !slices.Equal(got.params, serial.params) {
			t.Errorf("feed %d ahead: final parameters differ", ahead)
		}
		if got.sum.TotalSteps != serial.sum.TotalSteps || got.sum.Skipped != serial.sum.Skipped || got.sum.Examples != serial.sum.Examples {
			t.Errorf("feed %d ahead: %+v, serial %+v", ahead, got.sum, serial.sum)
		}
	}
}
