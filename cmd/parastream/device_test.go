package main

import (
	"bytes"
	"context"
	"errors"
	"flag"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/parastream/parastream/cmd/parastream/internal/cli"
	"github.com/parastream/parastream/trainstep/compute"
	"github.com/parastream/parastream/trainstep/cpu"
	"github.com/parastream/parastream/trainstep/cpu/cblas"
	"github.com/parastream/parastream/trainstep/cuda"
	"github.com/parastream/parastream/trainstep/device"
)

// skipWithGPU skips tests of what happens without a GPU on a machine
// that has one.
func skipWithGPU(t *testing.T) {
	t.Helper()
	if b, err := cuda.Open(cuda.Options{Env: cuda.EnvFromOS(""), CacheDir: "-"}); err == nil {
		b.Close()
		t.Skip("a GPU is usable here")
	}
}

// fakeDriverDir holds a file named libcuda.so.1 that is not a library.
func fakeDriverDir(t *testing.T) string {
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "libcuda.so.1"), bytes.Repeat([]byte("not a library\n"), 100), 0o644); err != nil {
		t.Fatal(err)
	}
	return dir
}

// TestTrainDeviceCUDAFails: --device cuda without a usable driver fails
// before any broker is dialled, with the loader's message.
func TestTrainDeviceCUDAFails(t *testing.T) {
	skipWithGPU(t)
	dir := fakeDriverDir(t)
	code, _, errOut := runCLI(t, "train", "--brokers", "127.0.0.1:1", "--dataset", "x", "--device", "cuda:1", "--cuda-lib-dir", dir)
	if code != 1 || !strings.Contains(errOut, "--device cuda:1") || !strings.Contains(errOut, filepath.Join(dir, "libcuda.so.1")) ||
		!strings.Contains(errOut, "not loadable") {
		t.Errorf("exit %d, stderr %q", code, errOut)
	}
	if code, _, errOut := runCLI(t, "train", "--brokers", "127.0.0.1:1", "--dataset", "x", "--device", "tpu"); code != 2 || !strings.Contains(errOut, "cpu, cuda, cuda:N or auto") {
		t.Errorf("--device tpu: exit %d, stderr %q", code, errOut)
	}
}

// TestDeviceAuto: without a GPU, auto is the CPU with a one-line note, and
// one on the memory budget.
func TestDeviceAuto(t *testing.T) {
	skipWithGPU(t)
	fs := flag.NewFlagSet("x", flag.ContinueOnError)
	d := addDeviceFlags(fs)
	if err := fs.Parse([]string{"--device", "auto", "--cuda-lib-dir", fakeDriverDir(t), "--blas", "go"}); err != nil {
		t.Fatal(err)
	}
	var note bytes.Buffer
	b, release, err := d.backend(&note, nil)
	if c, ok := b.(*cpu.Backend); err != nil || !ok || c.MemoryBudget <= 0 {
		t.Fatalf("backend %#v, %v; want the CPU backend with a budget", b, err)
	}
	defer release()
	if n := strings.Count(note.String(), "\n"); n != 2 || !strings.Contains(note.String(), "training on the CPU") || !strings.Contains(note.String(), "libcuda.so.1") ||
		!strings.Contains(note.String(), "memory budget") {
		t.Errorf("note %q", note.String())
	}
}

// TestNoCgoBinary builds parastream with CGO_ENABLED=0 and runs its train
// --device cuda: the binary dlopens through purego without cgo and says
// what is missing.
func TestNoCgoBinary(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the binary")
	}
	skipWithGPU(t)
	bin := filepath.Join(t.TempDir(), "parastream")
	cmd := exec.Command("go", "build", "-o", bin, ".")
	cmd.Env = append(os.Environ(), "CGO_ENABLED=0")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("CGO_ENABLED=0 go build: %v\n%s", err, out)
	}
	dir := fakeDriverDir(t)
	run := exec.Command(bin, "train", "--brokers", "127.0.0.1:1", "--dataset", "x", "--device", "cuda")
	run.Env = append(os.Environ(), cuda.LibDirEnv+"="+dir)
	var errb bytes.Buffer
	run.Stdout, run.Stderr = io.Discard, &errb
	err := run.Run()
	var ee *exec.ExitError
	if !errors.As(err, &ee) || ee.ExitCode() != 1 || !strings.Contains(errb.String(), filepath.Join(dir, "libcuda.so.1")) {
		t.Errorf("exit %v, stderr %q", err, errb.String())
	}
}

