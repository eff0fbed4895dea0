package cuda_test

import (
	"slices"
	"testing"

	"github.com/parastream/parastream/trainstep/compute"
)

// TestSnapshotWhileTraining takes a snapshot of an lstmavg model with
// Adam, the sparse embedding update (host catch-up state) and λw (initial
// embeddings), trains two more steps before waiting for it, and checks
// that Wait returns the parameters and state of the snapshot's moment,
// exactly as Params and State gave them then, in their order; that a
// second snapshot waits for Release; and that the reused buffers of the
// next snapshot hold the new values.
func TestSnapshotWhileTraining(t *testing.T) {
	cfg := smallConfig(compute.EncLSTMAvg, compute.NegMax)
	cfg.LambdaW = 0.01
	m := buildWith(t, testBackend(t), cfg, params(cfg)) // the device under PARASTREAM_TEST_GPU: its pinned copy stream (gpuCopier)
	step := func(n int64) {
		t.Helper()
		if _, err := m.ForwardBackward(batch(t, cfg, 5, uint64(n))); err != nil {
			t.Fatal(err)
		}
		if err := m.Update(n, 0.01); err != nil {
			t.Fatal(err)
		}
	}
	step(1)
	wantP, wantS := m.Params(), m.State()
	sn, err := m.(compute.Snapshotter).Snapshot()
	if err != nil {
		t.Fatal(err)
	}
	step(2)
	step(3)
	if _, err := m.(compute.Snapshotter).Snapshot(); err == nil {
		t.Fatal("a second snapshot before Release: want an error")
	}
	gotP, gotS, err := sn.Wait()
	if err != nil {
		t.Fatal(err)
	}
	same := func(what string, got, want []compute.Tensor) {
		t.Helper()
		if len(got) != len(want) {
			t.Fatalf("%s: %d tensors, want %d", what, len(got), len(want))
		}
		for i := range want {
			if got[i].Name != want[i].Name || !slices.Equal(got[i].Shape, want[i].Shape) || !slices.Equal(got[i].Data, want[i].Data) {
				t.Errorf("%s %d: %s %v differs from %s %v of the snapshot's moment", what, i, got[i].Name, got[i].Shape, want[i].Name, want[i].Shape)
			}
		}
	}
	same("params", gotP, wantP)
	same("state", gotS, wantS)
	if slices.Equal(m.Params()[0].Data, wantP[0].Data) {
		t.Fatal("the steps after the snapshot changed nothing: the test proves nothing")
	}
	sn.Release()

	nowP, nowS := m.Params(), m.State()
	sn, err = m.(compute.Snapshotter).Snapshot()
	if err != nil {
		t.Fatal(err)
	}
	gotP, gotS, err = sn.Wait()
	if err != nil {
		t.Fatal(err)
	}
	same("second snapshot's params", gotP, nowP)
	same("second snapshot's state", gotS, nowS)
	sn.Release()
}

// TestSnapshotClosedInFlight closes a model whose snapshot is not waited
// for: its copies end first, and the model closes cleanly.
func TestSnapshotClosedInFlight(t *testing.T) {
	cfg := smallConfig(compute.EncAvg, compute.NegMax)
	m, err := testBackend(t).Build(cfg, params(cfg))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := m.(compute.Snapshotter).Snapshot(); err != nil {
		t.Fatal(err)
	}
	if err := m.Close(); err != nil {
		t.Fatalf("closing with a snapshot in flight: %v", err)
	}
}
