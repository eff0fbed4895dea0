package cpu

import (
	"fmt"

	G "gorgonia.org/gorgonia"

	"github.com/parastream/parastream/trainstep/compute"
)

// The encoder-decoder with a pairwise discriminator in the graph
// (compute/edd.go has the formulas). The graph's encoder rows are, as for
// the other losses, A then B: the first n embeddings are f (the decoder's
// input), the last n f^g (the discriminator's ground truth).

// eddInputs are the per-batch inputs of the edd losses and the gradients
// of the two word inputs, whose rows ForwardBackward scatters into the
// embeddings' gradient.
type eddInputs struct {
	xdec     *G.Node // (T+1, n, Dim) decoder word inputs: e(<s>), e(B_1) ... e(B_T)
	eout     *G.Node // (K, Dim) the first K rows of the embeddings (soft words)
	declens  *G.Node // (n) n_B + 2: f's step, <s>, the words
	softlens *G.Node // (n) n_B: the soft words fed to the encoder
	target   *G.Node // ((T+1)·n, K) 1/N_tok at each target class
	offdiag  *G.Node // (n, n) (1 − δ_ij)/(n(n−1))
	gxdec    *G.Node
	geout    *G.Node
}

// wrt lists the word inputs whose gradients the trainer scatters.
func (in *eddInputs) wrt() []*G.Node {
	if in == nil {
		return nil
	}
	if in.eout == nil {
		return []*G.Node{in.xdec}
	}
	return []*G.Node{in.xdec, in.eout}
}

// setGrads records the gradient nodes of wrt, in its order.
func (in *eddInputs) setGrads(gs []*G.Node) {
	if in == nil {
		return
	}
	in.gxdec = gs[0]
	if len(gs) > 1 {
		in.geout = gs[1]
	}
}

// lstmOver runs the LSTM with prefix forward over x (T, R, Dim) with the
// rows' lengths lens (R): h (T, R, H), the state carried through padding.
func (e *encoderGraph) lstmOver(prefix string, x, lens *G.Node) *G.Node {
	xw := e.project(x, e.p(prefix+"lstm.wx"), nil)
	p := lstmWeights{wh: e.p(prefix + "lstm.wh"), b: e.p(prefix + "lstm.b"),
		pi: e.p(prefix + "lstm.pi"), pf: e.p(prefix + "lstm.pf"), po: e.p(prefix + "lstm.po")}
	return e.lstmNode(xw, p, lens, false, false)
}

// edd is the local loss (and with LossLocalGlobal the weighted global
// loss) of the n pairs whose encoder embeddings are emb (2n, H).
func (e *encoderGraph) edd(emb *G.Node, n int, in *lossInputs) *G.Node {
	cfg := e.cfg
	T, H, D, K := e.T, cfg.Hidden, cfg.Dim, cfg.OutClasses()
	ei := &eddInputs{}
	in.edd = ei
	f := e.rows(emb, 0, n)
	// The decoder's inputs: f through dec.wf at step 0, then the words.
	first := e.reshape(e.mul(f, e.p("dec.wf")), 1, n, 4*H)
	ei.xdec = e.input("edd.xdec", T+1, n, D)
	words := e.project(ei.xdec, e.p("dec.lstm.wx"), nil)
	xw := must(G.Concat(0, first, words))
	ei.declens = e.input("edd.declens", n)
	p := lstmWeights{wh: e.p("dec.lstm.wh"), b: e.p("dec.lstm.b"),
		pi: e.p("dec.lstm.pi"), pf: e.p("dec.lstm.pf"), po: e.p("dec.lstm.po")}
	h := e.rows(e.lstmNode(xw, p, ei.declens, false, false), 1, T+2) // (T+1, n, H)
	logits := e.reshape(e.project(h, e.p("out.w"), e.p("out.b")), (T+1)*n, K)
	logp := must(G.LogSoftMax(logits, 1))
	ei.target = e.input("edd.target", (T+1)*n, K)
	local := must(G.Neg(e.sum(e.prod(logp, ei.target))))
	if cfg.Loss != compute.LossLocalGlobal {
		return local
	}
	// Soft words: the distributions of the first T outputs times the
	// embeddings of the K classes, through the shared encoder.
	q := must(G.Exp(e.rows(logp, 0, T*n)))
	ei.eout = e.input("edd.eout", K, D)
	soft := e.reshape(e.mul(q, ei.eout), T, n, D)
	ei.softlens = e.input("edd.softlens", n)
	fp := e.at(e.lstmOver("", soft, ei.softlens), T-1) // (n, H)
	fg := e.rows(emb, n, 2*n)
	s := e.mul(fp, e.tr(fg))                      // s_ij = f^p_i·f^g_j
	diag := e.sum(e.prod(fp, fg), 1)              // f^p_i·f^g_i
	m := e.perRowAdd(s, e.sub(e.scalar(1), diag)) // s_ij − s_ii + 1
	ei.offdiag = e.input("edd.offdiag", n, n)
	global := e.sum(e.prod(e.relu(m), ei.offdiag))
	return e.add(local, must(G.HadamardProd(global, e.scalar(cfg.GlobalWeight))))
}

