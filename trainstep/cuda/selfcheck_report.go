package cuda

import (
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/parastream/parastream/trainstep/compute"
)

// WriteTo prints the report as `parastream device check` shows it: the
// device and its libraries, then one line a case (its largest relative
// difference and where, pass or FAIL and why), then a summary line.
func (r Report) WriteTo(w io.Writer) (int64, error) {
	var b strings.Builder
	if r.Device.Name != "" {
		fmt.Fprintf(&b, "device   %s\n", r.Device)
	} else {
		fmt.Fprintf(&b, "device   %s (no GPU: the kernels' Go twins)\n", r.Backend)
	}
	v := r.Versions
	if v.Driver > 0 {
		fmt.Fprintf(&b, "driver   CUDA %d.%d\n", v.Driver/1000, v.Driver%1000/10)
		fmt.Fprintf(&b, "cuBLAS   %s\n", cublasVersion(v.CUBLAS))
		fmt.Fprintf(&b, "NVRTC    %s\n", v.NVRTC)
		from := "compiled now"
		if v.PTXCached {
			from = "from the PTX cache"
		}
		fmt.Fprintf(&b, "kernels  %d, compute_%d, %s\n", v.Kernels, v.Arch, from)
	}
	for _, c := range r.Results {
		verdict := "pass"
		switch {
		case errors.Is(c.Err, errOverTolerance):
			verdict = "FAIL"
		case !c.Pass():
			verdict = "FAIL: " + c.Err.Error()
		}
		graphs := ""
		if c.Case.Graphs {
			graphs = fmt.Sprintf(" (%d captured, %d replayed)", c.Captures, c.Replays)
		}
		where := c.Worst
		if where == "" {
			where = fmt.Sprintf("all %d tensors the same bits", c.Compared)
		}
		fmt.Fprintf(&b, "%-28s max rel diff %-8.2g %-34s %s%s\n", c.Case, c.MaxRelDiff, trimWhere(where), verdict, graphs)
	}
	failed := len(r.Failed())
	fmt.Fprintf(&b, "%d cases, %d failed (tolerance %.0g relative to each tensor's largest value)\n", len(r.Results), failed, r.Tolerance)
	n, err := io.WriteString(w, b.String())
	return int64(n), err
}

func trimWhere(s string) string {
	if len(s) > 34 {
		return s[:33] + "…"
	}
	return s
}

// cublasVersion is CUBLAS_VERSION as major.minor.patch.
func cublasVersion(v int) string {
	if v <= 0 {
		return "unknown"
	}
	return fmt.Sprintf("%d.%d.%d", v/10000, v%10000/100, v%100)
}

// CheckError is a start-up self-check that failed: the case, what
// differed, and the way round it. Its message is one line.
type CheckError struct {
	Device string
	Result CaseResult
	// Eager is the eager step's result when the graph-replayed one
	// failed (nil when the failing case was eager).
	Eager *CaseResult
	TF32  bool
}

func (e *CheckError) Error() string {
	piece := "its kernels or cuBLAS"
	way := "train with --device cpu"
	switch {
	case e.Eager != nil && e.Eager.Pass():
		piece = "its CUDA graph replay"
		way = "train with --cuda-graphs=false, or --device cpu"
	case e.TF32:
		piece = "its kernels or cuBLAS's TF32 products"
		way = "train with --tf32=false, or --device cpu"
	}
	return fmt.Sprintf("cuda self-check on %s: %s disagrees with the emulator (%s %s): %v; %s",
		e.Device, piece, e.Result.Case.Encoder, e.Result.Case.Loss, e.Result.Err, way)
}

func (e *CheckError) Unwrap() error { return ErrSelfCheck }

// startupCheck is Build's self-check of cfg's model (Options.SelfCheck):
// one tiny case of its encoder and loss with its settings, replayed from
// a CUDA graph when graphs are on; when that fails, the eager step too,
// to name the failing piece. A model that passed is not checked again.
func (b *Backend) startupCheck(cfg compute.Config) error {
	key := cfg.Encoder + "/" + cfg.Loss
	if b.checked[key] {
		return nil
	}
	cc := CheckConfig{Train: cfg}
	res := b.checkCase(CheckCase{cfg.Encoder, cfg.Loss, !b.opts.NoGraphs}, cc)
	if res.Pass() {
		if b.checked == nil {
			b.checked = map[string]bool{}
		}
		b.checked[key] = true
		return nil
	}
	e := &CheckError{Device: b.Name(), Result: res, TF32: b.opts.TF32}
	if res.Case.Graphs {
		eager := b.checkCase(CheckCase{cfg.Encoder, cfg.Loss, false}, cc)
		e.Eager = &eager
		if !eager.Pass() {
			e.Result = eager
		}
	}
	return e
}
