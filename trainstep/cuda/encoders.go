package cuda

import "github.com/parastream/parastream/trainstep/compute"

// The encoders as sequences of cuBLAS products and kernels, forward and
// backward by hand; the CPU backend's graphs (trainstep/cpu/encoders.go)
// are the reference, compared on the same batch in the tests. Matrices are
// row-major, time-major over steps: row (t, r) of a (T·R, k) matrix is
// step t of sentence r.
//
// A backward direction (bilstmavg, bigran) is the forward one run on each
// sentence's words reversed in time (reverse_steps; padding stays at the
// end): the CPU's backward LSTM carries its zero state through the padded
// steps and then reads the words from the last, which is the same, and
// the means and gated sums are over the sentence's own steps either way.
// Its input gradient is reversed back and added.

// dirState is what one direction of an encoder keeps for its backward
// pass.
type dirState struct {
	prefix  string // of its parameters: "", "fwd." or "bwd."
	x       ptr    // (T, R, Dim) its words: the batch's, or them reversed in time
	z, h, c ptr    // LSTM: activations (T, R, 4H), states (T+1, R, H) with step -1 first
	s1, s2  ptr    // gate activations σ(·) over every step: gate "" or "1", gate "2"
	a1, a2  ptr    // gated values (gran, gran2, gran5)
	run     ptr    // gran3, gran4: running states a (T+1, R, Dim), a_{-1} = 0 first
}

// hs is h_t for every step t: (T, R, H).
func (d *dirState) hs(R, H int) ptr { return d.h.at(R * H) }

// encState is what the encoder of a pass keeps for its backward pass.
type encState struct {
	dirs []*dirState
	dan  danState // dan.go
	tf   tfState  // transformer.go
}

// directions are the encoder's directions: the batch's words, then, for
// a bidirectional encoder (bi), them reversed in time.
func (m *model) directions(s *seq, p *pass, bi bool) []*dirState {
	if bi {
		R, T, d := p.R, p.T, m.cfg.Dim
		xr := s.work("x.rev", T*R*d)
		s.launch(kReverse, argN(R), argN(T), argN(d), argI(p.lens), argP(p.x), argS(0), argP(xr))
		return []*dirState{{prefix: "fwd.", x: p.x}, {prefix: "bwd.", x: xr}}
	}
	return []*dirState{{x: p.x}}
}

// meanInto writes (direction 0) or adds (direction 1) the mean of v (T, R,
// dim) over each sentence's steps to p.emb.
func (m *model) meanInto(s *seq, p *pass, i int, v ptr, dim int) {
	if i == 0 {
		s.launch(kMaskedMean, argN(p.R), argN(p.T), argN(dim), argI(p.lens), argP(v), argP(p.emb))
		return
	}
	tmp := s.work("emb.bwd", p.R*dim)
	s.launch(kMaskedMean, argN(p.R), argN(p.T), argN(dim), argI(p.lens), argP(v), argP(tmp))
	s.launch(kAddTo, argN(p.R*dim), argP(tmp), argP(p.emb))
}

// encode computes p.emb, keeping what the backward pass needs in p.
func (m *model) encode(s *seq, p *pass) {
	p.enc = encState{}
	m.encoder.forward(m, s, p)
}

// encoderKernels is the CUDA backend's builder of one encoder: its
// forward and backward passes as products and kernels.
type encoderKernels struct {
	// forward computes p.emb, keeping what backward needs in p.enc.
	forward func(m *model, s *seq, p *pass)
	// backward turns dEmb (R, EmbedDim) into the encoder's parameter
	// gradients and p.dx (allocated, (T, R, Dim)), the gradient of x.
	backward func(m *model, s *seq, p *pass, dEmb ptr)
}

