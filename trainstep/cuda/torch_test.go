package cuda_test

import (
	"cmp"
	"encoding/json"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/parastream/parastream/internal/testenv"
	"github.com/parastream/parastream/trainstep/compute"
)

// TestTransformerMatchesPyTorch embeds sentences with the CUDA backend's
// transformer (testBackend) and has scripts/gpu_bench.py
// --check-transformer load the same parameters into PyTorch's
// nn.TransformerEncoder (norm_first=True: the model gpu_bench.py sets
// beside it) and compare, in float64 on the CPU: the formulas of
// compute/transformer.go checked against an implementation that is not
// ours, and the speed bar shown to be the same model. It needs a python3
// with PyTorch (Debian's python3-torch) and skips without one, and
// under -short (importing PyTorch takes seconds: make test-long runs it).
// $PYTHON names another python3.
func TestTransformerMatchesPyTorch(t *testing.T) {
	if testing.Short() {
		t.Skip("loads PyTorch: a long test")
	}
	script := filepath.Join(testenv.Root(), "scripts", "gpu_bench.py")
	if _, err := os.Stat(script); err != nil {
		t.Skipf("no scripts/gpu_bench.py (a test binary run outside the repository, as the GPU bundle's): %v", err)
	}
	py := cmp.Or(os.Getenv("PYTHON"), "/usr/bin/python3") // the GPU bundle's run.sh passes the python3 it found
	if err := exec.Command(py, "-c", "import torch").Run(); err != nil {
		t.Skipf("%s has no torch (apt-get install python3-torch): %v", py, err)
	}
	cfg := compute.Config{Encoder: compute.EncTransformer, Dim: 8, Vocab: 31, TFLayers: 2, TFHeads: 2, TFFilter: 12,
		BatchSize: 4, BucketWidth: 4, Seed: 5}.Defaults()
	rng := rand.New(rand.NewPCG(5, 6))
	ps := compute.InitParams(cfg, rng)
	for i := range ps { // gains and biases away from 1 and 0
		for j := range ps[i].Data {
			ps[i].Data[j] += float32(rng.Float64()-0.5) / 2
		}
	}
	m := buildWith(t, testBackend(t), cfg, ps)
	var seqs [][]int32
	for i := range 7 {
		s := make([]int32, 1+(i*4)%9)
		for j := range s {
			s[j] = rng.Int32N(int32(cfg.Vocab))
		}
		seqs = append(seqs, s)
	}
	emb, err := m.Embed(seqs)
	if err != nil {
		t.Fatal(err)
	}
	params := map[string][]float32{}
	for _, p := range ps {
		params[p.Name] = p.Data
	}
	data, err := json.Marshal(map[string]any{"dim": cfg.Dim, "layers": cfg.TFLayers, "heads": cfg.TFHeads, "filter": cfg.TFFilter,
		"vocab": cfg.Vocab, "params": params, "seqs": seqs, "emb": emb})
	if err != nil {
		t.Fatal(err)
	}
	file := filepath.Join(t.TempDir(), "transformer.json")
	if err := os.WriteFile(file, data, 0o644); err != nil {
		t.Fatal(err)
	}
	out, err := exec.Command(py, script, "--check-transformer", file).CombinedOutput()
	if err != nil || !strings.Contains(string(out), ": ok") {
		t.Fatalf("gpu_bench.py --check-transformer: %v\n%s", err, out)
	}
	t.Logf("%s", strings.TrimSpace(string(out)))
}
