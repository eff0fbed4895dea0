package cuda

import (
	"fmt"

	"github.com/parastream/parastream/trainstep/compute"
)

// The deep averaging network (Yang et al. 2018): s = (Σ words + Σ hashed
// bigrams)/sqrt(len), then tanh layers by GEMM and tanh_fwd; and the rows
// of its bigram table, updated row-sparsely like the embeddings.

// danState is what the DAN keeps for its backward pass.
type danState struct {
	ids ptr   // int32: the bigram ids (R, T), then each row's len-1 (R) (p.bigrams)
	xb  ptr   // (T, R, Dim) gathered bigram embeddings, 0 past len-2
	in  ptr   // (R, Dim) s
	ys  []ptr // the layers' outputs
}

// bigramIDs returns the bigram ids of seqs padded to T, (R, T) row-major,
// followed by each row's number of bigrams (R).
func bigramIDs(seqs [][]int32, T, buckets int) []int32 {
	R := len(seqs)
	v := make([]int32, R*T+R)
	for r, q := range seqs {
		for t := 0; t+1 < len(q); t++ {
			v[r*T+t] = compute.BigramID(q[t], q[t+1], buckets)
		}
		v[R*T+r] = int32(max(len(q)-1, 0))
	}
	return v
}

// danLayers are the DAN's tanh layers as a stack.
func (m *model) danLayers() []layer {
	var ls []layer
	in := m.cfg.Dim
	for i, n := range m.cfg.DANLayers {
		ls = append(ls, layer{w: fmt.Sprintf("dan.w%d", i), b: fmt.Sprintf("dan.b%d", i), in: in, out: n, tanh: true})
		in = n
	}
	return ls
}

// danForward runs the DAN over p: its bigram ids are in the pass's upload
// buffer (p.bigrams, from bigramIDs).
func (m *model) danForward(s *seq, p *pass) {
	c := m.cfg
	R, T, d := p.R, p.T, c.Dim
	st := &p.enc.dan
	st.ids = p.bigrams
	st.xb = s.work("dan.xb", T*R*d)
	s.launch(kGather, argN(R), argN(T), argN(d), argI(st.ids), argI(st.ids.at(R*T)), argP(m.w[compute.ParamBigrams]), argP(ptr{}), argP(st.xb))
	st.in = s.work("dan.in", R*d)
	s.launch(kDANSum, argN(R), argN(T), argN(d), argI(p.lens), argP(p.x), argP(st.xb), argP(st.in))
	st.ys = m.stackForward(s, "dan", R, st.in, m.danLayers())
	p.emb = st.ys[len(st.ys)-1]
}

// danBackward writes the layers' gradients, p.dx and the bigram table's
// gradient (zeroed, then the batch's bigrams scattered into it).
func (m *model) danBackward(s *seq, p *pass, dEmb ptr) {
	c := m.cfg
	R, T, d := p.R, p.T, c.Dim
	st := &p.enc.dan
	din := s.work("dan.din", R*d)
	m.stackBackward(s, stackRun{name: "dan", rows: R, x: st.in, ys: st.ys, layers: m.danLayers()}, dEmb, din)
	// Every word and every bigram of a row has the gradient din/sqrt(len).
	s.launch(kDANSumBwd, argN(R), argN(T), argN(d), argI(p.lens), argP(din), argP(p.dx))
	gb := m.g[compute.ParamBigrams]
	s.zero(gb, c.BigramBuckets*d)
	s.launch(kScatter, argN(R), argN(T), argN(d), argI(st.ids), argI(st.ids.at(R*T)), argP(ptr{}), argP(p.dx), argP(gb))
}

// prepareBigrams, for a DAN, lists the batch's distinct bigram rows (the
// rows its sparse update steps) and catches up those owed steps before
// the forward pass reads them: device work before the step, outside its
// graph (the number of rows changes from batch to batch).
func (m *model) prepareBigrams(s *seq, seqs [][]int32) {
	if !m.bigrams {
		return
	}
	for _, q := range seqs {
		for t := 0; t+1 < len(q); t++ {
			m.bigramSet.add(compute.BigramID(q[t], q[t+1], m.cfg.BigramBuckets), m.cfg.BigramBuckets) // always one of its rows
		}
	}
	m.bigramRows = m.bigramSet.drain(m.bigramRows)
	if m.bigramLazy != nil {
		owed, d1, d2, sz := m.bigramLazy.Prepare(m.bigramRows)
		m.catchUp(s, compute.ParamBigrams, owed, d1, d2, sz)
	}
}

// sparseTable returns, for a row-sparse table (the embeddings, the DAN's
// bigrams) under a sparse update, the last batch's rows, their catch-up
// (nil for SGD) and the workspace holding the rows (uploaded after the
// step, eagerWork: their number changes from batch to batch); ok is false
// for every other parameter.
func (m *model) sparseTable(name string) (rows []int32, lazy *compute.CatchUp, work string, ok bool) {
	if !compute.SparseParam(m.cfg, name) {
		return nil, nil, "", false
	}
	if name == compute.ParamBigrams {
		return m.bigramRows, m.bigramLazy, eagerWork + "bigram.rows", true
	}
	return m.rows, m.lazy, eagerWork + "rows", true
}