// encoderTable is the CUDA backend's encoder table, keyed by
// compute.EncoderSpec.Name: the backend runs an encoder exactly when it
// has an entry here (Supports refuses the others), and the entry's spec
// names compute.BackendCUDA (a test checks that the two agree). Adding
// an encoder to the GPU adds its entry here, its spec naming the backend.
func encoderTable() map[string]encoderKernels {
	return map[string]encoderKernels{
		compute.EncAvg:         {(*model).avgForward, (*model).avgBackward},
		compute.EncLSTM:        {(*model).lstmLastForward, (*model).lstmLastBackward},
		compute.EncLSTMAvg:     {lstmMeanForward(false), (*model).lstmMeanBackward},
		compute.EncBiLSTMAvg:   {lstmMeanForward(true), (*model).lstmMeanBackward},
		compute.EncGRAN:        {granForward(false), (*model).granBackward},
		compute.EncBiGRAN:      {granForward(true), (*model).granBackward},
		compute.EncGRAN2:       {(*model).gran2Forward, (*model).gran2Backward},
		compute.EncGRAN3:       {granRunningForward(false), granRunningBackward(false)},
		compute.EncGRAN4:       {granRunningForward(true), granRunningBackward(true)},
		compute.EncGRAN5:       {(*model).gran5Forward, (*model).gran5Backward},
		compute.EncDAN:         {(*model).danForward, (*model).danBackward}, // dan.go
		compute.EncTransformer: {(*model).tfForward, (*model).tfBackward},   // transformer.go
	}
}

// avgForward: padded and dropped words are zero rows of x.
func (m *model) avgForward(s *seq, p *pass) {
	R, T, d := p.R, p.T, m.cfg.Dim
	p.emb = s.work("emb", R*d)
	s.launch(kMaskedMean, argN(R), argN(T), argN(d), argI(p.lens), argP(p.x), argP(p.emb))
}

// lstmLastForward is lstm's: the LSTM's last state.
func (m *model) lstmLastForward(s *seq, p *pass) {
	R, T, H := p.R, p.T, m.cfg.Hidden
	dir := m.directions(s, p, false)[0]
	p.enc.dirs = []*dirState{dir}
	m.lstmForward(s, p, dir)
	p.emb = dir.h.at(T * R * H) // the state after the last step: each row's last word (carried through padding)
}

// lstmMeanForward is lstmavg's, and bilstmavg's (bi): the mean of the
// LSTM's states.
func lstmMeanForward(bi bool) func(m *model, s *seq, p *pass) {
	return func(m *model, s *seq, p *pass) {
		R, H := p.R, m.cfg.Hidden
		p.enc.dirs = m.directions(s, p, bi)
		p.emb = s.work("emb", R*H)
		for i, dir := range p.enc.dirs {
			m.lstmForward(s, p, dir)
			m.meanInto(s, p, i, dir.hs(R, H), H)
		}
	}
}

// granForward is gran's, and bigran's (bi): a_t = x_t ⊙ σ(x_t·Wx +
// h_t·Wh + b), averaged.
func granForward(bi bool) func(m *model, s *seq, p *pass) {
	return func(m *model, s *seq, p *pass) {
		R, T, d := p.R, p.T, m.cfg.Dim
		p.enc.dirs = m.directions(s, p, bi)
		p.emb = s.work("emb", R*d)
		for i, dir := range p.enc.dirs {
			m.lstmForward(s, p, dir)
			dir.s1, dir.a1 = m.gatePre(s, p, dir, "", d), s.work(dir.prefix+"gran.a", T*R*d)
			s.launch(kGateFwd, argN(T*R*d), argP(dir.x), argP(dir.s1), argP(dir.a1))
			m.meanInto(s, p, i, dir.a1, d)
		}
	}
}

// gran2Forward: a_t = h_t ⊙ σ(x_t·Wx + h_t·Wh + b), averaged over the
// sentence's steps (the CPU's h is 0 at padded steps; here they are left
// out).
func (m *model) gran2Forward(s *seq, p *pass) {
	R, T, H := p.R, p.T, m.cfg.Hidden
	dir := m.directions(s, p, false)[0]
	p.enc.dirs = []*dirState{dir}
	m.lstmForward(s, p, dir)
	dir.s1, dir.a1 = m.gatePre(s, p, dir, "", H), s.work("gran.a", T*R*H)
	s.launch(kGateFwd, argN(T*R*H), argP(dir.hs(R, H)), argP(dir.s1), argP(dir.a1))
	p.emb = s.work("emb", R*H)
	m.meanInto(s, p, 0, dir.a1, H)
}