// eddRows adds to rows, sorted and distinct, the embedding rows an edd
// step reads besides A and B: <s>, and with the global loss the K rows of
// the soft words.
func (m *model[T]) eddRows(rows []int32) []int32 {
	extra := []int32{compute.EDDStartID}
	if m.cfg.Loss == compute.LossLocalGlobal {
		extra = extra[:0]
		for id := range int32(m.cfg.OutClasses()) {
			extra = append(extra, id)
		}
	}
	return distinctRows([][]int32{rows, extra}, func(s []int32, yield func(int32)) {
		for _, id := range s {
			yield(id)
		}
	})
}

// feedEDD binds the edd inputs of b.
func (m *model[T]) feedEDD(gr *graph, b *compute.Batch) error {
	ei := gr.in.edd
	n, L, D, K := b.N(), gr.enc.T, m.cfg.Dim, m.cfg.OutClasses()
	emb := m.w[compute.ParamEmbeddings]
	xdec := make([]T, (L+1)*n*D)
	declens := make([]T, n)
	softlens := make([]T, n)
	target := make([]T, (L+1)*n*K)
	tokens := 0
	for _, s := range b.B {
		tokens += len(s) + 1
	}
	w := 1 / T(tokens)
	for i, s := range b.B {
		declens[i], softlens[i] = T(len(s)+2), T(len(s))
		copy(xdec[i*D:(i+1)*D], emb[int(compute.EDDStartID)*D:int(compute.EDDStartID+1)*D])
		for t, id := range s {
			row := (t+1)*n + i
			copy(xdec[row*D:(row+1)*D], emb[int(id)*D:int(id+1)*D])
			target[(t*n+i)*K+int(compute.EDDClass(id, K))] = w
		}
		target[(len(s)*n+i)*K+int(compute.EDDEndID)] = w
	}
	if err := m.let(ei.xdec, xdec, L+1, n, D); err != nil {
		return err
	}
	if err := m.let(ei.declens, declens, n); err != nil {
		return err
	}
	if err := m.let(ei.target, target, (L+1)*n, K); err != nil {
		return err
	}
	if ei.eout == nil {
		return nil
	}
	offdiag := make([]T, n*n)
	for i := range n {
		for j := range n {
			if i != j {
				offdiag[i*n+j] = 1 / T(n*(n-1))
			}
		}
	}
	if err := m.let(ei.eout, append([]T(nil), emb[:K*D]...), K, D); err != nil {
		return err
	}
	if err := m.let(ei.softlens, softlens, n); err != nil {
		return err
	}
	return m.let(ei.offdiag, offdiag, n, n)
}

// scatterEDD adds the gradients of the decoder's word inputs and of the
// soft words' embeddings to ge, the embeddings' gradient.
func (m *model[T]) scatterEDD(gr *graph, b *compute.Batch, ge []T) error {
	ei := gr.in.edd
	n, D := b.N(), m.cfg.Dim
	gx := values[T](ei.gxdec)
	if !finite(gx) {
		return fmt.Errorf("gradient of the decoder's words: %w", compute.ErrNonFinite)
	}
	add := func(id int32, src []T) {
		dst := ge[int(id)*D : int(id+1)*D]
		for u := range dst {
			dst[u] += src[u]
		}
	}
	for i, s := range b.B {
		add(compute.EDDStartID, gx[i*D:(i+1)*D])
		for t, id := range s {
			row := (t+1)*n + i
			add(id, gx[row*D:(row+1)*D])
		}
	}
	if ei.geout == nil {
		return nil
	}
	g := values[T](ei.geout)
	if !finite(g) {
		return fmt.Errorf("gradient of the soft words' embeddings: %w", compute.ErrNonFinite)
	}
	for id := range int32(m.cfg.OutClasses()) {
		add(id, g[int(id)*D:int(id+1)*D])
	}
	return nil
}
