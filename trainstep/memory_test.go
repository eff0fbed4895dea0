package trainstep_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/parastream/parastream/shards"
	"github.com/parastream/parastream/trainstep"
	"github.com/parastream/parastream/trainstep/compute"
	"github.com/parastream/parastream/trainstep/cpu"
)

// overBudget is the CPU backend whose models refuse their at-th step as
// over the memory budget, as the CPU backend does for a graph that alone
// passes it.
func overBudget(at int) faultBackend {
	return faultBackend{cpu.New(), at, func(b *compute.Batch) (float64, error) {
		return 0, &cpu.BudgetError{Rows: 2 * b.N(), Steps: b.Len, Need: 1 << 30, Run: 1 << 29, Budget: 1 << 28}
	}}
}

// trainedOnce checks that the trace holds every one of rows rows once in
// each of epochs epochs, counting from the first run's entries only those
// of steps up to kept (those after it were lost with the run).
func trainedOnce(t *testing.T, trace string, firstRun int, kept int64, rows, epochs int) {
	t.Helper()
	count := map[int]map[string]int{}
	for i, e := range readTrace(t, trace) {
		if i < firstRun && e.step > kept {
			continue
		}
		if count[e.epoch] == nil {
			count[e.epoch] = map[string]int{}
		}
		count[e.epoch][e.id]++
	}
	if len(count) != epochs {
		t.Errorf("%d epochs trained, want %d", len(count), epochs)
	}
	for epoch, ids := range count {
		if len(ids) != rows {
			t.Errorf("epoch %d: %d distinct rows trained, want %d", epoch, len(ids), rows)
		}
		for id, n := range ids {
			if n != 1 {
				t.Errorf("epoch %d: row %s trained %d times", epoch, id, n)
			}
		}
	}
}

// TestRunMemoryBudgetTooSmall: a run whose CPU budget cannot hold the graph
// of its longest batch fails before reading a row, with nothing written or
// committed: the same run (its consumer group) given a budget that holds
// it then trains every row once.
func TestRunMemoryBudgetTooSmall(t *testing.T) {
	const rows = 300
	cc, vocab := publishPairs(t, rows, true)
	dir, trace := t.TempDir(), filepath.Join(t.TempDir(), "ids.tsv")
	cfg := trainstep.RunConfig{
		Client: cc, Dataset: "para", Run: "budget", Vocab: vocab, Backend: &cpu.Backend{MemoryBudget: 256 << 10},
		Model: trainstep.Config{Encoder: compute.EncLSTMAvg, Dim: 8, BatchSize: 10, MaxLen: 16}, Epochs: 1, ShuffleBuffer: 50,
		CheckpointDir: dir, CheckpointEvery: 5, TraceIDs: trace,
	}
	sum, err := trainstep.Run(context.Background(), cfg)
	var be *cpu.BudgetError
	if !errors.Is(err, compute.ErrMemoryBudget) || !errors.As(err, &be) || be.Rows != 22 || be.Steps != 16 {
		t.Fatalf("err %v, want the budget error of the graph of 22 rows of 16 steps", err)
	}
	t.Log(err)
	if sum.Steps != 0 || sum.Stream.Rows != 0 {
		t.Errorf("summary %+v: something was read or trained", sum)
	}
	if entries, _ := os.ReadDir(dir); len(entries) != 1 || entries[0].Name() != shards.LockName {
		t.Errorf("%d entries in the checkpoint directory, want its lock alone", len(entries))
	}
	cfg.Backend = &cpu.Backend{MemoryBudget: 64 << 20}
	if sum, err = trainstep.Run(context.Background(), cfg); err != nil {
		t.Fatal(err)
	}
	trainedOnce(t, trace, 0, 0, rows, 1)
}

// TestRunStopsOverMemoryBudget: a step refused as over the budget stops the
// run with an error naming the last checkpoint, writing nothing after it;
// resumed from it, every row is trained once in each epoch.
func TestRunStopsOverMemoryBudget(t *testing.T) {
	const rows = 300
	cc, vocab := publishPairs(t, rows, true)
	dir, trace := t.TempDir(), filepath.Join(t.TempDir(), "ids.tsv")
	_, err := trainstep.Run(context.Background(), trainstep.RunConfig{
		Client: cc, Dataset: "para", Run: "over", Vocab: vocab, Backend: overBudget(12),
		Model: trainstep.Config{Dim: 8, BatchSize: 10}, Epochs: 2, ShuffleBuffer: 50, Window: 3,
		CheckpointDir: dir, CheckpointEvery: 5, TraceIDs: trace,
	})
	last := filepath.Join(dir, "step-00000010")
	if !errors.Is(err, compute.ErrMemoryBudget) || !strings.Contains(err.Error(), last) {
		t.Fatalf("err %v, want ErrMemoryBudget naming the checkpoint of step 10", err)
	}
	t.Log(err)
	if got, err := trainstep.LatestCheckpoint(dir); err != nil || got != last {
		t.Fatalf("latest checkpoint %q (%v), want step 10's", got, err)
	}
	firstRun := len(readTrace(t, trace))
	sum, err := trainstep.Run(context.Background(), trainstep.RunConfig{
		Client: cc, Dataset: "para", Resume: last, Epochs: 2, ShuffleBuffer: 50, Window: 3, CheckpointEvery: 5, TraceIDs: trace,
	})
	if err != nil {
		t.Fatal(err)
	}
	if want := int64(2 * rows / 10); sum.TotalSteps != want {
		t.Errorf("%d steps in all, want %d", sum.TotalSteps, want)
	}
	trainedOnce(t, trace, firstRun, 10, rows, 2)
}
