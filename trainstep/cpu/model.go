package cpu

import (
	"errors"
	"fmt"
	"math"
	"runtime/debug"
	"slices"

	G "gorgonia.org/gorgonia"
	"gorgonia.org/tensor"

	"github.com/parastream/parastream/internal/sysmem"
	"github.com/parastream/parastream/trainstep/compute"
)

// Backend is the gorgonia CPU backend.
type Backend struct {
	// Float64 builds float64 graphs and parameters (for gradient checks);
	// parameters still cross the interface as float32.
	Float64 bool
	// MemoryBudget bounds, in bytes, what a model takes: its parameters,
	// gradients and optimiser state, the compiled graphs it keeps (one per
	// batch shape: rows, padded length) and the values of the graph that
	// runs. The least recently used graphs are dropped before a new one
	// would pass it; a model, or one graph, that alone passes it is refused
	// with an error wrapping compute.ErrMemoryBudget, Build checking the
	// graph of the longest batch at once. 0: no bound.
	MemoryBudget int64
	// MaxGraphs bounds the number of compiled graphs a model keeps, the
	// least recently used going first; 0: no bound but MemoryBudget's.
	MaxGraphs int

	// encoders is the encoder table (nil: encoderBuilders()); a test adds
	// a toy encoder through it.
	encoders map[string]encoderBuilder
}

// New returns the float32 gorgonia CPU backend.
func New() *Backend { return &Backend{} }

// Name implements compute.Backend.
func (b *Backend) Name() string {
	if b.Float64 {
		return "gorgonia-cpu-f64"
	}
	return "gorgonia-cpu"
}

// BLAS describes the BLAS the backend's products run on (the package's
// BLAS).
func (b *Backend) BLAS() string { return BLAS().String() }

// BLASName is the BLAS's short name: openblas, cblas or gonum.
func (b *Backend) BLASName() string { return BLAS().Name }

// Build implements compute.Backend. A first Build with no UseBLAS before
// it chooses BLASAuto.
func (b *Backend) Build(cfg compute.Config, params []compute.Tensor) (compute.Model, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	if err := compute.CheckParams(cfg, params); err != nil {
		return nil, fmt.Errorf("building %s model: %w", cfg.Encoder, err)
	}
	enc, err := b.encoder(cfg)
	if err != nil {
		return nil, err
	}
	BLAS() // the BLAS chosen, or auto's
	if b.MaxGraphs < 0 {
		return nil, fmt.Errorf("cpu backend: MaxGraphs %d: use 0 for no bound or a positive count", b.MaxGraphs)
	}
	if b.MemoryBudget < 0 {
		return nil, fmt.Errorf("cpu backend: MemoryBudget %d: use 0 for no bound or a positive number of bytes", b.MemoryBudget)
	}
	if b.Float64 {
		return bounded(newModel[float64](cfg, enc, params, tensor.Float64), b)
	}
	return bounded(newModel[float32](cfg, enc, params, tensor.Float32), b)
}

// encoder is cfg's (valid) encoder's builder, with its spec.
func (b *Backend) encoder(cfg compute.Config) (encoderBuilder, error) {
	table := b.encoders
	if table == nil {
		table = encoderBuilders()
	}
	enc, ok := table[cfg.Encoder]
	if !ok {
		return encoderBuilder{}, fmt.Errorf("encoder %s: the CPU backend has no builder for it (trainstep/cpu/encoders.go)", cfg.Encoder)
	}
	enc.spec, _ = cfg.Spec()
	return enc, nil
}

// bounded sets the model's bounds and checks that the model and the graph
// of its longest training batch (BatchSize+1 pairs, the most a batch
// holds, of MaxLen words) fit the budget.
func bounded[T float](m *model[T], b *Backend) (compute.Model, error) {
	m.maxGraphs, m.budget, m.host = b.MaxGraphs, b.MemoryBudget, m.hostBytes()
	if m.budget == 0 {
		return m, nil
	}
	if m.host >= m.budget {
		return nil, fmt.Errorf("the %s model's parameters, gradients and optimiser state take %s, more than a memory budget of %s: %w",
			m.cfg.Encoder, compute.FormatBytes(m.host), compute.FormatBytes(m.budget), compute.ErrMemoryBudget)
	}
	k := graphKey{rows: 2 * (m.cfg.BatchSize + 1), T: compute.BucketLen(m.cfg.MaxLen, m.cfg.BucketWidth), train: true}
	gr, err := m.build(k)
	if err != nil {
		return nil, err
	}
	if c := gr.cost; c.total() > m.budget-m.host {
		return nil, &BudgetError{Rows: k.rows, Steps: k.T, Need: c.total(), Run: c.run, Budget: m.budget, Host: m.host}
	}
	return m, nil
}

type float interface{ float32 | float64 }

type graphKey struct {
	rows, T int
	train   bool
	// nli: the graph of an NLI batch (lossNLI, not Config.Loss).
	nli bool
	// negs: the rows are n pairs and n hard negatives (3n), not 2n.
	negs bool
}

// lossNLI is the loss of an NLI batch's graph: the NLI head's
// cross-entropy (losses.go, nli).
const lossNLI = "nli"

