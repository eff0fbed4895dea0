package report

import (
	"fmt"
	"io"
	"time"

	"github.com/parastream/parastream/trainstep"
)

// Counter counts the bytes written through it to W.
type Counter struct {
	W io.Writer
	N int64
}

func (c *Counter) Write(p []byte) (int, error) {
	n, err := c.W.Write(p)
	c.N += int64(n)
	return n, err
}

// Export prints export's summary: what was written (the format, the
// checkpoint's run, step and model, the words or tensors), where (out; ""
// for stdout) and how big.
func Export(w io.Writer, format string, ck *trainstep.Checkpoint, ckDir, out string, n int64, elapsed time.Duration) {
	what := fmt.Sprintf("%d words × %d dimensions (GloVe text; the out-of-vocabulary buckets left out)", len(ck.Vocab), ck.Config.Dim)
	if format == "safetensors" {
		what = fmt.Sprintf("every parameter of the %s model, %d dimensions, with its configuration and vocabulary (safetensors)", ck.Config.Encoder, ck.Config.Dim)
	}
	if out == "" {
		out = "stdout"
	}
	fmt.Fprintf(w, "export: %s of %s (step %d) to %s: %s in %.1fs\n", what, ckDir, ck.State.Step, out, HumanBytes(n), elapsed.Seconds())
}
