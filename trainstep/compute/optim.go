package compute

import (
	"fmt"
	"math"
)

// Optimizer updates parameters on host memory from their gradients. Its
// state is a list of named tensors (for checkpoints): "adam.m/<param>",
// "adam.v/<param>" for Adam, "rmsprop.v/<param>" for RMSProp, none for SGD.
//
// gorgonia's solvers keep their moments in unexported fields that cannot be
// saved or restored, so a resumed run could not continue bit for bit; these
// implement the same update rules on exported state instead:
//
//	adam:    m = β1·m + (1-β1)·g; v = β2·v + (1-β2)·g²;
//	         w -= lr · (m/(1-β1^t)) / (sqrt(v/(1-β2^t)) + ε)   (Kingma & Ba 2015)
//	sgd:     w -= lr·g
//	rmsprop: v = ρ·v + (1-ρ)·g²; w -= lr·g / (sqrt(v) + ε)
type Optimizer struct {
	kind              string
	beta1, beta2, rho float64
	eps               float64
	state             map[string][]float32 // by state tensor name
	shapes            map[string][]int
	order             []string
}

// NewOptimizer makes the optimiser of cfg for parameters of the given specs.
func NewOptimizer(cfg Config, specs []ParamSpec) *Optimizer {
	o := &Optimizer{kind: cfg.Optimizer, beta1: cfg.Beta1, beta2: cfg.Beta2, rho: cfg.Rho, eps: cfg.Eps,
		state: map[string][]float32{}, shapes: map[string][]int{}}
	var slots []string
	switch cfg.Optimizer {
	case OptAdam:
		slots = []string{"adam.m/", "adam.v/"}
	case OptRMSProp:
		slots = []string{"rmsprop.v/"}
	}
	for _, s := range specs {
		for _, sl := range slots {
			name := sl + s.Name
			o.state[name] = make([]float32, NumElems(s.Shape))
			o.shapes[name] = s.Shape
			o.order = append(o.order, name)
		}
	}
	return o
}

// Step updates w (parameter name) in place from g.
func (o *Optimizer) Step(name string, w, g []float32, step int64, lr float64) {
	switch o.kind {
	case OptSGD:
		a := float32(lr)
		for i := range w {
			w[i] -= a * g[i]
		}
	case OptRMSProp:
		v := o.state["rmsprop.v/"+name]
		rho, eps := float32(o.rho), float32(o.eps)
		a := float32(lr)
		for i := range w {
			v[i] = rho*v[i] + (1-rho)*g[i]*g[i]
			w[i] -= a * g[i] / (float32(math.Sqrt(float64(v[i]))) + eps)
		}
	case OptAdam:
		m, v := o.state["adam.m/"+name], o.state["adam.v/"+name]
		b1, b2 := float32(o.beta1), float32(o.beta2)
		c1 := float32(1 / (1 - math.Pow(o.beta1, float64(step))))
		c2 := float32(1 / (1 - math.Pow(o.beta2, float64(step))))
		a, eps := float32(lr), float32(o.eps)
		for i := range w {
			m[i] = b1*m[i] + (1-b1)*g[i]
			v[i] = b2*v[i] + (1-b2)*g[i]*g[i]
			w[i] -= a * (m[i] * c1) / (float32(math.Sqrt(float64(v[i]*c2))) + eps)
		}
	default:
		panic("compute: unknown optimizer " + o.kind)
	}
}

// State copies the state tensors out.
func (o *Optimizer) State() []Tensor {
	out := make([]Tensor, 0, len(o.order))
	for _, name := range o.order {
		out = append(out, Tensor{Name: name, Shape: append([]int(nil), o.shapes[name]...), Data: append([]float32(nil), o.state[name]...)})
	}
	return out
}

// SetState restores state tensors by name; names it does not own are
// ignored and reported back so a caller can handle them.
func (o *Optimizer) SetState(ts []Tensor) (rest []Tensor, err error) {
	seen := 0
	for _, t := range ts {
		dst, ok := o.state[t.Name]
		if !ok {
			rest = append(rest, t)
			continue
		}
		if !SameShape(t.Shape, o.shapes[t.Name]) || len(t.Data) != len(dst) {
			return nil, fmt.Errorf("optimizer state %s: shape %v, want %v", t.Name, t.Shape, o.shapes[t.Name])
		}
		copy(dst, t.Data)
		seen++
	}
	if seen != len(o.order) {
		return nil, fmt.Errorf("optimizer state: %d of %d %s tensors given", seen, len(o.order), o.kind)
	}
	return rest, nil
}
