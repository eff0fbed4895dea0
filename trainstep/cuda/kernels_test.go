package cuda_test

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/parastream/parastream/trainstep/cuda"
)

// TestSourcesEmbedded: every kernel the Go code launches is in the
// embedded source, with the parameter list of its Go twin, and the source
// has no kernel without one.
func TestSourcesEmbedded(t *testing.T) {
	src := cuda.Source()
	for _, f := range []string{"dan.cu", "dense.cu", "embed.cu", "gran.cu", "gran3.cu", "losses.cu", "lstm.cu", "margin.cu", "optim.cu", "reduce.cu", "transformer.cu"} {
		if !strings.Contains(src, `#line 1 "kernels/`+f+`"`) {
			t.Errorf("kernels/%s not embedded", f)
		}
	}
	sigs, err := cuda.CSignatures(src)
	if err != nil {
		t.Fatal(err)
	}
	twins := cuda.KernelParams()
	for name, ps := range twins {
		c, ok := sigs[name]
		if !ok {
			t.Errorf("kernel %s: no extern \"C\" __global__ function in the source", name)
			continue
		}
		if !slices.Equal(c, ps) {
			t.Errorf("kernel %s: C parameters %v, Go twin %v", name, c, ps)
		}
	}
	for name := range sigs {
		if _, ok := twins[name]; !ok {
			t.Errorf("kernel %s in the source has no Go twin", name)
		}
	}
	if len(sigs) != len(cuda.KernelNames()) {
		t.Errorf("%d kernels in the source, %d in Go", len(sigs), len(cuda.KernelNames()))
	}
	// No shared memory or barriers: the emulator runs threads one by one.
	code := regexp.MustCompile(`//[^\n]*`).ReplaceAllString(src, "")
	for _, bad := range []string{"__shared__", "__syncthreads", "blockIdx.y", "threadIdx.y"} {
		if strings.Contains(code, bad) {
			t.Errorf("source uses %s, which the thread-by-thread emulator cannot run", bad)
		}
	}
}