// lossOf is the loss a batch trains: the NLI head's for an NLI batch,
// Config.Loss otherwise.
func (m *model[T]) lossOf(nli bool) string {
	if nli {
		return lossNLI
	}
	return m.cfg.Loss
}

// graph is one expression graph for a batch shape, compiled into vm.
type graph struct {
	g     *G.ExprGraph
	cost  cost
	enc   *encoderGraph
	emb   *G.Node
	loss  *G.Node
	in    lossInputs
	grads map[string]*G.Node // by parameter name
	// stepped are the parameters a training step on the graph steps: those
	// it differentiates, and the word and bigram tables (scattered from the
	// words' gradients).
	stepped map[string]bool
	// gx are the gradients of the words: of x, or of each xs[t]; gxb of
	// DAN's bigrams.
	gx  []*G.Node
	gxb *G.Node
	vm  G.VM
}

// wordGrads returns, for step t and row r, the gradient of that word's
// input.
func wordGrads[T float](gr *graph, d int) func(t, r int) []T {
	R := gr.enc.R
	if gr.enc.xs == nil {
		g := values[T](gr.gx[0])
		return func(t, r int) []T { return g[(t*R+r)*d : (t*R+r+1)*d] }
	}
	gs := make([][]T, len(gr.gx))
	for t, n := range gr.gx {
		gs[t] = values[T](n)
	}
	return func(t, r int) []T { return gs[t][r*d : (r+1)*d] }
}

// letSteps binds v, (T, R, dim) row-major, to the graph's input: one
// tensor, or one (R, dim) tensor a step.
func letSteps[T float](whole *G.Node, steps []*G.Node, v []T, L, R, dim int) error {
	if steps == nil {
		return G.Let(whole, tensor.New(tensor.WithShape(L, R, dim), tensor.WithBacking(v)))
	}
	for t, n := range steps {
		if err := G.Let(n, tensor.New(tensor.WithShape(R, dim), tensor.WithBacking(v[t*R*dim:(t+1)*R*dim]))); err != nil {
			return err
		}
	}
	return nil
}

type model[T float] struct {
	cfg    compute.Config
	enc    encoderBuilder
	dt     tensor.Dtype
	specs  []compute.ParamSpec
	w      map[string][]T // parameters; the dense tensors share these slices
	dense  map[string]*tensor.Dense
	grad   map[string][]T
	init   []T // W_w,initial of the λw term
	opt    *compute.Optimizer
	graphs map[graphKey]*graph
	// recent lists the graphs' keys, least recently used first, and
	// maxGraphs bounds them (0: no bound); budget bounds the bytes of the
	// host tensors (host), the graphs' held bytes (held) and the largest
	// run among them (0: no bound).
	recent       []graphKey
	maxGraphs    int
	budget, host int64
	held         int64
	// stepped are the parameters the last ForwardBackward's graph steps
	// (graph.stepped): the only ones Update steps (a multitask run's NLI
	// head is not stepped by a pairs batch, nor the pairs loss's head by
	// an NLI batch). nil: every parameter.
	stepped map[string]bool
	// rows are, per table (embeddings, bigrams), the distinct rows the
	// last batch touched, sorted; dirty the rows of the table's gradient
	// buffer that hold values (all: dirtyAll), zeroed before the next
	// scatter. A sparse update steps only rows.
	rows     map[string][]int32
	dirty    map[string][]int32
	dirtyAll map[string]bool
	// compact is compactGrads(cfg): compactEmb then holds the embeddings'
	// gradient as rows of the batch's distinct rows (m.rows' order), and
	// the table's grad is not allocated.
	compact    bool
	compactEmb []T
}

// compactGrads says whether the embeddings' gradient is kept as the
// batch's rows alone (compactEmb) rather than as a table of the
// vocabulary's: under the sparse update, with no λw pull (which reads and
// writes rows of the table's gradient) and no EDD output layer (which
// scatters into it by word). A sparse step then reads and writes the
// gradients of a few thousand rows in a buffer that stays in the caches,
// not a few thousand rows at random across a table of 480 MB at 400,000
// words, and the table is not allocated.
func compactGrads(cfg compute.Config) bool {
	return compute.SparseParam(cfg, compute.ParamEmbeddings) && cfg.LambdaW == 0 && !cfg.IsEDD()
}

// compactRows is the room compactEmb is made with: the distinct words of a
// batch of pairs at their longest, or the vocabulary if smaller (a batch
// with more grows it).
func compactRows(cfg compute.Config) int {
	return min(cfg.Vocab, 2*cfg.BatchSize*cfg.MaxLen)
}

