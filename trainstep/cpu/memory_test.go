package cpu_test

import (
	"errors"
	"math/rand/v2"
	"runtime"
	"runtime/metrics"
	"strings"
	"testing"

	"github.com/parastream/parastream/trainstep/compute"
	"github.com/parastream/parastream/trainstep/cpu"
)

func heapLive() int64 {
	for range 3 {
		runtime.GC()
	}
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	return int64(ms.HeapAlloc)
}

func heapAllocated() int64 {
	s := []metrics.Sample{{Name: "/gc/heap/allocs:bytes"}}
	metrics.Read(s)
	return int64(s[0].Value.Uint64())
}

// sameLength is a batch of n pairs of length L.
func sameLength(t *testing.T, cfg compute.Config, n, L int, rng *rand.Rand) *compute.Batch {
	t.Helper()
	a, b := make([][]int32, n), make([][]int32, n)
	for i := range a {
		a[i], b[i] = make([]int32, L), make([]int32, L)
		for j := range L {
			a[i][j], b[i][j] = int32(rng.IntN(cfg.Vocab)), int32(rng.IntN(cfg.Vocab))
		}
	}
	bt, err := compute.NewBatch(cfg, a, b, nil, rng)
	if err != nil {
		t.Fatal(err)
	}
	return bt
}

// TestGraphCostTracksHeap: the bytes the backend accounts for a graph
// track the Go heap within a factor of 1.25 either way: held (inputs and
// structure, kept between runs) against the heap a graph adds once built
// and run; run (the nodes' values) and the inputs against what a run of
// the cached graph allocates (it binds new inputs, and every value stays
// bound until the run ends, so its allocations are its peak).
func TestGraphCostTracksHeap(t *testing.T) {
	for _, enc := range []string{compute.EncAvg, compute.EncLSTMAvg, compute.EncGRAN, compute.EncTransformer} {
		for _, L := range []int{8, 24} {
			cfg := compute.Config{Encoder: enc, Dim: 64, Vocab: 500, BatchSize: 32, Margin: 0.4, TFLayers: 2, TFHeads: 4, TFFilter: 128}.Defaults()
			params := compute.InitParams(cfg, rand.New(rand.NewPCG(1, 2)))
			m := build(t, cfg, params)
			rng := rand.New(rand.NewPCG(3, 4))
			bt := sameLength(t, cfg, cfg.BatchSize, L, rng)
			held, inputs, run, err := cpu.GraphCost(m, 2*cfg.BatchSize, L)
			if err != nil {
				t.Fatal(err)
			}
			h0 := heapLive()
			if _, err := m.ForwardBackward(bt); err != nil {
				t.Fatal(err)
			}
			h1 := heapLive()
			a0 := heapAllocated()
			if _, err := m.ForwardBackward(bt); err != nil {
				t.Fatal(err)
			}
			allocated := heapAllocated() - a0
			if r := float64(h1-h0) / float64(held); r < 0.8 || r > 1.25 {
				t.Errorf("%s, %d steps: a held graph costs %d bytes of heap, accounted %d (ratio %.2f)", enc, L, h1-h0, held, r)
			}
			if r := float64(allocated) / float64(run+inputs); r < 0.8 || r > 1.25 {
				t.Errorf("%s, %d steps: a run allocates %d bytes, accounted %d (ratio %.2f)", enc, L, allocated, run+inputs, r)
			}
			t.Logf("%s, %d steps: held %d (heap %d), run and inputs %d (allocated %d)", enc, L, held, h1-h0, run+inputs, allocated)
			if mem := m.(compute.MemoryReporter).Memory(); mem.Graphs != 1 || mem.Held != held || mem.Run != run {
				t.Errorf("%s, %d steps: Memory() %+v, want 1 graph holding %d, running %d", enc, L, mem, held, run)
			}
		}
	}
}