// TestLaunchLimits: at the research's sizes and at a large batch (1,000
// pairs of 64 tokens, dimension 1,024, a 2M-word vocabulary for the
// optimiser), every launch has blocks of 256 threads and fits the grid.
func TestLaunchLimits(t *testing.T) {
	for _, sz := range []struct{ R, T, d, H, V int }{{200, 64, 300, 300, 100000}, {2000, 64, 1024, 1024, 2000000}} {
		n := sz.R / 2
		cases := []struct {
			name string
			ints map[int]int
			min  int // threads that must be covered
		}{
			{"gather_embed", map[int]int{0: sz.R, 1: sz.T, 2: sz.d}, sz.R * sz.T * sz.d},
			{"scatter_add_embed", map[int]int{0: sz.R, 1: sz.T, 2: sz.d}, sz.R * sz.T * sz.d},
			{"masked_mean", map[int]int{0: sz.R, 1: sz.T, 2: sz.d}, sz.R * sz.d},
			{"masked_mean_bwd", map[int]int{0: sz.R, 1: sz.T, 2: sz.d}, sz.R * sz.T * sz.d},
			{"fill_rows", map[int]int{0: sz.T * sz.R, 1: 4 * sz.H}, sz.T * sz.R * 4 * sz.H},
			{"lstm_cell_fwd", map[int]int{0: sz.R, 1: sz.H}, sz.R * sz.H},
			{"lstm_cell_bwd", map[int]int{0: sz.R, 1: sz.H}, sz.R * sz.H},
			{"gran_gate_fwd", map[int]int{0: sz.T * sz.R * sz.d}, sz.T * sz.R * sz.d},
			{"row_dot_part", map[int]int{0: sz.R, 1: sz.d}, sz.R * 32},
			{"row_normalize_apply", map[int]int{0: sz.R, 1: sz.d}, sz.R * sz.d},
			{"row_normalize_bwd_apply", map[int]int{0: sz.R, 1: sz.d}, sz.R * sz.d},
			{"col_reduce", map[int]int{0: sz.T * sz.R, 1: 4 * sz.H, 2: 64}, (sz.T*sz.R + 63) / 64 * 4 * sz.H},
			{"col_reduce", map[int]int{0: sz.T * sz.R, 1: sz.H, 2: sz.T * sz.R}, sz.H},
			{"margin_fwd", map[int]int{0: n}, 2 * n},
			{"margin_bwd", map[int]int{0: n}, 2 * n},
			{"adam", map[int]int{0: sz.V * sz.d}, sz.V * sz.d},
			{"nonfinite", map[int]int{0: sz.T * sz.R * sz.d}, sz.T * sz.R * sz.d},
			{"sumsq_grad", map[int]int{0: sz.V * sz.d}, 1},
			{"reverse_steps", map[int]int{0: sz.R, 1: sz.T, 2: sz.d}, sz.R * sz.T * sz.d},
			{"dan_sum", map[int]int{0: sz.R, 1: sz.T, 2: sz.d}, sz.R * sz.d},
			{"dan_sum_bwd", map[int]int{0: sz.R, 1: sz.T, 2: sz.d}, sz.R * sz.T * sz.d},
			{"gran3_step_fwd", map[int]int{0: sz.R, 1: sz.d}, sz.R * sz.d},
			{"gran3_step_bwd", map[int]int{0: sz.R, 1: sz.d}, sz.R * sz.d},
			{"tanh_fwd", map[int]int{0: sz.R * sz.d}, sz.R * sz.d},
			{"hinge_fwd", map[int]int{0: n, 1: sz.d, 2: 3}, n},
			{"hinge_bwd", map[int]int{0: n, 1: sz.d, 2: 3}, 2 * n * sz.d},
			{"softmax_xent_fwd", map[int]int{0: n, 1: n}, n},
			{"softmax_xent_bwd", map[int]int{0: n, 1: n}, n * n},
			{"sim_feats", map[int]int{0: n, 1: sz.d}, n * sz.d},
			// The transformer: 8 heads, positions T·R.
			{"tf_input", map[int]int{0: sz.R, 1: sz.T, 2: sz.d}, sz.R * sz.T * sz.d},
			{"layer_norm_stats", map[int]int{0: sz.T * sz.R, 1: sz.d}, sz.T * sz.R},
			{"layer_norm_apply", map[int]int{0: sz.T * sz.R, 1: sz.d}, sz.T * sz.R * sz.d},
			{"layer_norm_bwd_stats", map[int]int{0: sz.T * sz.R, 1: sz.d}, sz.T * sz.R},
			{"layer_norm_bwd", map[int]int{0: sz.T * sz.R, 1: sz.d}, sz.T * sz.R * sz.d},
			{"layer_norm_dy_xhat", map[int]int{0: sz.T * sz.R, 1: sz.d}, sz.T * sz.R * sz.d},
			{"bias_residual", map[int]int{0: sz.T * sz.R, 1: 4 * sz.d}, sz.T * sz.R * 4 * sz.d},
			{"attn_scores", map[int]int{0: sz.R, 1: sz.T, 2: sz.d, 3: 8}, sz.R * 8 * sz.T * sz.T},
			{"attn_softmax", map[int]int{0: sz.R, 1: sz.T, 2: 8}, sz.R * 8 * sz.T},
			{"attn_pv", map[int]int{0: sz.R, 1: sz.T, 2: sz.d, 3: 8}, sz.R * sz.T * sz.d},
			{"attn_scores_bwd", map[int]int{0: sz.R, 1: sz.T, 2: sz.d, 3: 8}, sz.R * 8 * sz.T},
			{"attn_qkv_bwd", map[int]int{0: sz.R, 1: sz.T, 2: sz.d, 3: 8}, sz.R * sz.T * 3 * sz.d},
		}
		for _, c := range cases {
			grid, block, err := cuda.LaunchBlocks(c.name, c.ints)
			if err != nil {
				t.Errorf("%s: %v", c.name, err)
				continue
			}
			if block != cuda.BlockSize || block > 1024 || grid < 1 || grid > 1<<31-1 || grid*block < c.min {
				t.Errorf("%s at %+v: %d blocks of %d for %d threads", c.name, sz, grid, block, c.min)
			}
		}
	}
	if _, _, err := cuda.LaunchBlocks("adam", map[int]int{0: -1}); err == nil {
		t.Error("a negative thread count launched")
	}
}

// requireNVRTC, when 1 (CI sets it), makes a missing NVRTC a failure of
// TestNVRTCCompiles instead of a skip.
const requireNVRTC = "PARASTREAM_REQUIRE_NVRTC"