func newModel[T float](cfg compute.Config, enc encoderBuilder, params []compute.Tensor, dt tensor.Dtype) *model[T] {
	m := &model[T]{cfg: cfg, enc: enc, dt: dt, specs: compute.Layout(cfg), w: map[string][]T{},
		dense: map[string]*tensor.Dense{}, grad: map[string][]T{}, graphs: map[graphKey]*graph{},
		rows: map[string][]int32{}, dirty: map[string][]int32{}, dirtyAll: map[string]bool{}, compact: compactGrads(cfg)}
	byName := map[string]compute.Tensor{}
	for _, p := range params {
		byName[p.Name] = p
	}
	for _, s := range m.specs {
		w := sysmem.MakeHuge[T](compute.NumElems(s.Shape))
		for i, v := range byName[s.Name].Data {
			w[i] = T(v)
		}
		m.w[s.Name] = w
		if s.Name != compute.ParamEmbeddings || !m.compact {
			m.grad[s.Name] = sysmem.MakeHuge[T](len(w))
		}
		m.dense[s.Name] = tensor.New(tensor.WithShape(s.Shape...), tensor.WithBacking(w))
	}
	if cfg.LambdaW > 0 {
		m.init = append([]T(nil), m.w[compute.ParamEmbeddings]...)
	}
	if m.compact {
		m.compactEmb = make([]T, 0, compactRows(cfg)*cfg.Dim)
	}
	m.opt = compute.NewOptimizer(cfg, m.specs)
	return m
}

// build makes the graph for key and measures its cost, without compiling
// it, recovering gorgonia's panics.
func (m *model[T]) build(k graphKey) (gr *graph, err error) {
	defer func() {
		if r := recover(); r != nil {
			if be, ok := r.(buildErr); ok {
				err = fmt.Errorf("building graph for %d rows of %d steps: %w", k.rows, k.T, be.err)
				return
			}
			err = fmt.Errorf("building graph for %d rows of %d steps: gorgonia panicked: %v\n%s", k.rows, k.T, r, debug.Stack())
		}
	}()
	g := G.NewGraph()
	o := &ops{g: g, dt: m.dt}
	e := &encoderGraph{ops: o, cfg: m.cfg, T: k.T, R: k.rows, params: map[string]*G.Node{}, used: map[string]bool{},
		masks: map[int][]*G.Node{}, invs: map[int]*G.Node{}, builder: m.enc}
	for _, s := range m.specs {
		if s.Name == compute.ParamEmbeddings || s.Name == compute.ParamBigrams {
			continue
		}
		n := o.input(s.Name, s.Shape...)
		if err := G.Let(n, m.dense[s.Name]); err != nil {
			return nil, err
		}
		e.params[s.Name] = n
	}
	if m.enc.stepwise {
		e.xs = make([]*G.Node, k.T)
		for t := range e.xs {
			e.xs[t] = o.input(fmt.Sprintf("x.%d", t), k.rows, m.cfg.Dim)
		}
	} else {
		e.x = o.input("x", k.T, k.rows, m.cfg.Dim)
	}
	if m.enc.spec.Bigrams {
		e.xb = o.input("xb", k.T, k.rows, m.cfg.Dim)
	}
	if m.cfg.Context == compute.ContextTopics {
		e.ctx = o.input("ctx", k.rows, m.cfg.Topics)
	}
	gr = &graph{g: g, enc: e, emb: e.encode()}
	if k.train {
		n := k.rows / 2
		if k.negs {
			n = k.rows / 3
		}
		switch m.lossOf(k.nli) {
		case lossNLI:
			gr.loss = e.nli(gr.emb, n, &gr.in)
		case compute.LossMargin:
			gr.loss = e.margin(gr.emb, n, &gr.in)
		case compute.LossHinge:
			gr.loss = e.hinge(gr.emb, n, &gr.in)
		case compute.LossSoftmax:
			gr.loss = e.softmax(gr.emb, n, &gr.in)
		case compute.LossSim:
			gr.loss = e.sim(gr.emb, n, &gr.in)
		case compute.LossMNRL:
			gr.loss = e.mnrl(gr.emb, n, &gr.in)
		case compute.LossRecon:
			gr.loss = e.recon(gr.emb)
		case compute.LossLocal, compute.LossLocalGlobal:
			gr.loss = e.edd(gr.emb, n, &gr.in)
		}
		if !k.nli {
			gr.loss = e.withRecon(gr.loss, gr.emb)
		}
		var names []string
		var wrt G.Nodes
		for name, node := range e.params {
			if e.used[name] {
				names, wrt = append(names, name), append(wrt, node)
			}
		}
		xs := e.xs
		if xs == nil {
			xs = []*G.Node{e.x}
		}
		wrt = append(wrt, xs...)
		if e.xb != nil {
			wrt = append(wrt, e.xb)
		}
		extra := gr.in.edd.wrt()
		wrt = append(wrt, extra...)
		gs, err := G.Grad(gr.loss, wrt...)
		if err != nil {
			return nil, fmt.Errorf("differentiating the %s loss: %w", m.cfg.Loss, err)
		}
		gr.grads = map[string]*G.Node{}
		gr.stepped = map[string]bool{compute.ParamEmbeddings: true, compute.ParamBigrams: true}
		for i, name := range names {
			gr.grads[name], gr.stepped[name] = gs[i], true
		}
		gr.gx = gs[len(names) : len(names)+len(xs)]
		if e.xb != nil {
			gr.gxb = gs[len(names)+len(xs)]
		}
		gr.in.edd.setGrads(gs[len(gs)-len(extra):])
	}
	params := map[*G.Node]bool{}
	for _, n := range e.params {
		params[n] = true
	}
	gr.cost = measure(g, func(n *G.Node) bool { return params[n] })
	return gr, nil
}

