package cpu

import (
	"fmt"
	"hash"
	"hash/fnv"
	"math"
	"runtime"
	"sync"
	"unsafe"

	"github.com/chewxy/hm"
	"gonum.org/v1/gonum/blas"
	G "gorgonia.org/gorgonia"
	"gorgonia.org/tensor"
)

// The peephole LSTM as one graph node, forward and backward written by
// hand (as trainstep/cuda does with its kernels): per step one GEMM
// h_{t-1}·Wh and a fused loop over the cells, then dZ_t·Wh^T backwards;
// the weight gradient is one GEMM over every step. A graph of per-step
// nodes (slices, broadcasts, masks, each with its own gradient node)
// spends more time around its GEMMs than in them.
//
// Inputs: xw (T, R, 4H) = x·Wx for every step (a GEMM in the graph), Wh
// (H, 4H), the bias b (4H), the peepholes pi, pf, po (H), and lens (R),
// each row's length as a float. The bias is added here, not broadcast in
// the graph (gorgonia's broadcast copies it to every row first). Output: h (T, R, H), index t being time t in either
// direction; at padded steps (t ≥ len) the state is carried unchanged.
//
//	z = xw_t + h_prev·Wh, split into zi zf zg zo
//	i = σ(zi + pi⊙c_prev), f = σ(zf + pf⊙c_prev), g = tanh(zg)
//	c = f⊙c_prev + i⊙g, o = σ(zo + po⊙c), h = o⊙tanh(c)

// lstmWork is what the forward pass keeps for the backward one, in step
// order k (time T-1-k when backward): act (T, R, 4H) the gate activations
// i f g o, hs and cs (T+1, R, H) the states with zeros first, tc (T, R, H)
// tanh(c); and the backward pass's parameter gradients.
type lstmWork[T float] struct {
	T, R, H  int
	backward bool
	// zeroPad: the output is 0 at padded steps (the state inside is still
	// carried), so that a mean over the steps needs no mask.
	zeroPad bool
	act     []T
	hs, cs  []T
	tc      []T
	lens    []int
	dz      []T // (T, R, 4H) in step order; backward in time only (else dxw)
	dwh     []T // (H, 4H)
	db      []T // (4H)
	dpi     []T // (H)
	dpf     []T
	dpo     []T
	dh, dc  []T // (R, H) scratch
	dhNext  []T
}

func newLSTMWork[T float](steps, rows, hidden int, backward, zeroPad bool) *lstmWork[T] {
	H := hidden
	w := &lstmWork[T]{T: steps, R: rows, H: H, backward: backward, zeroPad: zeroPad,
		act: make([]T, steps*rows*4*H), hs: make([]T, (steps+1)*rows*H), cs: make([]T, (steps+1)*rows*H),
		tc: make([]T, steps*rows*H), lens: make([]int, rows),
		dwh: make([]T, H*4*H), db: make([]T, 4*H), dpi: make([]T, H), dpf: make([]T, H), dpo: make([]T, H),
		dh: make([]T, rows*H), dc: make([]T, rows*H), dhNext: make([]T, rows*H)}
	if backward {
		w.dz = make([]T, steps*rows*4*H)
	}
	return w
}

// bytes is the size of the workspace's buffers.
func (w *lstmWork[T]) bytes() int64 {
	n := len(w.act) + len(w.hs) + len(w.cs) + len(w.tc) + len(w.dz) + len(w.dwh) + len(w.db) +
		len(w.dpi) + len(w.dpf) + len(w.dpo) + len(w.dh) + len(w.dc) + len(w.dhNext)
	var z T
	return int64(n)*int64(unsafe.Sizeof(z)) + int64(len(w.lens))*8
}

// time is the time index of step k.
func (w *lstmWork[T]) time(k int) int {
	if w.backward {
		return w.T - 1 - k
	}
	return k
}

// lstmWeights are the LSTM's parameter nodes: Wh, b and the peepholes.
type lstmWeights struct {
	wh, b, pi, pf, po *G.Node
}

