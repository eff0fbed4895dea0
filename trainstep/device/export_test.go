package device

import (
	"io"

	"github.com/parastream/parastream/trainstep/compute"
	"github.com/parastream/parastream/trainstep/cuda"
)

// NewAuto is --device auto's backend over gpu and onCPU, for the tests.
func NewAuto(gpu *cuda.Backend, onCPU compute.Backend, note io.Writer) *autoBackend {
	return &autoBackend{gpu: gpu, cpu: onCPU, note: note}
}

// Used is the backend the last Build went to.
func (a *autoBackend) Used() compute.Backend { return a.used }
