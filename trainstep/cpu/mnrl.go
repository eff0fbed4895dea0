package cpu

import (
	G "gorgonia.org/gorgonia"
)

// mnrlInputs are the mnrl loss's targets: each row's own candidate.
type mnrlInputs struct {
	ab *G.Node // (n, C): 1 at (i, i), C = n or 2n candidates (B, then the hard negatives)
	ba *G.Node // symmetric: (n, n) identity
}

// mnrl is the in-batch softmax over scaled cosines (compute.LossMNRL,
// sentence-transformers' MultipleNegativesRankingLoss), for the rows laid
// out A (n), B (n) and, when the batch has them, the hard negatives (n):
//
//	Σ_d 1/n Σ_i −log softmax_j(s·cos(a_i[:d], c_j[:d]))_i
//
// over the candidates c = (b_1..b_n, neg_1..neg_n) and the Matryoshka
// prefixes d; with Symmetric each prefix's term is the mean of that and
// 1/n Σ_i −log softmax_j(s·cos(b_i[:d], a_j[:d]))_i.
func (e *encoderGraph) mnrl(emb *G.Node, n int, in *lossInputs) *G.Node {
	cfg := e.cfg
	R := e.R
	in.mnrl = &mnrlInputs{ab: e.input("mnrl.ab", n, R-n)}
	if cfg.Symmetric {
		in.mnrl.ba = e.input("mnrl.ba", n, n)
	}
	scale := e.scalar(cfg.Scale)
	var total *G.Node
	for _, d := range cfg.MatryoshkaDims() {
		x := emb
		if d < cfg.EmbedDim() {
			x = e.cols(emb, 0, d)
		}
		nrm := must(G.Sqrt(e.add(e.sum(must(G.Square(x)), 1), e.scalar(1e-12))))
		u := e.perRowDiv(x, nrm)
		a, c := e.rows(u, 0, n), e.rows(u, n, R)
		xent := func(q, k, target *G.Node) *G.Node {
			logp := must(G.LogSoftMax(must(G.HadamardProd(e.mul(q, e.tr(k)), scale)), 1))
			return must(G.HadamardDiv(must(G.Neg(e.sum(e.prod(logp, target)))), e.scalar(float64(n))))
		}
		term := xent(a, c, in.mnrl.ab)
		if cfg.Symmetric {
			back := xent(e.rows(u, n, 2*n), a, in.mnrl.ba)
			term = must(G.HadamardProd(e.add(term, back), e.scalar(0.5)))
		}
		if total == nil {
			total = term
		} else {
			total = e.add(total, term)
		}
	}
	return total
}

// feedMNRL binds the mnrl loss's targets for n pairs.
func (m *model[T]) feedMNRL(gr *graph, n int) error {
	in := gr.in.mnrl
	c := in.ab.Shape()[1]
	ab := make([]T, n*c)
	for i := range n {
		ab[i*c+i] = 1
	}
	if err := m.let(in.ab, ab, n, c); err != nil {
		return err
	}
	if in.ba == nil {
		return nil
	}
	ba := make([]T, n*n)
	for i := range n {
		ba[i*n+i] = 1
	}
	return m.let(in.ba, ba, n, n)
}
