package cpu

import "github.com/parastream/parastream/trainstep/compute"

// Snapshot implements compute.Snapshotter: on the host, the parameters and
// the optimiser state are copied at once (Params and State copy), so the
// snapshot is done when it returns and training may go on.
func (m *model[T]) Snapshot() (compute.Snapshot, error) {
	return compute.HostSnapshot(m.Params(), m.State()), nil
}
