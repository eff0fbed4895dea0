package report

import (
	"fmt"
	"io"

	"github.com/parastream/parastream/evalsink"
)

// Export prints export's summary: what was written, where and how big.
func Export(w io.Writer, x evalsink.Exported) {
	what := fmt.Sprintf("%d words × %d dimensions (GloVe text; the out-of-vocabulary buckets left out)", x.Words, x.Dim)
	switch x.Format {
	case evalsink.FormatSentenceTransformers, evalsink.FormatModel2Vec:
		what = fmt.Sprintf("%d words × %d dimensions as a %s directory (the out-of-vocabulary buckets left out)", x.Words, x.Dim, x.Format)
	case evalsink.FormatSafetensors:
		what = fmt.Sprintf("every parameter of the %s model, %d dimensions, with its configuration and vocabulary (safetensors)", x.Encoder, x.Dim)
	}
	out := x.Out
	if out == "" {
		out = "stdout"
	}
	fmt.Fprintf(w, "export: %s of %s (step %d) to %s: %s in %.1fs\n", what, x.Checkpoint, x.Step, out, HumanBytes(x.Bytes), x.Elapsed.Seconds())
}
