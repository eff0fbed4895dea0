package main

import (
	"context"
	"errors"
	"flag"
	"fmt"

	"github.com/parastream/parastream/cmd/parastream/internal/cli"
	"github.com/parastream/parastream/trainstep/cuda"
	"github.com/parastream/parastream/trainstep/device"
)

const deviceUsage = "parastream device check [--device cuda:N] [--cuda-lib-dir DIR] [--tf32]"

// runDevice is `parastream device check`: the GPU, its driver, cuBLAS
// and NVRTC, the kernels compiled now, and every encoder × loss of the
// CUDA backend, one step eager and one replayed from a CUDA graph, each
// against the emulator (cuda.Backend.SelfCheck); non-zero on a failure.
func runDevice(ctx context.Context, e *env, args []string) error {
	if len(args) == 0 || args[0] != "check" {
		if len(args) > 0 && cli.IsHelp(args[0]) {
			fmt.Fprintf(e.stdout, "usage: %s\n", deviceUsage)
			return flag.ErrHelp
		}
		return fmt.Errorf("%w: the subcommand is check", cli.ErrUsage)
	}
	fs := newFlags(e, "device check", deviceUsage)
	dev := fs.String("device", "cuda", "the GPU to check: cuda (GPU 0) or cuda:N")
	libDir := fs.String("cuda-lib-dir", "", "directory of libcuda.so.1, libcublas and libnvrtc, searched first (default $"+cuda.LibDirEnv+")")
	tf32 := fs.Bool("tf32", false, "check with cuBLAS's TF32 tensor-core products, as train --tf32 runs")
	if err := cli.Parse(fs, args[1:]); err != nil {
		return err
	}
	kind, ordinal, err := device.Parse(*dev)
	if err != nil || kind != "cuda" {
		return fmt.Errorf("%w: --device %s: give cuda or cuda:N", cli.ErrUsage, *dev)
	}
	// CacheDir "-": the kernels are compiled now, not read from the cache.
	b, err := cuda.Open(cuda.Options{Device: ordinal, Env: cuda.EnvFromOS(*libDir), CacheDir: "-", TF32: *tf32})
	if err != nil {
		return fmt.Errorf("--device %s: %w", *dev, err)
	}
	rep, err := b.SelfCheck(ctx, cuda.DeviceCheck())
	_, werr := rep.WriteTo(e.stdout)
	if err = errors.Join(err, werr, b.Close()); err != nil {
		return err
	}
	if n := len(rep.Failed()); n > 0 {
		return fmt.Errorf("%d of %d cases disagree with the emulator: %w", n, len(rep.Results), cuda.ErrSelfCheck)
	}
	return nil
}
