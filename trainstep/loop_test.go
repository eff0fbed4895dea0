package trainstep_test

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/parastream/parastream/shards"
	"github.com/parastream/parastream/stream"
	"github.com/parastream/parastream/trainstep"
	"github.com/parastream/parastream/trainstep/compute"
	"github.com/parastream/parastream/trainstep/cpu"
)

// publishPairs starts an embedded broker and publishes n rows of the
// synthetic paraphrase task as dataset "para", split "train", with token
// ids (featurized) or without; it returns the client configuration and the
// vocabulary.
func publishPairs(t *testing.T, n int, featurized bool) (stream.ClientConfig, []string) {
	t.Helper()
	words := func(ids []int32) []string {
		out := make([]string, len(ids))
		for i, id := range ids {
			out[i] = fmt.Sprint("w", id)
		}
		return out
	}
	rows := make([]shards.Row, n)
	for i, p := range paraphrases(rand.New(rand.NewPCG(7, 8)), n) {
		rows[i] = shards.Row{ID: fmt.Sprint("p", i), TokensA: words(p.A), TokensB: words(p.B)}
		if featurized {
			rows[i].IDsA, rows[i].IDsB = p.A, p.B
		}
	}
	vocab := make([]string, 60)
	for i := range vocab {
		vocab[i] = fmt.Sprint("w", i)
	}
	return publishRows(t, "para", rows, featurized), vocab
}

// publishRows starts an embedded broker and publishes rows as the train
// split of dataset, in three shards over two partitions; withVocab lists a
// vocabulary file in the manifest (its content does not matter to Run).
func publishRows(t testing.TB, dataset string, rows []shards.Row, withVocab bool) stream.ClientConfig {
	t.Helper()
	vocab := ""
	if withVocab {
		vocab = "#texts\t0\n"
	}
	return publishDatasets(t, []testDataset{{dataset, rows, vocab}})
}

// testDataset is a dataset publishDatasets publishes: its rows, and the
// content of its vocabulary file ("" for none).
type testDataset struct {
	name  string
	rows  []shards.Row
	vocab string
}

// publishDatasets starts an embedded broker and publishes each dataset's
// rows as its train split, in three shards over two partitions.
func publishDatasets(t testing.TB, sets []testDataset) stream.ClientConfig {
	t.Helper()
	ctx := context.Background()
	b, err := stream.StartBroker(ctx, stream.BrokerConfig{Listen: "127.0.0.1:0"})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { b.Close() })
	cc := stream.ClientConfig{Brokers: []string{b.Addr()}}
	for _, set := range sets {
		root := t.TempDir()
		rows, dataset := set.rows, set.name
		w, err := shards.NewWriter(root, dataset, "train", shards.WriterOptions{MaxRows: int64(len(rows)/3 + 1)})
		if err != nil {
			t.Fatal(err)
		}
		for i := range rows {
			r := &rows[i]
			r.Corpus, r.Dataset, r.Split = dataset, dataset, "train"
			r.A, r.B = strings.Join(r.TokensA, " "), strings.Join(r.TokensB, " ")
		}
		if err := w.Write(rows...); err != nil {
			t.Fatal(err)
		}
		infos, err := w.Close()
		if err != nil {
			t.Fatal(err)
		}
		m := shards.NewManifest([]string{"trainstep.test"})
		m.AddSplit(dataset, "train", infos...)
		if set.vocab != "" {
			if err := os.MkdirAll(filepath.Join(root, "featurize"), 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(filepath.Join(root, "featurize", "vocab.tsv"), []byte(set.vocab), 0o644); err != nil {
				t.Fatal(err)
			}
			a, err := shards.NewArtifact(root, "featurize/vocab.tsv", 0)
			if err != nil {
				t.Fatal(err)
			}
			m.Vocabulary = &a
		}
		if err := shards.WriteManifest(root, m); err != nil {
			t.Fatal(err)
		}
		if _, err := stream.Publish(ctx, root, stream.PublishConfig{Client: cc, Partitions: 2, BatchRows: 40}); err != nil {
			t.Fatal(err)
		}
	}
	return cc
}

// traceEntry is a line of the ids trace; a mix's lines also name the
// row's dataset and that dataset's own pass.
type traceEntry struct {
	step    int64
	epoch   int
	id      string
	dataset string
	pass    int
}

