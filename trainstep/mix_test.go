package trainstep_test

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"path/filepath"
	"strings"
	"testing"

	"github.com/parastream/parastream/shards"
	"github.com/parastream/parastream/stream"
	"github.com/parastream/parastream/trainstep"
)

func TestMixQuotas(t *testing.T) {
	names := []string{"ppdb", "quora", "simpwiki"}
	sizes := []int64{1000, 300, 200}
	for _, tc := range []struct {
		name    string
		weights map[string]float64
		quota   []int64
		err     string
	}{
		{"sizes by default: one pass each", nil, []int64{1000, 300, 200}, ""},
		{"equal weights oversample the small ones", map[string]float64{"ppdb": 1, "quora": 1, "simpwiki": 1}, []int64{1000, 1000, 1000}, ""},
		{"ppdb=2: the others are the anchors' share", map[string]float64{"ppdb": 2, "quora": 1, "simpwiki": 1}, []int64{1000, 500, 500}, ""},
		{"ppdb=10: three passes of ppdb, one and a half of simpwiki", map[string]float64{"ppdb": 10, "quora": 1, "simpwiki": 1}, []int64{3000, 300, 300}, ""},
		{"a dataset left out", map[string]float64{"ppdb": 1, "quora": 1}, nil, "no weight to dataset simpwiki"},
		{"an unknown dataset", map[string]float64{"ppdb": 1, "quora": 1, "simpwiki": 1, "reddit": 1}, nil, "weighs reddit"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, quota, err := trainstep.MixQuotas(names, sizes, tc.weights)
			if tc.err != "" {
				if err == nil || !strings.Contains(err.Error(), tc.err) {
					t.Fatalf("err %v, want one saying %q", err, tc.err)
				}
				return
			}
			if err != nil || fmt.Sprint(quota) != fmt.Sprint(tc.quota) {
				t.Fatalf("quotas %v (%v), want %v", quota, err, tc.quota)
			}
		})
	}
	for _, bad := range []string{"ppdb", "ppdb=0", "ppdb=-1", "=2", "ppdb=x", "ppdb=1,ppdb=2"} {
		if _, err := trainstep.ParseMix(bad); err == nil {
			t.Errorf("ParseMix(%q) accepted", bad)
		}
	}
	if m, err := trainstep.ParseMix("ppdb=2, quora=0.5"); err != nil || m["ppdb"] != 2 || m["quora"] != 0.5 {
		t.Errorf("ParseMix: %v, %v", m, err)
	}
}

// mixRows makes n featurized rows of the synthetic paraphrase task with ids
// prefixed by prefix.
func mixRows(prefix string, n int, seed uint64) []shards.Row {
	rows := make([]shards.Row, n)
	for i, p := range paraphrases(rand.New(rand.NewPCG(seed, 8)), n) {
		rows[i] = shards.Row{ID: fmt.Sprint(prefix, i), TokensA: []string{"w"}, TokensB: []string{"w"}, IDsA: p.A, IDsB: p.B}
	}
	return rows
}

func mixVocab() []string {
	vocab := make([]string, 60)
	for i := range vocab {
		vocab[i] = fmt.Sprint("w", i)
	}
	return vocab
}

// passCounts counts, per dataset and pass, how often each row was traced,
// leaving out the lines of steps after crashedAt written before the
// resume (the lost work).
func passCounts(t *testing.T, entries []traceEntry, firstRun int, crashedAt int64) map[string]map[int]map[string]int {
	t.Helper()
	out := map[string]map[int]map[string]int{}
	for i, e := range entries {
		if i < firstRun && e.step > crashedAt {
			continue
		}
		if e.dataset == "" {
			t.Fatalf("trace line %+v of a mix names no dataset", e)
		}
		if out[e.dataset] == nil {
			out[e.dataset] = map[int]map[string]int{}
		}
		if out[e.dataset][e.pass] == nil {
			out[e.dataset][e.pass] = map[string]int{}
		}
		out[e.dataset][e.pass][e.id]++
	}
	return out
}

