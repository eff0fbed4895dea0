package compute

import "fmt"

// Tensor is a named, row-major float32 array: the unit in which parameters,
// gradients and optimiser state cross the backend boundary and are written
// to checkpoints.
type Tensor struct {
	Name  string
	Shape []int
	Data  []float32
}

// NewTensor allocates a zero tensor.
func NewTensor(name string, shape ...int) Tensor {
	return Tensor{Name: name, Shape: append([]int(nil), shape...), Data: make([]float32, NumElems(shape))}
}

// NumElems is the product of shape.
func NumElems(shape []int) int {
	n := 1
	for _, s := range shape {
		n *= s
	}
	return n
}

// Clone deep-copies t.
func (t Tensor) Clone() Tensor {
	return Tensor{Name: t.Name, Shape: append([]int(nil), t.Shape...), Data: append([]float32(nil), t.Data...)}
}

// Check reports a tensor whose data does not match its shape.
func (t Tensor) Check() error {
	if n := NumElems(t.Shape); n != len(t.Data) {
		return fmt.Errorf("tensor %s: shape %v holds %d values, data has %d", t.Name, t.Shape, n, len(t.Data))
	}
	return nil
}

// SameShape reports whether a and b have equal shapes.
func SameShape(a, b []int) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}
