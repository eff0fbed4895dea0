package trainstep_test

import (
	"fmt"
	"os"
	"strings"
	"sync"
	"testing"

	"github.com/parastream/parastream/trainstep/compute"
	"github.com/parastream/parastream/trainstep/cuda"
)

// gpuTestEnv is the switch that runs the tests that take testBackend on
// the GPU instead of the CPU backend: PARASTREAM_TEST_GPU=1 (cuda:0), or
// =cuda:N. trainstep/cuda's tests have the same switch; the GPU bundle's
// run.sh sets it (docs/gpu.md, "Running on a GPU machine (the bundle)").
const gpuTestEnv = "PARASTREAM_TEST_GPU"

var gpuOnce struct {
	sync.Once
	b   *cuda.Backend
	err error
}

// testBackend is the backend of the training-loop tests that hold on any
// device (exactly once across a resume, checkpoints): nil, the gorgonia
// CPU backend, or with PARASTREAM_TEST_GPU set the GPU, opened once for
// the test binary and shared. With the switch set and no usable GPU the
// test fails with the loader's message.
func testBackend(t testing.TB) compute.Backend {
	t.Helper()
	v := strings.TrimSpace(os.Getenv(gpuTestEnv))
	ordinal := 0
	switch v {
	case "", "0", "false", "no":
		return nil
	case "1", "true", "yes", "cuda":
	default:
		if _, err := fmt.Sscanf(strings.TrimPrefix(v, "cuda:"), "%d", &ordinal); err != nil || ordinal < 0 {
			t.Fatalf("%s=%q: want 1 (cuda:0) or cuda:N", gpuTestEnv, v)
		}
	}
	gpuOnce.Do(func() {
		gpuOnce.b, gpuOnce.err = cuda.Open(cuda.Options{Device: ordinal, Env: cuda.EnvFromOS("")})
	})
	if gpuOnce.err != nil {
		t.Fatalf("%s=%s asks for the GPU, and it cannot be opened: %v", gpuTestEnv, v, gpuOnce.err)
	}
	return gpuOnce.b
}
