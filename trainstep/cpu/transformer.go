package cpu

import (
	"fmt"
	"hash"
	"math"
	"unsafe"

	"github.com/chewxy/hm"
	G "gorgonia.org/gorgonia"
	"gorgonia.org/tensor"

	"github.com/parastream/parastream/trainstep/compute"
)

// The transformer encoder (compute.EncTransformer; the formulas are in
// trainstep/compute/transformer.go). The words x (T, R, D) are flattened to
// N = T·R positions, position (t, r) being row t·R+r; the projections and
// the feed-forward layers are GEMMs over all N rows in the graph, and four
// fused nodes with hand-written backward passes do the rest: the layer
// norm, the bias (with the filter layer's relu), the attention of every
// head of every sentence (its scores only over the sentence's n real keys,
// so padding needs no −∞), and the mean over the n real positions. None
// slices a (T, ...) tensor per step. Padded positions hold PE(t) (x is 0
// there) and are computed as queries, but nothing reads them.

// transformer is g(s) for the R rows: (R, Dim).
func (e *encoderGraph) transformer() *G.Node {
	cfg := e.cfg
	D, N := cfg.Dim, e.T*e.R
	lens := e.lengths()
	// x_t = sqrt(D)·e_t + PE(t), PE a constant of the graph.
	x := e.add(e.mul(e.reshape(e.x, N, D), e.scalar(math.Sqrt(float64(D)))), e.timing())
	for l := range cfg.TFLayers {
		p := func(name string) *G.Node { return e.p(fmt.Sprintf("tf.%d.%s", l, name)) }
		a := e.layerNorm(x, p("ln1.g"), p("ln1.b"))
		qkv := e.affine(a, p("wqkv"), p("bqkv"), false)
		x = e.add(x, e.affine(e.attention(qkv, lens), p("wo"), p("bo"), false))
		a2 := e.layerNorm(x, p("ln2.g"), p("ln2.b"))
		x = e.add(x, e.affine(e.affine(a2, p("w1"), p("b1"), true), p("w2"), p("b2"), false))
	}
	y := e.layerNorm(x, e.p("tf.lnf.g"), e.p("tf.lnf.b"))
	return e.meanOver(y, lens)
}

// timing is the (N, D) constant whose row t·R+r is PE(t).
func (e *encoderGraph) timing() *G.Node {
	D, R := e.cfg.Dim, e.R
	pe := compute.TimingSignal(e.T, D)
	var v *tensor.Dense
	if e.dt == tensor.Float64 {
		v = tensor.New(tensor.WithShape(e.T*R, D), tensor.WithBacking(repeatRows(pe, D, R, func(f float64) float64 { return f })))
	} else {
		v = tensor.New(tensor.WithShape(e.T*R, D), tensor.WithBacking(repeatRows(pe, D, R, func(f float64) float32 { return float32(f) })))
	}
	return G.NewMatrix(e.g, e.dt, G.WithShape(e.T*R, D), G.WithValue(v), G.WithName("timing"))
}

// repeatRows is every row of D values of src repeated R times in a row,
// converted by conv.
func repeatRows[T any](src []float64, D, R int, conv func(float64) T) []T {
	out := make([]T, 0, len(src)*R)
	for lo := 0; lo < len(src); lo += D {
		for range R {
			for _, f := range src[lo : lo+D] {
				out = append(out, conv(f))
			}
		}
	}
	return out
}

// kernel is a graph node computing its output from its inputs' values by
// run; in are the inputs' dimensions, shape the output's. The fused nodes
// below are kernels, the forward ones with a gradient (diffKernel).
type kernel[T float] struct {
	name  string
	in    []int
	shape tensor.Shape
	work  int64 // bytes of buffers of its own (memory.go's workspace)
	run   func(out []T, in [][]T)
}

