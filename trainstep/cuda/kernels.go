package cuda

import (
	"embed"
	"fmt"
	"io/fs"
	"math"
	"regexp"
	"slices"
	"strings"
)

// sources are the CUDA C kernels, compiled at run time by NVRTC.
//
//go:embed kernels/*.cu
var sources embed.FS

// Source returns the CUDA C source of every kernel as one NVRTC program:
// the files of kernels/ in name order, each after a #line directive naming
// it, so that compiler messages point into the right file.
func Source() string {
	names, err := fs.Glob(sources, "kernels/*.cu")
	if err != nil {
		panic("cuda: " + err.Error())
	}
	slices.Sort(names)
	var b strings.Builder
	for _, n := range names {
		data, err := sources.ReadFile(n)
		if err != nil {
			panic("cuda: " + err.Error())
		}
		fmt.Fprintf(&b, "#line 1 %q\n%s\n", n, data)
	}
	return b.String()
}

// BlockSize is the number of threads of every kernel's (one-dimensional)
// blocks; the grid is as many blocks as the kernel's threads need.
const BlockSize = 256

// Launch limits of every CUDA device of compute capability 3.0 and above.
const (
	maxGridX         = 1<<31 - 1
	maxThreadsPerBlk = 1024
)

// Kinds of kernel parameters, as in the C signatures.
const (
	pFloats  = 'f' // float* / const float*
	pInts    = 'i' // int* / const int*
	pDoubles = 'd' // double*
	pInt     = 'n' // int
	pFloat   = 's' // float
)

// kernel is one __global__ function of kernels/*.cu with its Go twin: the
// same body, run by the host emulator thread by thread over the same grid.
type kernel struct {
	name string
	// params are "kind name" in the order of the C signature.
	params []string
	// threads is the number of threads a launch needs, from its arguments.
	threads func(a []arg) int
	// fixedThreads, when positive, is the launch's size whatever the
	// arguments (a grid-stride kernel).
	fixedThreads int
	// body is the Go twin of the kernel's body for global thread tid.
	body func(tid, nthreads int, a []hostArg)
}

// launchDims is the grid of a launch of k with args: blocks of BlockSize
// threads, enough blocks for every thread.
func launchDims(k *kernel, a []arg) (grid, block int, err error) {
	n := k.fixedThreads
	if n == 0 {
		n = k.threads(a)
	}
	if n < 0 || n > math.MaxInt32 {
		return 0, 0, fmt.Errorf("kernel %s: %d threads: indices are 32-bit ints", k.name, n)
	}
	grid = max((n+BlockSize-1)/BlockSize, 1)
	if grid > maxGridX {
		return 0, 0, fmt.Errorf("kernel %s: %d blocks exceed the grid limit %d", k.name, grid, maxGridX)
	}
	return grid, BlockSize, nil
}

func sig(z float32) float32 { return 1 / (1 + float32(math.Exp(float64(-z)))) }

func tanh32(z float32) float32 { return float32(math.Tanh(float64(z))) }

func sqrt32(z float32) float32 { return float32(math.Sqrt(float64(z))) }

