package cuda

import "math"

// The Go twins of the transformer's kernels (kernels/transformer.cu), each
// beside the C function it twins.

// addTransformerKernels sets the transformer's kernels in ks.
func addTransformerKernels(ks *kernelTable) {
	ks[kTFInput] = &kernel{name: "tf_input",
		params:  []string{"n rows", "n T", "n d", "s scale", "f x", "f out"},
		threads: func(a []arg) int { return a[0].int() * a[1].int() * a[2].int() },
		body: func(tid, _ int, a []hostArg) {
			rows, T, d, scale, x, out := a[0].n, a[1].n, a[2].n, a[3].s, a[4].f, a[5].f
			if tid >= T*rows*d {
				return
			}
			u, t, h := tid%d, tid/(d*rows), d/2
			i := u
			if u >= h {
				i = u - h
			}
			w := math.Pow(10000, -2*float64(i)/float64(d))
			pe := math.Cos(float64(t) * w)
			if u < h {
				pe = math.Sin(float64(t) * w)
			}
			out[tid] = scale*x[tid] + float32(pe)
		}}
	ks[kScaleTo] = elementwise("scale_to", []string{"n n", "s s", "f v", "f out"}, func(tid int, a []hostArg) {
		a[3].f[tid] = a[1].s * a[2].f[tid]
	})
	ks[kLayerNormStats] = &kernel{name: "layer_norm_stats",
		params:  []string{"n rows", "n d", "s eps", "f x", "f mean", "f rstd"},
		threads: func(a []arg) int { return a[0].int() },
		body: func(r, _ int, a []hostArg) {
			rows, d, eps, x, mean, rstd := a[0].n, a[1].n, a[2].s, a[3].f, a[4].f, a[5].f
			if r >= rows {
				return
			}
			xr := x[r*d : (r+1)*d]
			var s float32
			for _, v := range xr {
				s += v
			}
			mu := s / float32(d)
			var v float32
			for _, xv := range xr {
				c := xv - mu
				v += c * c
			}
			mean[r], rstd[r] = mu, 1/sqrt32(v/float32(d)+eps)
		}}
	ks[kLayerNormApply] = &kernel{name: "layer_norm_apply",
		params:  []string{"n rows", "n d", "f x", "f mean", "f rstd", "f g", "f b", "f y"},
		threads: func(a []arg) int { return a[0].int() * a[1].int() },
		body: func(tid, _ int, a []hostArg) {
			rows, d, x, mean, rstd, g, b, y := a[0].n, a[1].n, a[2].f, a[3].f, a[4].f, a[5].f, a[6].f, a[7].f
			if tid >= rows*d {
				return
			}
			r, j := tid/d, tid%d
			y[tid] = g[j]*((x[tid]-mean[r])*rstd[r]) + b[j]
		}}
	ks[kLayerNormBwdStats] = &kernel{name: "layer_norm_bwd_stats",
		params:  []string{"n rows", "n d", "f x", "f mean", "f rstd", "f g", "f dy", "f se", "f sex"},
		threads: func(a []arg) int { return a[0].int() },
		body: func(r, _ int, a []hostArg) {
			rows, d, x, mean, rstd, g, dy, se, sex := a[0].n, a[1].n, a[2].f, a[3].f, a[4].f, a[5].f, a[6].f, a[7].f, a[8].f
			if r >= rows {
				return
			}
			xr, dr := x[r*d:(r+1)*d], dy[r*d:(r+1)*d]
			mu, rs := mean[r], rstd[r]
			var sa, sc float32
			for j := range d {
				e := dr[j] * g[j]
				sa += e
				sc += e * ((xr[j] - mu) * rs)
			}
			se[r], sex[r] = sa/float32(d), sc/float32(d)
		}}
	ks[kLayerNormBwd] = &kernel{name: "layer_norm_bwd",
		params:  []string{"n rows", "n d", "f x", "f mean", "f rstd", "f g", "f dy", "f se", "f sex", "s beta", "f dx"},
		threads: func(a []arg) int { return a[0].int() * a[1].int() },
		body: func(tid, _ int, a []hostArg) {
			rows, d, x, mean, rstd, g, dy := a[0].n, a[1].n, a[2].f, a[3].f, a[4].f, a[5].f, a[6].f
			se, sex, beta, dx := a[7].f, a[8].f, a[9].s, a[10].f
			if tid >= rows*d {
				return
			}
			r, j := tid/d, tid%d
			rs := rstd[r]
			v := rs * (dy[tid]*g[j] - se[r] - ((x[tid]-mean[r])*rs)*sex[r])
			if beta != 0 {
				dx[tid] = beta*dx[tid] + v
			} else {
				dx[tid] = v
			}
		}}
	ks[kLayerNormDyXhat] = &kernel{name: "layer_norm_dy_xhat",
		params:  []string{"n rows", "n d", "f x", "f mean", "f rstd", "f dy", "f out"},
		threads: func(a []arg) int { return a[0].int() * a[1].int() },
		body: func(tid, _ int, a []hostArg) {
			rows, d, x, mean, rstd, dy, out := a[0].n, a[1].n, a[2].f, a[3].f, a[4].f, a[5].f, a[6].f
			if tid >= rows*d {
				return
			}
			r := tid / d
			out[tid] = dy[tid] * ((x[tid] - mean[r]) * rstd[r])
		}}
	ks[kFillValue] = elementwise("fill_value", []string{"n n", "s v", "f out"}, func(tid int, a []hostArg) {
		a[2].f[tid] = a[1].s
	})
	ks[kBiasResidual] = &kernel{name: "bias_residual",
		params:  []string{"n rows", "n cols", "f x", "f b", "f out"},
		threads: func(a []arg) int { return a[0].int() * a[1].int() },
		body: func(tid, _ int, a []hostArg) {
			rows, cols, x, b, out := a[0].n, a[1].n, a[2].f, a[3].f, a[4].f
			if tid >= rows*cols {
				return
			}
			out[tid] = x[tid] + b[tid%cols]
		}}
	ks[kReluFwd] = elementwise("relu_fwd", []string{"n n", "f z"}, func(tid int, a []hostArg) {
		a[1].f[tid] = max(a[1].f[tid], 0)
	})
	ks[kReluBwd] = elementwise("relu_bwd", []string{"n n", "f y", "f dy", "f dz"}, func(tid int, a []hostArg) {
		if a[1].f[tid] > 0 {
			a[3].f[tid] = a[2].f[tid]
		} else {
			a[3].f[tid] = 0
		}
	})
	addAttentionKernels(ks)
}

