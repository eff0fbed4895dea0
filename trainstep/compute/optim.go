package compute

import (
	"fmt"
	"math"
	"strings"

	"github.com/parastream/parastream/internal/sysmem"
)

// Optimizer updates parameters on host memory from their gradients. Its
// state is a list of named tensors (for checkpoints): "adam.m/<param>",
// "adam.v/<param>" for Adam, "rmsprop.v/<param>" for RMSProp, none for SGD,
// and "lazy.last/<param>" for the row-sparse parameters (CatchUp).
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
	// lazy catches up the rows of the parameters updated by StepRows
	// (CatchUp), by parameter name; its tensors follow order in State.
	lazy      map[string]*CatchUp
	lazyOrder []string
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
	o.lazy = map[string]*CatchUp{}
	for _, s := range specs {
		for _, sl := range slots {
			name := sl + s.Name
			o.state[name] = sysmem.MakeHuge[float32](NumElems(s.Shape))
			o.shapes[name] = s.Shape
			o.order = append(o.order, name)
		}
		if c := NewCatchUp(cfg, s.Shape[0]); c != nil && SparseParam(cfg, s.Name) {
			o.lazy[s.Name] = c
			o.lazyOrder = append(o.lazyOrder, s.Name)
		}
	}
	return o
}

// SparseRows are rows of a row-major table W of rows of Width values and
// their gradients: G has W's shape, and only the listed Rows count; or,
// Compact, G holds only the listed rows' gradients, Rows[k]'s at row k.
// Rows must be distinct.
type SparseRows struct {
	W, G    []float32
	Rows    []int32
	Width   int
	Compact bool
}

// StepRows updates only the given rows of t.W from t.G, each row first
// caught up (CatchUp) with the steps it was skipped, so that the result is
// dense Adam's or RMSProp's but for ε; the other rows and their state stay
// as they are.
func (o *Optimizer) StepRows(name string, t SparseRows, step int64, lr float64) {
	w, g, rows, width := t.W, t.G, t.Rows, t.Width
	if c := o.lazy[name]; c != nil {
		d1, d2, s := c.Factors(rows, step, lr)
		o.catchUp(name, w, width, rows, catchUpFactors{d1, d2, s})
	}
	m, v := o.moments(name)
	k := o.ruleAt(step, lr)
	for i, r := range rows {
		gr := row(g, int32(i), width)
		if !t.Compact {
			gr = row(g, r, width)
		}
		o.stepWith(k, row(w, r, width), gr, row(m, r, width), row(v, r, width))
	}
}

// moments are the state tensors of parameter name that its rule keeps:
// Adam's m and v, RMSProp's v (m nil), none for SGD.
func (o *Optimizer) moments(name string) (m, v []float32) {
	switch o.kind {
	case OptRMSProp:
		return nil, o.state["rmsprop.v/"+name]
	case OptAdam:
		return o.state["adam.m/"+name], o.state["adam.v/"+name]
	}
	return nil, nil
}

// row is row r of a row-major table t of rows of width values (nil for
// a nil table).
func row(t []float32, r int32, width int) []float32 {
	if t == nil {
		return nil
	}
	return t[int(r)*width : int(r+1)*width]
}

// Flush catches up every row of the row-sparse parameter name (a table of
// rows of width values) through step (CatchUp.Flush).
func (o *Optimizer) Flush(name string, w []float32, width int, step int64) {
	if c := o.lazy[name]; c != nil {
		rows, d1, d2, s := c.Flush(step)
		o.catchUp(name, w, width, rows, catchUpFactors{d1, d2, s})
	}
}

// Prepare catches up the given rows of the row-sparse parameter name
// through the last step (CatchUp.Prepare): before a forward pass reads
// them.
func (o *Optimizer) Prepare(name string, w []float32, width int, rows []int32) {
	if c := o.lazy[name]; c != nil {
		owed, d1, d2, s := c.Prepare(rows)
		o.catchUp(name, w, width, owed, catchUpFactors{d1, d2, s})
	}
}

// catchUpFactors are a catch-up's factors, one of each per row (CatchUpRow's
// d1, d2 and s).
type catchUpFactors struct {
	d1, d2, s []float32
}

