package main

import (
	"context"
	"flag"
	"fmt"

	"github.com/parastream/parastream/cmd/parastream/internal/cli"
	"github.com/parastream/parastream/trainstep/cuda"
	"github.com/parastream/parastream/trainstep/device"
)

const deviceUsage = "parastream device check [--device cuda:N] [--cuda-lib-dir DIR] [--tf32]"

// runDevice is `parastream device check` (device.Config.Check): the GPU,
// its driver, cuBLAS and NVRTC, the kernels compiled now, and every
// encoder × loss of the CUDA backend against the emulator; non-zero on a
// failure.
func runDevice(ctx context.Context, e *env, args []string) error {
	if len(args) == 0 || args[0] != "check" {
		if len(args) > 0 && cli.IsHelp(args[0]) {
			fmt.Fprintf(e.stdout, "usage: %s\n", deviceUsage)
			return flag.ErrHelp
		}
		return fmt.Errorf("%w: the subcommand is check", cli.ErrUsage)
	}
	fs := newFlags(e, "device check", deviceUsage)
	c := device.Config{Device: "cuda"}
	fs.StringVar(&c.Device, "device", c.Device, "the GPU to check: cuda (GPU 0) or cuda:N")
	fs.StringVar(&c.CUDALibDir, "cuda-lib-dir", "", "directory of libcuda.so.1, libcublas and libnvrtc, searched first (default $"+cuda.LibDirEnv+")")
	fs.BoolVar(&c.TF32, "tf32", false, "check with cuBLAS's TF32 tensor-core products, as train --tf32 runs")
	if err := cli.Parse(fs, args[1:]); err != nil {
		return err
	}
	return usage(c.Check(ctx, e.stdout))
}
