package cuda

// mnrl is the in-batch softmax over scaled cosines (compute.LossMNRL,
// sentence-transformers' MultipleNegativesRankingLoss) on p.emb, the rows
// laid out A (n), B (n) and, when the batch has them, its hard negatives
// (n), as the CPU backend's (trainstep/cpu/mnrl.go):
//
//	Σ_d 1/n Σ_i −log softmax_j(s·cos(a_i[:d], c_j[:d]))_i
//
// over the candidates c = (b_1..b_n, neg_1..neg_n) and the Matryoshka
// prefixes d; with Symmetric each prefix's term is the mean of that and
// the same from each b_i over every a_j. Per prefix: the unit vectors U
// (prefix_normalize), the scaled cosines by cuBLAS, the softmax loss's
// kernels with the identity as the target, then dU by cuBLAS and its
// gradient added into the rows' first d units (prefix_normalize_bwd).
func (m *model) mnrl(s *seq, p *pass, n int) (lossTerms, ptr) {
	R, E, emb, cfg := p.R, m.cfg.EmbedDim(), p.emb, m.cfg
	C := R - n // the candidates: B, then the hard negatives
	dims := cfg.MatryoshkaDims()
	sides, w := 1, float32(1)
	if cfg.Symmetric {
		sides, w = 2, 0.5
	}
	sc := float32(cfg.Scale)
	terms := s.work("mnrl.loss", sides*len(dims)*n)
	u, du, nrm := s.work("mnrl.u", R*E), s.work("mnrl.du", R*E), s.work("mnrl.nrm", R)
	ab, tsum := s.work("mnrl.s", n*C), s.work("mnrl.tsum", n)
	dEmb := s.work("m.demb", R*E)
	s.zero(dEmb, R*E)
	t := 0
	for _, d := range dims {
		uA, uB := matrix{u, d}, matrix{u.at(n * d), d}
		s.launch(kPrefixNorm, argN(R), argN(d), argN(E), argP(emb), argP(u), argP(nrm))
		// S = s·U_A·U_Cᵀ; dS = w·s/n·(P − I); dU_A = dS·U_C, dU_C = dSᵀ·U_A.
		s.mmScaled(mmDims{false, true, n, C, d}, sc, uA, uB, 0, matrix{ab, C})
		s.launch(kSoftmaxXentFwd, argN(n), argN(C), argP(ab), argP(ptr{}), argP(terms.at(t*n)), argP(tsum))
		s.launch(kSoftmaxXentBwd, argN(n), argN(C), argP(ab), argP(ptr{}), argP(tsum), argS(w*sc/float32(n)), argP(ab))
		s.mm(mmDims{false, false, n, d, C}, matrix{ab, C}, uB, 0, matrix{du, d})
		s.mm(mmDims{true, false, C, d, n}, matrix{ab, C}, uA, 0, matrix{du.at(n * d), d})
		t++
		if cfg.Symmetric {
			// From B over A: S' = s·U_B·U_Aᵀ (n, n); dU_B += dS'·U_A, dU_A += dS'ᵀ·U_B.
			ba := s.work("mnrl.s2", n*n)
			s.mmScaled(mmDims{false, true, n, n, d}, sc, uB, uA, 0, matrix{ba, n})
			s.launch(kSoftmaxXentFwd, argN(n), argN(n), argP(ba), argP(ptr{}), argP(terms.at(t*n)), argP(tsum))
			s.launch(kSoftmaxXentBwd, argN(n), argN(n), argP(ba), argP(ptr{}), argP(tsum), argS(w*sc/float32(n)), argP(ba))
			s.mm(mmDims{false, false, n, d, n}, matrix{ba, n}, uA, 1, matrix{du.at(n * d), d})
			s.mm(mmDims{true, false, n, d, n}, matrix{ba, n}, uB, 1, matrix{du, d})
			t++
		}
		s.launch(kPrefixNormBwd, argN(R), argN(d), argN(E), argP(u), argP(nrm), argP(du), argP(dEmb))
	}
	return lossTerms{terms: terms, n: t * n, scale: float64(w) / float64(n)}, dEmb
}

// mmScaled is mm with the product times alpha: C = alpha·op(A)·op(B) + beta·C.
func (s *seq) mmScaled(d mmDims, alpha float32, a, b matrix, beta float32, c matrix) {
	if s.err == nil {
		s.err = s.m.dev.gemm(d.tB, d.tA, d.N, d.M, d.K, alpha, b.p, b.ld, a.p, a.ld, beta, c.p, c.ld)
	}
}
