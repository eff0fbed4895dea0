package cuda_test

import (
	"os"
	"strings"
	"testing"

	"github.com/parastream/parastream/trainstep/cuda"
)

// requireHarness, when 1 (CI sets it), makes a missing C++ compiler a
// failure of the host harness instead of a skip.
const requireHarness = "PARASTREAM_REQUIRE_CUDA_HARNESS"

// hostCompiler is the C++ compiler the harness uses; it skips the test
// where there is none (fails under requireHarness).
func hostCompiler(t *testing.T) string {
	t.Helper()
	cc := cuda.HostCompiler()
	if cc == "" {
		msg := "no C++ compiler on PATH (c++, g++ or clang++; apt-get install g++) to run the kernels' CUDA C on the host"
		if os.Getenv(requireHarness) == "1" {
			t.Fatalf("%s (%s=1 makes this a failure)", msg, requireHarness)
		}
		t.Skip(msg)
	}
	return cc
}

// TestHostHarness runs every kernel's CUDA C on the CPU (compiled with the
// machine's C++ compiler through testdata/hostshim.h) and its Go twin on
// the same inputs, on each harness case, and compares every buffer within
// the kernel's tolerance.
func TestHostHarness(t *testing.T) {
	cc := hostCompiler(t)
	results, err := cuda.RunHostHarness(cc, cuda.Source(), t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	seen := map[string]bool{}
	for _, r := range results {
		seen[r.Kernel] = true
		if r.Failed() {
			t.Errorf("C and twin disagree: %v", r)
		} else {
			t.Log(r)
		}
	}
	for _, name := range cuda.KernelNames() {
		if !seen[name] {
			t.Errorf("kernel %s did not run in the harness", name)
		}
	}
}

// TestHostHarnessCatchesPlantedFaults: faults planted in the CUDA C (and
// not in the twins) fail exactly the kernels they are in: masked_mean
// halving its mean, gather_embed reading one padded step as a word,
// relu_fwd with a parameter its twin lacks (reported, not launched with
// the wrong arguments).
func TestHostHarnessCatchesPlantedFaults(t *testing.T) {
	cc := hostCompiler(t)
	src := cuda.Source()
	for _, m := range []struct{ from, to string }{
		{"out[tid] = s * (1.0f / (float)lens[r]);", "out[tid] = s * (0.5f / (float)lens[r]);"},
		{"    if (t >= lens[r]) {\n        x[tid] = 0.0f;", "    if (t > lens[r]) {\n        x[tid] = 0.0f;"},
		{"void relu_fwd(int n, float* z)", "void relu_fwd(int n, float* z, int extra)"},
	} {
		if strings.Count(src, m.from) != 1 {
			t.Fatalf("the source has %d copies of %q: update the planted fault", strings.Count(src, m.from), m.from)
		}
		src = strings.Replace(src, m.from, m.to, 1)
	}
	results, err := cuda.RunHostHarness(cc, src, t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	failed := map[string]bool{}
	for _, r := range results {
		if r.Failed() {
			failed[r.Kernel] = true
			t.Logf("reported: %v", r)
		}
	}
	for _, want := range []string{"masked_mean", "gather_embed", "relu_fwd"} {
		if !failed[want] {
			t.Errorf("the fault planted in %s's C was not reported", want)
		}
		delete(failed, want)
	}
	for k := range failed {
		t.Errorf("kernel %s reported, but nothing was planted in it", k)
	}
}