// catchUp catches up rows of w (parameter name, rows of width values) with
// the factors f.
func (o *Optimizer) catchUp(name string, w []float32, width int, rows []int32, f catchUpFactors) {
	d1, d2, s := f.d1, f.d2, f.s
	m, v := o.moments(name)
	for k, r := range rows {
		if d1[k] == 1 && d2[k] == 1 && s[k] == 0 {
			// Owed nothing (prepared before this step's forward pass, or
			// never updated): the pass over its w, m and v would leave
			// them as they are, and would cost a cache miss a line.
			continue
		}
		switch o.kind {
		case OptRMSProp:
			rv := row(v, r, width)
			for i := range rv {
				rv[i] *= d2[k]
			}
		case OptAdam:
			CatchUpRow(row(w, r, width), row(m, r, width), row(v, r, width), d1[k], d2[k], s[k])
		}
	}
}

// Step updates w (parameter name) in place from g.
func (o *Optimizer) Step(name string, w, g []float32, step int64, lr float64) {
	m, v := o.moments(name)
	o.stepWith(o.ruleAt(step, lr), w, g, m, v)
}

// rule is the update rule's constants at one step: computed once for all
// the rows of a sparse update.
type rule struct {
	a, eps, b1, b2, rho, c1, c2 float32
}

// ruleAt is the rule's constants at step with learning rate lr.
func (o *Optimizer) ruleAt(step int64, lr float64) rule {
	return rule{a: float32(lr), eps: float32(o.eps), b1: float32(o.beta1), b2: float32(o.beta2), rho: float32(o.rho),
		c1: float32(1 / (1 - math.Pow(o.beta1, float64(step)))),
		c2: float32(1 / (1 - math.Pow(o.beta2, float64(step))))}
}

// stepWith applies the rule k to w from g with the moments m and v (those
// the rule has) of the same span.
func (o *Optimizer) stepWith(k rule, w, g, m, v []float32) {
	switch o.kind {
	case OptSGD:
		for i := range w {
			w[i] -= k.a * g[i]
		}
	case OptRMSProp:
		rho := k.rho
		for i := range w {
			v[i] = rho*v[i] + (1-rho)*g[i]*g[i]
			w[i] -= k.a * g[i] / (float32(math.Sqrt(float64(v[i]))) + k.eps)
		}
	case OptAdam:
		b1, b2, c1, c2 := k.b1, k.b2, k.c1, k.c2
		for i := range w {
			m[i] = b1*m[i] + (1-b1)*g[i]
			v[i] = b2*v[i] + (1-b2)*g[i]*g[i]
			w[i] -= k.a * (m[i] * c1) / (float32(math.Sqrt(float64(v[i]*c2))) + k.eps)
		}
	default:
		panic("compute: unknown optimizer " + o.kind)
	}
}

// State copies the state tensors out: the moments, then the rows' last
// update steps of the row-sparse parameters.
func (o *Optimizer) State() []Tensor {
	out := make([]Tensor, 0, len(o.order)+len(o.lazyOrder))
	for _, name := range o.order {
		out = append(out, Tensor{Name: name, Shape: append([]int(nil), o.shapes[name]...), Data: append([]float32(nil), o.state[name]...)})
	}
	for _, name := range o.lazyOrder {
		last, lrs := o.lazy[name].Last(), o.lazy[name].LRs()
		out = append(out, Tensor{Name: CatchUpLastName(name), Shape: []int{len(last)}, Data: append([]float32(nil), last...)},
			Tensor{Name: CatchUpLRName(name), Shape: []int{len(lrs)}, Data: lrs})
	}
	return out
}

// SetState restores state tensors by name; names it does not own are
// ignored and reported back so a caller can handle them. Every moment
// tensor must be given; the rows' last steps may be missing (a checkpoint
// written before them), and are then counted from the step the run
// resumes at (CatchUp.Forget).
func (o *Optimizer) SetState(ts []Tensor) (rest []Tensor, err error) {
	seen := 0
	lastSeen := map[string]bool{}
	for _, t := range ts {
		dst, ok := o.state[t.Name]
		if !ok {
			if param, isLast := strings.CutPrefix(t.Name, "lazy.last/"); isLast && o.lazy[param] != nil {
				if err := o.lazy[param].SetLast(t.Data); err != nil {
					return nil, err
				}
				lastSeen[param] = true
				continue
			}
			if param, isLR := strings.CutPrefix(t.Name, "lazy.lr/"); isLR && o.lazy[param] != nil {
				if err := o.lazy[param].SetLRs(t.Data); err != nil {
					return nil, err
				}
				continue
			}
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
	for _, name := range o.lazyOrder {
		if !lastSeen[name] {
			o.lazy[name].Forget()
		}
	}
	return rest, nil
}