func readTrace(t *testing.T, path string) []traceEntry {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var out []traceEntry
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		fields := strings.Split(sc.Text(), "\t")
		if len(fields) != 3 && len(fields) != 5 {
			t.Fatalf("trace line %q", sc.Text())
		}
		step, err1 := strconv.ParseInt(fields[0], 10, 64)
		epoch, err2 := strconv.Atoi(fields[1])
		if err1 != nil || err2 != nil {
			t.Fatalf("trace line %q", sc.Text())
		}
		e := traceEntry{step: step, epoch: epoch, id: fields[2]}
		if len(fields) == 5 {
			pass, err := strconv.Atoi(fields[4])
			if err != nil {
				t.Fatalf("trace line %q", sc.Text())
			}
			e.dataset, e.pass = fields[3], pass
		}
		out = append(out, e)
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	return out
}

// TestRunResumesExactlyOnce trains two epochs in two runs: the first stops
// after 33 steps, and the second resumes from the checkpoint of step 28, as
// after a crash that lost the work of steps 29 to 33. Over both runs, with
// the lost steps' entries dropped from the trace, every row is trained once
// in each epoch. Checkpoints fall inside length windows (rows read and not
// trained) and at an epoch's end (the next epoch's first row read).
func TestRunResumesExactlyOnce(t *testing.T) {
	const rows = 1000
	cc, vocab := publishPairs(t, rows, true)
	ctx := context.Background()
	dir, trace := t.TempDir(), filepath.Join(t.TempDir(), "ids.tsv")
	cfg := trainstep.RunConfig{
		Client: cc, Dataset: "para", Run: "exactly-once", Vocab: vocab, Backend: testBackend(t),
		Model:  trainstep.Config{Dim: 8, BatchSize: 10, LR: 0.01},
		Epochs: 2, ShuffleBuffer: 100, Window: 5, CheckpointDir: dir, CheckpointEvery: 7,
		MaxSteps: 33, TraceIDs: trace,
	}
	sum, err := trainstep.Run(ctx, cfg)
	if err != nil {
		t.Fatal(err)
	}
	if sum.TotalSteps != 33 || sum.Checkpoint != filepath.Join(dir, "step-00000033") {
		t.Fatalf("first run: %+v, want 33 steps and their checkpoint", sum)
	}
	firstRun := len(readTrace(t, trace))
	const crashedAt = 28
	resume := trainstep.RunConfig{Client: cc, Dataset: "para", Resume: filepath.Join(dir, fmt.Sprintf("step-%08d", crashedAt)), Backend: testBackend(t),
		Epochs: 2, ShuffleBuffer: 100, Window: 5, CheckpointEvery: 7, TraceIDs: trace}
	sum, err = trainstep.Run(ctx, resume)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("resumed run: %+v", sum)

	// Entries of steps after the resumed checkpoint, written by the first
	// run, are the lost work: the second run trained those rows again.
	trainedOnce(t, trace, firstRun, crashedAt, rows, 2)
	if want := int64(2 * rows / 10); sum.TotalSteps != want {
		t.Errorf("%d steps in all, want %d (two epochs of %d rows in batches of 10)", sum.TotalSteps, want, rows)
	}
	ck, err := trainstep.ReadCheckpoint(sum.Checkpoint)
	if err != nil {
		t.Fatal(err)
	}
	if ck.State.Epoch != 2 || ck.Run == nil || ck.Run.Run != "exactly-once" || !ck.Run.Tokenize.Lower || ck.Run.Tokenize.StartEnd {
		t.Errorf("final checkpoint: epoch %d, run %+v", ck.State.Epoch, ck.Run)
	}

	// Every checkpoint was announced; the last as final.
	wctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	var events []stream.CheckpointEvent
	err = stream.WatchCheckpoints(wctx, cc, "", "test-watch", nil, func(_ context.Context, ev stream.CheckpointEvent) error {
		events = append(events, ev)
		if ev.Final && ev.Step == sum.TotalSteps {
			cancel()
		}
		return nil
	})
	if err != nil || len(events) == 0 || !events[len(events)-1].Final || events[len(events)-1].Dir != sum.Checkpoint {
		t.Fatalf("watching checkpoints: %v, %d events, want the final one last", err, len(events))
	}
	if events[0].Step != 7 || events[0].Run != "exactly-once" || events[0].Model != "avg" || events[0].Dataset != "para" {
		t.Errorf("first event %+v", events[0])
	}
}

// faultBackend is the CPU backend whose models fail their at-th step and
// every later one with fail's result (a non-finite loss, a graph over the
// memory budget).
type faultBackend struct {
	compute.Backend
	at   int
	fail func(*compute.Batch) (float64, error)
}

