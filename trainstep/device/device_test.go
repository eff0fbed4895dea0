package device_test

import (
	"bytes"
	"errors"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/parastream/parastream/trainstep/compute"
	"github.com/parastream/parastream/trainstep/cpu"
	"github.com/parastream/parastream/trainstep/cuda"
	"github.com/parastream/parastream/trainstep/device"
)

func TestParseDevice(t *testing.T) {
	for _, c := range []struct {
		in      string
		kind    string
		ordinal int
		bad     bool
	}{
		{"cpu", "cpu", 0, false}, {"auto", "auto", 0, false}, {"cuda", "cuda", 0, false}, {"cuda:3", "cuda", 3, false},
		{"cuda:", "", 0, true}, {"cuda:-1", "", 0, true}, {"gpu", "", 0, true}, {"", "", 0, true},
	} {
		kind, n, err := device.Parse(c.in)
		if (err != nil) != c.bad || kind != c.kind || n != c.ordinal {
			t.Errorf("%q: %s %d %v", c.in, kind, n, err)
		}
		var bad *device.InvalidError
		if err != nil && !errors.As(err, &bad) {
			t.Errorf("%q: %v is not an InvalidError (a usage error)", c.in, err)
		}
	}
}

// TestDeviceAutoModels: --device auto trains every encoder and loss on
// the GPU backend (here its emulator) and only a topic context on the
// CPU, with a note that says so.
func TestDeviceAutoModels(t *testing.T) {
	emu := cuda.Emulator()
	defer emu.Close()
	for _, c := range []struct {
		cfg   compute.Config
		onGPU bool
	}{
		{compute.Config{Encoder: compute.EncDAN, Loss: compute.LossSim, Vocab: 10, BigramBuckets: 7}, true},
		{compute.Config{Encoder: compute.EncBiGRAN, Loss: compute.LossHinge, Vocab: 10}, true},
		{compute.Config{Encoder: compute.EncDAN, Loss: compute.LossSim, Context: compute.ContextTopics, Topics: 3, Vocab: 10, BigramBuckets: 7}, false},
	} {
		cfg := c.cfg.Defaults()
		if err := cfg.Validate(); err != nil {
			t.Fatal(err)
		}
		var note bytes.Buffer
		a := device.NewAuto(emu, &cpu.Backend{}, &note)
		m, err := a.Build(cfg, compute.InitParams(cfg, rand.New(rand.NewPCG(1, 2))))
		if err != nil {
			t.Fatalf("%s/%s context %q: %v", cfg.Encoder, cfg.Loss, cfg.Context, err)
		}
		m.Close()
		if gpu := a.Used() == compute.Backend(emu); gpu != c.onGPU {
			t.Errorf("%s/%s context %q: on the GPU %v, want %v (note %q)", cfg.Encoder, cfg.Loss, cfg.Context, gpu, c.onGPU, note.String())
		}
		if c.onGPU != (note.Len() == 0) || (!c.onGPU && !strings.Contains(note.String(), "topics context is not on the GPU backend; training on the CPU")) {
			t.Errorf("%s/%s context %q: note %q", cfg.Encoder, cfg.Loss, cfg.Context, note.String())
		}
	}
}

// TestValidate: each setting that cannot work is an *InvalidError whose
// message names the flag and the fix.
func TestValidate(t *testing.T) {
	ok := device.Config{Device: "cpu", BLAS: cpu.BLASAuto, MemoryBudget: "0"}
	if err := ok.Validate(); err != nil {
		t.Fatalf("%+v: %v", ok, err)
	}
	for _, c := range []struct {
		edit func(*device.Config)
		want string
	}{
		{func(c *device.Config) { c.Device = "gpu" }, `--device "gpu": use cpu, cuda, cuda:N or auto`},
		{func(c *device.Config) { c.MaxGraphs = -1 }, "--max-graphs -1: use 0 for no bound"},
		{func(c *device.Config) { c.BLAS = "mkl" }, `--blas "mkl": use auto, go or openblas`},
		{func(c *device.Config) { c.BLASThreads = -2 }, "--blas-threads -2: use 0"},
		{func(c *device.Config) { c.MemoryBudget = "100MB" }, "--memory-budget 100MB: give more than"},
	} {
		cfg := ok
		c.edit(&cfg)
		err := cfg.Validate()
		var bad *device.InvalidError
		if !errors.As(err, &bad) || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%+v: got %v, want an InvalidError saying %q", cfg, err, c.want)
		}
	}
}

// TestCUDAOptionsSelfCheck: a training run opens the GPU with the
// start-up self-check on (cuda's TestStartupCheckRefuses: a device that
// disagrees with the emulator is refused at Build), with its graphs and
// TF32 settings, which the check runs with.
func TestCUDAOptionsSelfCheck(t *testing.T) {
	for _, c := range []device.Config{{CUDAGraphs: true}, {TF32: true}} {
		o := c.CUDAOptions(2, nil)
		if !o.SelfCheck || o.Device != 2 || o.NoGraphs == c.CUDAGraphs || o.TF32 != c.TF32 {
			t.Errorf("%+v: options %+v", c, o)
		}
	}
}