// gran5Forward: a_t = x_t ⊙ σ(g1) + h_t ⊙ σ(g2), both gates of x_t and
// h_t, averaged (Hidden = Dim).
func (m *model) gran5Forward(s *seq, p *pass) {
	R, T, d, H := p.R, p.T, m.cfg.Dim, m.cfg.Hidden
	dir := m.directions(s, p, false)[0]
	p.enc.dirs = []*dirState{dir}
	m.lstmForward(s, p, dir)
	dir.s1, dir.a1 = m.gatePre(s, p, dir, "1", d), s.work("gran.a1", T*R*d)
	dir.s2, dir.a2 = m.gatePre(s, p, dir, "2", d), s.work("gran.a2", T*R*d)
	s.launch(kGateFwd, argN(T*R*d), argP(dir.x), argP(dir.s1), argP(dir.a1))
	s.launch(kGateFwd, argN(T*R*d), argP(dir.hs(R, H)), argP(dir.s2), argP(dir.a2))
	s.launch(kAddTo, argN(T*R*d), argP(dir.a2), argP(dir.a1))
	p.emb = s.work("emb", R*d)
	m.meanInto(s, p, 0, dir.a1, d)
}

// granRunningForward is gran3's, and gran4's (withA): a_t = x_t⊙σ(g1) +
// a_{t-1}⊙σ(g2), kept through padding; the embedding is a_{T-1}/len. The
// gates' x and h products are GEMMs over every step; gran4's a_{t-1}·Wa
// are GEMMs per step.
func granRunningForward(withA bool) func(m *model, s *seq, p *pass) {
	return func(m *model, s *seq, p *pass) {
		R, T, d := p.R, p.T, m.cfg.Dim
		dir := m.directions(s, p, false)[0]
		p.enc.dirs = []*dirState{dir}
		m.lstmForward(s, p, dir)
		dir.s1, dir.s2 = m.gatePre(s, p, dir, "1", d), m.gatePre(s, p, dir, "2", d)
		dir.run = s.work("gran.run", (T+1)*R*d)
		s.zero(dir.run, R*d)
		RD := R * d
		for t := range T {
			z1, z2, prev := dir.s1.at(t*RD), dir.s2.at(t*RD), dir.run.at(t*RD)
			if withA && t > 0 { // a_{-1} = 0
				s.mm(mmDims{false, false, R, d, d}, matrix{prev, d}, matrix{m.w["gran.wa1"], d}, 1, matrix{z1, d})
				s.mm(mmDims{false, false, R, d, d}, matrix{prev, d}, matrix{m.w["gran.wa2"], d}, 1, matrix{z2, d})
			}
			s.launch(kGRAN3Fwd, argN(R), argN(d), argN(t), argI(p.lens), argP(dir.x.at(t*RD)), argP(z1), argP(z2),
				argP(prev), argP(dir.run.at((t+1)*RD)))
		}
		p.emb = s.work("emb", R*d)
		s.launch(kDivLen, argN(R), argN(d), argI(p.lens), argP(dir.run.at(T*RD)), argP(p.emb))
	}
}

// gatePre is the pre-activation of GRAN gate i of dir, x_t·Wx + h_t·Wh + b
// (T, R, out) for every step, in a workspace of its own.
func (m *model) gatePre(s *seq, p *pass, dir *dirState, i string, out int) ptr {
	R, T, d, H := p.R, p.T, m.cfg.Dim, m.cfg.Hidden
	pre := dir.prefix + "gran."
	z := s.work(pre+"z"+i, T*R*out)
	s.launch(kFillRows, argN(T*R), argN(out), argP(m.w[pre+"b"+i]), argP(z))
	s.mm(mmDims{false, false, T * R, out, d}, matrix{dir.x, d}, matrix{m.w[pre+"wx"+i], out}, 1, matrix{z, out})
	s.mm(mmDims{false, false, T * R, out, H}, matrix{dir.hs(R, H), H}, matrix{m.w[pre+"wh"+i], out}, 1, matrix{z, out})
	return z
}

// granGate is GRAN gate i of dir, of out values a step.
type granGate struct {
	dir *dirState
	i   string
	out int
}

// sink is a gradient a backward step adds its term to: p = beta·p + term
// (beta 0: written).
type sink struct {
	p    ptr
	beta float32
}

// gateBackward turns dz (T, R, out), the gradient of gate g's
// pre-activation, into the gradients of its Wx, Wh and b, and adds dz·Wxᵀ
// to dx and dz·Whᵀ to dh with their betas.
func (m *model) gateBackward(s *seq, p *pass, g granGate, dz ptr, dx, dh sink) {
	dir, i, out := g.dir, g.i, g.out
	R, T, d, H := p.R, p.T, m.cfg.Dim, m.cfg.Hidden
	pre := dir.prefix + "gran."
	s.mm(mmDims{true, false, d, out, T * R}, matrix{dir.x, d}, matrix{dz, out}, 0, matrix{m.g[pre+"wx"+i], out})
	s.mm(mmDims{true, false, H, out, T * R}, matrix{dir.hs(R, H), H}, matrix{dz, out}, 0, matrix{m.g[pre+"wh"+i], out})
	s.colSum(T*R, out, dz, m.g[pre+"b"+i])
	s.mm(mmDims{false, true, T * R, d, out}, matrix{dz, out}, matrix{m.w[pre+"wx"+i], out}, dx.beta, matrix{dx.p, d})
	s.mm(mmDims{false, true, T * R, H, out}, matrix{dz, out}, matrix{m.w[pre+"wh"+i], out}, dh.beta, matrix{dh.p, H})
}

