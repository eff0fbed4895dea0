package compute

import "errors"

// ErrNonFinite is returned by a step whose loss or gradients are NaN or
// infinite; the parameters are left as they were before the step.
var ErrNonFinite = errors.New("loss or gradient is not finite")