// lstmNode adds the fused LSTM to the graph: h (T, R, H) from xw, the
// weights p and lens; zeroPad gives 0 at padded steps instead of the
// carried state.
func (o *ops) lstmNode(xw *G.Node, p lstmWeights, lens *G.Node, backward, zeroPad bool) *G.Node {
	wh, b, pi, pf, po := p.wh, p.b, p.pi, p.pf, p.po
	s := xw.Shape()
	H := wh.Shape()[0]
	var op G.Op
	if o.dt == tensor.Float64 {
		op = &lstmOp[float64]{w: newLSTMWork[float64](s[0], s[1], H, backward, zeroPad)}
	} else {
		op = &lstmOp[float32]{w: newLSTMWork[float32](s[0], s[1], H, backward, zeroPad)}
	}
	return must(G.ApplyOp(op, xw, wh, b, pi, pf, po, lens))
}

// opHash hashes an op by its description and identity: two fused nodes are
// never merged, each owning its workspace.
func opHash(op fmt.Stringer, h hash.Hash) {
	fmt.Fprintf(h, "%s@%p", op, op)
}

func opHashcode(op fmt.Stringer) uint32 {
	h := fnv.New32a()
	opHash(op, h)
	return h.Sum32()
}

// lstmOp is the forward node.
type lstmOp[T float] struct{ w *lstmWork[T] }

func (op *lstmOp[T]) Arity() int       { return 7 }
func (op *lstmOp[T]) workBytes() int64 { return op.w.bytes() }
func (op *lstmOp[T]) Type() hm.Type {
	a := hm.TypeVariable('a')
	t3, t2, t1 := G.TensorType{Dims: 3, Of: a}, G.TensorType{Dims: 2, Of: a}, G.TensorType{Dims: 1, Of: a}
	return hm.NewFnType(t3, t2, t1, t1, t1, t1, t1, t3)
}
func (op *lstmOp[T]) InferShape(...G.DimSizer) (tensor.Shape, error) {
	return tensor.Shape{op.w.T, op.w.R, op.w.H}, nil
}
func (op *lstmOp[T]) ReturnsPtr() bool      { return false }
func (op *lstmOp[T]) CallsExtern() bool     { return false }
func (op *lstmOp[T]) OverwritesInput() int  { return -1 }
func (op *lstmOp[T]) WriteHash(h hash.Hash) { opHash(op, h) }
func (op *lstmOp[T]) Hashcode() uint32      { return opHashcode(op) }
func (op *lstmOp[T]) String() string {
	return fmt.Sprintf("LSTM(T=%d,R=%d,H=%d,backward=%t,zeroPad=%t)", op.w.T, op.w.R, op.w.H, op.w.backward, op.w.zeroPad)
}

func (op *lstmOp[T]) Do(in ...G.Value) (G.Value, error) {
	w := op.w
	out := tensor.New(tensor.WithShape(w.T, w.R, w.H), tensor.Of(in[0].Dtype()))
	return op.UsePreallocDo(out, in...)
}

func (op *lstmOp[T]) UsePreallocDo(prealloc G.Value, in ...G.Value) (G.Value, error) {
	if len(in) != 7 {
		return nil, fmt.Errorf("cpu: LSTM node: %d inputs, want 7", len(in))
	}
	w := op.w
	xw, wh, b, pi, pf, po, lens := data[T](in[0]), data[T](in[1]), data[T](in[2]), data[T](in[3]), data[T](in[4]), data[T](in[5]), data[T](in[6])
	out := data[T](prealloc)
	for r, l := range lens {
		w.lens[r] = int(l)
	}
	w.forward(xw, wh, b, pi, pf, po)
	// The output in time order.
	RH, H := w.R*w.H, w.H
	for k := range w.T {
		t := w.time(k)
		o := out[t*RH : (t+1)*RH]
		copy(o, w.hs[(k+1)*RH:(k+2)*RH])
		if w.zeroPad {
			for r, l := range w.lens {
				if t >= l {
					clear(o[r*H : (r+1)*H])
				}
			}
		}
	}
	return prealloc, nil
}

func data[T float](v G.Value) []T {
	switch d := v.Data().(type) {
	case []T:
		return d
	case T:
		return []T{d}
	}
	panic(fmt.Sprintf("cpu: a value of %T in a %T node", v.Data(), *new(T)))
}

func sigm[T float](x T) T { return T(1 / (1 + math.Exp(-float64(x)))) }
func tanh[T float](x T) T { return T(math.Tanh(float64(x))) }