// lstmForward runs the peephole LSTM with dir's parameters over dir.x:
// dir.z (T, R, 4H) ends with the gate activations, dir.h and dir.c
// (T+1, R, H) with the states, zero first.
func (m *model) lstmForward(s *seq, p *pass, dir *dirState) {
	R, T, d, H := p.R, p.T, m.cfg.Dim, m.cfg.Hidden
	pre := dir.prefix + "lstm."
	dir.z = s.work(pre+"z", T*R*4*H)
	dir.h, dir.c = s.work(pre+"h", (T+1)*R*H), s.work(pre+"c", (T+1)*R*H)
	// z = x·Wx + b for every step at once.
	s.launch(kFillRows, argN(T*R), argN(4*H), argP(m.w[pre+"b"]), argP(dir.z))
	s.mm(mmDims{false, false, T * R, 4 * H, d}, matrix{dir.x, d}, matrix{m.w[pre+"wx"], 4 * H}, 1, matrix{dir.z, 4 * H})
	s.zero(dir.h, R*H)
	s.zero(dir.c, R*H)
	for t := range T {
		zt := dir.z.at(t * R * 4 * H)
		if t > 0 { // h_{-1} = 0
			s.mm(mmDims{false, false, R, 4 * H, H}, matrix{dir.h.at(t * R * H), H}, matrix{m.w[pre+"wh"], 4 * H}, 1, matrix{zt, 4 * H})
		}
		s.launch(kLSTMFwd, argN(R), argN(H), argN(t), argI(p.lens), argP(zt),
			argP(m.w[pre+"pi"]), argP(m.w[pre+"pf"]), argP(m.w[pre+"po"]),
			argP(dir.c.at(t*R*H)), argP(dir.h.at(t*R*H)), argP(dir.c.at((t+1)*R*H)), argP(dir.h.at((t+1)*R*H)))
	}
}

// dirDx is where direction i's input gradient goes: p.dx for the first,
// a workspace reversed into p.dx afterwards (addReversed) for the second.
func (m *model) dirDx(s *seq, p *pass, i int) ptr {
	if i == 0 {
		return p.dx
	}
	return s.work("dx.rev", p.T*p.R*m.cfg.Dim)
}

// addReversed adds direction i's input gradient dx, reversed back in time,
// to p.dx (nothing for the first direction, whose dx is p.dx).
func (m *model) addReversed(s *seq, p *pass, i int, dx ptr) {
	if i > 0 {
		s.launch(kReverse, argN(p.R), argN(p.T), argN(m.cfg.Dim), argI(p.lens), argP(dx), argS(1), argP(p.dx))
	}
}

// encodeBackward turns dEmb (R, EmbedDim) into the encoder's parameter
// gradients and p.dx, the gradient of x.
func (m *model) encodeBackward(s *seq, p *pass, dEmb ptr) {
	p.dx = s.work("dx", p.T*p.R*m.cfg.Dim)
	m.encoder.backward(m, s, p, dEmb)
}

func (m *model) avgBackward(s *seq, p *pass, dEmb ptr) {
	s.launch(kMaskedMeanBwd, argN(p.R), argN(p.T), argN(m.cfg.Dim), argI(p.lens), argP(dEmb), argP(p.dx))
}

func (m *model) lstmLastBackward(s *seq, p *pass, dEmb ptr) {
	R, T, H := p.R, p.T, m.cfg.Hidden
	dh := s.work("lstm.dhext", T*R*H)
	s.zero(dh, T*R*H)
	s.copy(dh.at((T-1)*R*H), dEmb, R*H)
	m.lstmBackward(s, p, p.enc.dirs[0], dh, p.dx, 0)
}