// TestMemoryBudget: 100 batches of many shapes (2 to 9 pairs, 1 to 12
// words) arrive at a model whose budget holds a few of their graphs: after every
// step the host tensors, the held graphs and the largest run fit the
// budget, graphs were dropped to keep it, and the losses are those of an
// unbounded model. With MaxGraphs too, both bounds hold.
func TestMemoryBudget(t *testing.T) {
	cfg := compute.Config{Encoder: compute.EncLSTMAvg, Dim: 16, Vocab: 50, BatchSize: 8, MaxLen: 12, BucketWidth: 1, Margin: 0.4}.Defaults()
	params := compute.InitParams(cfg, rand.New(rand.NewPCG(5, 6)))
	free := build(t, cfg, params)
	probe := free.(compute.MemoryReporter)
	held, _, run, err := cpu.GraphCost(free, 2*(cfg.BatchSize+1), cfg.MaxLen)
	if err != nil {
		t.Fatal(err)
	}
	budget := probe.Memory().Host + 3*(held+run) // room for a few of the largest
	for _, maxGraphs := range []int{0, 4} {
		m, err := (&cpu.Backend{MemoryBudget: budget, MaxGraphs: maxGraphs}).Build(cfg, params)
		if err != nil {
			t.Fatal(err)
		}
		defer m.Close()
		rng := rand.New(rand.NewPCG(7, 8))
		shapes := map[[2]int]bool{}
		most := 0
		for i := range 100 {
			n, L := 2+rng.IntN(8), 1+rng.IntN(12)
			shapes[[2]int{n, L}] = true
			bt := sameLength(t, cfg, n, L, rand.New(rand.NewPCG(9, uint64(i))))
			want, err := free.ForwardBackward(bt)
			if err != nil {
				t.Fatal(err)
			}
			got, err := m.ForwardBackward(bt)
			if err != nil {
				t.Fatalf("step %d (%d pairs of %d words): %v", i, n, L, err)
			}
			if got != want {
				t.Errorf("step %d: loss %v with a budget, %v without", i, got, want)
			}
			mem := m.(compute.MemoryReporter).Memory()
			if mem.Peak() > budget || mem.Budget != budget {
				t.Fatalf("step %d: %+v: %d bytes at most, over the budget of %d", i, mem, mem.Peak(), budget)
			}
			if mem.Graphs < 1 || mem.Held <= 0 || mem.Run <= 0 || (maxGraphs > 0 && mem.Graphs > maxGraphs) {
				t.Fatalf("step %d: %+v, MaxGraphs %d", i, mem, maxGraphs)
			}
			most = max(most, mem.Graphs)
		}
		if len(shapes) < 40 || most >= len(shapes) {
			t.Errorf("MaxGraphs %d: %d shapes, at most %d graphs held: the budget was never reached", maxGraphs, len(shapes), most)
		}
		t.Logf("MaxGraphs %d: %d shapes, at most %d graphs held under a budget of %d", maxGraphs, len(shapes), most, budget)
	}
}

// TestMemoryBudgetTooSmall: a budget below the model's host tensors, or
// below them and the graph of the longest batch, is refused by Build, with
// the shape named; one that holds the training graphs but not the 64-row
// graph of Embed refuses to embed, and training goes on.
func TestMemoryBudgetTooSmall(t *testing.T) {
	cfg := compute.Config{Encoder: compute.EncGRAN, Dim: 16, Vocab: 50, BatchSize: 2, MaxLen: 20, Margin: 0.4}.Defaults()
	params := compute.InitParams(cfg, rand.New(rand.NewPCG(5, 6)))
	free := build(t, cfg, params)
	host := free.(compute.MemoryReporter).Memory().Host
	held, _, run, err := cpu.GraphCost(free, 2*(cfg.BatchSize+1), 24)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := (&cpu.Backend{MemoryBudget: host / 2}).Build(cfg, params); !errors.Is(err, compute.ErrMemoryBudget) {
		t.Errorf("a budget of half the parameters: %v", err)
	}
	_, err = (&cpu.Backend{MemoryBudget: host + held + run - 1}).Build(cfg, params)
	var be *cpu.BudgetError
	if !errors.As(err, &be) || !errors.Is(err, compute.ErrMemoryBudget) || be.Rows != 6 || be.Steps != 24 || be.Need != held+run {
		t.Fatalf("a budget one byte short of the longest batch's graph: %v", err)
	}
	if !strings.Contains(err.Error(), "6 rows of 24 steps") {
		t.Errorf("the error does not name the shape: %v", err)
	}
	m, err := (&cpu.Backend{MemoryBudget: host + held + run}).Build(cfg, params)
	if err != nil {
		t.Fatalf("a budget that holds the longest batch's graph: %v", err)
	}
	defer m.Close()
	long := make([]int32, 20)
	if _, err := m.Embed([][]int32{long}); !errors.Is(err, compute.ErrMemoryBudget) {
		t.Errorf("embedding 64 rows under a budget for 6: %v", err)
	}
	bt := sameLength(t, cfg, cfg.BatchSize, 20, rand.New(rand.NewPCG(1, 1)))
	if _, err := m.ForwardBackward(bt); err != nil {
		t.Errorf("training after the refusal: %v", err)
	}
}

// TestHostBytes: the host figure is the parameters and gradients, and the
// optimiser's state as State reports it.
func TestHostBytes(t *testing.T) {
	for _, opt := range []string{compute.OptAdam, compute.OptRMSProp, compute.OptSGD} {
		cfg := compute.Config{Encoder: compute.EncLSTMAvg, Dim: 6, Vocab: 40, Optimizer: opt, LambdaW: 0.1}.Defaults()
		m := build(t, cfg, compute.InitParams(cfg, rand.New(rand.NewPCG(1, 2))))
		var want int64
		for _, p := range m.Params() {
			want += 8 * int64(len(p.Data)) // float32 values and gradients
		}
		for _, s := range m.State() {
			want += 4 * int64(len(s.Data)) // moments; λw's initial embeddings
		}
		if got := m.(compute.MemoryReporter).Memory().Host; got != want {
			t.Errorf("%s: host %d bytes, want %d", opt, got, want)
		}
	}
}