func (b faultBackend) Build(cfg compute.Config, params []compute.Tensor) (compute.Model, error) {
	m, err := b.Backend.Build(cfg, params)
	return &faultModel{Model: m, at: b.at, fail: b.fail}, err
}

type faultModel struct {
	compute.Model
	n, at int
	fail  func(*compute.Batch) (float64, error)
}

func (m *faultModel) ForwardBackward(b *compute.Batch) (float64, error) {
	if m.n++; m.n >= m.at {
		return m.fail(b)
	}
	return m.Model.ForwardBackward(b)
}

// nanBackend is the CPU backend whose models report a non-finite loss from
// their at-th step on.
func nanBackend(at int) faultBackend {
	return faultBackend{cpu.New(), at, func(*compute.Batch) (float64, error) {
		return math.NaN(), fmt.Errorf("%w: loss NaN", compute.ErrNonFinite)
	}}
}

func TestRunStopsOnNaN(t *testing.T) {
	cc, vocab := publishPairs(t, 300, true)
	dir := t.TempDir()
	_, err := trainstep.Run(context.Background(), trainstep.RunConfig{
		Client: cc, Dataset: "para", Run: "nan", Vocab: vocab, Backend: nanBackend(12),
		Model: trainstep.Config{Dim: 8, BatchSize: 10}, Epochs: 1, CheckpointDir: dir, CheckpointEvery: 5,
	})
	if !errors.Is(err, trainstep.ErrNonFinite) || !strings.Contains(err.Error(), filepath.Join(dir, "step-00000010")) {
		t.Fatalf("err %v, want ErrNonFinite naming the checkpoint of step 10", err)
	}
	t.Log(err)
	last, err := trainstep.LatestCheckpoint(dir)
	if err != nil || last != filepath.Join(dir, "step-00000010") {
		t.Errorf("latest checkpoint %q (%v), want step 10's: nothing is written after the NaN", last, err)
	}
}

func TestRunRefusesRowsWithoutIDs(t *testing.T) {
	cc, vocab := publishPairs(t, 50, false)
	_, err := trainstep.Run(context.Background(), trainstep.RunConfig{
		Client: cc, Dataset: "para", Run: "raw", Vocab: vocab, Model: trainstep.Config{Dim: 8, BatchSize: 10},
		Epochs: 1, CheckpointDir: t.TempDir(),
	})
	if !errors.Is(err, trainstep.ErrNotFeaturized) || !strings.Contains(err.Error(), "parastream featurize") {
		t.Fatalf("err %v, want ErrNotFeaturized telling to run parastream featurize", err)
	}
}

func TestWithoutRecords(t *testing.T) {
	pos := stream.Position{Topic: "t", Epoch: 2,
		Partitions: []stream.PartitionPosition{{Partition: 0, Offset: 5, Fetched: 9, End: 20}, {Partition: 1, Offset: 3, Fetched: 3, End: 10}},
		Delivered:  map[string][]stream.Range{"a": {{First: 0, End: 10}, {First: 20, End: 22}}, "b": {{First: 4, End: 5}}}}
	got := trainstep.WithoutRecords(pos, []stream.Record{
		{Shard: "a", Index: 0, Epoch: 2, Partition: 0, Offset: 7}, {Shard: "a", Index: 5, Epoch: 2, Partition: 0, Offset: 6},
		{Shard: "a", Index: 21, Epoch: 2, Partition: 1, Offset: 2}, {Shard: "b", Index: 4, Epoch: 2, Partition: 0, Offset: 8},
	})
	want := map[string][]stream.Range{"a": {{First: 1, End: 5}, {First: 6, End: 10}, {First: 20, End: 21}}}
	if fmt.Sprint(got.Delivered) != fmt.Sprint(want) {
		t.Errorf("delivered %v, want %v", got.Delivered, want)
	}
	if got.Partitions[0].Offset != 5 || got.Partitions[1].Offset != 2 || pos.Partitions[1].Offset != 3 {
		t.Errorf("offsets %+v (input now %+v): want 5 and 2, the input untouched", got.Partitions, pos.Partitions)
	}
	if len(pos.Delivered["a"]) != 2 {
		t.Errorf("the input's delivered ranges changed: %v", pos.Delivered)
	}
}

