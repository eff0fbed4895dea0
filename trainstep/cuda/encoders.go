package cuda

import "github.com/parastream/parastream/trainstep/compute"

// The encoders as sequences of cuBLAS products and kernels, forward and
// backward by hand; the CPU backend's graphs (trainstep/cpu/encoders.go)
// are the reference, compared on the same batch in the tests. Matrices are
// row-major, time-major over steps: row (t, r) of a (T·R, k) matrix is
// step t of sentence r.

// encode computes p.emb, keeping what the backward pass needs in p.
func (m *model) encode(s *seq, p *pass) {
	c := m.cfg
	R, T, d, H := p.R, p.T, c.Dim, c.Hidden
	switch c.Encoder {
	case compute.EncAvg:
		// Padded and dropped words are zero rows of x.
		p.emb = s.work("emb", R*d)
		s.launch(kMaskedMean, argN(R), argN(T), argN(d), argI(p.lens), argP(p.x), argP(p.emb))
	case compute.EncLSTM:
		m.lstmForward(s, p)
		p.emb = p.h.at(T * R * H) // the state after the last step: each row's last word (carried through padding)
	case compute.EncLSTMAvg:
		m.lstmForward(s, p)
		p.emb = s.work("emb", R*H)
		s.launch(kMaskedMean, argN(R), argN(T), argN(H), argI(p.lens), argP(p.h.at(R*H)), argP(p.emb))
	case compute.EncGRAN:
		// a_t = x_t ⊙ σ(x_t·Wx + h_t·Wh + b), averaged.
		m.lstmForward(s, p)
		p.gz, p.ga = s.work("gran.z", T*R*d), s.work("gran.a", T*R*d)
		s.launch(kFillRows, argN(T*R), argN(d), argP(m.w["gran.b"]), argP(p.gz))
		s.mm(false, false, T*R, d, d, p.x, d, m.w["gran.wx"], d, 1, p.gz, d)
		s.mm(false, false, T*R, d, H, p.h.at(R*H), H, m.w["gran.wh"], d, 1, p.gz, d)
		s.launch(kGateFwd, argN(T*R*d), argP(p.x), argP(p.gz), argP(p.ga))
		p.emb = s.work("emb", R*d)
		s.launch(kMaskedMean, argN(R), argN(T), argN(d), argI(p.lens), argP(p.ga), argP(p.emb))
	default:
		panic("cuda: encoder " + c.Encoder + " passed Supports")
	}
}

// lstmForward runs the peephole LSTM over x: p.z (T, R, 4H) ends with the
// gate activations, p.h and p.c (T+1, R, H) with the states, zero first.
func (m *model) lstmForward(s *seq, p *pass) {
	R, T, d, H := p.R, p.T, m.cfg.Dim, m.cfg.Hidden
	p.z = s.work("lstm.z", T*R*4*H)
	p.h, p.c = s.work("lstm.h", (T+1)*R*H), s.work("lstm.c", (T+1)*R*H)
	// z = x·Wx + b for every step at once.
	s.launch(kFillRows, argN(T*R), argN(4*H), argP(m.w["lstm.b"]), argP(p.z))
	s.mm(false, false, T*R, 4*H, d, p.x, d, m.w["lstm.wx"], 4*H, 1, p.z, 4*H)
	s.zero(p.h, R*H)
	s.zero(p.c, R*H)
	for t := range T {
		zt := p.z.at(t * R * 4 * H)
		if t > 0 { // h_{-1} = 0
			s.mm(false, false, R, 4*H, H, p.h.at(t*R*H), H, m.w["lstm.wh"], 4*H, 1, zt, 4*H)
		}
		s.launch(kLSTMFwd, argN(R), argN(H), argN(t), argI(p.lens), argP(zt),
			argP(m.w["lstm.pi"]), argP(m.w["lstm.pf"]), argP(m.w["lstm.po"]),
			argP(p.c.at(t*R*H)), argP(p.h.at(t*R*H)), argP(p.c.at((t+1)*R*H)), argP(p.h.at((t+1)*R*H)))
	}
}