// TestMaxGraphsFlag: --max-graphs bounds the CPU backend's graphs, on
// --device cpu and when auto falls back to the CPU; a negative bound is a
// usage error.
func TestMaxGraphsFlag(t *testing.T) {
	skipWithGPU(t)
	for _, args := range [][]string{{"--max-graphs", "3"}, {"--device", "auto", "--cuda-lib-dir", fakeDriverDir(t), "--max-graphs", "3"}} {
		fs := flag.NewFlagSet("x", flag.ContinueOnError)
		d := addDeviceFlags(fs)
		if err := fs.Parse(args); err != nil {
			t.Fatal(err)
		}
		b, release, err := d.backend(io.Discard, nil)
		if err != nil {
			t.Fatal(err)
		}
		release()
		if c, ok := b.(*cpu.Backend); !ok || c.MaxGraphs != 3 {
			t.Errorf("%v: backend %#v, want the CPU backend bounded to 3 graphs", args, b)
		}
	}
	fs := flag.NewFlagSet("x", flag.ContinueOnError)
	d := addDeviceFlags(fs)
	if err := fs.Parse([]string{"--max-graphs", "-1"}); err != nil {
		t.Fatal(err)
	}
	if _, _, err := d.backend(io.Discard, nil); !errors.Is(err, cli.ErrUsage) {
		t.Errorf("--max-graphs -1: %v, want a usage error", err)
	}
}

// TestCUDAFlags: CUDA graphs are on and TF32 off unless the flags say
// otherwise.
func TestCUDAFlags(t *testing.T) {
	for _, c := range []struct {
		args           []string
		noGraphs, tf32 bool
	}{
		{nil, false, false},
		{[]string{"--cuda-graphs=false"}, true, false},
		{[]string{"--tf32"}, false, true},
		{[]string{"--cuda-graphs=false", "--tf32"}, true, true},
	} {
		fs := flag.NewFlagSet("x", flag.ContinueOnError)
		d := addDeviceFlags(fs)
		if err := fs.Parse(c.args); err != nil {
			t.Fatal(err)
		}
		o := d.CUDAOptions(1, nil)
		if o.NoGraphs != c.noGraphs || o.TF32 != c.tf32 || o.Device != 1 {
			t.Errorf("%v: options %+v, want NoGraphs %v, TF32 %v on cuda:1", c.args, o, c.noGraphs, c.tf32)
		}
	}
}

// TestBLASFlag: --blas openblas where the library does not load fails
// before any broker is dialled, naming what it tried; auto falls back to
// gonum with a one-line note; go needs no library; a bad value is a usage
// error.
func TestBLASFlag(t *testing.T) {
	defer cpu.UseBLAS(cpu.BLASAuto, cblas.Options{}) // the process's BLAS, for the tests after
	missing := filepath.Join(t.TempDir(), "libopenblas.so.0")
	t.Setenv(cblas.LibEnv, missing)
	code, _, errOut := runCLI(t, "train", "--brokers", "127.0.0.1:1", "--dataset", "x", "--blas", "openblas")
	if code != 1 || !strings.Contains(errOut, "--blas openblas") || !strings.Contains(errOut, missing) || !strings.Contains(errOut, "apt-get install libopenblas0") {
		t.Errorf("--blas openblas without the library: exit %d, stderr %q", code, errOut)
	}
	for _, c := range []struct {
		blas, note string
	}{{"auto", "no OpenBLAS found"}, {"go", ""}} {
		fs := flag.NewFlagSet("x", flag.ContinueOnError)
		d := addDeviceFlags(fs)
		if err := fs.Parse([]string{"--blas", c.blas}); err != nil {
			t.Fatal(err)
		}
		var note bytes.Buffer
		if _, release, err := d.backend(&note, nil); err != nil {
			t.Fatalf("--blas %s: %v", c.blas, err)
		} else {
			release()
		}
		blasLines := 0
		for _, line := range strings.Split(note.String(), "\n") {
			if strings.Contains(line, "BLAS") {
				blasLines++
			}
		}
		if c.note == "" && blasLines > 0 || c.note != "" && (blasLines != 1 || !strings.Contains(note.String(), c.note)) {
			t.Errorf("--blas %s: note %q", c.blas, note.String())
		}
		if got := cpu.BLAS(); got.Name != "gonum" {
			t.Errorf("--blas %s without a library: BLAS %v", c.blas, got)
		}
	}
	if code, _, errOut := runCLI(t, "train", "--brokers", "127.0.0.1:1", "--dataset", "x", "--blas", "mkl"); code != 2 || !strings.Contains(errOut, "auto, go or openblas") {
		t.Errorf("--blas mkl: exit %d, stderr %q", code, errOut)
	}
}