// TestRunSavesInitial writes the checkpoint of step 0 before training: the
// parameters InitParams drew, at the stream's start, announced like any.
func TestRunSavesInitial(t *testing.T) {
	cc, vocab := publishPairs(t, 100, true)
	dir := t.TempDir()
	model := trainstep.Config{Dim: 8, BatchSize: 10, Seed: 3}
	sum, err := trainstep.Run(context.Background(), trainstep.RunConfig{
		Client: cc, Dataset: "para", Run: "initial", Vocab: vocab, Model: model,
		Epochs: 1, CheckpointDir: dir, SaveInitial: true,
	})
	if err != nil {
		t.Fatal(err)
	}
	ck, err := trainstep.ReadCheckpoint(filepath.Join(dir, "step-00000000"))
	if err != nil {
		t.Fatal(err)
	}
	fresh, err := trainstep.New(model, trainstep.Options{Vocab: vocab})
	if err != nil {
		t.Fatal(err)
	}
	defer fresh.Close()
	want := fresh.Model().Params()
	for i, p := range ck.Params {
		if p.Name != want[i].Name || fmt.Sprint(p.Data) != fmt.Sprint(want[i].Data) {
			t.Fatalf("step 0's %s differs from the initial parameters", p.Name)
		}
	}
	if ck.State.Step != 0 || sum.TotalSteps != 10 {
		t.Errorf("step 0 checkpoint at step %d; run of %d steps, want 10", ck.State.Step, sum.TotalSteps)
	}
	// Resuming from step 0 trains the whole epoch.
	res, err := trainstep.Run(context.Background(), trainstep.RunConfig{Client: cc, Dataset: "para", Resume: filepath.Join(dir, "step-00000000"),
		Epochs: 1, CheckpointDir: t.TempDir()})
	if err != nil || res.Examples != 100 {
		t.Errorf("resumed from step 0: %+v, %v; want the epoch's 100 rows", res, err)
	}
}

// TestRunMinLabel trains only the rows labelled at least MinLabel (and the
// unlabelled ones), counting the others.
func TestRunMinLabel(t *testing.T) {
	rows := mixRows("r", 300, 4)
	for i := range rows {
		if i%3 != 2 {
			v := float64(i % 3) // labels 0, 1; every third row has none
			rows[i].Label = &v
		}
	}
	cc := publishRows(t, "para", rows, true)
	trace := filepath.Join(t.TempDir(), "ids.tsv")
	one := 1.0
	sum, err := trainstep.Run(context.Background(), trainstep.RunConfig{Client: cc, Dataset: "para", Run: "dups", Vocab: mixVocab(),
		Model: trainstep.Config{Dim: 8, BatchSize: 10}, Epochs: 1, CheckpointDir: t.TempDir(), MinLabel: &one, TraceIDs: trace})
	if err != nil {
		t.Fatal(err)
	}
	if sum.Filtered != 100 || sum.Examples != 200 {
		t.Errorf("filtered %d, trained %d; want 100 and 200", sum.Filtered, sum.Examples)
	}
	for _, e := range readTrace(t, trace) {
		var i int
		fmt.Sscanf(e.id, "r%d", &i)
		if i%3 == 0 {
			t.Fatalf("row %s, labelled 0, was trained", e.id)
		}
	}
}

// TestRunKeepsCheckpoints: with KeepCheckpoints 2, only the newest two
// step-N checkpoints remain, each whole (its linked vocabulary too), and
// the progress line says what each checkpoint wrote and removed.
func TestRunKeepsCheckpoints(t *testing.T) {
	cc, vocab := publishPairs(t, 100, true)
	dir := t.TempDir()
	var progress bytes.Buffer
	sum, err := trainstep.Run(context.Background(), trainstep.RunConfig{
		Client: cc, Dataset: "para", Run: "keep", Vocab: vocab, Model: trainstep.Config{Dim: 8, BatchSize: 10, LambdaW: 1e-3},
		Epochs: 1, CheckpointDir: dir, CheckpointEvery: 3, KeepCheckpoints: 2, Progress: &progress,
	})
	if err != nil {
		t.Fatal(err)
	}
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, e := range entries {
		if e.Name() != shards.LockName { // the directory's lock
			names = append(names, e.Name())
		}
	}
	if want := []string{"step-00000009", "step-00000010"}; !slices.Equal(names, want) || sum.TotalSteps != 10 {
		t.Fatalf("checkpoint directory holds %v after %d steps, want %v", names, sum.TotalSteps, want)
	}
	for _, n := range names {
		if _, err := trainstep.ReadCheckpoint(filepath.Join(dir, n)); err != nil {
			t.Errorf("%s: %v", n, err)
		}
	}
	out := progress.String()
	if !strings.Contains(out, "unchanged and linked") || !strings.Contains(out, "1 older removed (--keep-checkpoints 2)") {
		t.Errorf("progress lines do not say what the checkpoints wrote, linked and removed:\n%s", out)
	}
}