// addKernels sets the kernels of the encoders, the losses and the
// optimisers in ks, each beside the C function it twins
// (kernels/<file>.cu).
func addKernels(ks *kernelTable) {
	// embed.cu
	ks[kGather] = &kernel{name: "gather_embed",
		params:  []string{"n rows", "n T", "n d", "i ids", "i lens", "f emb", "f drop", "f x"},
		threads: func(a []arg) int { return a[0].int() * a[1].int() * a[2].int() },
		body: func(tid, _ int, a []hostArg) {
			rows, T, d, ids, lens, emb, drop, x := a[0].n, a[1].n, a[2].n, a[3].i, a[4].i, a[5].f, a[6].f, a[7].f
			if tid >= T*rows*d {
				return
			}
			u, r, t := tid%d, (tid/d)%rows, tid/(d*rows)
			if t >= int(lens[r]) {
				x[tid] = 0
				return
			}
			v := emb[int(ids[r*T+t])*d+u]
			if drop != nil {
				v *= drop[(r*T+t)*d+u]
			}
			x[tid] = v
		}}
	ks[kScatter] = &kernel{name: "scatter_add_embed",
		params:  []string{"n rows", "n T", "n d", "i ids", "i lens", "f drop", "f dx", "f grad"},
		threads: func(a []arg) int { return a[0].int() * a[1].int() * a[2].int() },
		body: func(tid, _ int, a []hostArg) {
			rows, T, d, ids, lens, drop, dx, grad := a[0].n, a[1].n, a[2].n, a[3].i, a[4].i, a[5].f, a[6].f, a[7].f
			if tid >= T*rows*d {
				return
			}
			u, r, t := tid%d, (tid/d)%rows, tid/(d*rows)
			if t >= int(lens[r]) {
				return
			}
			g := dx[tid]
			if drop != nil {
				g *= drop[(r*T+t)*d+u]
			}
			grad[int(ids[r*T+t])*d+u] += g // atomicAdd
		}}

	// reduce.cu
	ks[kMaskedMean] = &kernel{name: "masked_mean",
		params:  []string{"n rows", "n T", "n d", "i lens", "f v", "f out"},
		threads: func(a []arg) int { return a[0].int() * a[2].int() },
		body: func(tid, _ int, a []hostArg) {
			rows, d, lens, v, out := a[0].n, a[2].n, a[3].i, a[4].f, a[5].f
			if tid >= rows*d {
				return
			}
			u, r := tid%d, tid/d
			var s float32
			for t := 0; t < int(lens[r]); t++ {
				s += v[(t*rows+r)*d+u]
			}
			out[tid] = s * (1 / float32(lens[r]))
		}}
	ks[kMaskedMeanBwd] = spreadBwd("masked_mean_bwd", func(n float32) float32 { return 1 / n })
	ks[kFillRows] = &kernel{name: "fill_rows",
		params:  []string{"n rows", "n cols", "f b", "f out"},
		threads: func(a []arg) int { return a[0].int() * a[1].int() },
		body: func(tid, _ int, a []hostArg) {
			rows, cols, b, out := a[0].n, a[1].n, a[2].f, a[3].f
			if tid >= rows*cols {
				return
			}
			out[tid] = b[tid%cols]
		}}
	ks[kColReduce] = &kernel{name: "col_reduce",
		params:  []string{"n rows", "n cols", "n chunk", "n lda", "f a", "n ldm", "f mul", "f out"},
		threads: func(a []arg) int { return ceilDiv(a[0].int(), a[2].int()) * a[1].int() },
		body: func(tid, _ int, a []hostArg) {
			rows, cols, chunk, lda, x, ldm, mul, out := a[0].n, a[1].n, a[2].n, a[3].n, a[4].f, a[5].n, a[6].f, a[7].f
			if tid >= ceilDiv(rows, chunk)*cols {
				return
			}
			j, c := tid%cols, tid/cols
			var s float32
			for i := c * chunk; i < min(rows, (c+1)*chunk); i++ {
				if mul != nil {
					s += x[i*lda+j] * mul[i*ldm+j]
				} else {
					s += x[i*lda+j]
				}
			}
			out[tid] = s
		}}
	ks[kSumsqGrad] = &kernel{name: "sumsq_grad",
		params:       []string{"n n", "f w", "f w0", "s lambda", "f g", "d partial"},
		fixedThreads: sumsqThreads,
		body: func(tid, stride int, a []hostArg) {
			n, w, w0, lambda, g, partial := a[0].n, a[1].f, a[2].f, a[3].s, a[4].f, a[5].d
			var s float64
			for i := tid; i < n; i += stride {
				dv := w[i]
				if w0 != nil {
					dv = w[i] - w0[i]
				}
				s += float64(dv) * float64(dv)
				g[i] += 2 * lambda * dv
			}
			partial[tid] = s
		}}
	ks[kSumsqGradRows] = &kernel{name: "sumsq_grad_rows",
		params:       []string{"n nrows", "n width", "i rows", "f w", "f w0", "s lambda", "f g", "d partial"},
		fixedThreads: sumsqThreads,
		body: func(tid, stride int, a []hostArg) {
			nrows, width, rows, w, w0, lambda, g, partial := a[0].n, a[1].n, a[2].i, a[3].f, a[4].f, a[5].s, a[6].f, a[7].d
			var s float64
			for k := tid; k < nrows*width; k += stride {
				i := int(rows[k/width])*width + k%width
				dv := w[i]
				if w0 != nil {
					dv = w[i] - w0[i]
				}
				s += float64(dv) * float64(dv)
				g[i] += 2 * lambda * dv
			}
			partial[tid] = s
		}}
	ks[kNonFinite] = &kernel{name: "nonfinite",
		params:  []string{"n n", "f v", "i flag"},
		threads: func(a []arg) int { return a[0].int() },
		body: func(tid, _ int, a []hostArg) {
			n, v, flag := a[0].n, a[1].f, a[2].i
			if tid >= n {
				return
			}
			if f := float64(v[tid]); math.IsNaN(f) || math.IsInf(f, 0) {
				flag[0] |= 1 // atomicOr
			}
		}}

	// lstm.cu
	ks[kLSTMFwd] = &kernel{name: "lstm_cell_fwd",
		params: []string{"n rows", "n H", "n t", "i lens", "f z", "f pi", "f pf", "f po",
			"f c_prev", "f h_prev", "f c_out", "f h_out"},
		threads: func(a []arg) int { return a[0].int() * a[1].int() },
		body: func(tid, _ int, a []hostArg) {
			rows, H, t, lens, z := a[0].n, a[1].n, a[2].n, a[3].i, a[4].f
			pi, pf, po, cPrev, hPrev, cOut, hOut := a[5].f, a[6].f, a[7].f, a[8].f, a[9].f, a[10].f, a[11].f
			if tid >= rows*H {
				return
			}
			j, r := tid%H, tid/H
			cp := cPrev[tid]
			if t >= int(lens[r]) {
				cOut[tid] = cp
				hOut[tid] = hPrev[tid]
				return
			}
			zr := z[r*4*H:]
			i := sig(zr[j] + pi[j]*cp)
			f := sig(zr[H+j] + pf[j]*cp)
			g := tanh32(zr[2*H+j])
			c := f*cp + i*g
			o := sig(zr[3*H+j] + po[j]*c)
			zr[j], zr[H+j], zr[2*H+j], zr[3*H+j] = i, f, g, o
			cOut[tid] = c
			hOut[tid] = o * tanh32(c)
		}}
	ks[kLSTMBwd] = &kernel{name: "lstm_cell_bwd",
		params: []string{"n rows", "n H", "n t", "i lens", "f act", "f pi", "f pf", "f po",
			"f c_prev", "f c_cur", "f dh_ext", "f dh_rec", "f dc", "f dh_carry", "f dz"},
		threads: func(a []arg) int { return a[0].int() * a[1].int() },
		body: func(tid, _ int, a []hostArg) {
			rows, H, t, lens, act := a[0].n, a[1].n, a[2].n, a[3].i, a[4].f
			pi, pf, po, cPrev, cCur := a[5].f, a[6].f, a[7].f, a[8].f, a[9].f
			dhExt, dhRec, dc, dhCarry, dz := a[10].f, a[11].f, a[12].f, a[13].f, a[14].f
			if tid >= rows*H {
				return
			}
			j, r := tid%H, tid/H
			dh := dhExt[tid] + dhRec[tid]
			dzr := dz[r*4*H:]
			if t >= int(lens[r]) {
				dhCarry[tid] = dh
				dzr[j], dzr[H+j], dzr[2*H+j], dzr[3*H+j] = 0, 0, 0, 0
				return
			}
			ar := act[r*4*H:]
			i, f, g, o := ar[j], ar[H+j], ar[2*H+j], ar[3*H+j]
			cp := cPrev[tid]
			tc := tanh32(cCur[tid])
			dzo := dh * tc * o * (1 - o)
			dcn := dc[tid] + dh*o*(1-tc*tc) + dzo*po[j]
			dzi := dcn * g * i * (1 - i)
			dzf := dcn * cp * f * (1 - f)
			dzg := dcn * i * (1 - g*g)
			dc[tid] = dcn*f + dzi*pi[j] + dzf*pf[j]
			dhCarry[tid] = 0
			dzr[j], dzr[H+j], dzr[2*H+j], dzr[3*H+j] = dzi, dzf, dzg, dzo
		}}

	// gran.cu
	ks[kGateFwd] = &kernel{name: "gran_gate_fwd",
		params:  []string{"n n", "f x", "f z", "f a"},
		threads: func(a []arg) int { return a[0].int() },
		body: func(tid, _ int, a []hostArg) {
			n, x, z, out := a[0].n, a[1].f, a[2].f, a[3].f
			if tid >= n {
				return
			}
			s := sig(z[tid])
			z[tid] = s
			out[tid] = x[tid] * s
		}}
	ks[kGateBwd] = &kernel{name: "gran_gate_bwd",
		params:  []string{"n n", "f x", "f s", "f da", "f dx", "f dz"},
		threads: func(a []arg) int { return a[0].int() },
		body: func(tid, _ int, a []hostArg) {
			n, x, s, da, dx, dz := a[0].n, a[1].f, a[2].f, a[3].f, a[4].f, a[5].f
			if tid >= n {
				return
			}
			sv := s[tid]
			dx[tid] = da[tid] * sv
			dz[tid] = da[tid] * x[tid] * sv * (1 - sv)
		}}

	// margin.cu
	ks[kRowDotPart] = &kernel{name: "row_dot_part",
		params:  []string{"n rows", "n d", "f a", "f b", "f part"},
		threads: func(a []arg) int { return a[0].int() * rowLanes },
		body: func(tid, _ int, a []hostArg) {
			rows, d, x, y, part := a[0].n, a[1].n, a[2].f, a[3].f, a[4].f
			if tid >= rows*rowLanes {
				return
			}
			r := tid / rowLanes
			var s float32
			for k := tid % rowLanes; k < d; k += rowLanes {
				s += x[r*d+k] * y[r*d+k]
			}
			part[tid] = s
		}}
	ks[kRowNormApply] = &kernel{name: "row_normalize_apply",
		params:  []string{"n rows", "n d", "f e", "f part", "f u", "f nrm"},
		threads: func(a []arg) int { return a[0].int() * a[1].int() },
		body: func(tid, _ int, a []hostArg) {
			rows, d, e, part, u, nrm := a[0].n, a[1].n, a[2].f, a[3].f, a[4].f, a[5].f
			if tid >= rows*d {
				return
			}
			r := tid / d
			s := sqrt32(laneSum(part[r*rowLanes:]) + 1e-12)
			u[tid] = e[tid] / s
			if tid%d == 0 {
				nrm[r] = s
			}
		}}
	ks[kRowNormBwdApply] = &kernel{name: "row_normalize_bwd_apply",
		params:  []string{"n rows", "n d", "f u", "f nrm", "f du", "f part", "f de"},
		threads: func(a []arg) int { return a[0].int() * a[1].int() },
		body: func(tid, _ int, a []hostArg) {
			rows, d, u, nrm, du, part, de := a[0].n, a[1].n, a[2].f, a[3].f, a[4].f, a[5].f, a[6].f
			if tid >= rows*d {
				return
			}
			r := tid / d
			dot := laneSum(part[r*rowLanes:])
			de[tid] = (du[tid] - u[tid]*dot) / nrm[r]
		}}
	ks[kMarginMaxPart] = &kernel{name: "margin_max_part",
		params:  []string{"n n", "f C", "i neg_rand", "i use_max", "f pv", "i pidx"},
		threads: func(a []arg) int { return 2 * a[0].int() * rowLanes },
		body: func(tid, _ int, a []hostArg) {
			n, C, negRand, useMax, pv, pidx := a[0].n, a[1].f, a[2].i, a[3].i, a[4].f, a[5].i
			if tid >= 2*n*rowLanes {
				return
			}
			r := tid / rowLanes
			if negRand != nil && useMax[r] == 0 {
				return
			}
			i := r % n
			cr := C[r*2*n:]
			bv, best := float32(-1e30), -1
			for c := tid % rowLanes; c < 2*n; c += rowLanes {
				v := cr[c]
				if c == i || c == i+n {
					v -= 4
				}
				if v > bv {
					bv, best = v, c
				}
			}
			pv[tid], pidx[tid] = bv, int32(best)
		}}
	ks[kMarginFwd] = &kernel{name: "margin_fwd",
		params:  []string{"n n", "f C", "s delta", "i neg_rand", "i use_max", "f pv", "i pidx", "f h", "i neg"},
		threads: func(a []arg) int { return 2 * a[0].int() },
		body: func(r, _ int, a []hostArg) {
			n, C, delta, negRand, useMax, pv, pidx, h, neg := a[0].n, a[1].f, a[2].s, a[3].i, a[4].i, a[5].f, a[6].i, a[7].f, a[8].i
			if r >= 2*n {
				return
			}
			i := r % n
			best := 0
			if negRand != nil {
				best = int(negRand[r])
			}
			if negRand == nil || useMax[r] != 0 {
				bv, bi := float32(-1e30), -1
				for l := range rowLanes {
					c, v := int(pidx[r*rowLanes+l]), pv[r*rowLanes+l]
					if c >= 0 && (v > bv || (v == bv && c < bi)) {
						bv, bi = v, c
					}
				}
				if bi >= 0 {
					best = bi
				}
			}
			hv := delta - C[i*2*n+i+n] + C[r*2*n+best]
			h[r] = max(hv, 0)
			neg[r] = int32(best)
		}}
	ks[kMarginBwd] = &kernel{name: "margin_bwd",
		params:  []string{"n n", "f h", "i neg", "f dC"},
		threads: func(a []arg) int { return 2 * a[0].int() },
		body: func(r, _ int, a []hostArg) {
			n, h, neg, dC := a[0].n, a[1].f, a[2].i, a[3].f
			if r >= 2*n {
				return
			}
			g := 1 / float32(n)
			if h[r] > 0 {
				dC[r*2*n+int(neg[r])] = g
			}
			if r < n {
				var act float32
				if h[r] > 0 {
					act++
				}
				if h[r+n] > 0 {
					act++
				}
				dC[r*2*n+r+n] = -act * g
			}
		}}

	// optim.cu
	ks[kAdam] = &kernel{name: "adam",
		params:  []string{"n n", "f w", "f g", "f m", "f v", "f hyper", "s b1", "s b2", "s eps"},
		threads: func(a []arg) int { return a[0].int() },
		body: func(tid, _ int, a []hostArg) {
			n, w, g, m, v := a[0].n, a[1].f, a[2].f, a[3].f, a[4].f
			b1, b2, eps := a[6].s, a[7].s, a[8].s
			if tid >= n {
				return
			}
			lr, c1, c2 := a[5].f[0], a[5].f[1], a[5].f[2]
			gi := g[tid]
			mi := b1*m[tid] + (1-b1)*gi
			vi := b2*v[tid] + (1-b2)*gi*gi
			m[tid], v[tid] = mi, vi
			w[tid] -= lr * (mi * c1) / (sqrt32(vi*c2) + eps)
		}}
	ks[kSGD] = &kernel{name: "sgd",
		params:  []string{"n n", "f w", "f g", "f hyper"},
		threads: func(a []arg) int { return a[0].int() },
		body: func(tid, _ int, a []hostArg) {
			n, w, g, hyper := a[0].n, a[1].f, a[2].f, a[3].f
			if tid >= n {
				return
			}
			w[tid] -= hyper[0] * g[tid]
		}}
	ks[kRMSProp] = &kernel{name: "rmsprop",
		params:  []string{"n n", "f w", "f g", "f v", "f hyper", "s rho", "s eps"},
		threads: func(a []arg) int { return a[0].int() },
		body: func(tid, _ int, a []hostArg) {
			n, w, g, v, rho, eps := a[0].n, a[1].f, a[2].f, a[3].f, a[5].s, a[6].s
			if tid >= n {
				return
			}
			lr := a[4].f[0]
			gi := g[tid]
			vi := rho*v[tid] + (1-rho)*gi*gi
			v[tid] = vi
			w[tid] -= lr * gi / (sqrt32(vi) + eps)
		}}
}

