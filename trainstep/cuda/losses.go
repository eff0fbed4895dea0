package cuda

import (
	"fmt"
	"math"

	"github.com/parastream/parastream/trainstep/compute"
)

// The losses on the 2n embeddings of a batch (rows 0..n-1 the A sides,
// n..2n-1 the B sides), forward and backward; the CPU backend's
// (trainstep/cpu/losses.go) are the reference. Each is device work only,
// from the pass's upload buffer (the hinge loss's negatives, the sim
// loss's targets: lossInputs, before the step), so that it is captured
// with the step (graph.go); each leaves its per-row terms on the device
// (lossTerms), read back once the step has run.

// lossTerms is where a loss left its value: scale·Σ terms (plus the
// batch's inputs.konst, on the host), the terms on the device. It is the
// same for every batch of a graph's shape.
type lossTerms struct {
	terms ptr
	n     int
	scale float64
}

// lossValue reads the terms back and adds them in float64.
func (m *model) lossValue(l lossTerms) (float64, error) {
	v, err := m.downloadF(l.terms, l.n)
	if err != nil {
		return 0, fmt.Errorf("reading the loss terms from %s: %w", m.dev.name(), err)
	}
	var sum float64
	for _, x := range v {
		sum += float64(x)
	}
	return l.scale * sum, nil
}

// lossInputs puts the loss's per-batch data in in (the hinge loss's
// negatives and their inverse lists, the sim loss's targets and constant),
// on the host before the step.
func (m *model) lossInputs(in *inputs, b *compute.Batch) error {
	n := b.N()
	switch m.cfg.Loss {
	case compute.LossHinge:
		idx, err := hingeIndex(b.HingeNegB, b.HingeNegA, n, m.cfg.HingeK)
		if err != nil {
			return err
		}
		in.hinge = idx
	case compute.LossSim:
		K := m.cfg.SimK
		in.target = make([]float32, n*K)
		for i, y := range b.Labels {
			for k, pk := range compute.SimTarget(1+float64(y)-m.cfg.SimMin, K) {
				in.target[i*K+k] = float32(pk)
				if pk > 0 {
					in.konst += pk * math.Log(pk) / float64(n)
				}
			}
		}
	}
	return nil
}

// loss runs cfg's loss on p.emb (2n, EmbedDim): its terms and the gradient
// of p.emb.
func (m *model) loss(s *seq, p *pass, n int) (lossTerms, ptr) {
	switch m.cfg.Loss {
	case compute.LossHinge:
		return m.hinge(s, p, n)
	case compute.LossSoftmax:
		return m.softmax(s, p.emb, n)
	case compute.LossSim:
		return m.sim(s, p, n)
	case compute.LossMNRL:
		return m.mnrl(s, p, n)
	}
	return m.margin(s, p, n)
}

// hingeIndex is the hinge loss's upload: negB (n·k), negA (n·k), then the
// inverse lists, offsets (n+1) and entries (n·k) for B, the same for A.
func hingeIndex(negB, negA [][]int32, n, k int) ([]int32, error) {
	nk := n * k
	ints := make([]int32, 0, 4*nk+2*(n+1))
	for _, negs := range [][][]int32{negB, negA} {
		if len(negs) != n {
			return nil, fmt.Errorf("hinge: %d pairs' negatives for %d pairs", len(negs), n)
		}
		for i := range n {
			if len(negs[i]) != k {
				return nil, fmt.Errorf("hinge: pair %d has %d negatives, the model takes %d (hinge_k)", i, len(negs[i]), k)
			}
			for _, j := range negs[i] {
				if j < 0 || int(j) >= n {
					return nil, fmt.Errorf("hinge: pair %d has negative %d outside the batch's %d pairs", i, j, n)
				}
			}
			ints = append(ints, negs[i]...)
		}
	}
	for side := range 2 {
		negs := ints[side*nk : (side+1)*nk]
		off := make([]int32, n+1)
		for _, j := range negs {
			off[j+1]++
		}
		for j := range n {
			off[j+1] += off[j]
		}
		entries := make([]int32, nk)
		next := append([]int32(nil), off[:n]...)
		for e, j := range negs {
			entries[next[j]] = int32(e)
			next[j]++
		}
		ints = append(append(ints, off...), entries...)
	}
	return ints, nil
}