// compile makes the graph's machine, recovering gorgonia's panics.
func compile(gr *graph) (err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("compiling the graph: gorgonia panicked: %v", r)
		}
	}()
	gr.vm = G.NewTapeMachine(gr.g)
	return nil
}

// graphFor returns the compiled graph for k: the cached one, or a new one
// for which the cache makes room (admit).
func (m *model[T]) graphFor(k graphKey) (*graph, error) {
	if i := slices.Index(m.recent, k); i >= 0 {
		m.recent = append(append(m.recent[:i:i], m.recent[i+1:]...), k)
		return m.graphs[k], nil
	}
	gr, err := m.build(k)
	if err != nil {
		return nil, err
	}
	if err := m.admit(k, gr.cost); err != nil {
		return nil, err
	}
	if err := compile(gr); err != nil {
		return nil, fmt.Errorf("building graph for %d rows of %d steps: %w", k.rows, k.T, err)
	}
	m.graphs[k] = gr
	m.recent = append(m.recent, k)
	m.held += gr.cost.held()
	return gr, nil
}

// Graphs is the number of compiled graphs the model holds.
func (m *model[T]) Graphs() int { return len(m.graphs) }

// feed binds the encoder inputs for seqs (R rows, padded to T) with the
// dropout multipliers drop (row-major [row][t][unit], nil for none) and,
// for a model with a topic context, the rows' topic vectors ctx (empty:
// zeros).
func (m *model[T]) feed(gr *graph, seqs [][]int32, drop func(r int) []float32, ctx [][]float32) error {
	e := gr.enc
	if e.ctx != nil {
		k := m.cfg.Topics
		v := make([]T, e.R*k)
		if m.cfg.CSAEZeroContext {
			ctx = nil // the csae's ablation: c_x = 0
		}
		for r, c := range ctx {
			if len(c) != 0 && len(c) != k {
				return fmt.Errorf("row %d: a topic vector of %d values, the model takes %d", r, len(c), k)
			}
			for j, x := range c {
				v[r*k+j] = T(x)
			}
		}
		if err := G.Let(e.ctx, tensor.New(tensor.WithShape(e.R, k), tensor.WithBacking(v))); err != nil {
			return err
		}
	}
	L, R, d := e.T, e.R, m.cfg.Dim
	emb := m.w[compute.ParamEmbeddings]
	x := make([]T, L*R*d)
	for r, s := range seqs {
		dr := drop(r)
		for t, id := range s {
			dst := x[(t*R+r)*d : (t*R+r+1)*d]
			src := emb[int(id)*d : int(id+1)*d]
			if dr == nil {
				copy(dst, src)
				continue
			}
			mk := dr[t*d : (t+1)*d]
			for u := range dst {
				dst[u] = src[u] * T(mk[u])
			}
		}
	}
	if err := letSteps(e.x, e.xs, x, L, R, d); err != nil {
		return err
	}
	if e.xb != nil {
		big := m.w[compute.ParamBigrams]
		xb := make([]T, L*R*d)
		for r, s := range seqs {
			for t := 0; t+1 < len(s); t++ {
				id := int(compute.BigramID(s[t], s[t+1], m.cfg.BigramBuckets))
				copy(xb[(t*R+r)*d:(t*R+r+1)*d], big[id*d:(id+1)*d])
			}
		}
		if err := G.Let(e.xb, tensor.New(tensor.WithShape(L, R, d), tensor.WithBacking(xb))); err != nil {
			return err
		}
	}
	for dim, nodes := range e.masks {
		v := make([]T, L*R*dim)
		for r, s := range seqs {
			for t := range s {
				row := v[(t*R+r)*dim : (t*R+r+1)*dim]
				for u := range row {
					row[u] = 1
				}
			}
		}
		if err := letSteps(nil, nodes, v, L, R, dim); err != nil {
			return err
		}
	}
	if e.lens != nil {
		v := make([]T, R)
		for r, s := range seqs {
			v[r] = T(len(s))
		}
		if err := G.Let(e.lens, tensor.New(tensor.WithShape(R), tensor.WithBacking(v))); err != nil {
			return err
		}
	}
	for dim, node := range e.invs {
		v := make([]T, R*dim)
		for r, s := range seqs {
			f := 1 / float64(len(s))
			if m.enc.sqrtLen {
				f = 1 / math.Sqrt(float64(len(s)))
			}
			for u := range dim {
				v[r*dim+u] = T(f)
			}
		}
		if err := G.Let(node, tensor.New(tensor.WithShape(R, dim), tensor.WithBacking(v))); err != nil {
			return err
		}
	}
	return nil
}

func (m *model[T]) let(n *G.Node, v []T, shape ...int) error {
	if n == nil {
		return nil
	}
	return G.Let(n, tensor.New(tensor.WithShape(shape...), tensor.WithBacking(v)))
}