// rowIndex is the index of the k-th value of the listed rows of a table of
// rows of width values.
func rowIndex(rows []int32, width, k int) int { return int(rows[k/width])*width + k%width }

// addRowKernels sets the optimisers' kernels over listed rows in ks.
func addRowKernels(ks *kernelTable) {
	ks[kAdamRows] = &kernel{name: "adam_rows",
		params:  []string{"n nrows", "n width", "i rows", "f w", "f g", "f m", "f v", "f d1", "f d2", "f s", "s lr", "s b1", "s b2", "s c1", "s c2", "s eps"},
		threads: func(a []arg) int { return a[0].int() * a[1].int() },
		body: func(tid, _ int, a []hostArg) {
			nrows, width, rows, w, g, m, v := a[0].n, a[1].n, a[2].i, a[3].f, a[4].f, a[5].f, a[6].f
			d1, d2, s := a[7].f, a[8].f, a[9].f
			lr, b1, b2, c1, c2, eps := a[10].s, a[11].s, a[12].s, a[13].s, a[14].s, a[15].s
			if tid >= nrows*width {
				return
			}
			k := tid / width
			i := rowIndex(rows, width, tid)
			m0, v0, wi := m[i], v[i], w[i]
			if s[k] != 0 && v0 > 0 {
				wi -= s[k] * m0 / sqrt32(v0)
			}
			m0 *= d1[k]
			v0 *= d2[k]
			gi := g[i]
			mi := b1*m0 + (1-b1)*gi
			vi := b2*v0 + (1-b2)*gi*gi
			m[i], v[i] = mi, vi
			w[i] = wi - lr*(mi*c1)/(sqrt32(vi*c2)+eps)
		}}
	ks[kSGDRows] = &kernel{name: "sgd_rows",
		params:  []string{"n nrows", "n width", "i rows", "f w", "f g", "s lr"},
		threads: func(a []arg) int { return a[0].int() * a[1].int() },
		body: func(tid, _ int, a []hostArg) {
			nrows, width, rows, w, g, lr := a[0].n, a[1].n, a[2].i, a[3].f, a[4].f, a[5].s
			if tid >= nrows*width {
				return
			}
			i := rowIndex(rows, width, tid)
			w[i] -= lr * g[i]
		}}
	ks[kRMSPropRows] = &kernel{name: "rmsprop_rows",
		params:  []string{"n nrows", "n width", "i rows", "f w", "f g", "f v", "f d2", "s lr", "s rho", "s eps"},
		threads: func(a []arg) int { return a[0].int() * a[1].int() },
		body: func(tid, _ int, a []hostArg) {
			nrows, width, rows, w, g, v, d2, lr, rho, eps := a[0].n, a[1].n, a[2].i, a[3].f, a[4].f, a[5].f, a[6].f, a[7].s, a[8].s, a[9].s
			if tid >= nrows*width {
				return
			}
			i := rowIndex(rows, width, tid)
			gi := g[i]
			vi := rho*(v[i]*d2[tid/width]) + (1-rho)*gi*gi
			v[i] = vi
			w[i] -= lr * gi / (sqrt32(vi) + eps)
		}}
}

