package cuda

import (
	"slices"
	"testing"

	"github.com/parastream/parastream/trainstep/compute"
)

// The CUDA backend runs an encoder exactly when its table has it, the
// list's entry says so (compute.EncoderSpec.Backends), and Supports
// names the same set in the list's order.
func TestEncoderTableAgrees(t *testing.T) {
	table := encoderTable()
	listed := map[string]bool{}
	var want []string
	for _, s := range compute.EncoderSpecs() {
		listed[s.Name] = true
		_, built := table[s.Name]
		if built != s.Has(compute.BackendCUDA) {
			t.Errorf("encoder %s: in the CUDA table %v, its spec's backends %v", s.Name, built, s.Backends)
		}
		if built {
			want = append(want, s.Name)
		}
		if k := table[s.Name]; built && (k.forward == nil || k.backward == nil) {
			t.Errorf("encoder %s: a forward or backward pass missing", s.Name)
		}
	}
	for name := range table {
		if !listed[name] {
			t.Errorf("the CUDA table runs %s, which compute.EncoderSpecs does not list", name)
		}
	}
	if got := supportedEncoders(); !slices.Equal(got, want) {
		t.Errorf("Supports's encoders %v, want %v", got, want)
	}
}