// feedLoss binds the loss inputs of b; it returns the constant part of the
// loss that the graph leaves out (Σ p log p of the sim loss).
func (m *model[T]) feedLoss(gr *graph, b *compute.Batch) (float64, error) {
	n := b.N()
	in := &gr.in
	var konst float64
	if err := m.feedRecon(gr, b); err != nil {
		return 0, err
	}
	switch m.lossOf(b.NLI) {
	case lossNLI:
		v := make([]T, n*compute.NLIClasses)
		for i, y := range b.Labels {
			v[i*compute.NLIClasses+int(y)] = 1
		}
		if err := m.let(in.target, v, n, compute.NLIClasses); err != nil {
			return 0, err
		}
	case compute.LossMargin:
		if in.penalty != nil {
			p := make([]T, 4*n*n)
			for r := range 2 * n {
				i := r % n
				p[r*2*n+i], p[r*2*n+i+n] = -4, -4
			}
			if err := m.let(in.penalty, p, 2*n, 2*n); err != nil {
				return 0, err
			}
		}
		if in.sel != nil {
			s := make([]T, 4*n*n)
			for r, c := range b.NegRand {
				s[r*2*n+int(c)] = 1
			}
			if err := m.let(in.sel, s, 2*n, 2*n); err != nil {
				return 0, err
			}
		}
		if in.useMax != nil {
			um, ur := make([]T, 2*n), make([]T, 2*n)
			for r, use := range b.NegUseMax {
				if use {
					um[r] = 1
				} else {
					ur[r] = 1
				}
			}
			if err := m.let(in.useMax, um, 2*n); err != nil {
				return 0, err
			}
			if err := m.let(in.useRand, ur, 2*n); err != nil {
				return 0, err
			}
		}
	case compute.LossHinge:
		for _, kk := range []struct {
			node *G.Node
			negs [][]int32
		}{{in.k1, b.HingeNegB}, {in.k2, b.HingeNegA}} {
			v := make([]T, n*n)
			for i, js := range kk.negs {
				for _, j := range js {
					v[i*n+int(j)]++
				}
			}
			if err := m.let(kk.node, v, n, n); err != nil {
				return 0, err
			}
		}
	case compute.LossSoftmax:
		v := make([]T, n*n)
		for i := range n {
			v[i*n+i] = 1
		}
		if err := m.let(in.eye, v, n, n); err != nil {
			return 0, err
		}
	case compute.LossMNRL:
		return 0, m.feedMNRL(gr, n)
	case compute.LossLocal, compute.LossLocalGlobal:
		return 0, m.feedEDD(gr, b)
	case compute.LossSim:
		K := m.cfg.SimK
		v := make([]T, n*K)
		for i, y := range b.Labels {
			p := compute.SimTarget(1+float64(y)-m.cfg.SimMin, K)
			for k, pk := range p {
				v[i*K+k] = T(pk)
				if pk > 0 {
					konst += pk * math.Log(pk) / float64(n)
				}
			}
		}
		if err := m.let(in.target, v, n, K); err != nil {
			return 0, err
		}
	}
	return konst, nil
}

// run executes the graph, recovering gorgonia's panics.
func run(gr *graph) (err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("gorgonia panicked: %v", r)
		}
	}()
	gr.vm.Reset()
	return gr.vm.RunAll()
}

func values[T float](n *G.Node) []T {
	switch v := n.Value().Data().(type) {
	case []T:
		return v
	case T:
		return []T{v}
	}
	panic(fmt.Sprintf("cpu: node %v holds %T", n, n.Value().Data()))
}