// addCatchUpKernels sets the kernels of the lazy optimisers' catch-up in
// ks.
func addCatchUpKernels(ks *kernelTable) {
	ks[kCatchUpRows] = &kernel{name: "catch_up_rows",
		params:  []string{"n nrows", "n width", "i rows", "f w", "f m", "f v", "f d1", "f d2", "f s"},
		threads: func(a []arg) int { return a[0].int() * a[1].int() },
		body: func(tid, _ int, a []hostArg) {
			nrows, width, rows, w, m, v, d1, d2, s := a[0].n, a[1].n, a[2].i, a[3].f, a[4].f, a[5].f, a[6].f, a[7].f, a[8].f
			if tid >= nrows*width {
				return
			}
			k := tid / width
			i := rowIndex(rows, width, tid)
			m0, v0 := m[i], v[i]
			if s[k] != 0 && v0 > 0 {
				w[i] -= s[k] * m0 / sqrt32(v0)
			}
			m[i], v[i] = m0*d1[k], v0*d2[k]
		}}
	ks[kScaleRows] = &kernel{name: "scale_rows",
		params:  []string{"n nrows", "n width", "i rows", "f v", "f d"},
		threads: func(a []arg) int { return a[0].int() * a[1].int() },
		body: func(tid, _ int, a []hostArg) {
			nrows, width, rows, v, d := a[0].n, a[1].n, a[2].i, a[3].f, a[4].f
			if tid >= nrows*width {
				return
			}
			v[rowIndex(rows, width, tid)] *= d[tid/width]
		}}
}