// lstmMeanBackward is lstmavg's and bilstmavg's.
func (m *model) lstmMeanBackward(s *seq, p *pass, dEmb ptr) {
	R, T, H := p.R, p.T, m.cfg.Hidden
	dh := s.work("lstm.dhext", T*R*H) // the same for both directions
	s.launch(kMaskedMeanBwd, argN(R), argN(T), argN(H), argI(p.lens), argP(dEmb), argP(dh))
	for i, dir := range p.enc.dirs {
		dx := m.dirDx(s, p, i)
		m.lstmBackward(s, p, dir, dh, dx, 0)
		m.addReversed(s, p, i, dx)
	}
}

// granBackward is gran's and bigran's.
func (m *model) granBackward(s *seq, p *pass, dEmb ptr) {
	R, T, d, H := p.R, p.T, m.cfg.Dim, m.cfg.Hidden
	da, dz := s.work("gran.da", T*R*d), s.work("gran.dz", T*R*d)
	dh := s.work("lstm.dhext", T*R*H)
	s.launch(kMaskedMeanBwd, argN(R), argN(T), argN(d), argI(p.lens), argP(dEmb), argP(da))
	for i, dir := range p.enc.dirs {
		dx := m.dirDx(s, p, i)
		s.launch(kGateBwd, argN(T*R*d), argP(dir.x), argP(dir.s1), argP(da), argP(dx), argP(dz))
		m.gateBackward(s, p, granGate{dir, "", d}, dz, sink{dx, 1}, sink{dh, 0})
		m.lstmBackward(s, p, dir, dh, dx, 1)
		m.addReversed(s, p, i, dx)
	}
}

func (m *model) gran2Backward(s *seq, p *pass, dEmb ptr) {
	R, T, H := p.R, p.T, m.cfg.Hidden
	dir := p.enc.dirs[0]
	da, dz := s.work("gran.da", T*R*H), s.work("gran.dz", T*R*H)
	dh := s.work("lstm.dhext", T*R*H)
	s.launch(kMaskedMeanBwd, argN(R), argN(T), argN(H), argI(p.lens), argP(dEmb), argP(da))
	s.launch(kGateBwd, argN(T*R*H), argP(dir.hs(R, H)), argP(dir.s1), argP(da), argP(dh), argP(dz))
	m.gateBackward(s, p, granGate{dir, "", H}, dz, sink{p.dx, 0}, sink{dh, 1})
	m.lstmBackward(s, p, dir, dh, p.dx, 1)
}

func (m *model) gran5Backward(s *seq, p *pass, dEmb ptr) {
	R, T, d, H := p.R, p.T, m.cfg.Dim, m.cfg.Hidden
	dir := p.enc.dirs[0]
	da, dz1, dz2 := s.work("gran.da", T*R*d), s.work("gran.dz1", T*R*d), s.work("gran.dz2", T*R*d)
	dh := s.work("lstm.dhext", T*R*H)
	s.launch(kMaskedMeanBwd, argN(R), argN(T), argN(d), argI(p.lens), argP(dEmb), argP(da))
	s.launch(kGateBwd, argN(T*R*d), argP(dir.x), argP(dir.s1), argP(da), argP(p.dx), argP(dz1))
	s.launch(kGateBwd, argN(T*R*d), argP(dir.hs(R, H)), argP(dir.s2), argP(da), argP(dh), argP(dz2))
	m.gateBackward(s, p, granGate{dir, "1", d}, dz1, sink{p.dx, 1}, sink{dh, 1})
	m.gateBackward(s, p, granGate{dir, "2", d}, dz2, sink{p.dx, 1}, sink{dh, 1})
	m.lstmBackward(s, p, dir, dh, p.dx, 1)
}