// ForwardBackward implements compute.Model.
func (m *model[T]) ForwardBackward(b *compute.Batch) (float64, error) {
	if err := b.Check(m.cfg); err != nil {
		return 0, err
	}
	n := b.N()
	gr, err := m.graphFor(graphKey{rows: (2 + min(len(b.Neg), 1)) * n, T: b.Len, train: true, nli: b.NLI, negs: b.Neg != nil})
	if err != nil {
		return 0, err
	}
	seqs := append(append(append([][]int32(nil), b.A...), b.B...), b.Neg...)
	drop := func(r int) []float32 {
		src, i := b.DropA, r
		if r >= n {
			src, i = b.DropB, r-n
		}
		if src == nil || r >= 2*n { // hard negatives: no dropout

			return nil
		}
		sz := b.Len * m.cfg.Dim
		return src[i*sz : (i+1)*sz]
	}
	embRows := distinctRows(seqs, func(s []int32, yield func(int32)) {
		for _, id := range s {
			yield(id)
		}
	})
	if m.cfg.IsEDD() {
		embRows = m.eddRows(embRows)
	}
	var bigramRows []int32
	if gr.gxb != nil {
		bigramRows = distinctRows(seqs, func(s []int32, yield func(int32)) {
			for t := 0; t+1 < len(s); t++ {
				yield(compute.BigramID(s[t], s[t+1], m.cfg.BigramBuckets))
			}
		})
	}
	// The batch's rows owed steps of the sparse update take them before
	// the forward pass reads them, as dense Adam's would have.
	for _, t := range [...]struct {
		name string
		rows []int32
	}{{compute.ParamEmbeddings, embRows}, {compute.ParamBigrams, bigramRows}} {
		if t.rows != nil && compute.SparseParam(m.cfg, t.name) {
			m.asFloat32(t.name, func(w []float32) { m.opt.Prepare(t.name, w, m.cfg.Dim, t.rows) })
		}
	}
	if err := m.feed(gr, seqs, drop, append(append([][]float32(nil), b.CtxA...), b.CtxB...)); err != nil {
		return 0, err
	}
	konst, err := m.feedLoss(gr, b)
	if err != nil {
		return 0, err
	}
	defer gr.release()
	if err := run(gr); err != nil {
		return 0, fmt.Errorf("running the %s/%s graph: %w", m.cfg.Encoder, m.cfg.Loss, err)
	}
	loss := float64(values[T](gr.loss)[0]) + konst
	// Gradients: graph parameters directly (those outside the graph: 0,
	// and not stepped); embeddings scattered from x.
	m.stepped = gr.stepped
	for _, s := range m.specs {
		if node, ok := gr.grads[s.Name]; ok {
			copy(m.grad[s.Name], values[T](node))
		} else if !gr.stepped[s.Name] {
			clear(m.grad[s.Name])
		}
	}
	d := m.cfg.Dim
	R := len(seqs)
	var ge []T
	at := func(id int32) int { return int(id) }
	if m.compact {
		m.rows[compute.ParamEmbeddings] = embRows
		n := len(embRows) * d
		if cap(m.compactEmb) < n {
			m.compactEmb = make([]T, n)
		}
		ge = m.compactEmb[:n]
		clear(ge)
		at = func(id int32) int { k, _ := slices.BinarySearch(embRows, id); return k }
	} else {
		ge = m.clearTable(compute.ParamEmbeddings, embRows)
	}
	gx := wordGrads[T](gr, d)
	for r, s := range seqs {
		dr := drop(r)
		for t, id := range s {
			src := gx(t, r)
			k := at(id)
			dst := ge[k*d : (k+1)*d]
			for u := range dst {
				g := src[u]
				if dr != nil {
					g *= T(dr[t*d+u])
				}
				dst[u] += g
			}
		}
	}
	if gr.in.edd != nil {
		if err := m.scatterEDD(gr, b, ge); err != nil {
			return 0, err
		}
	}
	if node := gr.gxb; node != nil {
		gb := m.clearTable(compute.ParamBigrams, bigramRows)
		gxb := values[T](node)
		for r, s := range seqs {
			for t := 0; t+1 < len(s); t++ {
				id := int(compute.BigramID(s[t], s[t+1], m.cfg.BigramBuckets))
				src := gxb[(t*R+r)*d : (t*R+r+1)*d]
				dst := gb[id*d : (id+1)*d]
				for u := range dst {
					dst[u] += src[u]
				}
			}
		}
	}
	loss += m.regularise()
	if math.IsNaN(loss) || math.IsInf(loss, 0) {
		return loss, fmt.Errorf("loss %v: %w", loss, compute.ErrNonFinite)
	}
	// The embedding gradients are sums of the input gradients (plus the
	// λw term, finite with finite parameters): checking the graph's
	// gradients avoids a pass over the whole vocabulary.
	for name, node := range gr.grads {
		if !finite(values[T](node)) {
			return loss, fmt.Errorf("gradient of %s: %w", name, compute.ErrNonFinite)
		}
	}
	for _, node := range append(slices.Clone(gr.gx), gr.gxb) {
		if node != nil && !finite(values[T](node)) {
			return loss, fmt.Errorf("gradient of the words: %w", compute.ErrNonFinite)
		}
	}
	return loss, nil
}

// distinctRows lists, sorted, the distinct rows each sequence yields.
func distinctRows(seqs [][]int32, each func(s []int32, yield func(int32))) []int32 {
	seen := map[int32]bool{}
	var out []int32
	for _, s := range seqs {
		each(s, func(id int32) {
			if !seen[id] {
				seen[id] = true
				out = append(out, id)
			}
		})
	}
	slices.Sort(out)
	return out
}

// clearTable zeroes the rows of the table's gradient that hold values from
// the last step (all of it after a dense regularisation), records rows as
// the batch's, and returns the gradient buffer.
func (m *model[T]) clearTable(name string, rows []int32) []T {
	g := m.grad[name]
	d := m.cfg.Dim
	if m.dirtyAll[name] {
		clear(g)
	} else {
		for _, r := range m.dirty[name] {
			clear(g[int(r)*d : int(r+1)*d])
		}
	}
	m.rows[name], m.dirty[name], m.dirtyAll[name] = rows, rows, false
	return g
}

func finite[T float](vs []T) bool {
	for _, v := range vs {
		if f := float64(v); math.IsNaN(f) || math.IsInf(f, 0) {
			return false
		}
	}
	return true
}