func (k *kernel[T]) Arity() int       { return len(k.in) }
func (k *kernel[T]) workBytes() int64 { return k.work }
func (k *kernel[T]) Type() hm.Type {
	a := hm.TypeVariable('a')
	ts := make([]hm.Type, 0, len(k.in)+1)
	for _, d := range k.in {
		ts = append(ts, G.TensorType{Dims: d, Of: a})
	}
	return hm.NewFnType(append(ts, G.TensorType{Dims: k.shape.Dims(), Of: a})...)
}
func (k *kernel[T]) InferShape(...G.DimSizer) (tensor.Shape, error) { return k.shape.Clone(), nil }
func (k *kernel[T]) ReturnsPtr() bool                               { return false }
func (k *kernel[T]) CallsExtern() bool                              { return false }
func (k *kernel[T]) OverwritesInput() int                           { return -1 }
func (k *kernel[T]) WriteHash(h hash.Hash)                          { opHash(k, h) }
func (k *kernel[T]) Hashcode() uint32                               { return opHashcode(k) }
func (k *kernel[T]) String() string                                 { return k.name }

func (k *kernel[T]) Do(in ...G.Value) (G.Value, error) {
	out := tensor.New(tensor.WithShape(k.shape...), tensor.Of(in[0].Dtype()))
	return k.UsePreallocDo(out, in...)
}

func (k *kernel[T]) UsePreallocDo(prealloc G.Value, in ...G.Value) (G.Value, error) {
	if len(in) != len(k.in) {
		return nil, fmt.Errorf("cpu: %s node: %d inputs, want %d", k.name, len(in), len(k.in))
	}
	vs := make([][]T, len(in))
	for i, v := range in {
		vs[i] = data[T](v)
	}
	k.run(data[T](prealloc), vs)
	return prealloc, nil
}

// diffKernel is a kernel with its gradient: grad builds, from the node's
// inputs, output and output gradient, the gradient nodes of the inputs
// (nil for those not differentiated, wrt false).
type diffKernel[T float] struct {
	*kernel[T]
	wrt  []bool
	grad func(in G.Nodes, output, grad *G.Node) (G.Nodes, error)
}

func (k *diffKernel[T]) DiffWRT(int) []bool { return k.wrt }
func (k *diffKernel[T]) SymDiff(in G.Nodes, output, grad *G.Node) (G.Nodes, error) {
	return k.grad(in, output, grad)
}

// readOut is a node reading out the buffer src, which the node after
// computed (a gradient a backward kernel kept).
func readOut[T float](name string, after *G.Node, src []T, shape ...int) (*G.Node, error) {
	return G.ApplyOp(&partOp[T]{name: name, src: func() []T { return src }, shape: shape, in: after.Dims()}, after)
}

// layerNorm is LN(x; g, b) over the rows of x (N, D).
func (e *encoderGraph) layerNorm(x, g, b *G.Node) *G.Node {
	if e.dt == tensor.Float64 {
		return must(G.ApplyOp(newLayerNorm[float64](x.Shape()[0], x.Shape()[1]), x, g, b))
	}
	return must(G.ApplyOp(newLayerNorm[float32](x.Shape()[0], x.Shape()[1]), x, g, b))
}