func TestCompileOptionsAndArch(t *testing.T) {
	opts := cuda.CompileOptions(90)
	if opts[0] != "--gpu-architecture=compute_90" {
		t.Errorf("options %v", opts)
	}
	for _, o := range opts {
		if strings.Contains(o, "fast_math") || strings.Contains(o, "ftz") {
			t.Errorf("option %s loosens float32 accuracy", o)
		}
	}
	supported := []int{50, 52, 53, 60, 61, 62, 70, 72, 75, 80, 86, 87, 89, 90}
	for _, c := range []struct{ major, minor, want int }{{9, 0, 90}, {8, 6, 86}, {8, 9, 89}, {10, 0, 90}, {12, 0, 90}, {7, 5, 75}, {6, 1, 61}} {
		got, err := cuda.ChooseArch(c.major, c.minor, supported)
		if err != nil || got != c.want {
			t.Errorf("compute %d.%d: arch %d, %v; want %d", c.major, c.minor, got, err, c.want)
		}
	}
	if _, err := cuda.ChooseArch(3, 5, supported); !errors.Is(err, cuda.ErrNoDevice) {
		t.Errorf("compute 3.5 with NVRTC from 5.0: %v", err)
	}
}

// TestNVRTCCompiles compiles the embedded kernels to PTX with the NVRTC
// found on this machine (Debian's libnvrtc11.2 from non-free, CUDA 11.8,
// or a toolkit or pip wheel), for the oldest and newest architectures it
// supports (CUDA 13's NVRTC starts at compute_75, 11.2's at compute_35)
// and for the GPU machines' H100 and H200 (compute_90): every kernel must
// be an entry of the PTX. It needs no GPU; it skips without NVRTC, and
// fails instead under PARASTREAM_REQUIRE_NVRTC=1 (CI installs Debian's).
func TestNVRTCCompiles(t *testing.T) {
	env := cuda.EnvFromOS("")
	_, version, archs, err := cuda.CompileKernels(env, 0)
	var le *cuda.LibraryError
	if errors.As(err, &le) {
		msg := fmt.Sprintf("no NVRTC here (apt-get install libnvrtc11.2 from Debian non-free, or pip install nvidia-cuda-nvrtc-cu12): %v", err)
		if os.Getenv(requireNVRTC) == "1" {
			t.Fatalf("%s (%s=1 makes this a failure)", msg, requireNVRTC)
		}
		t.Skip(msg)
	}
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("NVRTC %s, architectures %v", version, archs)
	want := []int{archs[0], archs[len(archs)-1]}
	if slices.Contains(archs, 90) {
		want = append(want, 90)
	}
	entry := regexp.MustCompile(`\.visible \.entry (\w+)\(`)
	for _, arch := range want {
		ptx, _, _, err := cuda.CompileKernels(env, arch)
		if err != nil {
			t.Fatalf("compute_%d: %v", arch, err)
		}
		if !strings.Contains(ptx, ".target sm_"+strconv.Itoa(arch)) {
			t.Errorf("compute_%d: PTX does not target sm_%d", arch, arch)
		}
		var got []string
		for _, m := range entry.FindAllStringSubmatch(ptx, -1) {
			got = append(got, m[1])
		}
		names := cuda.KernelNames()
		slices.Sort(got)
		slices.Sort(names)
		if !slices.Equal(got, names) {
			t.Errorf("compute_%d: PTX entries %v, want %v", arch, got, names)
		}
	}
	// The cache: compiled once, then read back.
	dir := t.TempDir()
	first, cached, err := cuda.CachedPTX(env, dir, archs[0])
	if err != nil || cached {
		t.Fatalf("first compile: cached %v, %v", cached, err)
	}
	second, cached, err := cuda.CachedPTX(env, dir, archs[0])
	if err != nil || !cached || second != first {
		t.Fatalf("second compile: cached %v, same %v, %v", cached, second == first, err)
	}
	files, _ := filepath.Glob(filepath.Join(dir, "*.ptx"))
	if len(files) != 1 {
		t.Errorf("cache holds %v", files)
	}
	if _, _, err := cuda.CachedPTX(env, dir, archs[len(archs)-1]); err != nil {
		t.Fatal(err)
	}
	if files, _ := filepath.Glob(filepath.Join(dir, "*.ptx")); len(files) != 2 {
		t.Errorf("another architecture shares a cache entry: %v", files)
	}
	_ = os.RemoveAll(dir)
}
