package cpu

import (
	G "gorgonia.org/gorgonia"
	"gorgonia.org/tensor"
)

// buildErr carries a gorgonia construction error out of the builder; build
// recovers it into an ordinary error.
type buildErr struct{ err error }

func must(n *G.Node, err error) *G.Node {
	if err != nil {
		panic(buildErr{err})
	}
	return n
}

// ops is a graph under construction with shorthands that panic with a
// buildErr on failure.
type ops struct {
	g  *G.ExprGraph
	dt tensor.Dtype
}

func (o *ops) scalar(v float64) *G.Node {
	if o.dt == tensor.Float64 {
		return G.NewConstant(v)
	}
	return G.NewConstant(float32(v))
}

func (o *ops) input(name string, shape ...int) *G.Node {
	switch len(shape) {
	case 1:
		return G.NewVector(o.g, o.dt, G.WithShape(shape...), G.WithName(name))
	case 2:
		return G.NewMatrix(o.g, o.dt, G.WithShape(shape...), G.WithName(name))
	}
	return G.NewTensor(o.g, o.dt, len(shape), G.WithShape(shape...), G.WithName(name))
}

func (o *ops) mul(a, b *G.Node) *G.Node  { return must(G.Mul(a, b)) }
func (o *ops) add(a, b *G.Node) *G.Node  { return must(G.Add(a, b)) }
func (o *ops) sub(a, b *G.Node) *G.Node  { return must(G.Sub(a, b)) }
func (o *ops) prod(a, b *G.Node) *G.Node { return must(G.HadamardProd(a, b)) }
func (o *ops) sigm(a *G.Node) *G.Node    { return must(G.Sigmoid(a)) }
func (o *ops) tanh(a *G.Node) *G.Node    { return must(G.Tanh(a)) }
func (o *ops) sum(a *G.Node, along ...int) *G.Node {
	return must(G.Sum(a, along...))
}
func (o *ops) reshape(a *G.Node, shape ...int) *G.Node { return must(G.Reshape(a, shape)) }
func (o *ops) tr(a *G.Node) *G.Node                    { return must(G.Transpose(a)) }
func (o *ops) relu(a *G.Node) *G.Node                  { return must(G.Rectify(a)) }

// at is a[t] of a (T, ...) tensor (the slice drops the leading dimension).
// Its gradient is a zero tensor of a's whole shape with the slice's added:
// take few (see encoderGraph).
func (o *ops) at(a *G.Node, t int) *G.Node { return must(G.Slice(a, G.S(t))) }

// rows is a[lo:hi] along axis 0.
func (o *ops) rows(a *G.Node, lo, hi int) *G.Node { return must(G.Slice(a, G.S(lo, hi))) }

// cols is a[:, lo:hi].
func (o *ops) cols(a *G.Node, lo, hi int) *G.Node { return must(G.Slice(a, nil, G.S(lo, hi))) }

// bias adds the vector b to every row of the matrix x.
func (o *ops) bias(x, b *G.Node) *G.Node { return must(G.BroadcastAdd(x, b, nil, []byte{0})) }

// rowScale multiplies every row of the matrix x by the vector v (R, H)⊙(H).
func (o *ops) rowScale(x, v *G.Node) *G.Node {
	return must(G.BroadcastHadamardProd(x, v, nil, []byte{0}))
}

// colVec broadcasts the vector v (R) along the columns of x (R, C) with op.
func (o *ops) perRowAdd(x, v *G.Node) *G.Node { return must(G.BroadcastAdd(x, v, nil, []byte{1})) }
func (o *ops) perColSub(x, v *G.Node) *G.Node { return must(G.BroadcastSub(x, v, nil, []byte{0})) }
func (o *ops) perRowDiv(x, v *G.Node) *G.Node {
	return must(G.BroadcastHadamardDiv(x, v, nil, []byte{1}))
}

// linear is x·W + b over the matrix x.
func (o *ops) linear(x, w, b *G.Node) *G.Node { return o.bias(o.mul(x, w), b) }

// project applies W to every step of a (T, R, in) tensor at once, with a
// bias: (T, R, out).
func (o *ops) project(x *G.Node, w, b *G.Node) *G.Node {
	s := x.Shape()
	flat := o.reshape(x, s[0]*s[1], s[2])
	y := o.mul(flat, w)
	if b != nil {
		y = o.bias(y, b)
	}
	return o.reshape(y, s[0], s[1], w.Shape()[1])
}

// zeroValue is a zero tensor of the graph's dtype.
func (o *ops) zeroValue(shape ...int) *tensor.Dense {
	return tensor.New(tensor.WithShape(shape...), tensor.Of(o.dt))
}
