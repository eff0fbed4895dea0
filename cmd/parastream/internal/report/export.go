package report

import (
	"fmt"
	"io"
	"time"
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

// Exported is what export wrote: the format, the checkpoint (its
// directory, step, encoder, dimensions and words), where (Out; "" for
// stdout), how many bytes and in how long.
type Exported struct {
	Format, Checkpoint, Encoder, Out string
	Step                             int64
	Dim, Words                       int
	Bytes                            int64
	Elapsed                          time.Duration
}

// Export prints export's summary: what was written, where and how big.
func Export(w io.Writer, x Exported) {
	what := fmt.Sprintf("%d words × %d dimensions (GloVe text; the out-of-vocabulary buckets left out)", x.Words, x.Dim)
	if x.Format == "safetensors" {
		what = fmt.Sprintf("every parameter of the %s model, %d dimensions, with its configuration and vocabulary (safetensors)", x.Encoder, x.Dim)
	}
	out := x.Out
	if out == "" {
		out = "stdout"
	}
	fmt.Fprintf(w, "export: %s of %s (step %d) to %s: %s in %.1fs\n", what, x.Checkpoint, x.Step, out, HumanBytes(x.Bytes), x.Elapsed.Seconds())
}
