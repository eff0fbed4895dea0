package cuda

// margin is the margin loss of Wieting & Gimpel (2017) Eq. 2-5 on the 2n
// embeddings p.emb (R, E), forward and backward: it leaves each row's
// hinge term on the device (the loss is their sum over n, on the host
// after the step) and returns the gradient of p.emb. Negatives as the
// batch says (max, rand, mix: p.negRand and p.useMax).
func (m *model) margin(s *seq, p *pass, n int) (lossTerms, ptr) {
	R, E, emb := 2*n, m.cfg.EmbedDim(), p.emb
	u, nrm := s.work("m.u", R*E), s.work("m.nrm", R)
	c, dc := s.work("m.c", R*R), s.work("m.dc", R*R)
	h, neg := s.work("m.h", R), s.work("m.neg", R)
	du, dEmb := s.work("m.du", R*E), s.work("m.demb", R*E)
	part, pv, pidx := s.work("m.part", R*rowLanes), s.work("m.pv", R*rowLanes), s.work("m.pidx", R*rowLanes)
	s.launch(kRowDotPart, argN(R), argN(E), argP(emb), argP(emb), argP(part))
	s.launch(kRowNormApply, argN(R), argN(E), argP(emb), argP(part), argP(u), argP(nrm))
	s.mm(mmDims{false, true, R, R, E}, matrix{u, E}, matrix{u, E}, 0, matrix{c, R}) // cosines
	s.launch(kMarginMaxPart, argN(n), argP(c), argI(p.negRand), argI(p.useMax), argP(pv), argI(pidx))
	s.launch(kMarginFwd, argN(n), argP(c), argS(float32(m.cfg.Margin)), argI(p.negRand), argI(p.useMax), argP(pv), argI(pidx), argP(h), argI(neg))
	s.zero(dc, R*R)
	s.launch(kMarginBwd, argN(n), argP(h), argI(neg), argP(dc))
	// C = U·U^T: dU = dC·U + dC^T·U.
	s.mm(mmDims{false, false, R, E, R}, matrix{dc, R}, matrix{u, E}, 0, matrix{du, E})
	s.mm(mmDims{true, false, R, E, R}, matrix{dc, R}, matrix{u, E}, 1, matrix{du, E})
	s.launch(kRowDotPart, argN(R), argN(E), argP(u), argP(du), argP(part))
	s.launch(kRowNormBwdApply, argN(R), argN(E), argP(u), argP(nrm), argP(du), argP(part), argP(dEmb))
	return lossTerms{terms: h, n: R, scale: 1 / float64(n)}, dEmb
}
