package cuda

// addMNRLKernels adds the Go twins of kernels/mnrl.cu.
func addMNRLKernels(ks *kernelTable) {
	ks[kPrefixNorm] = &kernel{name: "prefix_normalize",
		params:  []string{"n rows", "n d", "n ld", "f e", "f u", "f nrm"},
		threads: func(a []arg) int { return a[0].int() },
		body: func(r, _ int, a []hostArg) {
			rows, d, ld, e, u, nrm := a[0].n, a[1].n, a[2].n, a[3].f, a[4].f, a[5].f
			if r < rows {
				nrm[r] = unitRow(e[r*ld:], d, u[r*d:])
			}
		}}
	ks[kPrefixNormBwd] = &kernel{name: "prefix_normalize_bwd",
		params:  []string{"n rows", "n d", "n ld", "f u", "f nrm", "f du", "f de"},
		threads: func(a []arg) int { return a[0].int() },
		body: func(r, _ int, a []hostArg) {
			rows, d, ld, u, nrm, du, de := a[0].n, a[1].n, a[2].n, a[3].f, a[4].f, a[5].f, a[6].f
			if r < rows {
				unitRowBwd(u[r*d:], nrm[r], du[r*d:], d, true, de[r*ld:])
			}
		}}
}

// unitRow is margin.cu's unit_row: u[:d] = e[:d]/‖e[:d]‖ (with 1e-12
// under the root), returning the norm.
func unitRow(e []float32, d int, u []float32) float32 {
	var ss float32
	for k := range d {
		ss += e[k] * e[k]
	}
	s := sqrt32(ss + 1e-12)
	for k := range d {
		u[k] = e[k] / s
	}
	return s
}

// unitRowBwd is margin.cu's unit_row_bwd: (du − u·(u·du))/nrm added to
// de[:d] when add, else written there.
func unitRowBwd(u []float32, nrm float32, du []float32, d int, add bool, de []float32) {
	var dot float32
	for k := range d {
		dot += u[k] * du[k]
	}
	for k := range d {
		g := (du[k] - u[k]*dot) / nrm
		if add {
			g += de[k]
		}
		de[k] = g
	}
}