// TestMemoryBudgetFlag: --memory-budget is a size, by default 1/8 of the
// memory the process may use, of which the CPU backend gets all but the
// reserve; sizes too small to leave the model anything, or unreadable, are
// usage errors.
func TestMemoryBudgetFlag(t *testing.T) {
	for _, tc := range []struct {
		arg  string
		want int64
	}{{"0", (24 << 30) / 8}, {"4GiB", 4 << 30}, {"3000MB", 3e9}} {
		fs := flag.NewFlagSet("x", flag.ContinueOnError)
		d := addDeviceFlags(fs)
		d.Limit = func() (int64, error) { return 24 << 30, nil }
		if err := fs.Parse([]string{"--memory-budget", tc.arg, "--max-graphs", "2"}); err != nil {
			t.Fatal(err)
		}
		var note bytes.Buffer
		b, release, err := d.backend(&note, nil)
		if err != nil {
			t.Fatal(err)
		}
		release()
		if c, ok := b.(*cpu.Backend); !ok || c.MemoryBudget != tc.want-device.MemoryReserve || c.MaxGraphs != 2 {
			t.Errorf("--memory-budget %s: backend %#v, want the CPU backend with %d bytes", tc.arg, b, tc.want-device.MemoryReserve)
		}
		if !strings.Contains(note.String(), "memory budget "+compute.FormatBytes(tc.want)) {
			t.Errorf("--memory-budget %s: note %q", tc.arg, note.String())
		}
	}
	for _, arg := range []string{"512MiB", "-1", "lots", "4 parsecs"} {
		fs := flag.NewFlagSet("x", flag.ContinueOnError)
		d := addDeviceFlags(fs)
		if err := fs.Parse([]string{"--memory-budget", arg}); err != nil {
			t.Fatal(err)
		}
		if _, _, err := d.backend(io.Discard, nil); !errors.Is(err, cli.ErrUsage) || !strings.Contains(err.Error(), "--memory-budget") {
			t.Errorf("--memory-budget %s: %v, want a usage error naming the flag", arg, err)
		}
	}
	fs := flag.NewFlagSet("x", flag.ContinueOnError)
	d := addDeviceFlags(fs)
	d.Limit = func() (int64, error) { return 0, errors.New("no /proc") }
	if _, _, err := d.backend(io.Discard, nil); err == nil || !strings.Contains(err.Error(), "give --memory-budget") {
		t.Errorf("no memory figure: %v", err)
	}
}

// TestTrainMemoryBudgetTooSmall: train with a budget that cannot hold the
// graph of one batch fails at once, naming --memory-budget and --batch,
// and writes no checkpoint.
func TestTrainMemoryBudgetTooSmall(t *testing.T) {
	bin := binary(t)
	root := writeFeaturized(t, 200, 0)
	b := startBrokerProc(t, bin, "127.0.0.1:0", t.TempDir())
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	if out, err := exec.CommandContext(ctx, bin, "publish", "--shards", root, "--brokers", b.addr, "--quiet").CombinedOutput(); err != nil {
		t.Fatalf("publish: %v\n%s", err, out)
	}
	dir := filepath.Join(t.TempDir(), "ck")
	start := time.Now()
	out, err := exec.CommandContext(ctx, bin, "train", "--brokers", b.addr, "--dataset", "para", "--run", "small", "--model", "gran",
		"--batch", "100", "--memory-budget", "560MiB", "--checkpoint-dir", dir).CombinedOutput()
	var ee *exec.ExitError
	if !errors.As(err, &ee) || ee.ExitCode() != 1 || !strings.Contains(string(out), "--memory-budget (now 560.0 MiB)") ||
		!strings.Contains(string(out), "--batch (now 100)") || !strings.Contains(string(out), "202 rows of 64 steps") {
		t.Fatalf("exit %v, output %s", err, out)
	}
	t.Logf("%s in %v", out, time.Since(start))
	if _, err := os.Stat(dir); !os.IsNotExist(err) {
		t.Errorf("checkpoint directory: %v", err)
	}
}
