package cpu

import (
	"fmt"

	G "gorgonia.org/gorgonia"

	"github.com/parastream/parastream/trainstep/compute"
)

// lossInputs are the per-batch inputs of the loss part of a graph.
type lossInputs struct {
	penalty *G.Node // margin, max/mix: (2n, 2n), -4 on a row's own pair
	sel     *G.Node // margin, rand/mix: (2n, 2n) one-hot random negative
	useMax  *G.Node // margin, mix: (2n) 1 where the max negative is used
	useRand *G.Node // margin, mix: (2n) 1 - useMax
	k1, k2  *G.Node // hinge: (n, n) counts of B_j negative for A_i, A_j for B_i
	eye     *G.Node // softmax: (n, n) identity
	target  *G.Node // sim: (n, K) sparse target distribution; NLI: (n, 3) one-hot class
	sim     *G.Node // margin: (2n, 2n) cosine matrix, read back for inspection

	// mnrl holds the mnrl loss's targets (mnrl.go).
	mnrl *mnrlInputs

	// edd holds the decoder's inputs of losses local and local-global
	// (edd.go).
	edd *eddInputs
}

// margin is Eq. 2-4 of Wieting & Gimpel (2017) without the regularisers:
//
//	1/n Σ_i [δ - cos(a_i, b_i) + cos(a_i, t_a)]_+ + [δ - cos(a_i, b_i) + cos(b_i, t_b)]_+
//
// over the n pairs, where the negatives t are rows of the batch outside
// the pair: the most similar one (max), a random one (rand), or either with
// probability 0.5 (mix). The max is taken in the graph, so its gradient
// reaches the chosen negative as if it had been picked beforehand.
func (e *encoderGraph) margin(emb *G.Node, n int, in *lossInputs) *G.Node {
	cfg := e.cfg
	nrm := must(G.Sqrt(e.add(e.sum(must(G.Square(emb)), 1), e.scalar(1e-12))))
	u := e.perRowDiv(emb, nrm)
	c := e.mul(u, e.tr(u)) // (2n, 2n) cosines
	in.sim = c
	pos := e.sum(e.prod(e.rows(u, 0, n), e.rows(u, n, 2*n)), 1)
	pos2 := must(G.Concat(0, pos, pos))
	var neg *G.Node
	if cfg.Negatives != compute.NegRand {
		in.penalty = e.input("penalty", 2*n, 2*n)
		neg = must(G.Max(e.add(c, in.penalty), 1))
	}
	if cfg.Negatives != compute.NegMax {
		in.sel = e.input("sel", 2*n, 2*n)
		rnd := e.sum(e.prod(c, in.sel), 1)
		if cfg.Negatives == compute.NegMix {
			in.useMax, in.useRand = e.input("usemax", 2*n), e.input("userand", 2*n)
			neg = e.add(e.prod(in.useMax, neg), e.prod(in.useRand, rnd))
		} else {
			neg = rnd
		}
	}
	h := e.relu(e.add(e.sub(e.scalar(cfg.Margin), pos2), neg))
	return must(G.HadamardDiv(e.sum(h), e.scalar(float64(n))))
}

// hinge is Eq. 1 of Elgohary & Carpuat (2016) averaged over the n pairs,
// with the k negatives of each side drawn from the batch:
//
//	1/n Σ_i Σ_j∈K1(i) [δ + ‖a_i-b_i‖² - ‖a_i-b_j‖²]_+ + Σ_j∈K2(i) [δ + ‖a_i-b_i‖² - ‖b_i-a_j‖²]_+
func (e *encoderGraph) hinge(emb *G.Node, n int, in *lossInputs) *G.Node {
	a, b := e.rows(emb, 0, n), e.rows(emb, n, 2*n)
	sqa := e.sum(must(G.Square(a)), 1)
	sqb := e.sum(must(G.Square(b)), 1)
	pd := e.sum(must(G.Square(e.sub(a, b))), 1)
	two := e.scalar(2)
	ab := must(G.HadamardProd(e.mul(a, e.tr(b)), two)) // 2 a_i·b_j
	ba := e.tr(ab)                                     // 2 b_i·a_j
	delta := e.scalar(e.cfg.Margin)
	// δ + pd_i - (sqa_i + sqb_j - 2a_i·b_j)
	m1 := e.perColSub(e.perRowAdd(ab, e.sub(e.add(pd, delta), sqa)), sqb)
	m2 := e.perColSub(e.perRowAdd(ba, e.sub(e.add(pd, delta), sqb)), sqa)
	in.k1, in.k2 = e.input("k1", n, n), e.input("k2", n, n)
	s := e.add(e.sum(e.prod(in.k1, e.relu(m1))), e.sum(e.prod(in.k2, e.relu(m2))))
	return must(G.HadamardDiv(s, e.scalar(float64(n))))
}

