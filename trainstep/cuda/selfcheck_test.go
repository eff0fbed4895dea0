package cuda_test

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/parastream/parastream/trainstep"
	"github.com/parastream/parastream/trainstep/compute"
	"github.com/parastream/parastream/trainstep/cuda"
)

// TestCheckCasesCoverBackend: the device check's cases are every encoder
// of the list the CUDA backend has times every loss it builds, eager and
// replayed, and each of them builds (Supports).
func TestCheckCasesCoverBackend(t *testing.T) {
	cases := cuda.CheckCases()
	losses := []string{compute.LossMargin, compute.LossHinge, compute.LossSoftmax, compute.LossSim, compute.LossMNRL}
	if want := len(gpuEncoders()) * len(losses) * 2; len(cases) != want {
		t.Fatalf("%d cases, want %d (encoders %v × losses %v × eager, graph)", len(cases), want, gpuEncoders(), losses)
	}
	seen := map[cuda.CheckCase]bool{}
	for _, c := range cases {
		seen[c] = true
	}
	for _, enc := range gpuEncoders() {
		for _, loss := range losses {
			for _, g := range []bool{false, true} {
				if c := (cuda.CheckCase{Encoder: enc, Loss: loss, Graphs: g}); !seen[c] {
					t.Errorf("no case %s", c)
				}
			}
		}
	}
}

// TestSelfCheckPasses runs the device check (cuda.DeviceCheck: every
// case, noise and regularisers on) on the test backend (the emulator, or
// the GPU with PARASTREAM_TEST_GPU): all pass, each graph case replayed
// its step.
func TestSelfCheckPasses(t *testing.T) {
	cases := cuda.CheckCases()
	if testing.Short() {
		cases = []cuda.CheckCase{{Encoder: compute.EncAvg, Loss: compute.LossMargin, Graphs: true},
			{Encoder: compute.EncGRAN, Loss: compute.LossSim}, {Encoder: compute.EncTransformer, Loss: compute.LossHinge, Graphs: true}}
	}
	cc := cuda.DeviceCheck()
	cc.Cases = cases
	rep, err := testBackend(t).SelfCheck(context.Background(), cc)
	if err != nil {
		t.Fatal(err)
	}
	if len(rep.Results) != len(cases) {
		t.Fatalf("%d results for %d cases", len(rep.Results), len(cases))
	}
	for _, r := range rep.Results {
		if !r.Pass() {
			t.Errorf("%s: %v", r.Case, r.Err)
		}
		if r.Case.Graphs && r.Replays == 0 {
			t.Errorf("%s: nothing replayed", r.Case)
		}
		if r.Compared < 3 {
			t.Errorf("%s: compared %d tensors", r.Case, r.Compared)
		}
	}
	var out strings.Builder
	if _, err := rep.WriteTo(&out); err != nil {
		t.Fatal(err)
	}
	if lines := strings.Count(out.String(), "\n"); lines < len(cases)+2 {
		t.Errorf("report of %d lines for %d cases:\n%s", lines, len(cases), out.String())
	}
	if !strings.Contains(out.String(), "0 failed") {
		t.Errorf("report:\n%s", out.String())
	}
}

// TestSelfCheckFindsPlantedFault: masked_mean's twin on the fake device
// computes 0.5/len for 1/len (the mutation that left the backend's tests
// green before). Every case of the encoders that take the mean fails and
// the report says FAIL; lstm (its last state, no mean) passes.
func TestSelfCheckFindsPlantedFault(t *testing.T) {
	b := cuda.EmulatorPlanted(cuda.Options{}, "masked_mean", 0.5)
	cases := []cuda.CheckCase{{Encoder: compute.EncAvg, Loss: compute.LossMargin}, {Encoder: compute.EncAvg, Loss: compute.LossSoftmax, Graphs: true},
		{Encoder: compute.EncLSTMAvg, Loss: compute.LossHinge}, {Encoder: compute.EncLSTM, Loss: compute.LossMargin, Graphs: true}}
	rep, err := b.SelfCheck(context.Background(), cuda.CheckConfig{Cases: cases})
	if err != nil {
		t.Fatal(err)
	}
	for i, r := range rep.Results {
		wantFail := i < 3
		if r.Pass() == wantFail {
			t.Errorf("%s: pass %v (max rel diff %.2g at %s), want %v", r.Case, r.Pass(), r.MaxRelDiff, r.Worst, !wantFail)
		}
		if wantFail && r.MaxRelDiff < 0.05 {
			t.Errorf("%s: max rel diff %.2g: the fault halves the mean", r.Case, r.MaxRelDiff)
		}
	}
	var out strings.Builder
	rep.WriteTo(&out)
	if got := strings.Count(out.String(), "FAIL"); got != 3 || !strings.Contains(out.String(), "3 failed") {
		t.Errorf("%d FAIL lines, want 3:\n%s", got, out.String())
	}
}