// hinge is Eq. 1 of Elgohary & Carpuat (2016) averaged over the n pairs,
// with the batch's k negatives of each side (Batch.HingeNegB, HingeNegA,
// in p.hinge: hingeIndex). The gradient is one thread per (row, unit)
// reading the row's own terms and, through the inverse lists, the terms
// in which it is a negative.
func (m *model) hinge(s *seq, p *pass, n int) (lossTerms, ptr) {
	E, k, emb := m.cfg.EmbedDim(), m.cfg.HingeK, p.emb
	nk, idx := n*k, p.hinge
	negB, negA := idx, idx.at(nk)
	inBOff, inB := idx.at(2*nk), idx.at(2*nk+n+1)
	inAOff, inA := idx.at(3*nk+n+1), idx.at(3*nk+2*(n+1))
	h, dEmb := s.work("hinge.h", 2*nk), s.work("m.demb", 2*n*E)
	s.launch(kHingeFwd, argN(n), argN(E), argN(k), argP(emb), argS(float32(m.cfg.Margin)), argI(negB), argI(negA), argP(h))
	s.launch(kHingeBwd, argN(n), argN(E), argN(k), argP(emb), argI(negB), argI(negA), argP(h),
		argI(inBOff), argI(inB), argI(inAOff), argI(inA), argS(1/float32(n)), argP(dEmb))
	return lossTerms{terms: h, n: 2 * nk, scale: 1 / float64(n)}, dEmb
}

// layer is one feed-forward layer y = act(x·W + b) of a stack (the DAN, the
// softmax loss's response tower): parameters w (in, out) and b (out).
type layer struct {
	w, b    string
	in, out int
	tanh    bool // else linear
}

// stackForward runs the layers over x (rows, layers[0].in) and returns
// their outputs, each in a workspace name.y<i>.
func (m *model) stackForward(s *seq, name string, rows int, x ptr, layers []layer) []ptr {
	ys := make([]ptr, len(layers))
	for i, l := range layers {
		y := s.work(fmt.Sprintf("%s.y%d", name, i), rows*l.out)
		s.launch(kFillRows, argN(rows), argN(l.out), argP(m.w[l.b]), argP(y))
		s.mm(mmDims{false, false, rows, l.out, l.in}, matrix{x, l.in}, matrix{m.w[l.w], l.out}, 1, matrix{y, l.out})
		if l.tanh {
			s.launch(kTanhFwd, argN(rows*l.out), argP(y))
		}
		ys[i], x = y, y
	}
	return ys
}

// stackRun is a run of a stack's layers over x (rows, layers[0].in): its
// outputs ys (stackForward's) and the name of its workspaces.
type stackRun struct {
	name   string
	rows   int
	x      ptr
	ys     []ptr
	layers []layer
}

// stackBackward turns dy, the gradient of run's last output (overwritten),
// into the layers' parameter gradients and dx, the gradient of x (written).
func (m *model) stackBackward(s *seq, run stackRun, dy, dx ptr) {
	name, rows, x, ys, layers := run.name, run.rows, run.x, run.ys, run.layers
	width := 0
	for _, l := range layers {
		width = max(width, l.in)
	}
	scratch := [2]ptr{s.work(name+".d0", rows*width), s.work(name+".d1", rows*width)}
	for i := len(layers) - 1; i >= 0; i-- {
		l := layers[i]
		in := x
		if i > 0 {
			in = ys[i-1]
		}
		if l.tanh {
			s.launch(kTanhBwd, argN(rows*l.out), argP(ys[i]), argP(dy), argP(dy))
		}
		s.mm(mmDims{true, false, l.in, l.out, rows}, matrix{in, l.in}, matrix{dy, l.out}, 0, matrix{m.g[l.w], l.out})
		s.colSum(rows, l.out, dy, m.g[l.b])
		next := dx
		if i > 0 {
			next = scratch[i%2]
		}
		s.mm(mmDims{false, true, rows, l.in, l.out}, matrix{dy, l.out}, matrix{m.w[l.w], l.out}, 0, matrix{next, l.in})
		dy = next
	}
}

// softmax is the input-response loss of Yang et al. (2018) §2.1: the
// responses go through the tower (tanh layers, then a linear one), scores
// S = U·V'ᵀ, loss = 1/n Σ_i -log softmax(S_i)_i.
func (m *model) softmax(s *seq, emb ptr, n int) (lossTerms, ptr) {
	E := m.cfg.EmbedDim()
	var layers []layer
	in := E
	for i, h := range m.cfg.RespHidden {
		layers = append(layers, layer{w: fmt.Sprintf("resp.w%d", i), b: fmt.Sprintf("resp.b%d", i), in: in, out: h, tanh: true})
		in = h
	}
	layers = append(layers, layer{w: "resp.wout", b: "resp.bout", in: in, out: E})
	u, v := emb, emb.at(n*E)
	ys := m.stackForward(s, "resp", n, v, layers)
	vo := ys[len(ys)-1]
	sc, terms, tsum := s.work("sm.s", n*n), s.work("sm.loss", n), s.work("sm.tsum", n)
	s.mm(mmDims{false, true, n, n, E}, matrix{u, E}, matrix{vo, E}, 0, matrix{sc, n})
	s.launch(kSoftmaxXentFwd, argN(n), argN(n), argP(sc), argP(ptr{}), argP(terms), argP(tsum))
	s.launch(kSoftmaxXentBwd, argN(n), argN(n), argP(sc), argP(ptr{}), argP(tsum), argS(1/float32(n)), argP(sc))
	// S = U·V'ᵀ: dU = dS·V', dV' = dSᵀ·U.
	dEmb, dvo := s.work("m.demb", 2*n*E), s.work("sm.dvo", n*E)
	s.mm(mmDims{false, false, n, E, n}, matrix{sc, n}, matrix{vo, E}, 0, matrix{dEmb, E})
	s.mm(mmDims{true, false, n, E, n}, matrix{sc, n}, matrix{u, E}, 0, matrix{dvo, E})
	m.stackBackward(s, stackRun{name: "resp", rows: n, x: v, ys: ys, layers: layers}, dvo, dEmb.at(n*E))
	return lossTerms{terms: terms, n: n, scale: 1 / float64(n)}, dEmb
}