// sumsqThreads is the fixed size of a sumsq_grad launch: its partial sums.
const sumsqThreads = 64 * BlockSize

// kernelID names a kernel: its index in a kernelTable. The model's code
// launches kernels by ID; each device keeps the table it runs them from.
type kernelID int

// The kernels, in the order of their files (kernels.go, kernels_ops.go,
// kernels_tf.go, then kernels_mnrl.go).
const (
	kGather kernelID = iota
	kScatter
	kGateFwd
	kGateBwd
	kLSTMFwd
	kLSTMBwd
	kRowDotPart
	kRowNormApply
	kRowNormBwdApply
	kMarginMaxPart
	kMarginFwd
	kMarginBwd
	kAdam
	kSGD
	kRMSProp
	kAdamRows
	kSGDRows
	kRMSPropRows
	kCatchUpRows
	kScaleRows
	kMaskedMean
	kMaskedMeanBwd
	kFillRows
	kColReduce
	kSumsqGrad
	kSumsqGradRows
	kNonFinite
	kDANSum
	kDANSumBwd
	kReverse
	kAddTo
	kTanhFwd
	kTanhBwd
	kSigmoidFwd
	kSigmoidBwd
	kDivLen
	kGRAN3Fwd
	kGRAN3Bwd
	kHingeFwd
	kHingeBwd
	kSoftmaxXentFwd
	kSoftmaxXentBwd
	kSimFeats
	kSimFeatsBwd
	kTFInput
	kScaleTo
	kLayerNormStats
	kLayerNormApply
	kLayerNormBwdStats
	kLayerNormBwd
	kLayerNormDyXhat
	kFillValue
	kBiasResidual
	kReluFwd
	kReluBwd
	kAttnScores
	kAttnSoftmax
	kAttnPV
	kAttnScoresBwd
	kAttnQKVBwd
	kPrefixNorm
	kPrefixNormBwd

	// numKernels is the number of kernels.
	numKernels
)