// newLayerNorm is the layer norm of N rows of D: inputs x (N, D), g and b
// (D). The forward pass keeps x̂ and 1/σ for the backward one:
//
//	dx̂ = dy⊙g, dx = (dx̂ − mean(dx̂) − x̂·mean(dx̂⊙x̂))/σ,
//	dg = Σ_rows dy⊙x̂, db = Σ_rows dy.
func newLayerNorm[T float](N, D int) *diffKernel[T] {
	xh, rstd := make([]T, N*D), make([]T, N)
	dg, db := make([]T, D), make([]T, D)
	grain := max(1, cellGrain/D)
	fwd := &kernel[T]{name: fmt.Sprintf("LayerNorm(N=%d,D=%d)", N, D), in: []int{2, 1, 1}, shape: tensor.Shape{N, D},
		work: int64(len(xh)+len(rstd)+2*D) * int64(unsafe.Sizeof(T(0)))}
	fwd.run = func(out []T, in [][]T) {
		x, g, b := in[0], in[1], in[2]
		parallel(N, grain, func(lo, hi int) {
			for i := lo; i < hi; i++ {
				row := x[i*D : (i+1)*D]
				var mu, v float64
				for _, a := range row {
					mu += float64(a)
				}
				mu /= float64(D)
				for _, a := range row {
					v += (float64(a) - mu) * (float64(a) - mu)
				}
				rs := 1 / math.Sqrt(v/float64(D)+compute.LayerNormEps)
				rstd[i] = T(rs)
				for u, a := range row {
					h := T((float64(a) - mu) * rs)
					xh[i*D+u] = h
					out[i*D+u] = g[u]*h + b[u]
				}
			}
		})
	}
	back := &kernel[T]{name: "LayerNormGrad", in: []int{1, 2}, shape: tensor.Shape{N, D}}
	back.run = func(dx []T, in [][]T) {
		g, dy := in[0], in[1]
		parallel(N, grain, func(lo, hi int) {
			for i := lo; i < hi; i++ {
				var m1, m2 T
				for u := range D {
					d := dy[i*D+u] * g[u]
					m1 += d
					m2 += d * xh[i*D+u]
				}
				m1 /= T(D)
				m2 /= T(D)
				for u := range D {
					dx[i*D+u] = rstd[i] * (dy[i*D+u]*g[u] - m1 - xh[i*D+u]*m2)
				}
			}
		})
		clear(dg)
		clear(db)
		for i := range N {
			for u := range D {
				dg[u] += dy[i*D+u] * xh[i*D+u]
				db[u] += dy[i*D+u]
			}
		}
	}
	return &diffKernel[T]{kernel: fwd, wrt: []bool{true, true, true},
		grad: func(in G.Nodes, _, grad *G.Node) (G.Nodes, error) {
			dx, err := G.ApplyOp(back, in[1], grad)
			if err != nil {
				return nil, err
			}
			dgN, err := readOut("LayerNormGradG", dx, dg, D)
			if err != nil {
				return nil, err
			}
			dbN, err := readOut("LayerNormGradB", dx, db, D)
			if err != nil {
				return nil, err
			}
			return G.Nodes{dx, dgN, dbN}, nil
		}}
}

// attention is the multi-head self-attention of qkv (N, 3D), the q, k and
// v column blocks of every position, over each sentence's real keys:
// (N, D), the heads' outputs side by side.
func (e *encoderGraph) attention(qkv, lens *G.Node) *G.Node {
	a := attnShape{T: e.T, R: e.R, D: e.cfg.Dim, H: e.cfg.TFHeads}
	if e.dt == tensor.Float64 {
		return must(G.ApplyOp(newAttention[float64](a), qkv, lens))
	}
	return must(G.ApplyOp(newAttention[float32](a), qkv, lens))
}

// attnShape is an attention node's shape: T steps of R rows, D units in
// H heads.
type attnShape struct{ T, R, D, H int }

