package cuda_test

import (
	"errors"

	"github.com/parastream/parastream/trainstep/compute"
)

func errorsIs(err, target error) bool { return errors.Is(err, target) }

// gpuEncoders are the encoders the CUDA backend has, in the list's order
// (TestEncoderTableAgrees checks the list against the backend's table).
func gpuEncoders() []string {
	var out []string
	for _, s := range compute.EncoderSpecs() {
		if s.Has(compute.BackendCUDA) {
			out = append(out, s.Name)
		}
	}
	return out
}