// parallel runs f over [0, n) split among the cores when n is large.
func parallel(n, grain int, f func(lo, hi int)) {
	p := min(runtime.GOMAXPROCS(0), n/grain)
	if p <= 1 {
		f(0, n)
		return
	}
	var wg sync.WaitGroup
	for i := range p {
		lo, hi := i*n/p, (i+1)*n/p
		wg.Add(1)
		go func() { defer wg.Done(); f(lo, hi) }()
	}
	wg.Wait()
}

// cellGrain is the rows·units of work below which a step's cell loop runs
// on one goroutine.
const cellGrain = 16384

func (w *lstmWork[T]) forward(xw, wh, b, pi, pf, po []T) {
	R, H := w.R, w.H
	RH, R4H := R*H, R*4*H
	clear(w.hs[:RH])
	clear(w.cs[:RH])
	for k := range w.T {
		t := w.time(k)
		z := w.act[k*R4H : (k+1)*R4H]
		x := xw[t*R4H : (t+1)*R4H]
		for r := range R {
			zr, xr := z[r*4*H:(r+1)*4*H], x[r*4*H:(r+1)*4*H]
			for j, v := range xr {
				zr[j] = v + b[j]
			}
		}
		hp, cp := w.hs[k*RH:(k+1)*RH], w.cs[k*RH:(k+1)*RH]
		if k > 0 {
			gemm(false, false, R, 4*H, H, 1, hp, H, wh, 4*H, 1, z, 4*H)
		}
		hn, cn, tc := w.hs[(k+1)*RH:(k+2)*RH], w.cs[(k+1)*RH:(k+2)*RH], w.tc[k*RH:(k+1)*RH]
		parallel(R, max(1, cellGrain/H), func(lo, hi int) {
			for r := lo; r < hi; r++ {
				row := r * H
				if t >= w.lens[r] {
					copy(cn[row:row+H], cp[row:row+H])
					copy(hn[row:row+H], hp[row:row+H])
					continue
				}
				zr := z[r*4*H : (r+1)*4*H]
				zi, zf, zg, zo := zr[:H], zr[H:2*H], zr[2*H:3*H], zr[3*H:]
				cpr, cnr, hnr, tcr := cp[row:row+H], cn[row:row+H], hn[row:row+H], tc[row:row+H]
				for j := range H {
					c0 := cpr[j]
					i := sigm(zi[j] + pi[j]*c0)
					f := sigm(zf[j] + pf[j]*c0)
					g := tanh(zg[j])
					c := f*c0 + i*g
					o := sigm(zo[j] + po[j]*c)
					th := tanh(c)
					zi[j], zf[j], zg[j], zo[j] = i, f, g, o
					cnr[j], tcr[j], hnr[j] = c, th, o*th
				}
			}
		})
	}
}