// newAttention is the attention node. For sentence r of n words and head
// h, with q_t, k_u, v_u the head's d_k columns of positions (t, r) and
// (u, r):
//
//	S[t][u] = q_t·k_u/sqrt(d_k) for u < n, P = softmax_rows(S), o_t = Σ_u P[t][u] v_u
//
// and backwards, with dP[t][u] = do_t·v_u and dS = P⊙(dP − rowsum(P⊙dP)):
//
//	dq_t = Σ_u dS[t][u] k_u/sqrt(d_k), dk_u = Σ_t dS[t][u] q_t/sqrt(d_k), dv_u = Σ_t P[t][u] do_t.
//
// The forward pass keeps P, (R, H, T, T) with n columns of each row used.
func newAttention[T float](a attnShape) *diffKernel[T] {
	TT, R, D, H := a.T, a.R, a.D, a.H
	dk := D / H
	scale := T(1 / math.Sqrt(float64(dk)))
	P := make([]T, R*H*TT*TT)
	lens := make([]int, R)
	grain := max(1, cellGrain/(TT*TT*dk))
	// q, k and v of position (t, r), head h.
	at := func(qkv []T, t, r, h, block int) []T {
		o := (t*R+r)*3*D + block*D + h*dk
		return qkv[o : o+dk]
	}
	fwd := &kernel[T]{name: fmt.Sprintf("Attention(T=%d,R=%d,D=%d,H=%d)", TT, R, D, H), in: []int{2, 1},
		shape: tensor.Shape{TT * R, D}, work: int64(len(P))*int64(unsafe.Sizeof(T(0))) + int64(R)*8}
	fwd.run = func(out []T, in [][]T) {
		qkv := in[0]
		for r, l := range in[1] {
			lens[r] = int(l)
		}
		parallel(R*H, grain, func(lo, hi int) {
			for rh := lo; rh < hi; rh++ {
				r, h := rh/H, rh%H
				n := lens[r]
				for t := range TT {
					p := P[(rh*TT+t)*TT : (rh*TT+t)*TT+n]
					q := at(qkv, t, r, h, 0)
					m := T(math.Inf(-1))
					for u := range p {
						var s T
						for j, kv := range at(qkv, u, r, h, 1) {
							s += q[j] * kv
						}
						p[u] = s * scale
						m = max(m, p[u])
					}
					var z T
					for u := range p {
						p[u] = T(math.Exp(float64(p[u] - m)))
						z += p[u]
					}
					o := out[(t*R+r)*D+h*dk : (t*R+r)*D+(h+1)*dk]
					clear(o)
					for u := range p {
						p[u] /= z
						for j, v := range at(qkv, u, r, h, 2) {
							o[j] += p[u] * v
						}
					}
				}
			}
		})
	}
	back := &kernel[T]{name: "AttentionGrad", in: []int{2, 2}, shape: tensor.Shape{TT * R, 3 * D}}
	back.run = func(dqkv []T, in [][]T) {
		qkv, dout := in[0], in[1]
		clear(dqkv)
		parallel(R*H, grain, func(lo, hi int) {
			ds := make([]T, TT)
			for rh := lo; rh < hi; rh++ {
				r, h := rh/H, rh%H
				n := lens[r]
				for t := range TT {
					p := P[(rh*TT+t)*TT : (rh*TT+t)*TT+n]
					do := dout[(t*R+r)*D+h*dk : (t*R+r)*D+(h+1)*dk]
					var sum T
					for u := range p {
						var dp T
						for j, v := range at(qkv, u, r, h, 2) {
							dp += do[j] * v
						}
						ds[u] = dp
						sum += p[u] * dp
					}
					q, dq := at(qkv, t, r, h, 0), at(dqkv, t, r, h, 0)
					for u := range p {
						s := p[u] * (ds[u] - sum) * scale
						k, dkU, dvU := at(qkv, u, r, h, 1), at(dqkv, u, r, h, 1), at(dqkv, u, r, h, 2)
						for j := range dk {
							dq[j] += s * k[j]
							dkU[j] += s * q[j]
							dvU[j] += p[u] * do[j]
						}
					}
				}
			}
		})
	}
	return &diffKernel[T]{kernel: fwd, wrt: []bool{true, false},
		grad: func(in G.Nodes, _, grad *G.Node) (G.Nodes, error) {
			d, err := G.ApplyOp(back, in[0], grad)
			if err != nil {
				return nil, err
			}
			return G.Nodes{d, nil}, nil
		}}
}

// meanOver is each sentence's mean of y (N, D) over its n real positions:
// (R, D).
func (e *encoderGraph) meanOver(y, lens *G.Node) *G.Node {
	if e.dt == tensor.Float64 {
		return must(G.ApplyOp(newMeanOver[float64](e.T, e.R, e.cfg.Dim), y, lens))
	}
	return must(G.ApplyOp(newMeanOver[float32](e.T, e.R, e.cfg.Dim), y, lens))
}

