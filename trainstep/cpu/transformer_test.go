package cpu

import (
	"testing"

	"github.com/parastream/parastream/trainstep/compute"
)

// TestGradientTransformer checks the transformer under the loss it is
// trained with (batch softmax), with dropout on its inputs, and with one
// head (d_k = Dim) and three, beside TestGradientEncoders' margin loss and
// two heads.
func TestGradientTransformer(t *testing.T) {
	for _, tc := range []struct {
		name       string
		dim, heads int
	}{{"softmax-1head", 4, 1}, {"softmax-3heads", 6, 3}} {
		t.Run(tc.name, func(t *testing.T) {
			cfg := tinyConfig(compute.EncTransformer, compute.LossSoftmax)
			cfg.Dim, cfg.TFHeads = tc.dim, tc.heads
			cfg.Dropout, cfg.WordDropout = 0.2, 0.1
			cfg = cfg.Defaults()
			gradCheck(t, buildF64(t, cfg), tinyBatch(t, cfg, 5))
		})
	}
}
