package cuda

import "math"

// The Go twins of the kernels of the bidirectional, gran2-5 and DAN
// encoders and of the hinge, softmax and sim losses (kernels/dense.cu,
// dan.cu, gran3.cu, losses.cu), each beside the C function it twins.

func logf32(z float32) float32 { return float32(math.Log(float64(z))) }

func exp32(z float32) float32 { return float32(math.Exp(float64(z))) }

// elementwise is a kernel of one thread per value of its first argument n.
func elementwise(name string, params []string, body func(tid int, a []hostArg)) *kernel {
	return &kernel{name: name, params: params,
		threads: func(a []arg) int { return a[0].int() },
		body: func(tid, _ int, a []hostArg) {
			if tid < a[0].n {
				body(tid, a)
			}
		}}
}

// addOpKernels sets this file's kernels in ks.
func addOpKernels(ks *kernelTable) {
	// dense.cu
	ks[kReverse] = &kernel{name: "reverse_steps",
		params:  []string{"n rows", "n T", "n d", "i lens", "f x", "s beta", "f out"},
		threads: func(a []arg) int { return a[0].int() * a[1].int() * a[2].int() },
		body: func(tid, _ int, a []hostArg) {
			rows, T, d, lens, x, beta, out := a[0].n, a[1].n, a[2].n, a[3].i, a[4].f, a[5].s, a[6].f
			if tid >= T*rows*d {
				return
			}
			u, r, t := tid%d, (tid/d)%rows, tid/(d*rows)
			n := int(lens[r])
			var v float32
			if t < n {
				v = x[((n-1-t)*rows+r)*d+u]
			}
			if beta != 0 {
				out[tid] = beta*out[tid] + v
			} else {
				out[tid] = v
			}
		}}
	ks[kAddTo] = elementwise("add_to", []string{"n n", "f a", "f out"}, func(tid int, a []hostArg) {
		a[2].f[tid] += a[1].f[tid]
	})
	ks[kTanhFwd] = elementwise("tanh_fwd", []string{"n n", "f z"}, func(tid int, a []hostArg) {
		a[1].f[tid] = tanh32(a[1].f[tid])
	})
	ks[kTanhBwd] = elementwise("tanh_bwd", []string{"n n", "f y", "f dy", "f dz"}, func(tid int, a []hostArg) {
		v := a[1].f[tid]
		a[3].f[tid] = a[2].f[tid] * (1 - v*v)
	})
	ks[kSigmoidFwd] = elementwise("sigmoid_fwd", []string{"n n", "f z"}, func(tid int, a []hostArg) {
		a[1].f[tid] = sig(a[1].f[tid])
	})
	ks[kSigmoidBwd] = elementwise("sigmoid_bwd", []string{"n n", "f y", "f dy", "f dz"}, func(tid int, a []hostArg) {
		v := a[1].f[tid]
		a[3].f[tid] = a[2].f[tid] * v * (1 - v)
	})
	ks[kDivLen] = &kernel{name: "div_len",
		params:  []string{"n rows", "n d", "i lens", "f v", "f out"},
		threads: func(a []arg) int { return a[0].int() * a[1].int() },
		body: func(tid, _ int, a []hostArg) {
			rows, d, lens, v, out := a[0].n, a[1].n, a[2].i, a[3].f, a[4].f
			if tid >= rows*d {
				return
			}
			out[tid] = v[tid] * (1 / float32(lens[tid/d]))
		}}

	// dan.cu
	ks[kDANSum] = &kernel{name: "dan_sum",
		params:  []string{"n rows", "n T", "n d", "i lens", "f x", "f xb", "f out"},
		threads: func(a []arg) int { return a[0].int() * a[2].int() },
		body: func(tid, _ int, a []hostArg) {
			rows, d, lens, x, xb, out := a[0].n, a[2].n, a[3].i, a[4].f, a[5].f, a[6].f
			if tid >= rows*d {
				return
			}
			u, r := tid%d, tid/d
			var s float32
			for t := 0; t < int(lens[r]); t++ {
				k := (t*rows+r)*d + u
				s += x[k] + xb[k]
			}
			out[tid] = s * (1 / sqrt32(float32(lens[r])))
		}}
	ks[kDANSumBwd] = spreadBwd("dan_sum_bwd", func(n float32) float32 { return 1 / sqrt32(n) })

	// gran3.cu
	ks[kGRAN3Fwd] = &kernel{name: "gran3_step_fwd",
		params:  []string{"n rows", "n d", "n t", "i lens", "f x", "f z1", "f z2", "f a_prev", "f a_out"},
		threads: func(a []arg) int { return a[0].int() * a[1].int() },
		body: func(tid, _ int, a []hostArg) {
			rows, d, t, lens, x, z1, z2, aPrev, aOut := a[0].n, a[1].n, a[2].n, a[3].i, a[4].f, a[5].f, a[6].f, a[7].f, a[8].f
			if tid >= rows*d {
				return
			}
			if t >= int(lens[tid/d]) {
				aOut[tid] = aPrev[tid]
				return
			}
			s1, s2 := sig(z1[tid]), sig(z2[tid])
			z1[tid], z2[tid] = s1, s2
			aOut[tid] = x[tid]*s1 + aPrev[tid]*s2
		}}
	ks[kGRAN3Bwd] = &kernel{name: "gran3_step_bwd",
		params: []string{"n rows", "n d", "n t", "i lens", "f x", "f s1", "f s2", "f a_prev", "f da", "f dx",
			"f dz1", "f dz2"},
		threads: func(a []arg) int { return a[0].int() * a[1].int() },
		body: func(tid, _ int, a []hostArg) {
			rows, d, t, lens, x, s1, s2, aPrev := a[0].n, a[1].n, a[2].n, a[3].i, a[4].f, a[5].f, a[6].f, a[7].f
			da, dx, dz1, dz2 := a[8].f, a[9].f, a[10].f, a[11].f
			if tid >= rows*d {
				return
			}
			if t >= int(lens[tid/d]) {
				dx[tid], dz1[tid], dz2[tid] = 0, 0, 0
				return
			}
			g, v1, v2 := da[tid], s1[tid], s2[tid]
			dx[tid] = g * v1
			dz1[tid] = g * x[tid] * v1 * (1 - v1)
			dz2[tid] = g * aPrev[tid] * v2 * (1 - v2)
			da[tid] = g * v2
		}}

	// losses.cu
	ks[kHingeFwd] = &kernel{name: "hinge_fwd",
		params:  []string{"n n", "n E", "n k", "f emb", "s delta", "i neg_b", "i neg_a", "f h"},
		threads: func(a []arg) int { return a[0].int() },
		body: func(i, _ int, a []hostArg) {
			n, E, k, emb, delta, negB, negA, h := a[0].n, a[1].n, a[2].n, a[3].f, a[4].s, a[5].i, a[6].i, a[7].f
			if i >= n {
				return
			}
			av, bv := emb[i*E:], emb[(n+i)*E:]
			var pd float32
			for u := range E {
				pd += (av[u] - bv[u]) * (av[u] - bv[u])
			}
			for m := range k {
				bj, aj := emb[(n+int(negB[i*k+m]))*E:], emb[int(negA[i*k+m])*E:]
				var d1, d2 float32
				for u := range E {
					d1 += (av[u] - bj[u]) * (av[u] - bj[u])
					d2 += (bv[u] - aj[u]) * (bv[u] - aj[u])
				}
				h[i*2*k+m] = max(delta+pd-d1, 0)
				h[i*2*k+k+m] = max(delta+pd-d2, 0)
			}
		}}
	ks[kHingeBwd] = &kernel{name: "hinge_bwd",
		params: []string{"n n", "n E", "n k", "f emb", "i neg_b", "i neg_a", "f h", "i in_b_off", "i in_b",
			"i in_a_off", "i in_a", "s scale", "f demb"},
		threads: func(a []arg) int { return 2 * a[0].int() * a[1].int() },
		body: func(tid, _ int, a []hostArg) {
			n, E, k, emb, negB, negA, h := a[0].n, a[1].n, a[2].n, a[3].f, a[4].i, a[5].i, a[6].f
			inBOff, inB, inAOff, inA, scale, demb := a[7].i, a[8].i, a[9].i, a[10].i, a[11].s, a[12].f
			if tid >= 2*n*E {
				return
			}
			u, r := tid%E, tid/E
			i := r % n
			ai, bi := emb[i*E+u], emb[(n+i)*E+u]
			var g float32
			if r < n {
				for m := range k {
					if h[i*2*k+m] > 0 {
						g += 2 * (emb[(n+int(negB[i*k+m]))*E+u] - bi)
					}
					if h[i*2*k+k+m] > 0 {
						g += 2 * (ai - bi)
					}
				}
				for q := inAOff[i]; q < inAOff[i+1]; q++ {
					e := int(inA[q])
					i2 := e / k
					if h[i2*2*k+k+e%k] > 0 {
						g += 2 * (emb[(n+i2)*E+u] - ai)
					}
				}
			} else {
				for m := range k {
					if h[i*2*k+m] > 0 {
						g -= 2 * (ai - bi)
					}
					if h[i*2*k+k+m] > 0 {
						g += 2 * (emb[int(negA[i*k+m])*E+u] - ai)
					}
				}
				for q := inBOff[i]; q < inBOff[i+1]; q++ {
					e := int(inB[q])
					i2 := e / k
					if h[i2*2*k+e%k] > 0 {
						g += 2 * (emb[i2*E+u] - bi)
					}
				}
			}
			demb[tid] = scale * g
		}}
	ks[kSoftmaxXentFwd] = &kernel{name: "softmax_xent_fwd",
		params:  []string{"n rows", "n K", "f z", "f target", "f loss", "f tsum"},
		threads: func(a []arg) int { return a[0].int() },
		body: func(r, _ int, a []hostArg) {
			rows, K, z, target, loss, tsum := a[0].n, a[1].n, a[2].f, a[3].f, a[4].f, a[5].f
			if r >= rows {
				return
			}
			zr := z[r*K : (r+1)*K]
			mx := zr[0]
			for k := 1; k < K; k++ {
				mx = max(mx, zr[k])
			}
			var s float32
			for k := range K {
				s += exp32(zr[k] - mx)
			}
			lse := mx + logf32(s)
			var l, ts float32
			for k := range K {
				t := softmaxTarget(target, r, K, k)
				lp := zr[k] - lse
				if t != 0 {
					l -= t * lp
				}
				ts += t
				zr[k] = exp32(lp)
			}
			loss[r], tsum[r] = l, ts
		}}
	ks[kSoftmaxXentBwd] = &kernel{name: "softmax_xent_bwd",
		params:  []string{"n rows", "n K", "f p", "f target", "f tsum", "s scale", "f dz"},
		threads: func(a []arg) int { return a[0].int() * a[1].int() },
		body: func(tid, _ int, a []hostArg) {
			rows, K, p, target, tsum, scale, dz := a[0].n, a[1].n, a[2].f, a[3].f, a[4].f, a[5].s, a[6].f
			if tid >= rows*K {
				return
			}
			k, r := tid%K, tid/K
			dz[tid] = scale * (p[tid]*tsum[r] - softmaxTarget(target, r, K, k))
		}}
	ks[kSimFeats] = &kernel{name: "sim_feats",
		params:  []string{"n n", "n E", "f emb", "f hx", "f hp"},
		threads: func(a []arg) int { return a[0].int() * a[1].int() },
		body: func(tid, _ int, a []hostArg) {
			n, E, emb, hx, hp := a[0].n, a[1].n, a[2].f, a[3].f, a[4].f
			if tid >= n*E {
				return
			}
			av, bv := emb[tid], emb[n*E+tid]
			hx[tid] = av * bv
			hp[tid] = float32(math.Abs(float64(av - bv)))
		}}
	ks[kSimFeatsBwd] = &kernel{name: "sim_feats_bwd",
		params:  []string{"n n", "n E", "f emb", "f dhx", "f dhp", "f demb"},
		threads: func(a []arg) int { return a[0].int() * a[1].int() },
		body: func(tid, _ int, a []hostArg) {
			n, E, emb, dhx, dhp, demb := a[0].n, a[1].n, a[2].f, a[3].f, a[4].f, a[5].f
			if tid >= n*E {
				return
			}
			av, bv := emb[tid], emb[n*E+tid]
			var sg float32
			if av > bv {
				sg = 1
			} else if av < bv {
				sg = -1
			}
			demb[tid] = dhx[tid]*bv + dhp[tid]*sg
			demb[n*E+tid] = dhx[tid]*av - dhp[tid]*sg
		}}
}

// softmaxTarget is target[r][k], the identity where target is NULL.
func softmaxTarget(target []float32, r, K, k int) float32 {
	if target != nil {
		return target[r*K+k]
	}
	if k == r {
		return 1
	}
	return 0
}