// granRunningBackward is gran3's, and gran4's (withA).
func granRunningBackward(withA bool) func(m *model, s *seq, p *pass, dEmb ptr) {
	return func(m *model, s *seq, p *pass, dEmb ptr) {
		R, T, d, H := p.R, p.T, m.cfg.Dim, m.cfg.Hidden
		dir := p.enc.dirs[0]
		RD := R * d
		da, dz1, dz2 := s.work("gran.da", RD), s.work("gran.dz1", T*RD), s.work("gran.dz2", T*RD)
		dh := s.work("lstm.dhext", T*R*H)
		s.launch(kDivLen, argN(R), argN(d), argI(p.lens), argP(dEmb), argP(da))
		for t := T - 1; t >= 0; t-- {
			d1, d2 := dz1.at(t*RD), dz2.at(t*RD)
			s.launch(kGRAN3Bwd, argN(R), argN(d), argN(t), argI(p.lens), argP(dir.x.at(t*RD)), argP(dir.s1.at(t*RD)),
				argP(dir.s2.at(t*RD)), argP(dir.run.at(t*RD)), argP(da), argP(p.dx.at(t*RD)), argP(d1), argP(d2))
			if withA && t > 0 {
				// The gates saw a_{t-1}: its gradient gains dz·Waᵀ.
				s.mm(mmDims{false, true, R, d, d}, matrix{d1, d}, matrix{m.w["gran.wa1"], d}, 1, matrix{da, d})
				s.mm(mmDims{false, true, R, d, d}, matrix{d2, d}, matrix{m.w["gran.wa2"], d}, 1, matrix{da, d})
			}
		}
		if withA {
			// a_{t-1} for every t: the running states from a_{-1} = 0.
			s.mm(mmDims{true, false, d, d, T * R}, matrix{dir.run, d}, matrix{dz1, d}, 0, matrix{m.g["gran.wa1"], d})
			s.mm(mmDims{true, false, d, d, T * R}, matrix{dir.run, d}, matrix{dz2, d}, 0, matrix{m.g["gran.wa2"], d})
		}
		m.gateBackward(s, p, granGate{dir, "1", d}, dz1, sink{p.dx, 1}, sink{dh, 0})
		m.gateBackward(s, p, granGate{dir, "2", d}, dz2, sink{p.dx, 1}, sink{dh, 1})
		m.lstmBackward(s, p, dir, dh, p.dx, 1)
	}
}

// lstmBackward is backpropagation through time from dhExt (T, R, H), the
// gradient of every h_t from outside dir's LSTM. It writes the LSTM's
// parameter gradients and adds dZ·Wxᵀ to dx (beta 0: dx is written, 1:
// added to).
func (m *model) lstmBackward(s *seq, p *pass, dir *dirState, dhExt, dx ptr, beta float32) {
	R, T, d, H := p.R, p.T, m.cfg.Dim, m.cfg.Hidden
	pre := dir.prefix + "lstm."
	dz := s.work("lstm.dz", T*R*4*H)
	dc := s.work("lstm.dc", R*H)
	dhRec, dhCarry := s.work("lstm.dh0", R*H), s.work("lstm.dh1", R*H)
	s.zero(dc, R*H)
	s.zero(dhRec, R*H)
	for t := T - 1; t >= 0; t-- {
		dzt := dz.at(t * R * 4 * H)
		s.launch(kLSTMBwd, argN(R), argN(H), argN(t), argI(p.lens), argP(dir.z.at(t*R*4*H)),
			argP(m.w[pre+"pi"]), argP(m.w[pre+"pf"]), argP(m.w[pre+"po"]),
			argP(dir.c.at(t*R*H)), argP(dir.c.at((t+1)*R*H)), argP(dhExt.at(t*R*H)), argP(dhRec),
			argP(dc), argP(dhCarry), argP(dzt))
		if t > 0 {
			// dh_{t-1} = carry + dZ_t·Wh^T
			s.mm(mmDims{false, true, R, H, 4 * H}, matrix{dzt, 4 * H}, matrix{m.w[pre+"wh"], 4 * H}, 1, matrix{dhCarry, H})
		}
		dhRec, dhCarry = dhCarry, dhRec
	}
	g := m.g
	s.mm(mmDims{true, false, d, 4 * H, T * R}, matrix{dir.x, d}, matrix{dz, 4 * H}, 0, matrix{g[pre+"wx"], 4 * H})
	s.mm(mmDims{true, false, H, 4 * H, T * R}, matrix{dir.h, H}, matrix{dz, 4 * H}, 0, matrix{g[pre+"wh"], 4 * H}) // h_{t-1} for every t
	s.colSum(T*R, 4*H, dz, g[pre+"b"])
	s.colDot(T*R, H, matrix{dz, 4 * H}, matrix{dir.c, H}, g[pre+"pi"])
	s.colDot(T*R, H, matrix{dz.at(H), 4 * H}, matrix{dir.c, H}, g[pre+"pf"])
	s.colDot(T*R, H, matrix{dz.at(3 * H), 4 * H}, matrix{dir.c.at(R * H), H}, g[pre+"po"])
	s.mm(mmDims{false, true, T * R, d, 4 * H}, matrix{dz, 4 * H}, matrix{m.w[pre+"wx"], 4 * H}, beta, matrix{dx, d})
}