// TestRunMixExactlyOnce mixes two datasets by their sizes for two epochs;
// the run stops after 70 steps and is resumed from the checkpoint of step
// 56, as after a crash. Every row of each dataset is trained exactly once
// in each epoch, and batches hold rows of both datasets.
func TestRunMixExactlyOnce(t *testing.T) {
	const na, nb = 600, 300
	cc := publishDatasets(t, []testDataset{{"alpha", mixRows("a", na, 1), "#texts\t0\n"}, {"beta", mixRows("b", nb, 2), "#texts\t0\n"}})
	ctx := context.Background()
	dir, trace := t.TempDir(), filepath.Join(t.TempDir(), "ids.tsv")
	base := trainstep.RunConfig{Client: cc, Datasets: []string{"alpha", "beta"}, Epochs: 2, ShuffleBuffer: 50, Window: 4,
		CheckpointEvery: 8, TraceIDs: trace}
	first := base
	first.Run, first.Vocab, first.CheckpointDir, first.MaxSteps = "mix", mixVocab(), dir, 70
	first.KeepOptimizer = 3 // step 56, resumed below, is the third newest
	first.Model = trainstep.Config{Dim: 8, BatchSize: 10, LR: 0.01}
	sum, err := trainstep.Run(ctx, first)
	if err != nil {
		t.Fatal(err)
	}
	if sum.TotalSteps != 70 {
		t.Fatalf("first run: %+v, want 70 steps", sum)
	}
	firstRun := len(readTrace(t, trace))
	const crashedAt = 56
	resume := base
	resume.Resume = filepath.Join(dir, fmt.Sprintf("step-%08d", crashedAt))
	if sum, err = trainstep.Run(ctx, resume); err != nil {
		t.Fatal(err)
	}
	if want := int64(2 * (na + nb) / 10); sum.TotalSteps != want || sum.Epoch != 2 {
		t.Errorf("%d steps in all, epoch %d; want %d and 2", sum.TotalSteps, sum.Epoch, want)
	}
	entries := readTrace(t, trace)
	counts := passCounts(t, entries, firstRun, crashedAt)
	for ds, n := range map[string]int{"alpha": na, "beta": nb} {
		for pass := 1; pass <= 2; pass++ {
			ids := counts[ds][pass]
			if len(ids) != n {
				t.Errorf("%s pass %d: %d distinct rows trained, want %d", ds, pass, len(ids), n)
			}
			for id, k := range ids {
				if k != 1 {
					t.Errorf("%s pass %d: row %s trained %d times", ds, pass, id, k)
				}
			}
		}
	}
	// The epoch of a line is the dataset's pass: default weights make one
	// pass over each dataset an epoch.
	mixed := 0
	perStep := map[int64]map[string]bool{}
	for _, e := range entries {
		if e.epoch != e.pass {
			t.Fatalf("line %+v: epoch and pass differ with default weights", e)
		}
		if perStep[e.step] == nil {
			perStep[e.step] = map[string]bool{}
		}
		perStep[e.step][e.dataset] = true
	}
	for _, ds := range perStep {
		if len(ds) == 2 {
			mixed++
		}
	}
	if mixed < len(perStep)/2 {
		t.Errorf("%d of %d steps mix both datasets: the datasets are not interleaved", mixed, len(perStep))
	}
	ck, err := trainstep.ReadCheckpoint(sum.Checkpoint)
	if err != nil {
		t.Fatal(err)
	}
	if ck.Run == nil || fmt.Sprint(ck.Run.Datasets) != "[alpha beta]" || ck.Run.Mix["alpha"] != na || ck.Run.Mix["beta"] != nb {
		t.Errorf("run.json %+v: want the datasets and their weights (their sizes)", ck.Run)
	}
}