// softmax is the input-response loss of Yang et al. (2018) §2.1: responses
// pass through a feed-forward tower v' = tanh layers, then a linear layer;
// scores s_ij = u_i·v'_j; loss = 1/n Σ_i -log softmax_j(s_i)_i.
func (e *encoderGraph) softmax(emb *G.Node, n int, in *lossInputs) *G.Node {
	u, v := e.rows(emb, 0, n), e.rows(emb, n, 2*n)
	for i := range e.cfg.RespHidden {
		v = e.tanh(e.linear(v, e.p(fmt.Sprintf("resp.w%d", i)), e.p(fmt.Sprintf("resp.b%d", i))))
	}
	v = e.linear(v, e.p("resp.wout"), e.p("resp.bout"))
	logp := must(G.LogSoftMax(e.mul(u, e.tr(v)), 1))
	in.eye = e.input("eye", n, n)
	return must(G.HadamardDiv(must(G.Neg(e.sum(e.prod(logp, in.eye)))), e.scalar(float64(n))))
}

// sim is the objective of Tai et al. (2015) as used by Wieting & Gimpel
// (2017) §4.3: h× = a⊙b, h+ = |a-b|, h_s = σ(h×·W× + h+·W+ + b_h),
// p̂ = softmax(h_s·W_p + b_p); loss = 1/n Σ_i KL(p_i ‖ p̂_i). The graph
// computes -1/n Σ p·log p̂; the host adds the constant 1/n Σ p·log p.
func (e *encoderGraph) sim(emb *G.Node, n int, in *lossInputs) *G.Node {
	a, b := e.rows(emb, 0, n), e.rows(emb, n, 2*n)
	hx := e.prod(a, b)
	hp := must(G.Abs(e.sub(a, b)))
	hs := e.sigm(e.bias(e.add(e.mul(hx, e.p("sim.wmul")), e.mul(hp, e.p("sim.wabs"))), e.p("sim.bh")))
	logp := must(G.LogSoftMax(e.linear(hs, e.p("sim.wp"), e.p("sim.bp")), 1))
	in.target = e.input("target", n, e.cfg.SimK)
	return must(G.HadamardDiv(must(G.Neg(e.sum(e.prod(logp, in.target)))), e.scalar(float64(n))))
}

// nli is the NLI head's loss (compute/nli.go): the mean cross-entropy of
// the gold class of softmax(relu(f·W1 + b1)·W2 + b2) over the n pairs,
// f = (u, v, |u−v|, u⊙v) of the unit-length embeddings.
func (e *encoderGraph) nli(emb *G.Node, n int, in *lossInputs) *G.Node {
	nrm := must(G.Sqrt(e.add(e.sum(must(G.Square(emb)), 1), e.scalar(1e-12))))
	unit := e.perRowDiv(emb, nrm)
	u, v := e.rows(unit, 0, n), e.rows(unit, n, 2*n)
	f := must(G.Concat(1, u, v, must(G.Abs(e.sub(u, v))), e.prod(u, v)))
	h := e.relu(e.linear(f, e.p(compute.ParamNLIW1), e.p(compute.ParamNLIB1)))
	logp := must(G.LogSoftMax(e.linear(h, e.p(compute.ParamNLIW2), e.p(compute.ParamNLIB2)), 1))
	in.target = e.input("target", n, compute.NLIClasses)
	return must(G.HadamardDiv(must(G.Neg(e.sum(e.prod(logp, in.target)))), e.scalar(float64(n))))
}