// attnDims are the sizes every attention kernel reads from its first
// arguments (rows, T, d, H, lens).
type attnDims struct {
	rows, T, d, H, dk int
	lens              []int32
}

func attnArgs(a []hostArg) attnDims {
	return attnDims{rows: a[0].n, T: a[1].n, d: a[2].n, H: a[3].n, dk: a[2].n / a[3].n, lens: a[4].i}
}

// qkvAt is the index of column c of row (t, r) of a (T, rows, 3d) matrix.
func (z attnDims) qkvAt(t, r, c int) int { return (t*z.rows+r)*3*z.d + c }

// addAttentionKernels sets the attention kernels in ks.
func addAttentionKernels(ks *kernelTable) {
	rowsHT := func(a []arg) int { return a[0].int() * a[3].int() * a[1].int() }
	ks[kAttnScores] = &kernel{name: "attn_scores",
		params:  []string{"n rows", "n T", "n d", "n H", "i lens", "s scale", "f qkv", "f p"},
		threads: func(a []arg) int { return rowsHT(a) * a[1].int() },
		body: func(tid, _ int, a []hostArg) {
			z, scale, qkv, p := attnArgs(a), a[5].s, a[6].f, a[7].f
			T := z.T
			if tid >= z.rows*z.H*T*T {
				return
			}
			u, t, h, r := tid%T, (tid/T)%T, (tid/(T*T))%z.H, tid/(T*T*z.H)
			if u >= int(z.lens[r]) {
				p[tid] = 0
				return
			}
			q, k := qkv[z.qkvAt(t, r, h*z.dk):], qkv[z.qkvAt(u, r, z.d+h*z.dk):]
			var s float32
			for j := range z.dk {
				s += q[j] * k[j]
			}
			p[tid] = scale * s
		}}
	ks[kAttnSoftmax] = &kernel{name: "attn_softmax",
		params:  []string{"n rows", "n T", "n H", "i lens", "f p"},
		threads: func(a []arg) int { return a[0].int() * a[1].int() * a[2].int() },
		body: func(tid, _ int, a []hostArg) {
			rows, T, H, lens, p := a[0].n, a[1].n, a[2].n, a[3].i, a[4].f
			if tid >= rows*H*T {
				return
			}
			n := int(lens[tid/(T*H)])
			pr := p[tid*T : tid*T+n]
			mx := pr[0]
			for _, v := range pr[1:] {
				mx = max(mx, v)
			}
			var s float32
			for u, v := range pr {
				e := exp32(v - mx)
				pr[u] = e
				s += e
			}
			inv := 1 / s
			for u := range pr {
				pr[u] *= inv
			}
		}}
	ks[kAttnPV] = &kernel{name: "attn_pv",
		params:  []string{"n rows", "n T", "n d", "n H", "i lens", "f p", "f qkv", "f o"},
		threads: func(a []arg) int { return a[0].int() * a[1].int() * a[2].int() },
		body: func(tid, _ int, a []hostArg) {
			z, p, qkv, o := attnArgs(a), a[5].f, a[6].f, a[7].f
			if tid >= z.T*z.rows*z.d {
				return
			}
			c, r, t := tid%z.d, (tid/z.d)%z.rows, tid/(z.d*z.rows)
			h := c / z.dk
			pr := p[((r*z.H+h)*z.T+t)*z.T:]
			var s float32
			for u := range int(z.lens[r]) {
				s += pr[u] * qkv[z.qkvAt(u, r, 2*z.d+c)]
			}
			o[tid] = s
		}}
	ks[kAttnScoresBwd] = &kernel{name: "attn_scores_bwd",
		params:  []string{"n rows", "n T", "n d", "n H", "i lens", "s scale", "f p", "f qkv", "f dout", "f ds"},
		threads: rowsHT,
		body: func(tid, _ int, a []hostArg) {
			z, scale, p, qkv, dout, ds := attnArgs(a), a[5].s, a[6].f, a[7].f, a[8].f, a[9].f
			T := z.T
			if tid >= z.rows*z.H*T {
				return
			}
			t, h, r := tid%T, (tid/T)%z.H, tid/(T*z.H)
			n := int(z.lens[r])
			pr, dr := p[tid*T:(tid+1)*T], ds[tid*T:(tid+1)*T]
			g := dout[(t*z.rows+r)*z.d+h*z.dk:]
			var dot float32
			for u := range n {
				v := qkv[z.qkvAt(u, r, 2*z.d+h*z.dk):]
				var dp float32
				for j := range z.dk {
					dp += g[j] * v[j]
				}
				dr[u] = dp
				dot += pr[u] * dp
			}
			for u := range T {
				if u < n {
					dr[u] = scale * pr[u] * (dr[u] - dot)
				} else {
					dr[u] = 0
				}
			}
		}}
	ks[kAttnQKVBwd] = &kernel{name: "attn_qkv_bwd",
		params:  []string{"n rows", "n T", "n d", "n H", "i lens", "f p", "f ds", "f qkv", "f dout", "f dqkv"},
		threads: func(a []arg) int { return a[0].int() * a[1].int() * 3 * a[2].int() },
		body: func(tid, _ int, a []hostArg) {
			z, p, ds, qkv, dout, dqkv := attnArgs(a), a[5].f, a[6].f, a[7].f, a[8].f, a[9].f
			T, d := z.T, z.d
			if tid >= T*z.rows*3*d {
				return
			}
			c, r, t := tid%(3*d), (tid/(3*d))%z.rows, tid/(3*d*z.rows)
			part, cc := c/d, c%d
			h := cc / z.dk
			ph, dh := p[(r*z.H+h)*T*T:], ds[(r*z.H+h)*T*T:]
			var s float32
			switch part {
			case 0:
				for u := range int(z.lens[r]) {
					s += dh[t*T+u] * qkv[z.qkvAt(u, r, d+cc)]
				}
			case 1:
				for q := range T {
					s += dh[q*T+t] * qkv[z.qkvAt(q, r, cc)]
				}
			default:
				for q := range T {
					s += ph[q*T+t] * dout[(q*z.rows+r)*d+cc]
				}
			}
			dqkv[tid] = s
		}}
}