// TestRunMixOversamples weighs a dataset of 300 rows like one of 600: each
// epoch reads it twice, every row once per pass, across a stop and resume.
func TestRunMixOversamples(t *testing.T) {
	const na, nb = 600, 300
	cc := publishDatasets(t, []testDataset{{"alpha", mixRows("a", na, 1), "#texts\t0\n"}, {"beta", mixRows("b", nb, 2), "#texts\t0\n"}})
	ctx := context.Background()
	dir, trace := t.TempDir(), filepath.Join(t.TempDir(), "ids.tsv")
	base := trainstep.RunConfig{Client: cc, Datasets: []string{"alpha", "beta"}, Epochs: 1, ShuffleBuffer: 50, Window: 4,
		CheckpointEvery: 9, TraceIDs: trace}
	first := base
	first.Run, first.Vocab, first.CheckpointDir, first.MaxSteps = "over", mixVocab(), dir, 61
	first.Mix = map[string]float64{"alpha": 1, "beta": 1}
	first.Model = trainstep.Config{Dim: 8, BatchSize: 10, LR: 0.01}
	sum, err := trainstep.Run(ctx, first)
	if err != nil {
		t.Fatal(err)
	}
	resume := base
	resume.Resume = dir // the latest checkpoint: the stop's
	if sum, err = trainstep.Run(ctx, resume); err != nil {
		t.Fatal(err)
	}
	if sum.TotalSteps != 2*na/10 {
		t.Errorf("%d steps, want %d: 600 rows of alpha and 600 of beta", sum.TotalSteps, 2*na/10)
	}
	counts := passCounts(t, readTrace(t, trace), 0, 0)
	for _, c := range []struct {
		ds   string
		pass int
		n    int
	}{{"alpha", 1, na}, {"beta", 1, nb}, {"beta", 2, nb}} {
		ids := counts[c.ds][c.pass]
		if len(ids) != c.n {
			t.Errorf("%s pass %d: %d distinct rows, want %d", c.ds, c.pass, len(ids), c.n)
		}
		for id, k := range ids {
			if k != 1 {
				t.Errorf("%s pass %d: row %s trained %d times", c.ds, c.pass, id, k)
			}
		}
	}
	if len(counts["alpha"]) != 1 || len(counts["beta"]) != 2 {
		t.Errorf("passes: alpha %d, beta %d; want 1 and 2", len(counts["alpha"]), len(counts["beta"]))
	}
}

func TestRunMixRefusesDifferentVocabularies(t *testing.T) {
	cc := publishDatasets(t, []testDataset{{"alpha", mixRows("a", 50, 1), "#texts\t0\n"}, {"beta", mixRows("b", 50, 2), "#texts\t7\n"}})
	cfg := trainstep.RunConfig{Client: cc, Datasets: []string{"alpha", "beta"}, Epochs: 1, Run: "bad", Vocab: mixVocab(),
		CheckpointDir: t.TempDir(), Model: trainstep.Config{Dim: 8, BatchSize: 10}}
	_, err := trainstep.Run(context.Background(), cfg)
	if !errors.Is(err, trainstep.ErrVocabularyMismatch) || !strings.Contains(err.Error(), "alpha and beta") || !strings.Contains(err.Error(), "featurize them together") {
		t.Fatalf("err %v, want ErrVocabularyMismatch naming alpha and beta and the fix", err)
	}
	cfg.Epochs = 0
	if _, err := trainstep.Run(context.Background(), cfg); err == nil || !strings.Contains(err.Error(), "--epochs") {
		t.Errorf("a mix following for ever: err %v, want one asking for --epochs", err)
	}
	cfg.Epochs, cfg.Datasets, cfg.Dataset, cfg.Mix = 1, nil, "alpha", map[string]float64{"alpha": 1}
	if _, err := trainstep.Run(context.Background(), cfg); err == nil || !strings.Contains(err.Error(), "mix") {
		t.Errorf("mix weights for one dataset: err %v", err)
	}
	_ = stream.DefaultPrefix
}