// newMeanOver is the mean node: out_r = (1/n) Σ_{t<n} y_(t, r); backwards
// dy_(t, r) = dout_r/n for t < n, 0 on padding.
func newMeanOver[T float](TT, R, D int) *diffKernel[T] {
	fwd := &kernel[T]{name: fmt.Sprintf("MeanOver(T=%d,R=%d,D=%d)", TT, R, D), in: []int{2, 1}, shape: tensor.Shape{R, D}}
	fwd.run = func(out []T, in [][]T) {
		y, lens := in[0], in[1]
		for r, l := range lens {
			o := out[r*D : (r+1)*D]
			clear(o)
			for t := range int(l) {
				for u, v := range y[(t*R+r)*D : (t*R+r+1)*D] {
					o[u] += v
				}
			}
			for u := range o {
				o[u] /= l
			}
		}
	}
	back := &kernel[T]{name: "MeanOverGrad", in: []int{1, 2}, shape: tensor.Shape{TT * R, D}}
	back.run = func(dy []T, in [][]T) {
		lens, dout := in[0], in[1]
		clear(dy)
		for r, l := range lens {
			for t := range int(l) {
				for u := range D {
					dy[(t*R+r)*D+u] = dout[r*D+u] / l
				}
			}
		}
	}
	return &diffKernel[T]{kernel: fwd, wrt: []bool{true, false},
		grad: func(in G.Nodes, _, grad *G.Node) (G.Nodes, error) {
			d, err := G.ApplyOp(back, in[1], grad)
			if err != nil {
				return nil, err
			}
			return G.Nodes{d, nil}, nil
		}}
}

// affine is x·W + b over the rows of x (N, in), then relu if asked: the
// product a GEMM of the graph, the bias (and relu) a fused node, which
// needs no broadcast copy of b.
func (e *encoderGraph) affine(x, w, b *G.Node, relu bool) *G.Node {
	xw := e.mul(x, w)
	s := xw.Shape()
	if e.dt == tensor.Float64 {
		return must(G.ApplyOp(newBiasAct[float64](s[0], s[1], relu), xw, b))
	}
	return must(G.ApplyOp(newBiasAct[float32](s[0], s[1], relu), xw, b))
}

// newBiasAct is the node y = z + b (relu: max(0, z + b)) over N rows of
// C; backwards dz = dy (relu: where y > 0), db = Σ_rows dz. Without the
// relu, dz is the output's gradient node itself (no copy).
func newBiasAct[T float](N, C int, relu bool) *diffKernel[T] {
	grain := max(1, cellGrain/C)
	fwd := &kernel[T]{name: fmt.Sprintf("BiasAct(N=%d,C=%d,relu=%t)", N, C, relu), in: []int{2, 1}, shape: tensor.Shape{N, C}}
	fwd.run = func(y []T, in [][]T) {
		z, b := in[0], in[1]
		parallel(N, grain, func(lo, hi int) {
			for i := lo; i < hi; i++ {
				for j, v := range z[i*C : (i+1)*C] {
					v += b[j]
					if relu && v < 0 {
						v = 0
					}
					y[i*C+j] = v
				}
			}
		})
	}
	reluGrad := &kernel[T]{name: "ReluGrad", in: []int{2, 2}, shape: tensor.Shape{N, C}, run: func(dz []T, in [][]T) {
		y, dy := in[0], in[1]
		for i, v := range y {
			dz[i] = 0
			if v > 0 {
				dz[i] = dy[i]
			}
		}
	}}
	colSum := &kernel[T]{name: "BiasGrad", in: []int{2}, shape: tensor.Shape{C}, run: func(db []T, in [][]T) {
		clear(db)
		for i := range N {
			for j, v := range in[0][i*C : (i+1)*C] {
				db[j] += v
			}
		}
	}}
	return &diffKernel[T]{kernel: fwd, wrt: []bool{true, true},
		grad: func(_ G.Nodes, output, grad *G.Node) (G.Nodes, error) {
			dz := grad
			if relu {
				var err error
				if dz, err = G.ApplyOp(reluGrad, output, grad); err != nil {
					return nil, err
				}
			}
			db, err := G.ApplyOp(colSum, dz)
			if err != nil {
				return nil, err
			}
			return G.Nodes{dz, db}, nil
		}}
}
