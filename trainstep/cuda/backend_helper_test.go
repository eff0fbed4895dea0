package cuda_test

import (
	"fmt"
	"os"
	"strings"
	"sync"
	"testing"

	"github.com/parastream/parastream/trainstep/cuda"
)

// gpuTestEnv is the switch that runs the CPU-comparison tests on the real
// device instead of the kernel emulator: PARASTREAM_TEST_GPU=1 (cuda:0),
// or =cuda:N for another GPU. The GPU bundle's run.sh sets it
// (docs/gpu.md, "Running on a GPU machine (the bundle)").
const gpuTestEnv = "PARASTREAM_TEST_GPU"

var gpuOnce struct {
	sync.Once
	b   *cuda.Backend
	err error
}

// gpuRequested reports whether PARASTREAM_TEST_GPU asks for the device,
// and which ordinal.
func gpuRequested() (ordinal int, ok bool) {
	v := strings.TrimSpace(os.Getenv(gpuTestEnv))
	switch v {
	case "", "0", "false", "no":
		return 0, false
	case "1", "true", "yes", "cuda":
		return 0, true
	}
	if _, err := fmt.Sscanf(strings.TrimPrefix(v, "cuda:"), "%d", &ordinal); err != nil || ordinal < 0 {
		panic(fmt.Sprintf("cuda_test: %s=%q: want 1 (cuda:0) or cuda:N", gpuTestEnv, v))
	}
	return ordinal, true
}

// testBackend is the backend every CPU-comparison test builds the CUDA
// model code on: the kernel emulator (cuda.Emulator), or with
// PARASTREAM_TEST_GPU set the GPU (cuda.Open), opened once for the test
// binary and shared (models built on it are closed by their tests; the
// backend lives until the process ends). With the switch set and no
// usable GPU the test fails with the loader's message: asking for the
// device and not getting it is an error, not a skip. The tolerances
// (closeTo) are float32's on both.
func testBackend(t testing.TB) *cuda.Backend {
	t.Helper()
	ordinal, ok := gpuRequested()
	if !ok {
		return cuda.Emulator()
	}
	gpuOnce.Do(func() {
		gpuOnce.b, gpuOnce.err = cuda.Open(cuda.Options{Device: ordinal, Env: cuda.EnvFromOS("")})
	})
	if gpuOnce.err != nil {
		t.Fatalf("%s=%s asks for the GPU, and it cannot be opened: %v", gpuTestEnv, os.Getenv(gpuTestEnv), gpuOnce.err)
	}
	return gpuOnce.b
}

// testBackendWith is testBackend with opts (NoGraphs, MaxGraphs, TF32):
// the emulator with them, or on the device a backend of its own, opened
// with them and closed when the test ends.
func testBackendWith(t testing.TB, opts cuda.Options) *cuda.Backend {
	t.Helper()
	ordinal, ok := gpuRequested()
	if !ok {
		return cuda.EmulatorWith(opts)
	}
	opts.Device, opts.Env = ordinal, cuda.EnvFromOS("")
	b, err := cuda.Open(opts)
	if err != nil {
		t.Fatalf("%s=%s asks for the GPU, and it cannot be opened: %v", gpuTestEnv, os.Getenv(gpuTestEnv), err)
	}
	t.Cleanup(func() {
		if err := b.Close(); err != nil {
			t.Errorf("closing %s: %v", b.Name(), err)
		}
	})
	return b
}

// onGPU reports whether the tests run on the real device.
func onGPU() bool { _, ok := gpuRequested(); return ok }