// backwardPass turns dhs (T, R, H, time order), the gradient of the
// output, into dxw (T, R, 4H, time order) and the parameter gradients
// kept in w.
func (w *lstmWork[T]) backwardPass(dhs, wh, pi, pf, po, dxw []T) {
	R, H := w.R, w.H
	RH, R4H := R*H, R*4*H
	// dZ in step order: forward in time that is dxw's order, written in
	// place; backward, a buffer copied out reversed at the end.
	dzAll := w.dz
	if !w.backward {
		dzAll = dxw
	}
	clear(w.dc)
	clear(w.dhNext) // the gradient of h_k through step k+1
	for k := w.T - 1; k >= 0; k-- {
		t := w.time(k)
		dz := dzAll[k*R4H : (k+1)*R4H]
		act := w.act[k*R4H : (k+1)*R4H]
		cp, tc := w.cs[k*RH:(k+1)*RH], w.tc[k*RH:(k+1)*RH]
		dhExt := dhs[t*RH : (t+1)*RH]
		dh := w.dh // becomes the gradient of h_{k-1} not through Wh
		parallel(R, max(1, cellGrain/H), func(lo, hi int) {
			for r := lo; r < hi; r++ {
				row := r * H
				dzr := dz[r*4*H : (r+1)*4*H]
				if t >= w.lens[r] {
					// Carried: h_k = h_{k-1}, c_k = c_{k-1}; with zeroPad
					// the output there is a constant.
					if w.zeroPad {
						copy(dh[row:row+H], w.dhNext[row:row+H])
					} else {
						for j := range H {
							dh[row+j] = dhExt[row+j] + w.dhNext[row+j]
						}
					}
					clear(dzr)
					continue
				}
				ar := act[r*4*H : (r+1)*4*H]
				dzi, dzf, dzg, dzo := dzr[:H], dzr[H:2*H], dzr[2*H:3*H], dzr[3*H:]
				for j := range H {
					i, f, g, o := ar[j], ar[H+j], ar[2*H+j], ar[3*H+j]
					d := dhExt[row+j] + w.dhNext[row+j]
					th := tc[row+j]
					do := d * th * o * (1 - o)
					dc := w.dc[row+j] + d*o*(1-th*th) + do*po[j]
					di := dc * g * i * (1 - i)
					df := dc * cp[row+j] * f * (1 - f)
					dg := dc * i * (1 - g*g)
					w.dc[row+j] = dc*f + di*pi[j] + df*pf[j]
					dzi[j], dzf[j], dzg[j], dzo[j] = di, df, dg, do
					dh[row+j] = 0
				}
			}
		})
		if k > 0 {
			gemm(false, true, R, H, 4*H, 1, dz, 4*H, wh, 4*H, 1, dh, H)
		}
		w.dh, w.dhNext = w.dhNext, dh
	}
	// dWh = Σ_k h_{k-1}^T dz_k: one product over every step.
	gemm(true, false, H, 4*H, w.T*R, 1, w.hs[:w.T*RH], H, dzAll, 4*H, 0, w.dwh, 4*H)
	clear(w.db)
	clear(w.dpi)
	clear(w.dpf)
	clear(w.dpo)
	for k := range w.T {
		dz := dzAll[k*R4H : (k+1)*R4H]
		cp, cn := w.cs[k*RH:(k+1)*RH], w.cs[(k+1)*RH:(k+2)*RH]
		for r := range R {
			dzr := dz[r*4*H : (r+1)*4*H]
			for j, v := range dzr {
				w.db[j] += v
			}
			for j := range H {
				w.dpi[j] += dzr[j] * cp[r*H+j]
				w.dpf[j] += dzr[H+j] * cp[r*H+j]
				w.dpo[j] += dzr[3*H+j] * cn[r*H+j]
			}
		}
	}
	if w.backward {
		for k := range w.T {
			t := w.time(k)
			copy(dxw[t*R4H:(t+1)*R4H], w.dz[k*R4H:(k+1)*R4H])
		}
	}
}

// gemm is C = alpha·op(A)·op(B) + beta·C on gorgonia's BLAS (UseBLAS).
func gemm[T float](tA, tB bool, m, n, k int, alpha T, a []T, lda int, b []T, ldb int, beta T, c []T, ldc int) {
	ta, tb := blas.NoTrans, blas.NoTrans
	if tA {
		ta = blas.Trans
	}
	if tB {
		tb = blas.Trans
	}
	switch c := any(c).(type) {
	case []float32:
		G.WhichBLAS().Sgemm(ta, tb, m, n, k, float32(alpha), any(a).([]float32), lda, any(b).([]float32), ldb, float32(beta), c, ldc)
	case []float64:
		G.WhichBLAS().Dgemm(ta, tb, m, n, k, float64(alpha), any(a).([]float64), lda, any(b).([]float64), ldb, float64(beta), c, ldc)
	}
}

// SymDiff: one backward node computes dxw and keeps the parameters'
// gradients, which small nodes read out after it.
func (op *lstmOp[T]) DiffWRT(int) []bool { return []bool{true, true, true, true, true, true, false} }