// rowLanes is margin.cu's ROW_LANES: the threads that share a row in the
// first of the row kernels' two passes.
const rowLanes = 32

// laneSum is margin.cu's lane_sum: a row's rowLanes partial sums added in
// lane order.
func laneSum(part []float32) float32 {
	var s float32
	for _, x := range part[:rowLanes] {
		s += x
	}
	return s
}

// ceilDiv is ⌈a/b⌉ for positive b.
func ceilDiv(a, b int) int { return (a + b - 1) / b }

// kernelTable is every kernel by ID.
type kernelTable [numKernels]*kernel

// newKernels returns a fresh table of every kernel; a device builds it
// once, when it is made.
func newKernels() *kernelTable {
	ks := new(kernelTable)
	addKernels(ks)
	addRowKernels(ks)
	addCatchUpKernels(ks)
	addOpKernels(ks)
	addTransformerKernels(ks)
	addMNRLKernels(ks)
	for id, k := range ks {
		if k == nil {
			panic(fmt.Sprintf("cuda: kernel %d has no twin", id))
		}
	}
	return ks
}

// KernelNames lists the kernels' C names.
func KernelNames() []string {
	ks := newKernels()
	out := make([]string, len(ks))
	for i, k := range ks {
		out[i] = k.name
	}
	return out
}

