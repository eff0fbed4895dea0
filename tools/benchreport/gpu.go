package main

import (
	"encoding/json"
	"fmt"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
)

// GPUBench is scripts/gpu_bench.py's --json output: the CUDA backend's
// BenchmarkGPUTrainStep beside every PyTorch CUDA variant, per model and
// batch.
type GPUBench struct {
	Device string `json:"device"`
	Torch  string `json:"torch"`
	Steps  int    `json:"steps"`
	Rows   []struct {
		Row        string             `json:"row"`
		Parastream *float64           `json:"parastream"`
		Torch      map[string]float64 `json:"torch"`
		Strongest  *string            `json:"strongest"`
		Ratio      *float64           `json:"ratio"`
	} `json:"rows"`
	Failed []string `json:"failed"`
}

// noGPU is the GPU rows' note on a machine without an NVIDIA GPU.
const noGPU = "no NVIDIA GPU here (nvidia-smi -L lists none): on a GPU machine `make bench BENCH=GPU` fills these rows, or without Go there `make gpu-bundle` and out/gpu-bundle/run.sh (docs/gpu.md)"

// hasGPU reports whether nvidia-smi lists a GPU.
func hasGPU() bool {
	out, err := exec.Command("nvidia-smi", "-L").Output()
	return err == nil && len(out) > 0
}

// gpu is the GPU suite: on a machine with an NVIDIA GPU and a PyTorch
// with CUDA, scripts/gpu_bench.py runs trainstep/cuda's
// BenchmarkGPUTrainStep (its test binary, built here) and every PyTorch
// CUDA variant of the same models and batches; elsewhere one row says so.
func (r *runner) gpu() []Row {
	switch {
	case !hasGPU():
		return gpuRows(nil, noGPU)
	case r.torchPy == "":
		return gpuRows(nil, noTorch)
	}
	dir, err := os.MkdirTemp("", "benchreport-gpu")
	if err != nil {
		return gpuRows(nil, "failed: "+r.fail("GPU", err.Error()))
	}
	defer os.RemoveAll(dir)
	bin, js := filepath.Join(dir, "cuda.test"), filepath.Join(dir, "gpu.json")
	if out, err := exec.Command("go", "test", "-c", "-o", bin, "./trainstep/cuda/").CombinedOutput(); err != nil {
		return gpuRows(nil, "failed: "+r.fail("GPU", fmt.Sprintf("building trainstep/cuda's test binary: %v: %s", err, lastLines(string(out), 3))))
	}
	steps := strconv.Itoa(max(r.opt.steps.avg, 3))
	cmd := exec.Command(r.torchPy, "scripts/gpu_bench.py", "--go-test-binary", bin, "--steps", steps, "--json", js)
	cmd.Stdout, cmd.Stderr = os.Stderr, os.Stderr
	r.logf("%s scripts/gpu_bench.py --go-test-binary %s --steps %s --json %s", r.torchPy, bin, steps, js)
	runErr := cmd.Run() // a failed variant exits 1 after writing the JSON
	raw, err := os.ReadFile(js)
	if err != nil {
		return gpuRows(nil, "failed: "+r.fail("GPU", fmt.Sprintf("scripts/gpu_bench.py wrote no JSON (%v): %v", runErr, err)))
	}
	var gb GPUBench
	if err := json.Unmarshal(raw, &gb); err != nil {
		return gpuRows(nil, "failed: "+r.fail("GPU", "scripts/gpu_bench.py's JSON: "+err.Error()))
	}
	r.rep.Peers["gpu_bench.py"] = json.RawMessage(raw)
	if len(gb.Failed) > 0 {
		r.fail("GPU", fmt.Sprintf("PyTorch variants failed: %v", gb.Failed))
	}
	return gpuRows(&gb, "")
}

// gpuRows are gb's rows (one per model and batch: parastream's pairs/s
// beside the strongest PyTorch CUDA variant's, in one run), or one row
// with note when there is no gb.
func gpuRows(gb *GPUBench, note string) []Row {
	if gb == nil {
		return []Row{{Suite: "GPU", What: "training step on the GPU (CUDA backend)", Input: "avg, lstmavg, gran, transformer at batch 100 and 1000",
			Unit: "pairs/s", ParastreamNote: note, Peer: "PyTorch CUDA, the strongest of its variants (scripts/gpu_bench.py)", PeerNote: note}}
	}
	var rows []Row
	for _, gr := range gb.Rows {
		row := Row{Suite: "GPU", What: "training step on the GPU, " + gr.Row, Input: fmt.Sprintf("%s, STS 2012 lengths, %d steps", gb.Device, gb.Steps),
			Unit: "pairs/s", Peer: "PyTorch " + gb.Torch + " CUDA, the strongest of " + fmt.Sprint(slices.Sorted(maps.Keys(gr.Torch))), RatioHow: "same run"}
		if gr.Parastream != nil {
			row.Parastream = Summarize([]float64{*gr.Parastream})
		} else {
			row.ParastreamNote = "no figure from BenchmarkGPUTrainStep"
		}
		if gr.Strongest != nil {
			row.PeerFigure = Summarize([]float64{gr.Torch[*gr.Strongest]})
			row.Peer += " (" + *gr.Strongest + ")"
		} else {
			row.PeerNote = "no PyTorch variant ran"
		}
		if gr.Ratio != nil {
			row.Ratio = Summarize([]float64{*gr.Ratio})
		}
		rows = append(rows, row)
	}
	return rows
}
