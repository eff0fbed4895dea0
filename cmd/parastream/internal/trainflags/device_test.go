package trainflags_test

import (
	"flag"
	"testing"

	"github.com/parastream/parastream/cmd/parastream/internal/trainflags"
	"github.com/parastream/parastream/trainstep/cpu"
	"github.com/parastream/parastream/trainstep/device"
)

func TestDeviceFlags(t *testing.T) {
	var c device.Config
	fs := flag.NewFlagSet("train", flag.ContinueOnError)
	trainflags.Device(fs, &c)
	if c.Device != "cpu" || c.BLAS != cpu.BLASAuto || c.MemoryBudget != "0" || !c.CUDAGraphs || c.TF32 {
		t.Fatalf("defaults %+v", c)
	}
	if err := fs.Parse([]string{"--device", "cuda:1", "--max-graphs", "2", "--memory-budget", "4GiB", "--cuda-graphs=false", "--tf32"}); err != nil {
		t.Fatal(err)
	}
	if c.Device != "cuda:1" || c.MaxGraphs != 2 || c.MemoryBudget != "4GiB" || c.CUDAGraphs || !c.TF32 {
		t.Fatalf("parsed %+v", c)
	}
}
