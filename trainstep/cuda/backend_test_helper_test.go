package cuda_test

import (
	"os"
	"testing"

	"github.com/parastream/parastream/trainstep/cuda"
)

// testBackend is the backend the CPU-comparison tests run on: the host
// emulator, or the real device (cuda.Open on cuda:0) when
// PARASTREAM_TEST_GPU=1.
func testBackend(t *testing.T) *cuda.Backend {
	t.Helper()
	return testBackendWith(t, cuda.Options{})
}

// testBackendWith is testBackend with opts (NoGraphs, MaxGraphs, TF32).
func testBackendWith(t *testing.T, opts cuda.Options) *cuda.Backend {
	t.Helper()
	if os.Getenv("PARASTREAM_TEST_GPU") != "1" {
		return cuda.EmulatorWith(opts)
	}
	opts.Env = cuda.EnvFromOS("")
	b, err := cuda.Open(opts)
	if err != nil {
		t.Fatalf("PARASTREAM_TEST_GPU=1 but no device: %v", err)
	}
	t.Cleanup(func() {
		if err := b.Close(); err != nil {
			t.Errorf("closing %s: %v", b.Name(), err)
		}
	})
	return b
}

// onGPU reports whether the tests run on the real device.
func onGPU() bool { return os.Getenv("PARASTREAM_TEST_GPU") == "1" }