func (op *lstmOp[T]) SymDiff(in G.Nodes, output, grad *G.Node) (G.Nodes, error) {
	back := &lstmGradOp[T]{w: op.w}
	dxw, err := G.ApplyOp(back, in[0], in[1], in[3], in[4], in[5], output, grad)
	if err != nil {
		return nil, err
	}
	out := G.Nodes{dxw, nil, nil, nil, nil, nil, nil}
	w, H := op.w, op.w.H
	for i, p := range []struct {
		src   *[]T
		shape tensor.Shape
	}{{&w.dwh, tensor.Shape{H, 4 * H}}, {&w.db, tensor.Shape{4 * H}}, {&w.dpi, tensor.Shape{H}}, {&w.dpf, tensor.Shape{H}}, {&w.dpo, tensor.Shape{H}}} {
		part := &partOp[T]{name: fmt.Sprintf("LSTMGradPart(%d)", i+1), src: func() []T { return *p.src }, shape: p.shape, in: 3}
		if out[i+1], err = G.ApplyOp(part, dxw); err != nil {
			return nil, err
		}
	}
	return out, nil
}

// lstmGradOp is the backward node: (xw, wh, pi, pf, po, h, dh) → dxw.
type lstmGradOp[T float] struct{ w *lstmWork[T] }

func (op *lstmGradOp[T]) Arity() int { return 7 }
func (op *lstmGradOp[T]) Type() hm.Type {
	a := hm.TypeVariable('a')
	t3, t2, t1 := G.TensorType{Dims: 3, Of: a}, G.TensorType{Dims: 2, Of: a}, G.TensorType{Dims: 1, Of: a}
	return hm.NewFnType(t3, t2, t1, t1, t1, t3, t3, t3)
}
func (op *lstmGradOp[T]) InferShape(...G.DimSizer) (tensor.Shape, error) {
	return tensor.Shape{op.w.T, op.w.R, 4 * op.w.H}, nil
}
func (op *lstmGradOp[T]) ReturnsPtr() bool      { return false }
func (op *lstmGradOp[T]) CallsExtern() bool     { return false }
func (op *lstmGradOp[T]) OverwritesInput() int  { return -1 }
func (op *lstmGradOp[T]) WriteHash(h hash.Hash) { opHash(op, h) }
func (op *lstmGradOp[T]) Hashcode() uint32      { return opHashcode(op) }
func (op *lstmGradOp[T]) String() string        { return "LSTMGrad" }

func (op *lstmGradOp[T]) Do(in ...G.Value) (G.Value, error) {
	w := op.w
	out := tensor.New(tensor.WithShape(w.T, w.R, 4*w.H), tensor.Of(in[0].Dtype()))
	return op.UsePreallocDo(out, in...)
}

func (op *lstmGradOp[T]) UsePreallocDo(prealloc G.Value, in ...G.Value) (G.Value, error) {
	if len(in) != 7 {
		return nil, fmt.Errorf("cpu: LSTM gradient node: %d inputs, want 7", len(in))
	}
	op.w.backwardPass(data[T](in[6]), data[T](in[1]), data[T](in[2]), data[T](in[3]), data[T](in[4]), data[T](prealloc))
	return prealloc, nil
}

// partOp reads out one gradient that a backward node computed and kept
// (src); its input, that node's output, orders it after the node.
type partOp[T float] struct {
	name  string
	src   func() []T
	shape tensor.Shape
	in    int // dimensions of the input
}

func (op *partOp[T]) Arity() int { return 1 }
func (op *partOp[T]) Type() hm.Type {
	a := hm.TypeVariable('a')
	return hm.NewFnType(G.TensorType{Dims: op.in, Of: a}, G.TensorType{Dims: op.shape.Dims(), Of: a})
}
func (op *partOp[T]) InferShape(...G.DimSizer) (tensor.Shape, error) { return op.shape.Clone(), nil }
func (op *partOp[T]) ReturnsPtr() bool                               { return false }
func (op *partOp[T]) CallsExtern() bool                              { return false }
func (op *partOp[T]) OverwritesInput() int                           { return -1 }
func (op *partOp[T]) WriteHash(h hash.Hash)                          { opHash(op, h) }
func (op *partOp[T]) Hashcode() uint32                               { return opHashcode(op) }
func (op *partOp[T]) String() string                                 { return op.name }

func (op *partOp[T]) Do(in ...G.Value) (G.Value, error) {
	out := tensor.New(tensor.WithShape(op.shape...), tensor.Of(in[0].Dtype()))
	return op.UsePreallocDo(out, in...)
}

func (op *partOp[T]) UsePreallocDo(prealloc G.Value, _ ...G.Value) (G.Value, error) {
	copy(data[T](prealloc), op.src())
	return prealloc, nil
}
