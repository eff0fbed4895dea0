package cpu

import (
	"fmt"
	"hash"
	"unsafe"

	"github.com/chewxy/hm"
	G "gorgonia.org/gorgonia"
	"gorgonia.org/tensor"
)

// The GRAN gate of Wieting & Gimpel (2017) Eq. 1 summed over the steps, as
// one graph node: Σ_t x_t ⊙ σ(zx_t + zh_t + b), with zx = x·Wx and
// zh = h·Wh computed for every step at once by two GEMMs in the graph.
// Fused, the bias needs no broadcast and the sum no per-step slices.
//
// Inputs: x, zx, zh (T, R, d), b (d). Output: (R, d).

// gateWork is what the forward pass keeps (s = σ(·), (T, R, d)) and the
// backward pass's gradients of x and b.
type gateWork[T float] struct {
	T, R, d int
	s       []T
	dx      []T // (T, R, d)
	db      []T // (d)
}

// gateSumNode adds the fused gate to the graph.
func (o *ops) gateSumNode(x, zx, zh, b *G.Node) *G.Node {
	s := x.Shape()
	var op G.Op
	if o.dt == tensor.Float64 {
		op = &gateOp[float64]{w: &gateWork[float64]{T: s[0], R: s[1], d: s[2], s: make([]float64, s[0]*s[1]*s[2]),
			dx: make([]float64, s[0]*s[1]*s[2]), db: make([]float64, s[2])}}
	} else {
		op = &gateOp[float32]{w: &gateWork[float32]{T: s[0], R: s[1], d: s[2], s: make([]float32, s[0]*s[1]*s[2]),
			dx: make([]float32, s[0]*s[1]*s[2]), db: make([]float32, s[2])}}
	}
	return must(G.ApplyOp(op, x, zx, zh, b))
}

type gateOp[T float] struct{ w *gateWork[T] }

func (op *gateOp[T]) Arity() int { return 4 }
func (op *gateOp[T]) workBytes() int64 {
	var z T
	return int64(len(op.w.s)+len(op.w.dx)+len(op.w.db)) * int64(unsafe.Sizeof(z))
}
func (op *gateOp[T]) Type() hm.Type {
	a := hm.TypeVariable('a')
	t3, t2, t1 := G.TensorType{Dims: 3, Of: a}, G.TensorType{Dims: 2, Of: a}, G.TensorType{Dims: 1, Of: a}
	return hm.NewFnType(t3, t3, t3, t1, t2)
}
func (op *gateOp[T]) InferShape(...G.DimSizer) (tensor.Shape, error) {
	return tensor.Shape{op.w.R, op.w.d}, nil
}
func (op *gateOp[T]) ReturnsPtr() bool      { return false }
func (op *gateOp[T]) CallsExtern() bool     { return false }
func (op *gateOp[T]) OverwritesInput() int  { return -1 }
func (op *gateOp[T]) WriteHash(h hash.Hash) { opHash(op, h) }
func (op *gateOp[T]) Hashcode() uint32      { return opHashcode(op) }
func (op *gateOp[T]) String() string {
	return fmt.Sprintf("GateSum(T=%d,R=%d,d=%d)", op.w.T, op.w.R, op.w.d)
}

func (op *gateOp[T]) Do(in ...G.Value) (G.Value, error) {
	out := tensor.New(tensor.WithShape(op.w.R, op.w.d), tensor.Of(in[0].Dtype()))
	return op.UsePreallocDo(out, in...)
}

func (op *gateOp[T]) UsePreallocDo(prealloc G.Value, in ...G.Value) (G.Value, error) {
	if len(in) != 4 {
		return nil, fmt.Errorf("cpu: gate node: %d inputs, want 4", len(in))
	}
	w := op.w
	x, zx, zh, b := data[T](in[0]), data[T](in[1]), data[T](in[2]), data[T](in[3])
	out := data[T](prealloc)
	clear(out)
	Rd := w.R * w.d
	parallel(w.R, max(1, cellGrain/w.d), func(lo, hi int) {
		for t := range w.T {
			for i := lo * w.d; i < hi*w.d; i++ {
				k := t*Rd + i
				s := sigm(zx[k] + zh[k] + b[i%w.d])
				w.s[k] = s
				out[i] += x[k] * s
			}
		}
	})
	return prealloc, nil
}

func (op *gateOp[T]) DiffWRT(int) []bool { return []bool{true, true, true, true} }

// SymDiff: the backward node's output is dz, the gradient of zx and zh;
// dx and db are read out after it.
func (op *gateOp[T]) SymDiff(in G.Nodes, _, grad *G.Node) (G.Nodes, error) {
	dz, err := G.ApplyOp(&gateGradOp[T]{w: op.w}, in[0], grad)
	if err != nil {
		return nil, err
	}
	w := op.w
	dx, err := G.ApplyOp(&partOp[T]{name: "GateGradX", src: func() []T { return w.dx }, shape: tensor.Shape{w.T, w.R, w.d}, in: 3}, dz)
	if err != nil {
		return nil, err
	}
	db, err := G.ApplyOp(&partOp[T]{name: "GateGradB", src: func() []T { return w.db }, shape: tensor.Shape{w.d}, in: 3}, dz)
	if err != nil {
		return nil, err
	}
	return G.Nodes{dx, dz, dz, db}, nil
}

// gateGradOp is the backward node: (x, dOut) → dz; it keeps dx and db.
type gateGradOp[T float] struct{ w *gateWork[T] }

func (op *gateGradOp[T]) Arity() int { return 2 }
func (op *gateGradOp[T]) Type() hm.Type {
	a := hm.TypeVariable('a')
	t3, t2 := G.TensorType{Dims: 3, Of: a}, G.TensorType{Dims: 2, Of: a}
	return hm.NewFnType(t3, t2, t3)
}
func (op *gateGradOp[T]) InferShape(...G.DimSizer) (tensor.Shape, error) {
	return tensor.Shape{op.w.T, op.w.R, op.w.d}, nil
}
func (op *gateGradOp[T]) ReturnsPtr() bool      { return false }
func (op *gateGradOp[T]) CallsExtern() bool     { return false }
func (op *gateGradOp[T]) OverwritesInput() int  { return -1 }
func (op *gateGradOp[T]) WriteHash(h hash.Hash) { opHash(op, h) }
func (op *gateGradOp[T]) Hashcode() uint32      { return opHashcode(op) }
func (op *gateGradOp[T]) String() string        { return "GateSumGrad" }

func (op *gateGradOp[T]) Do(in ...G.Value) (G.Value, error) {
	out := tensor.New(tensor.WithShape(op.w.T, op.w.R, op.w.d), tensor.Of(in[0].Dtype()))
	return op.UsePreallocDo(out, in...)
}

func (op *gateGradOp[T]) UsePreallocDo(prealloc G.Value, in ...G.Value) (G.Value, error) {
	if len(in) != 2 {
		return nil, fmt.Errorf("cpu: gate gradient node: %d inputs, want 2", len(in))
	}
	w := op.w
	x, dOut := data[T](in[0]), data[T](in[1])
	dz := data[T](prealloc)
	Rd := w.R * w.d
	parallel(w.R, max(1, cellGrain/w.d), func(lo, hi int) {
		for t := range w.T {
			for i := lo * w.d; i < hi*w.d; i++ {
				k := t*Rd + i
				s, g := w.s[k], dOut[i]
				w.dx[k] = g * s
				dz[k] = g * x[k] * s * (1 - s)
			}
		}
	})
	clear(w.db)
	for k, v := range dz {
		w.db[k%w.d] += v
	}
	return prealloc, nil
}