// regularise adds λc‖W_c‖² and λw‖W_w - W_w,initial‖² and their gradients.
func (m *model[T]) regularise() float64 {
	var loss float64
	if lc := m.cfg.LambdaC; lc > 0 {
		for _, s := range m.specs {
			if !s.Compositional {
				continue
			}
			w, g := m.w[s.Name], m.grad[s.Name]
			var ss float64
			for i, v := range w {
				ss += float64(v) * float64(v)
				g[i] += T(2 * lc * float64(v))
			}
			loss += lc * ss
		}
	}
	if lw := m.cfg.LambdaW; lw > 0 {
		w, g := m.w[compute.ParamEmbeddings], m.grad[compute.ParamEmbeddings]
		var ss float64
		pull := func(lo, hi int) {
			for i := lo; i < hi; i++ {
				dv := float64(w[i]) - float64(m.init[i])
				ss += dv * dv
				g[i] += T(2 * lw * dv)
			}
		}
		if m.cfg.EmbeddingUpdate == compute.UpdateDense {
			// Every row is pulled back, and every row's gradient holds
			// the pull.
			pull(0, len(w))
			m.dirtyAll[compute.ParamEmbeddings] = true
		} else {
			// Lazy: the rows of the batch, those the update steps.
			d := m.cfg.Dim
			for _, r := range m.rows[compute.ParamEmbeddings] {
				pull(int(r)*d, int(r+1)*d)
			}
		}
		loss += lw * ss
	}
	return loss
}

// Update implements compute.Model.
func (m *model[T]) Update(step int64, lr float64) error {
	if step < 1 {
		return fmt.Errorf("update step %d: steps count from 1", step)
	}
	for _, s := range m.specs {
		if m.stepped != nil && !m.stepped[s.Name] {
			continue // outside the last step's graph: no gradient, no step, no moments
		}
		w, g := m.w[s.Name], m.grad[s.Name]
		compact := s.Name == compute.ParamEmbeddings && m.compact
		if compact {
			rows, ok := m.rows[s.Name]
			if !ok {
				continue // no batch yet: no gradient, no step
			}
			g = m.compactEmb[:len(rows)*m.cfg.Dim]
		}
		if lo, hi, ok := compute.HeldCellBias(m.cfg, s.Name, len(g)); ok {
			clear(g[lo:hi]) // held at its initial value: no step, no moments
		}
		rows, sparse := m.rows[s.Name]
		sparse = sparse && m.cfg.EmbeddingUpdate != compute.UpdateDense
		update := func(w, g []float32) {
			if sparse {
				m.opt.StepRows(s.Name, compute.SparseRows{W: w, G: g, Rows: rows, Width: m.cfg.Dim, Compact: compact}, step, lr)
			} else {
				m.opt.Step(s.Name, w, g, step, lr)
			}
		}
		switch ws := any(w).(type) {
		case []float32:
			update(ws, any(g).([]float32))
		default:
			w32, g32 := make([]float32, len(w)), make([]float32, len(g))
			for i := range w {
				w32[i] = float32(w[i])
			}
			for i := range g { // compact embedding gradients are shorter
				g32[i] = float32(g[i])
			}
			update(w32, g32)
			for i := range w {
				w[i] = T(w32[i])
			}
		}
	}
	return nil
}

// Flush implements compute.Flusher: the row-sparse tables' rows catch up
// with the steps since their last update (compute.CatchUp).
func (m *model[T]) Flush(step int64) error {
	for _, s := range m.specs {
		if compute.SparseParam(m.cfg, s.Name) {
			m.asFloat32(s.Name, func(w []float32) { m.opt.Flush(s.Name, w, m.cfg.Dim, step) })
		}
	}
	return nil
}

// asFloat32 runs f on the parameter name as float32 values (in a float64
// model a copy, of which the values f changed are written back).
func (m *model[T]) asFloat32(name string, f func([]float32)) {
	switch w := any(m.w[name]).(type) {
	case []float32:
		f(w)
	default:
		wt := m.w[name]
		w32 := make([]float32, len(wt))
		for i := range wt {
			w32[i] = float32(wt[i])
		}
		f(w32)
		for i := range wt {
			if w32[i] != float32(wt[i]) { // values f left alone keep their precision
				wt[i] = T(w32[i])
			}
		}
	}
}

// Embed implements compute.Model. Sequences are embedded in chunks of 64
// rows (the last chunk padded with copies), each padded to its bucket
// length; an empty sequence is an error.
func (m *model[T]) Embed(seqs [][]int32) ([][]float32, error) {
	if m.cfg.Context != "" {
		return nil, fmt.Errorf("the %s model takes a %s context with each sentence: embed with EmbedContext", m.cfg.Encoder, m.cfg.Context)
	}
	return m.EmbedContext(seqs, nil)
}