// cSignatures parses the kernels' C signatures from src into "kind name"
// lists by function name (the form of kernel.params).
func cSignatures(src string) (map[string][]string, error) {
	globalRE := regexp.MustCompile(`extern "C" __global__ void (\w+)\(([^)]*)\)`)
	out := map[string][]string{}
	for _, m := range globalRE.FindAllStringSubmatch(src, -1) {
		var ps []string
		for _, p := range strings.Split(m[2], ",") {
			f := strings.Fields(strings.ReplaceAll(p, "*", " * "))
			if len(f) < 2 {
				return nil, fmt.Errorf("kernel %s: cannot read parameter %q", m[1], p)
			}
			name := f[len(f)-1]
			typ := strings.Join(slices.DeleteFunc(f[:len(f)-1], func(s string) bool { return s == "const" }), " ")
			var kind byte
			switch typ {
			case "float *":
				kind = pFloats
			case "int *":
				kind = pInts
			case "double *":
				kind = pDoubles
			case "int":
				kind = pInt
			case "float":
				kind = pFloat
			default:
				return nil, fmt.Errorf("kernel %s: parameter %q of type %q", m[1], name, typ)
			}
			ps = append(ps, string(kind)+" "+name)
		}
		out[m[1]] = ps
	}
	return out, nil
}

// spreadBwd is the twin of a kernel that spreads a sentence's output
// gradient over its own steps, each scaled by the same factor of the
// sentence's length n (masked_mean_bwd: 1/n; dan_sum_bwd: 1/√n), and zeroes
// the padded steps: one thread per (step, row, unit).
func spreadBwd(name string, scale func(n float32) float32) *kernel {
	return &kernel{name: name,
		params:  []string{"n rows", "n T", "n d", "i lens", "f dout", "f dv"},
		threads: func(a []arg) int { return a[0].int() * a[1].int() * a[2].int() },
		body: func(tid, _ int, a []hostArg) {
			rows, T, d, lens, dout, dv := a[0].n, a[1].n, a[2].n, a[3].i, a[4].f, a[5].f
			if tid >= T*rows*d {
				return
			}
			u, r, t := tid%d, (tid/d)%rows, tid/(d*rows)
			if t < int(lens[r]) {
				dv[tid] = dout[r*d+u] * scale(float32(lens[r]))
			} else {
				dv[tid] = 0
			}
		}}
}
