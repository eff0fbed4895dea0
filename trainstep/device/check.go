package device

import (
	"context"
	"errors"
	"fmt"
	"io"

	"github.com/parastream/parastream/trainstep/cuda"
)

// Check is `parastream device check`: it opens the GPU c.Device names
// (cuda or cuda:N, with c.CUDALibDir and c.TF32), compiles the kernels
// afresh (not from the cache), runs every encoder × loss of the CUDA
// backend against the emulator, eager and replayed from a CUDA graph
// (cuda.Backend.SelfCheck), writes the report to w, one line a case, and
// returns an error wrapping cuda.ErrSelfCheck when a case disagrees.
func (c Config) Check(ctx context.Context, w io.Writer) error {
	kind, ordinal, err := Parse(c.Device)
	if err != nil || kind != "cuda" {
		return invalid("--device %s: give cuda or cuda:N", c.Device)
	}
	// CacheDir "-": the kernels are compiled now, not read from the cache.
	b, err := cuda.Open(cuda.Options{Device: ordinal, Env: cuda.EnvFromOS(c.CUDALibDir), CacheDir: "-", TF32: c.TF32})
	if err != nil {
		return fmt.Errorf("--device %s: %w", c.Device, err)
	}
	rep, err := b.SelfCheck(ctx, cuda.DeviceCheck())
	_, werr := rep.WriteTo(w)
	if err = errors.Join(err, werr, b.Close()); err != nil {
		return err
	}
	if n := len(rep.Failed()); n > 0 {
		return fmt.Errorf("%d of %d cases disagree with the emulator: %w", n, len(rep.Results), cuda.ErrSelfCheck)
	}
	return nil
}