// EmbedContext implements compute.ContextEmbedder.
func (m *model[T]) EmbedContext(seqs [][]int32, ctx [][]float32) ([][]float32, error) {
	const chunk = 64
	if m.cfg.Context != "" && len(ctx) != len(seqs) {
		return nil, fmt.Errorf("embedding %d sequences with %d topic vectors", len(seqs), len(ctx))
	}
	out := make([][]float32, 0, len(seqs))
	for lo := 0; lo < len(seqs); lo += chunk {
		part := seqs[lo:min(lo+chunk, len(seqs))]
		longest := 0
		rows := make([][]int32, chunk)
		var rowCtx [][]float32
		if m.cfg.Context != "" {
			rowCtx = make([][]float32, chunk)
			for i := range rowCtx {
				rowCtx[i] = ctx[lo+min(i, len(part)-1)]
			}
		}
		for i := range rows {
			s := part[min(i, len(part)-1)]
			if len(s) == 0 {
				return nil, fmt.Errorf("embedding sequence %d: %w", lo+i, compute.ErrEmptySentence)
			}
			if len(s) > m.cfg.MaxLen {
				s = s[:m.cfg.MaxLen]
			}
			for _, id := range s {
				if id < 0 || int(id) >= m.cfg.Vocab {
					return nil, fmt.Errorf("embedding sequence %d: token id %d outside the vocabulary [0, %d)", lo+i, id, m.cfg.Vocab)
				}
			}
			rows[i] = s
			longest = max(longest, len(s))
		}
		gr, err := m.graphFor(graphKey{rows: chunk, T: compute.BucketLen(longest, m.cfg.BucketWidth)})
		if err != nil {
			return nil, err
		}
		if err := m.feed(gr, rows, func(int) []float32 { return nil }, rowCtx); err != nil {
			return nil, err
		}
		if err := run(gr); err != nil {
			gr.release()
			return nil, fmt.Errorf("running the %s encoder: %w", m.cfg.Encoder, err)
		}
		e := values[T](gr.emb)
		dim := m.cfg.EmbedDim()
		for i := range part {
			v := make([]float32, dim)
			for u := range v {
				v[u] = float32(e[i*dim+u])
			}
			out = append(out, v)
		}
		gr.release()
	}
	return out, nil
}

func toTensor[T float](name string, shape []int, v []T) compute.Tensor {
	t := compute.Tensor{Name: name, Shape: append([]int(nil), shape...), Data: make([]float32, len(v))}
	for i, x := range v {
		t.Data[i] = float32(x)
	}
	return t
}

// Params implements compute.Model.
func (m *model[T]) Params() []compute.Tensor {
	out := make([]compute.Tensor, len(m.specs))
	for i, s := range m.specs {
		out[i] = toTensor(s.Name, s.Shape, m.w[s.Name])
	}
	return out
}

// Grads implements compute.Model.
func (m *model[T]) Grads() []compute.Tensor {
	out := make([]compute.Tensor, len(m.specs))
	for i, s := range m.specs {
		out[i] = toTensor(s.Name, s.Shape, m.fullGrad(s))
	}
	return out
}

// fullGrad is the gradient of parameter s in its shape: the table's, or,
// for compact embedding gradients, one made of the batch's rows, zero
// elsewhere.
func (m *model[T]) fullGrad(s compute.ParamSpec) []T {
	if s.Name != compute.ParamEmbeddings || !m.compact {
		return m.grad[s.Name]
	}
	g := make([]T, compute.NumElems(s.Shape))
	d := m.cfg.Dim
	for k, r := range m.rows[s.Name] {
		copy(g[int(r)*d:int(r+1)*d], m.compactEmb[k*d:(k+1)*d])
	}
	return g
}

// SetParams implements compute.Model.
func (m *model[T]) SetParams(ts []compute.Tensor) error {
	for _, t := range ts {
		w, ok := m.w[t.Name]
		if !ok {
			return fmt.Errorf("setting parameter %s: the %s model has none", t.Name, m.cfg.Encoder)
		}
		if len(t.Data) != len(w) || !compute.SameShape(t.Shape, m.dense[t.Name].Shape()) {
			return fmt.Errorf("setting parameter %s: shape %v, want %v", t.Name, t.Shape, m.dense[t.Name].Shape())
		}
		for i, v := range t.Data {
			w[i] = T(v)
		}
	}
	return nil
}

// initName is the state tensor holding W_w,initial.
const initName = "init/" + compute.ParamEmbeddings

// State implements compute.Model.
func (m *model[T]) State() []compute.Tensor {
	st := m.opt.State()
	if m.init != nil {
		st = append(st, toTensor(initName, []int{m.cfg.Vocab, m.cfg.Dim}, m.init))
	}
	return st
}

// SetState implements compute.Model.
func (m *model[T]) SetState(ts []compute.Tensor) error {
	rest, err := m.opt.SetState(ts)
	if err != nil {
		return err
	}
	for _, t := range rest {
		if t.Name != initName || m.init == nil {
			return fmt.Errorf("optimizer state %s: unknown to a %s model with lambda_w %g", t.Name, m.cfg.Optimizer, m.cfg.LambdaW)
		}
		if len(t.Data) != len(m.init) {
			return fmt.Errorf("optimizer state %s: %d values, want %d", t.Name, len(t.Data), len(m.init))
		}
		for i, v := range t.Data {
			m.init[i] = T(v)
		}
	}
	return nil
}

// Close implements compute.Model.
func (m *model[T]) Close() error {
	var errs []error
	for k, gr := range m.graphs {
		errs = append(errs, gr.vm.Close())
		delete(m.graphs, k)
	}
	m.recent, m.held = nil, 0
	return errors.Join(errs...)
}
