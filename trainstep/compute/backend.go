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