// TestSelfCheckFindsWrongStep: an optimiser kernel that steps 5% too
// far fails the check in the update's comparison, for Adam (its
// catch-up-free dense kernel and the sparse rows'), SGD and RMSProp.
func TestSelfCheckFindsWrongStep(t *testing.T) {
	for _, tc := range []struct{ kernel, opt, update string }{
		{"adam_rows", compute.OptAdam, compute.UpdateSparse},
		{"adam", compute.OptAdam, compute.UpdateDense},
		{"sgd", compute.OptSGD, compute.UpdateDense},
		{"rmsprop_rows", compute.OptRMSProp, compute.UpdateSparse},
	} {
		b := cuda.EmulatorPlantedUpdate(cuda.Options{}, tc.kernel, 1.05)
		train := compute.Config{Optimizer: tc.opt, EmbeddingUpdate: tc.update}
		cases := []cuda.CheckCase{{Encoder: compute.EncGRAN, Loss: compute.LossMargin}, {Encoder: compute.EncGRAN, Loss: compute.LossMargin, Graphs: true}}
		rep, err := b.SelfCheck(context.Background(), cuda.CheckConfig{Cases: cases, Train: train})
		if err != nil {
			t.Fatal(err)
		}
		for _, r := range rep.Results {
			if r.Pass() || !strings.HasPrefix(r.Worst, "the update of") {
				t.Errorf("%s %s/%s: pass %v, largest difference %.2g at %s; want a failure in an update", tc.kernel, tc.opt, tc.update, r.Pass(), r.MaxRelDiff, r.Worst)
			}
		}
	}
}

