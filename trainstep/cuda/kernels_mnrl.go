package cuda

// addMNRLKernels adds the Go twins of kernels/mnrl.cu.
func addMNRLKernels(ks *kernelTable) {
	ks[kPrefixNorm] = &kernel{name: "prefix_normalize",
		params:  []string{"n rows", "n d", "n ld", "f e", "f u", "f nrm"},
		threads: func(a []arg) int { return a[0].int() },
		body: func(r, _ int, a []hostArg) {
			rows, d, ld, e, u, nrm := a[0].n, a[1].n, a[2].n, a[3].f, a[4].f, a[5].f
			if r >= rows {
				return
			}
			er := e[r*ld:]
			var ss float32
			for k := range d {
				ss += er[k] * er[k]
			}
			s := sqrt32(ss + 1e-12)
			nrm[r] = s
			for k := range d {
				u[r*d+k] = er[k] / s
			}
		}}
	ks[kPrefixNormBwd] = &kernel{name: "prefix_normalize_bwd",
		params:  []string{"n rows", "n d", "n ld", "f u", "f nrm", "f du", "f de"},
		threads: func(a []arg) int { return a[0].int() },
		body: func(r, _ int, a []hostArg) {
			rows, d, ld, u, nrm, du, de := a[0].n, a[1].n, a[2].n, a[3].f, a[4].f, a[5].f, a[6].f
			if r >= rows {
				return
			}
			ur, dur := u[r*d:], du[r*d:]
			var dot float32
			for k := range d {
				dot += ur[k] * dur[k]
			}
			for k := range d {
				de[r*ld+k] += (dur[k] - ur[k]*dot) / nrm[r]
			}
		}}
}