// sim is the objective of Tai et al. (2015) as used by Wieting & Gimpel
// (2017) §4.3: h× = a⊙b, h+ = |a-b|, h_s = σ(h×·W× + h+·W+ + b_h),
// p̂ = softmax(h_s·W_p + b_p); loss = 1/n Σ_i KL(p_i ‖ p̂_i), the targets
// p in p.target and the constant 1/n Σ p·log p added on the host
// (lossInputs).
func (m *model) sim(s *seq, p *pass, n int) (lossTerms, ptr) {
	c := m.cfg
	E, Hs, K, emb, tgt := c.EmbedDim(), c.SimHidden, c.SimK, p.emb, p.target
	hx, hp, hs := s.work("sim.hx", n*E), s.work("sim.hp", n*E), s.work("sim.hs", n*Hs)
	lg, terms, tsum := s.work("sim.logits", n*K), s.work("sim.loss", n), s.work("sim.tsum", n)
	s.launch(kSimFeats, argN(n), argN(E), argP(emb), argP(hx), argP(hp))
	s.launch(kFillRows, argN(n), argN(Hs), argP(m.w["sim.bh"]), argP(hs))
	s.mm(mmDims{false, false, n, Hs, E}, matrix{hx, E}, matrix{m.w["sim.wmul"], Hs}, 1, matrix{hs, Hs})
	s.mm(mmDims{false, false, n, Hs, E}, matrix{hp, E}, matrix{m.w["sim.wabs"], Hs}, 1, matrix{hs, Hs})
	s.launch(kSigmoidFwd, argN(n*Hs), argP(hs))
	s.launch(kFillRows, argN(n), argN(K), argP(m.w["sim.bp"]), argP(lg))
	s.mm(mmDims{false, false, n, K, Hs}, matrix{hs, Hs}, matrix{m.w["sim.wp"], K}, 1, matrix{lg, K})
	s.launch(kSoftmaxXentFwd, argN(n), argN(K), argP(lg), argP(tgt), argP(terms), argP(tsum))
	// Backward: dlogits = (p̂ - p)/n in place.
	s.launch(kSoftmaxXentBwd, argN(n), argN(K), argP(lg), argP(tgt), argP(tsum), argS(1/float32(n)), argP(lg))
	g := m.g
	dhs := s.work("sim.dhs", n*Hs)
	s.mm(mmDims{true, false, Hs, K, n}, matrix{hs, Hs}, matrix{lg, K}, 0, matrix{g["sim.wp"], K})
	s.colSum(n, K, lg, g["sim.bp"])
	s.mm(mmDims{false, true, n, Hs, K}, matrix{lg, K}, matrix{m.w["sim.wp"], K}, 0, matrix{dhs, Hs})
	s.launch(kSigmoidBwd, argN(n*Hs), argP(hs), argP(dhs), argP(dhs))
	s.mm(mmDims{true, false, E, Hs, n}, matrix{hx, E}, matrix{dhs, Hs}, 0, matrix{g["sim.wmul"], Hs})
	s.mm(mmDims{true, false, E, Hs, n}, matrix{hp, E}, matrix{dhs, Hs}, 0, matrix{g["sim.wabs"], Hs})
	s.colSum(n, Hs, dhs, g["sim.bh"])
	dhx, dhp := s.work("sim.dhx", n*E), s.work("sim.dhp", n*E)
	s.mm(mmDims{false, true, n, E, Hs}, matrix{dhs, Hs}, matrix{m.w["sim.wmul"], Hs}, 0, matrix{dhx, E})
	s.mm(mmDims{false, true, n, E, Hs}, matrix{dhs, Hs}, matrix{m.w["sim.wabs"], Hs}, 0, matrix{dhp, E})
	dEmb := s.work("m.demb", 2*n*E)
	s.launch(kSimFeatsBwd, argN(n), argN(E), argP(emb), argP(dhx), argP(dhp), argP(dEmb))
	return lossTerms{terms: terms, n: n, scale: 1 / float64(n)}, dEmb
}
