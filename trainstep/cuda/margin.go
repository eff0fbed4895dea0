package cuda

import (
	"github.com/parastream/parastream/trainstep/compute"
)

// margin is the margin loss of Wieting & Gimpel (2017) Eq. 2-5 on the 2n
// embeddings emb (R, E), forward and backward: it returns the loss and
// the gradient of emb (the loss: the mean of the rows' hinges h). Negatives as the Batch says (max, rand, mix).
func (m *model) margin(s *seq, emb ptr, n int, b *compute.Batch) (lossTerms, ptr) {
	R, E := 2*n, m.cfg.EmbedDim()
	u, nrm := s.work("m.u", R*E), s.work("m.nrm", R)
	c, dc := s.work("m.c", R*R), s.work("m.dc", R*R)
	h, neg := s.work("m.h", R), s.work("m.neg", R)
	du, dEmb := s.work("m.du", R*E), s.work("m.demb", R*E)
	var negRand, useMax ptr
	if b.NegRand != nil {
		negRand, useMax = s.work("m.negrand", R), s.work("m.usemax", R)
		um := make([]int32, R)
		for r, x := range b.NegUseMax {
			if x {
				um[r] = 1
			}
		}
		if s.err == nil {
			s.err = m.uploadI(negRand, b.NegRand)
		}
		if s.err == nil {
			s.err = m.uploadI(useMax, um)
		}
	}
	s.launch(kRowNorm, argN(R), argN(E), argP(emb), argP(u), argP(nrm))
	s.mm(false, true, R, R, E, u, E, u, E, 0, c, R) // cosines
	s.launch(kMarginFwd, argN(n), argP(c), argS(float32(m.cfg.Margin)), argI(negRand), argI(useMax), argP(h), argI(neg))
	s.zero(dc, R*R)
	s.launch(kMarginBwd, argN(n), argP(h), argI(neg), argP(dc))
	// C = U·U^T: dU = dC·U + dC^T·U.
	s.mm(false, false, R, E, R, dc, R, u, E, 0, du, E)
	s.mm(true, false, R, E, R, dc, R, u, E, 1, du, E)
	s.launch(kRowNormBwd, argN(R), argN(E), argP(u), argP(nrm), argP(du), argP(dEmb))
	return lossTerms{terms: h, n: R, scale: 1 / float64(n)}, dEmb
}