// TestStartupCheckRefuses: a training run's Build (Options.SelfCheck)
// on the faulty device refuses with one line that names the failing
// piece and the way round: --device cpu for the kernels, --tf32=false
// with TF32 on, --cuda-graphs=false when only the replay is wrong. The
// same Build on a right device builds the model.
func TestStartupCheckRefuses(t *testing.T) {
	cfg := smallModel(compute.EncAvg, compute.LossMargin, compute.NegMix)
	cfg.Dropout = 0.1
	cfg = cfg.Defaults()
	ps := params(cfg)
	for _, tc := range []struct {
		name     string
		b        *cuda.Backend
		piece    string
		wayRound string
	}{
		{"kernel", cuda.EmulatorPlanted(cuda.Options{SelfCheck: true}, "masked_mean", 0.5), "its kernels or cuBLAS", "train with --device cpu"},
		{"kernel-tf32", cuda.EmulatorPlanted(cuda.Options{SelfCheck: true, TF32: true}, "masked_mean", 0.5), "TF32", "--tf32=false, or --device cpu"},
		{"eager-only", cuda.EmulatorPlanted(cuda.Options{SelfCheck: true, NoGraphs: true}, "masked_mean", 0.5), "its kernels or cuBLAS", "train with --device cpu"},
		{"graph", cuda.EmulatorGraphFault(cuda.Options{SelfCheck: true}, "masked_mean", 0.5), "its CUDA graph replay", "--cuda-graphs=false, or --device cpu"},
		// Right numbers, but no step replayed: what is checked is what runs.
		{"no-capture", cuda.EmulatorNoCapture(cuda.Options{SelfCheck: true}), "its CUDA graph replay disagrees with the emulator (avg margin): the capture of the step of 10 rows", "--cuda-graphs=false, or --device cpu"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			m, err := tc.b.Build(cfg, ps)
			if err == nil {
				m.Close()
				t.Fatal("built a model on a device that disagrees with the emulator")
			}
			var ce *cuda.CheckError
			if !errors.As(err, &ce) || !errors.Is(err, cuda.ErrSelfCheck) {
				t.Fatalf("error %v (%T), want a *cuda.CheckError", err, err)
			}
			msg := err.Error()
			if strings.Contains(msg, "\n") || !strings.Contains(msg, tc.piece) || !strings.HasSuffix(msg, tc.wayRound) || !strings.Contains(msg, "avg margin") {
				t.Errorf("message %q: want one line naming %q, the model and ending %q", msg, tc.piece, tc.wayRound)
			}
		})
	}
	// Without the fault (and on the device with PARASTREAM_TEST_GPU) the
	// check passes and the model builds, once checked for each model.
	b := testBackendWith(t, cuda.Options{SelfCheck: true})
	for range 2 {
		m, err := b.Build(cfg, ps)
		if err != nil {
			t.Fatal(err)
		}
		m.Close()
	}
	// A graph-only fault with graphs off is not seen: the run replays nothing.
	m, err := cuda.EmulatorGraphFault(cuda.Options{SelfCheck: true, NoGraphs: true}, "masked_mean", 0.5).Build(cfg, ps)
	if err != nil {
		t.Fatalf("--cuda-graphs=false on a graph-only fault: %v", err)
	}
	m.Close()
}

// TestCheckConfigValidate: a negative tolerance and a case the backend
// does not have are refused with the fix.
func TestCheckConfigValidate(t *testing.T) {
	for _, c := range []cuda.CheckConfig{
		{Tolerance: -1},
		{Cases: []cuda.CheckCase{{Encoder: compute.EncCSAE, Loss: compute.LossMargin}}},
		{Train: compute.Config{Context: compute.ContextTopics}},
	} {
		if err := c.Validate(); err == nil {
			t.Errorf("%+v: no error", c)
		}
		if _, err := cuda.Emulator().SelfCheck(context.Background(), c); err == nil {
			t.Errorf("%+v: SelfCheck ran", c)
		}
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := cuda.Emulator().SelfCheck(ctx, cuda.CheckConfig{}); !errors.Is(err, context.Canceled) {
		t.Errorf("cancelled: %v", err)
	}
}

// TestTrainerRefusesUncheckedDevice: the trainer a `train --device cuda`
// run makes (trainstep.New over the backend that trainstep/device opens,
// with the self-check on) refuses a device that disagrees with the
// emulator before its first step, with the one-line error; on a device
// that agrees it is made and steps.
func TestTrainerRefusesUncheckedDevice(t *testing.T) {
	cfg := trainstep.Config{Encoder: compute.EncLSTMAvg, Dim: 8, Vocab: 30, BatchSize: 4}
	_, err := trainstep.New(cfg, trainstep.Options{Backend: cuda.EmulatorPlanted(cuda.Options{SelfCheck: true}, "masked_mean", 0.5)})
	if !errors.Is(err, cuda.ErrSelfCheck) || strings.Contains(err.Error(), "\n") || !strings.HasSuffix(err.Error(), "train with --device cpu") ||
		!strings.Contains(err.Error(), "lstmavg margin") {
		t.Fatalf("trainstep.New on a faulty device: %v, want the self-check's one line", err)
	}
	tr, err := trainstep.New(cfg, trainstep.Options{Backend: testBackendWith(t, cuda.Options{SelfCheck: true})})
	if err != nil {
		t.Fatal(err)
	}
	defer tr.Close()
	if _, err := tr.Step([]trainstep.Pair{{A: []int32{1, 2}, B: []int32{3}}, {A: []int32{4}, B: []int32{5, 6, 7}}}); err != nil {
		t.Fatal(err)
	}
}