// encodeBackward turns dEmb (R, EmbedDim) into the encoder's parameter
// gradients and p.dx, the gradient of x.
func (m *model) encodeBackward(s *seq, p *pass, dEmb ptr) {
	c := m.cfg
	R, T, d, H := p.R, p.T, c.Dim, c.Hidden
	p.dx = s.work("dx", T*R*d)
	switch c.Encoder {
	case compute.EncAvg:
		s.launch(kMaskedMeanBwd, argN(R), argN(T), argN(d), argI(p.lens), argP(dEmb), argP(p.dx))
	case compute.EncLSTM:
		dh := s.work("lstm.dhext", T*R*H)
		s.zero(dh, T*R*H)
		s.copy(dh.at((T-1)*R*H), dEmb, R*H)
		m.lstmBackward(s, p, dh, 0)
	case compute.EncLSTMAvg:
		dh := s.work("lstm.dhext", T*R*H)
		s.launch(kMaskedMeanBwd, argN(R), argN(T), argN(H), argI(p.lens), argP(dEmb), argP(dh))
		m.lstmBackward(s, p, dh, 0)
	case compute.EncGRAN:
		da, dz := s.work("gran.da", T*R*d), s.work("gran.dz", T*R*d)
		s.launch(kMaskedMeanBwd, argN(R), argN(T), argN(d), argI(p.lens), argP(dEmb), argP(da))
		s.launch(kGateBwd, argN(T*R*d), argP(p.x), argP(p.gz), argP(da), argP(p.dx), argP(dz))
		s.mm(true, false, d, d, T*R, p.x, d, dz, d, 0, m.g["gran.wx"], d)
		s.mm(true, false, H, d, T*R, p.h.at(R*H), H, dz, d, 0, m.g["gran.wh"], d)
		s.launch(kColSum, argN(T*R), argN(d), argP(dz), argP(m.g["gran.b"]))
		s.mm(false, true, T*R, d, d, dz, d, m.w["gran.wx"], d, 1, p.dx, d)
		dh := s.work("lstm.dhext", T*R*H)
		s.mm(false, true, T*R, H, d, dz, d, m.w["gran.wh"], d, 0, dh, H)
		m.lstmBackward(s, p, dh, 1)
	}
}

// lstmBackward is backpropagation through time from dhExt (T, R, H), the
// gradient of every h_t from outside the LSTM. It writes the LSTM's
// parameter gradients and adds dZ·Wx^T to p.dx (beta 0: p.dx is written,
// 1: added to).
func (m *model) lstmBackward(s *seq, p *pass, dhExt ptr, beta float32) {
	R, T, d, H := p.R, p.T, m.cfg.Dim, m.cfg.Hidden
	dz := s.work("lstm.dz", T*R*4*H)
	dc := s.work("lstm.dc", R*H)
	dhRec, dhCarry := s.work("lstm.dh0", R*H), s.work("lstm.dh1", R*H)
	s.zero(dc, R*H)
	s.zero(dhRec, R*H)
	for t := T - 1; t >= 0; t-- {
		dzt := dz.at(t * R * 4 * H)
		s.launch(kLSTMBwd, argN(R), argN(H), argN(t), argI(p.lens), argP(p.z.at(t*R*4*H)),
			argP(m.w["lstm.pi"]), argP(m.w["lstm.pf"]), argP(m.w["lstm.po"]),
			argP(p.c.at(t*R*H)), argP(p.c.at((t+1)*R*H)), argP(dhExt.at(t*R*H)), argP(dhRec),
			argP(dc), argP(dhCarry), argP(dzt))
		if t > 0 {
			// dh_{t-1} = carry + dZ_t·Wh^T
			s.mm(false, true, R, H, 4*H, dzt, 4*H, m.w["lstm.wh"], 4*H, 1, dhCarry, H)
		}
		dhRec, dhCarry = dhCarry, dhRec
	}
	g := m.g
	s.mm(true, false, d, 4*H, T*R, p.x, d, dz, 4*H, 0, g["lstm.wx"], 4*H)
	s.mm(true, false, H, 4*H, T*R, p.h, H, dz, 4*H, 0, g["lstm.wh"], 4*H) // h_{t-1} for every t
	s.launch(kColSum, argN(T*R), argN(4*H), argP(dz), argP(g["lstm.b"]))
	s.launch(kColDot, argN(T*R), argN(H), argN(4*H), argP(dz), argN(H), argP(p.c), argP(g["lstm.pi"]))
	s.launch(kColDot, argN(T*R), argN(H), argN(4*H), argP(dz.at(H)), argN(H), argP(p.c), argP(g["lstm.pf"]))
	s.launch(kColDot, argN(T*R), argN(H), argN(4*H), argP(dz.at(3*H)), argN(H), argP(p.c.at(R*H)), argP(g["lstm.po"]))
	s.mm(false, true, T*R, d, 4*H, dz, 4*H, m.w["lstm.wx"], 4*H, beta, p.dx, d)
}
