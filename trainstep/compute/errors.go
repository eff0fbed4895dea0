package compute

import "errors"

// ErrNonFinite is returned by a step whose loss or gradients are NaN or
// infinite; the parameters are left as they were before the step.
var ErrNonFinite = errors.New("loss or gradient is not finite")

// ErrMemoryBudget is returned when a model, or one compiled graph of it,
// needs more memory than the backend's budget allows: the work is refused
// before the memory is taken.
var ErrMemoryBudget = errors.New("over the memory budget")
