package compute

// Backend builds models on one kind of device.
type Backend interface {
	// Name identifies the backend ("gorgonia-cpu", "cuda:0").
	Name() string
	// Build makes a model for cfg (already defaulted and validated) with the
	// given initial parameters, which must match Layout(cfg) in names and
	// shapes. The "embeddings" given here are W_w,initial of the λw term
	// until SetState restores other ones.
	Build(cfg Config, params []Tensor) (Model, error)
}

// Model is one model's parameters, gradients and optimiser state on a
// device. It is not safe for concurrent use.
type Model interface {
	// ForwardBackward computes the batch's loss, regularisation included,
	// and overwrites the gradients of every parameter with its gradient.
	// Nothing accumulates across calls.
	ForwardBackward(b *Batch) (loss float64, err error)
	// Update applies one optimiser step with the last gradients. step counts
	// updates from 1 (Adam's bias correction) and lr is the learning rate
	// after decay.
	Update(step int64, lr float64) error
	// Embed returns g(s) for each sequence, with no dropout.
	Embed(seqs [][]int32) ([][]float32, error)
	// Params copies the parameters out, in Layout order.
	Params() []Tensor
	// Grads copies the gradients of the last ForwardBackward out.
	Grads() []Tensor
	// SetParams overwrites parameters by name; every name must exist with
	// the same shape.
	SetParams(ts []Tensor) error
	// State copies the optimiser state out (moments, and the initial
	// embeddings of the λw term); SetState restores it.
	State() []Tensor
	SetState(ts []Tensor) error
	// Close releases device resources.
	Close() error
}

// ContextEmbedder is a Model whose sentences take a context
// (Config.Context): EmbedContext embeds seqs[i] with its topic vector
// ctx[i] (Config.Topics values; empty means zeros). Embed refuses such a
// model's sentences, which would silently lack their context.
type ContextEmbedder interface {
	EmbedContext(seqs [][]int32, ctx [][]float32) ([][]float32, error)
}

// Snapshotter is a Model that copies its parameters and optimiser state to
// host memory while training goes on: an asynchronous checkpoint takes a
// snapshot at a checkpoint step, the trainer steps on, and a writer
// goroutine waits for the copies and writes them.
type Snapshotter interface {
	// Snapshot starts copying the parameters (as Params gives them, in
	// Layout order) and the optimiser state (as State gives it), as they
	// stand once the work issued so far is done. The model may be trained
	// on at once (ForwardBackward, Update, Flush): the snapshot keeps the
	// values of the call. At most one snapshot of a model is outstanding:
	// Release the last one before taking the next.
	Snapshot() (Snapshot, error)
}

// Snapshot is a model's parameters and optimiser state on their way to
// host memory (Snapshotter). Its methods may be called from another
// goroutine than the model's, but not concurrently with each other.
type Snapshot interface {
	// Wait blocks until the copies are done and returns them. The tensors'
	// data belong to the snapshot: they stay valid until Release.
	Wait() (params, state []Tensor, err error)
	// Release gives the snapshot's host memory back to the model; call it
	// once the tensors of Wait are written (or not needed), before the
	// model's Close.
	Release()
}

// TakeSnapshot snapshots m: through its Snapshotter when it has one, or
// else with Params and State, which copy synchronously.
func TakeSnapshot(m Model) (Snapshot, error) {
	if s, ok := m.(Snapshotter); ok {
		return s.Snapshot()
	}
	return HostSnapshot(m.Params(), m.State()), nil
}

// HostSnapshot is a Snapshot of tensors already copied to host memory
// (Params and State of a host backend): Wait returns them.
func HostSnapshot(params, state []Tensor) Snapshot { return &hostSnapshot{params, state} }

type hostSnapshot struct{ params, state []Tensor }

func (s *hostSnapshot) Wait() ([]Tensor, []Tensor, error) { return s.params, s.state, nil }
func (s *hostSnapshot) Release()                          { s.params, s.state = nil, nil }
