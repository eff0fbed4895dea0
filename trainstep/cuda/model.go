package cuda

import (
	"errors"
	"fmt"
	"log/slog"
	"math"
	"math/bits"
	"strings"
	"unsafe"

	"github.com/parastream/parastream/trainstep/compute"
)

// model is one model's parameters, gradients, optimiser state and
// workspace on a device. Parameter and state names, shapes and order are
// those of compute.Layout and compute.Optimizer, so checkpoints are the
// CPU backend's.
type model struct {
	dev     device
	cfg     compute.Config
	encoder encoderKernels // the encoder's passes (encoderTable)
	bigrams bool           // the encoder reads bigram embeddings (compute.EncoderSpec.Bigrams)
	specs   []compute.ParamSpec
	w, g    map[string]ptr // parameters and gradients by name
	// Optimiser state ("adam.m/<param>", ...), in compute.Optimizer's order.
	state      map[string]ptr
	stateOrder []string
	stateShape map[string][]int
	init       ptr // W_w,initial of the λw term (NULL without λw)
	bufs       []*buffer
	ws         map[string]*buffer // workspace, grown on demand
	// rows lists the distinct embedding rows of the last batch, on the
	// host and in the "rows" workspace: a sparse update steps only them.
	// rowSet finds them.
	rows   []int32
	rowSet rowSet
	// lazy catches the rows up with the steps they were skipped (on the
	// host; nil for SGD and the dense update).
	lazy *compute.CatchUp
	// bigramRows, bigramSet and bigramLazy are the same for the DAN's
	// bigram table (dan.go).
	bigramRows []int32
	bigramSet  rowSet
	bigramLazy *compute.CatchUp
	// graphs are the captured steps (nil: CUDA graphs off); gen counts
	// the reallocations of workspace buffers a graph may use, capturing
	// is true while a step is being captured (graph.go).
	graphs    *graphCache
	gen       int
	capturing bool
	stager    stager // the double-buffered batch upload
	// snap copies snapshots out (snapshot.go; nil before the first).
	snap *snapArena
	log  *slog.Logger // a refused capture (graph.go); never nil
}

// sparse reports whether the embeddings update only the batch's rows.
func (m *model) sparse() bool { return m.cfg.EmbeddingUpdate != compute.UpdateDense }

func newModel(dev device, cfg compute.Config, params []compute.Tensor, opts Options) (m *model, err error) {
	spec, _ := cfg.Spec()
	m = &model{dev: dev, cfg: cfg, encoder: encoderTable()[cfg.Encoder], bigrams: spec.Bigrams, specs: compute.Layout(cfg), w: map[string]ptr{}, g: map[string]ptr{},
		state: map[string]ptr{}, stateShape: map[string][]int{}, ws: map[string]*buffer{}}
	if !opts.NoGraphs {
		m.graphs = newGraphCache(opts.MaxGraphs)
	}
	if m.log = opts.Logger; m.log == nil {
		m.log = slog.New(slog.DiscardHandler)
	}
	defer func() {
		if err != nil {
			m.release()
		}
	}()
	byName := map[string]compute.Tensor{}
	for _, p := range params {
		byName[p.Name] = p
	}
	var slots []string
	switch cfg.Optimizer {
	case compute.OptAdam:
		slots = []string{"adam.m/", "adam.v/"}
	case compute.OptRMSProp:
		slots = []string{"rmsprop.v/"}
	}
	for _, s := range m.specs {
		n := compute.NumElems(s.Shape)
		if m.w[s.Name], err = m.newZero(n); err != nil {
			return nil, err
		}
		if err := m.uploadF(m.w[s.Name], byName[s.Name].Data); err != nil {
			return nil, err
		}
		if m.g[s.Name], err = m.newZero(n); err != nil {
			return nil, err
		}
		for _, sl := range slots {
			name := sl + s.Name
			if m.state[name], err = m.newZero(n); err != nil {
				return nil, err
			}
			m.stateOrder = append(m.stateOrder, name)
			m.stateShape[name] = s.Shape
		}
		if s.Name == compute.ParamEmbeddings && m.sparse() {
			m.lazy = compute.NewCatchUp(cfg, s.Shape[0])
		}
		if s.Name == compute.ParamBigrams && m.sparse() {
			m.bigramLazy = compute.NewCatchUp(cfg, s.Shape[0])
		}
	}
	if cfg.LambdaW > 0 {
		if m.init, err = m.newZero(cfg.Vocab * cfg.Dim); err != nil {
			return nil, err
		}
		if err := dev.copy(m.init, m.w[compute.ParamEmbeddings], cfg.Vocab*cfg.Dim); err != nil {
			return nil, err
		}
	}
	return m, nil
}

// newZero allocates a zeroed buffer owned by the model.
func (m *model) newZero(words int) (ptr, error) {
	b, err := m.dev.alloc(words)
	if err != nil {
		return ptr{}, err
	}
	m.bufs = append(m.bufs, b)
	p := ptr{b: b}
	return p, m.dev.zero(p, words)
}

// eagerWork prefixes the workspace buffers that no captured step uses
// (their sizes follow the batch's distinct rows): they grow without
// making the graphs stale.
const eagerWork = "eager."

// work is the workspace buffer name of at least words words. Workspace
// only grows; growing one a graph may use makes every graph stale (m.gen),
// and is refused during a capture.
func (m *model) work(name string, words int) (ptr, error) {
	if b, ok := m.ws[name]; ok && b.words >= words {
		return ptr{b: b}, nil
	}
	if m.capturing {
		return ptr{}, fmt.Errorf("workspace %s grows to %d words: %w", name, words, errCaptureUnsupported)
	}
	if !strings.HasPrefix(name, eagerWork) {
		m.gen++
	}
	if b, ok := m.ws[name]; ok {
		if err := m.dev.free(b); err != nil {
			return ptr{}, err
		}
		delete(m.ws, name)
	}
	b, err := m.dev.alloc(words)
	if err != nil {
		return ptr{}, err
	}
	m.ws[name] = b
	return ptr{b: b}, nil
}

func (m *model) uploadF(dst ptr, v []float32) error {
	if len(v) == 0 {
		return nil
	}
	return m.dev.upload(dst, unsafe.Pointer(&v[0]), len(v))
}

func (m *model) uploadI(dst ptr, v []int32) error {
	if len(v) == 0 {
		return nil
	}
	return m.dev.upload(dst, unsafe.Pointer(&v[0]), len(v))
}

func (m *model) downloadF(src ptr, words int) ([]float32, error) {
	v := make([]float32, words)
	if words == 0 {
		return v, nil
	}
	return v, m.dev.download(unsafe.Pointer(&v[0]), src, words)
}

// seq issues device calls, keeping the first error (later calls are
// skipped): the model's passes read as the sequence of launches they are.
type seq struct {
	m   *model
	err error
}

func (s *seq) launch(k kernelID, a ...arg) {
	if s.err == nil {
		s.err = s.m.dev.launch(k, a)
	}
}

// colSum is out[j] = Σ_i a[i][j] over a (rows, cols) matrix, and colDot
// out[j] = Σ_i a[i][j]·b[i][j] over cols columns of two strided matrices,
// both by col_reduce: in one pass over at most colChunk rows, else in two,
// sums over chunks of about √rows rows (one thread a chunk and column)
// into a workspace, then their sums.
func (s *seq) colSum(rows, cols int, a, out ptr) {
	s.colReduce(rows, cols, matrix{a, cols}, matrix{}, out)
}

func (s *seq) colDot(rows, cols int, a, b matrix, out ptr) { s.colReduce(rows, cols, a, b, out) }

// colReduce is colDot, or colSum when mul.p is null.
func (s *seq) colReduce(rows, cols int, a, mul matrix, out ptr) {
	pass := func(rows, chunk int, a, mul matrix, out ptr) {
		s.launch(kColReduce, argN(rows), argN(cols), argN(chunk), argN(a.ld), argP(a.p), argN(mul.ld), argP(mul.p), argP(out))
	}
	if rows <= colChunk {
		pass(rows, max(rows, 1), a, mul, out)
		return
	}
	chunk := colChunkOf(rows)
	chunks := ceilDiv(rows, chunk)
	part := s.work("colsum.part", chunks*cols)
	pass(rows, chunk, a, mul, part)
	pass(chunks, chunks, matrix{part, cols}, matrix{}, out)
}

// colChunk is the most rows colSum and colDot add in one pass.
const colChunk = 256

// colChunkOf is the chunk of a two-pass column sum over rows rows: about
// √rows, so that both passes loop about as long, at least 64.
func colChunkOf(rows int) int { return max(64, int(math.Ceil(math.Sqrt(float64(rows))))) }

// mm is the row-major product C (M×N, row length c.ld) = op(A)·op(B) +
// beta·C with op(A) M×K and op(B) K×N, A and B stored row-major with row
// lengths a.ld and b.ld (A is K×M when d.tA). It is cublasSgemm on the
// transposed problem: row-major C is column-major C^T = op(B)^T·op(A)^T.
func (s *seq) mm(d mmDims, a, b matrix, beta float32, c matrix) {
	if s.err == nil {
		s.err = s.m.dev.gemm(d.tB, d.tA, d.N, d.M, d.K, 1, b.p, b.ld, a.p, a.ld, beta, c.p, c.ld)
	}
}

// mmDims are a row-major product's transposes and sizes: op(A) M×K, op(B)
// K×N, C M×N.
type mmDims struct {
	tA, tB  bool
	M, N, K int
}

func (s *seq) zero(p ptr, words int) {
	if s.err == nil {
		s.err = s.m.dev.zero(p, words)
	}
}

func (s *seq) copy(dst, src ptr, words int) {
	if s.err == nil {
		s.err = s.m.dev.copy(dst, src, words)
	}
}

// work is model.work keeping the error.
func (s *seq) work(name string, words int) ptr {
	if s.err != nil {
		return ptr{}
	}
	p, err := s.m.work(name, words)
	s.err = err
	return p
}

// pass is one batch on the device: R rows padded to T steps. Its inputs
// (ids, lens, drop, the margin's negRand and useMax, the DAN's bigrams,
// the hinge loss's negatives, the sim loss's targets) are in an upload
// buffer (graph.go), the rest in the workspace.
type pass struct {
	R, T int
	uploaded
	x   ptr // (T, R, Dim) gathered words
	emb ptr // (R, EmbedDim) sentence embeddings
	dx  ptr // (T, R, Dim) gradient of x

	// enc is what the encoder keeps for its backward pass (encoders.go).
	enc encState
}

// batchInputs are seqs (each at most T long) as a pass's inputs, with the
// encoder's own (the DAN's bigram ids).
func (m *model) batchInputs(seqs [][]int32, T int, drop []float32) *inputs {
	R := len(seqs)
	in := &inputs{R: R, T: T, ids: make([]int32, R*T), lens: make([]int32, R), drop: drop}
	for r, q := range seqs {
		copy(in.ids[r*T:], q)
		in.lens[r] = int32(len(q))
	}
	if m.bigrams {
		in.bigrams = bigramIDs(seqs, T, m.cfg.BigramBuckets)
	}
	return in
}

// prepare stages in's upload (call m.done(slot) once the pass's work is
// issued) and returns the pass over it.
func (m *model) prepare(in *inputs) (*pass, int, error) {
	p := &pass{R: in.R, T: in.T}
	slot, at, err := m.stage(in)
	p.uploaded = at
	return p, slot, err
}

// gather puts the pass's words (times their noise) in p.x.
func (m *model) gather(s *seq, p *pass) {
	R, T, d := p.R, p.T, m.cfg.Dim
	p.x = s.work("x", T*R*d)
	s.launch(kGather, argN(R), argN(T), argN(d), argI(p.ids), argI(p.lens), argP(m.w[compute.ParamEmbeddings]), argP(p.drop), argP(p.x))
}

// ForwardBackward implements compute.Model.
func (m *model) ForwardBackward(b *compute.Batch) (float64, error) {
	if err := b.Check(m.cfg); err != nil {
		return 0, err
	}
	if err := m.dev.enter(); err != nil {
		return 0, err
	}
	defer m.dev.exit()
	n, d := b.N(), m.cfg.Dim
	var drop []float32
	if b.DropA != nil {
		drop = append(append(make([]float32, 0, 3*len(b.DropA)), b.DropA...), b.DropB...)
		if b.Neg != nil { // the mnrl loss's hard negatives: no dropout, as on the CPU
			for range b.DropA {
				drop = append(drop, 1)
			}
		}
	}
	seqs := append(append(append([][]int32(nil), b.A...), b.B...), b.Neg...)
	// The batch's inputs first: a bad batch fails before any device work.
	in := m.batchInputs(seqs, b.Len, drop)
	if err := m.lossInputs(in, b); err != nil {
		return 0, err
	}
	s := &seq{m: m}
	for _, q := range seqs {
		for _, id := range q {
			if !m.rowSet.add(id, m.cfg.Vocab) {
				m.rowSet.drain(nil)
				return 0, fmt.Errorf("batch: token id %d outside the vocabulary [0, %d)", id, m.cfg.Vocab)
			}
		}
	}
	m.rows = m.rowSet.drain(m.rows)
	if m.lazy != nil {
		// The batch's rows owed steps of the sparse update take them
		// before the forward pass reads them, as dense Adam's would have.
		owed, d1, d2, sz := m.lazy.Prepare(m.rows)
		m.catchUp(s, compute.ParamEmbeddings, owed, d1, d2, sz)
	}
	m.prepareBigrams(s, seqs)
	if s.err != nil {
		return 0, fmt.Errorf("catching up the batch's embedding and bigram rows on %s: %w", m.dev.name(), s.err)
	}
	if b.NegRand != nil {
		in.negRand, in.useMax = b.NegRand, make([]int32, 2*n)
		for r, x := range b.NegUseMax {
			if x {
				in.useMax[r] = 1
			}
		}
	}
	p, slot, err := m.prepare(in)
	if err != nil {
		return 0, fmt.Errorf("uploading the batch to %s: %w", m.dev.name(), err)
	}
	key := graphKey{R: p.R, T: p.T, slot: slot, drop: drop != nil, neg: b.NegRand != nil}
	out, err := m.runStep(key, func(s *seq) stepOut {
		q := *p // the body may run twice (captured, then eagerly)
		return m.step(s, &q, n)
	})
	if err = errors.Join(err, m.done(slot)); err != nil {
		return 0, fmt.Errorf("%s/%s step on %s: %w", m.cfg.Encoder, m.cfg.Loss, m.dev.name(), err)
	}
	// The host's part, after the device's: the loss and the flags.
	loss, err := m.lossValue(out.loss)
	if err != nil {
		return 0, err
	}
	loss += in.konst
	var reg float64
	for i, part := range out.partials {
		ss, err := m.partialSum(part)
		if err != nil {
			return 0, err
		}
		reg += out.lambdas[i] * ss
	}
	for _, name := range []string{compute.ParamEmbeddings, compute.ParamBigrams} {
		// The batch's rows, for the sparse update and λw, outside the
		// graph: their number changes from batch to batch.
		hostRows, _, work, ok := m.sparseTable(name)
		if !ok {
			continue
		}
		s := &seq{m: m}
		rows := s.work(work, max(len(hostRows), 1))
		if s.err == nil {
			s.err = m.uploadI(rows, hostRows)
		}
		if s.err != nil {
			return 0, fmt.Errorf("uploading the batch's %s rows to %s: %w", name, m.dev.name(), s.err)
		}
	}
	if lw := m.cfg.LambdaW; lw > 0 && m.sparse() {
		// Lazy: only the batch's rows are pulled back.
		s := &seq{m: m}
		rows, part := s.work(eagerWork+"rows", len(m.rows)), s.work(eagerWork+"partials", 2*sumsqThreads)
		s.launch(kSumsqGradRows, argN(len(m.rows)), argN(d), argI(rows), argP(m.w[compute.ParamEmbeddings]),
			argP(m.init), argS(float32(lw)), argP(m.g[compute.ParamEmbeddings]), argD(part))
		if s.err != nil {
			return 0, fmt.Errorf("λw of the batch's rows on %s: %w", m.dev.name(), s.err)
		}
		ss, err := m.partialSum(part)
		if err != nil {
			return 0, err
		}
		reg += lw * ss
	}
	loss += reg
	if math.IsNaN(loss) || math.IsInf(loss, 0) {
		return loss, fmt.Errorf("loss %v: %w", loss, compute.ErrNonFinite)
	}
	flags := make([]int32, len(out.names))
	if err := m.dev.download(unsafe.Pointer(&flags[0]), out.flags, len(flags)); err != nil {
		return loss, err
	}
	for i, f := range flags {
		if f != 0 {
			return loss, fmt.Errorf("gradient of %s: %w", out.names[i], compute.ErrNonFinite)
		}
	}
	return loss, nil
}

// step is a training step's device work from the batch in p's upload
// buffer: nothing in it reads the host, so that it can be captured
// (graph.go). It leaves the loss terms, regularisers' partial sums and
// non-finite flags where stepOut says.
func (m *model) step(s *seq, p *pass, n int) stepOut {
	d := m.cfg.Dim
	m.gather(s, p)
	m.encode(s, p)
	terms, dEmb := m.loss(s, p, n)
	m.encodeBackward(s, p, dEmb)
	ge := m.g[compute.ParamEmbeddings]
	s.zero(ge, m.cfg.Vocab*d)
	s.launch(kScatter, argN(p.R), argN(p.T), argN(d), argI(p.ids), argI(p.lens), argP(p.drop), argP(p.dx), argP(ge))
	out := stepOut{loss: terms}
	m.regularise(s, &out)
	m.flagNonFinite(s, p, &out)
	return out
}

// regularise adds λc‖W_c‖² and λw‖W_w − W_w,initial‖² (dense update) to
// the gradients and leaves the partial sums of the norms (in double) for
// the host; the sparse update's λw is ForwardBackward's, outside.
func (m *model) regularise(s *seq, out *stepOut) {
	sumsq := func(name string, w0 ptr, lambda float64) {
		part := s.work("partials/"+name, 2*sumsqThreads)
		s.launch(kSumsqGrad, argN(m.numel(name)), argP(m.w[name]), argP(w0), argS(float32(lambda)), argP(m.g[name]), argD(part))
		out.partials = append(out.partials, part)
		out.lambdas = append(out.lambdas, lambda)
	}
	if lc := m.cfg.LambdaC; lc > 0 {
		for _, sp := range m.specs {
			if sp.Compositional {
				sumsq(sp.Name, ptr{}, lc)
			}
		}
	}
	if lw := m.cfg.LambdaW; lw > 0 && !m.sparse() {
		sumsq(compute.ParamEmbeddings, m.init, lw)
	}
}

// partialSum adds up the partial sums (doubles) at part.
func (m *model) partialSum(part ptr) (float64, error) {
	ps := make([]float64, sumsqThreads)
	if err := m.dev.download(unsafe.Pointer(&ps[0]), part, 2*sumsqThreads); err != nil {
		return 0, err
	}
	var ss float64
	for _, v := range ps {
		ss += v
	}
	return ss, nil
}

// numel is the number of values of parameter name.
func (m *model) numel(name string) int {
	for _, s := range m.specs {
		if s.Name == name {
			return compute.NumElems(s.Shape)
		}
	}
	panic("cuda: no parameter " + name)
}

// flagNonFinite sets a flag for each compositional gradient, and for "x"
// the input gradient, that holds a NaN or an infinity: the CPU backend's
// check (the embedding gradients are sums of x's); the host reports the
// first flagged.
func (m *model) flagNonFinite(s *seq, p *pass, out *stepOut) {
	var vs []ptr
	var ns []int
	for _, sp := range m.specs {
		if sp.Compositional {
			out.names = append(out.names, sp.Name)
			vs, ns = append(vs, m.g[sp.Name]), append(ns, compute.NumElems(sp.Shape))
		}
	}
	out.names = append(out.names, "x")
	vs, ns = append(vs, p.dx), append(ns, p.T*p.R*m.cfg.Dim)
	out.flags = s.work("flags", len(vs))
	s.zero(out.flags, len(vs))
	for i, v := range vs {
		s.launch(kNonFinite, argN(ns[i]), argP(v), argI(out.flags.at(i)))
	}
}

// Update implements compute.Model. The sparse update of the embeddings
// and the DAN's bigrams (the batch's rows, a number that changes every
// batch) is launched
// eagerly; the dense updates of the other parameters read the step's
// learning rate and bias corrections from the "hyper" buffer, written
// first, and are captured as one graph (graph.go).
func (m *model) Update(step int64, lr float64) error {
	if step < 1 {
		return fmt.Errorf("update step %d: steps count from 1", step)
	}
	if err := m.dev.enter(); err != nil {
		return err
	}
	defer m.dev.exit()
	c := m.cfg
	switch c.Optimizer {
	case compute.OptSGD, compute.OptRMSProp, compute.OptAdam:
	default:
		return fmt.Errorf("optimizer %q: use adam, sgd or rmsprop", c.Optimizer)
	}
	var c1, c2 float32
	if c.Optimizer == compute.OptAdam {
		c1 = float32(1 / (1 - math.Pow(c.Beta1, float64(step))))
		c2 = float32(1 / (1 - math.Pow(c.Beta2, float64(step))))
	}
	s := &seq{m: m}
	hyper := s.work("hyper", 3)
	if s.err == nil {
		s.err = m.uploadF(hyper, []float32{float32(lr), c1, c2})
	}
	for _, sp := range m.specs {
		hostRows, lazy, work, ok := m.sparseTable(sp.Name)
		if !ok {
			continue
		}
		w, g := m.w[sp.Name], m.g[sp.Name]
		rows := s.work(work, max(len(hostRows), 1))
		nr, width := argN(len(hostRows)), argN(c.Dim)
		var d1, d2, sz ptr
		if lazy != nil {
			f1, f2, fs := lazy.Factors(hostRows, step, lr)
			d1, d2, sz = m.uploadFactors(s, sp.Name, f1, f2, fs)
		}
		switch c.Optimizer {
		case compute.OptSGD:
			s.launch(kSGDRows, nr, width, argI(rows), argP(w), argP(g), argS(float32(lr)))
		case compute.OptRMSProp:
			s.launch(kRMSPropRows, nr, width, argI(rows), argP(w), argP(g), argP(m.state["rmsprop.v/"+sp.Name]), argP(d2),
				argS(float32(lr)), argS(float32(c.Rho)), argS(float32(c.Eps)))
		case compute.OptAdam:
			s.launch(kAdamRows, nr, width, argI(rows), argP(w), argP(g), argP(m.state["adam.m/"+sp.Name]), argP(m.state["adam.v/"+sp.Name]),
				argP(d1), argP(d2), argP(sz),
				argS(float32(lr)), argS(float32(c.Beta1)), argS(float32(c.Beta2)), argS(c1), argS(c2), argS(float32(c.Eps)))
		}
	}
	if s.err == nil {
		_, s.err = m.runStep(graphKey{update: true}, func(s *seq) stepOut {
			m.updateDense(s, hyper)
			return stepOut{}
		})
	}
	if s.err != nil {
		return fmt.Errorf("%s update on %s: %w", c.Optimizer, m.dev.name(), s.err)
	}
	return nil
}

// updateDense steps every parameter but the sparsely updated tables (the
// embeddings, the DAN's bigrams), with the learning rate and bias
// corrections at hyper.
func (m *model) updateDense(s *seq, hyper ptr) {
	c := m.cfg
	for _, sp := range m.specs {
		n, w, g := compute.NumElems(sp.Shape), m.w[sp.Name], m.g[sp.Name]
		if _, _, _, ok := m.sparseTable(sp.Name); ok {
			continue
		}
		if lo, hi, ok := compute.HeldCellBias(c, sp.Name, n); ok {
			s.zero(g.at(lo), hi-lo) // held at its initial value: no step, no moments
		}
		switch c.Optimizer {
		case compute.OptSGD:
			s.launch(kSGD, argN(n), argP(w), argP(g), argP(hyper))
		case compute.OptRMSProp:
			s.launch(kRMSProp, argN(n), argP(w), argP(g), argP(m.state["rmsprop.v/"+sp.Name]), argP(hyper), argS(float32(c.Rho)), argS(float32(c.Eps)))
		case compute.OptAdam:
			s.launch(kAdam, argN(n), argP(w), argP(g), argP(m.state["adam.m/"+sp.Name]), argP(m.state["adam.v/"+sp.Name]),
				argP(hyper), argS(float32(c.Beta1)), argS(float32(c.Beta2)), argS(float32(c.Eps)))
		}
	}
}

// Flush implements compute.Flusher: the embedding and bigram rows owed
// steps of the sparse update catch up (compute.CatchUp.Flush), as the CPU
// backend's.
func (m *model) Flush(step int64) error {
	if m.lazy == nil && m.bigramLazy == nil {
		return nil
	}
	if err := m.dev.enter(); err != nil {
		return err
	}
	defer m.dev.exit()
	for _, name := range []string{compute.ParamEmbeddings, compute.ParamBigrams} {
		_, lazy, _, _ := m.sparseTable(name)
		if lazy == nil {
			continue
		}
		rows, d1, d2, sz := lazy.Flush(step)
		s := &seq{m: m}
		m.catchUp(s, name, rows, d1, d2, sz)
		if s.err != nil {
			return fmt.Errorf("catching up %d %s rows on %s: %w", len(rows), name, m.dev.name(), s.err)
		}
	}
	return nil
}

// uploadFactors puts compute.CatchUp's factors of the listed rows of
// table name in its own eager workspaces (eager.lazy.<name>.d1, .d2,
// .s): each table's uploads have their own buffers.
func (m *model) uploadFactors(s *seq, name string, d1, d2, sz []float32) (p1, p2, ps ptr) {
	n, pre := len(d1), eagerWork+"lazy."+name+"."
	p1, p2, ps = s.work(pre+"d1", max(n, 1)), s.work(pre+"d2", max(n, 1)), s.work(pre+"s", max(n, 1))
	for _, u := range []struct {
		p ptr
		v []float32
	}{{p1, d1}, {p2, d2}, {ps, sz}} {
		if s.err == nil {
			s.err = m.uploadF(u.p, u.v)
		}
	}
	return p1, p2, ps
}

// catchUp applies compute.CatchUp's factors to the listed rows of table
// name (the embeddings, the bigrams) on the device: w steps s·m/√v, m and
// v decay (RMSProp: v decays). It is device work outside any graph.
func (m *model) catchUp(s *seq, name string, rows []int32, d1, d2, sz []float32) {
	n := len(rows)
	if n == 0 {
		return
	}
	pr := s.work(eagerWork+"lazy."+name+".rows", n)
	if s.err == nil {
		s.err = m.uploadI(pr, rows)
	}
	p1, p2, ps := m.uploadFactors(s, name, d1, d2, sz)
	w := m.w[name]
	switch m.cfg.Optimizer {
	case compute.OptAdam:
		s.launch(kCatchUpRows, argN(n), argN(m.cfg.Dim), argI(pr), argP(w), argP(m.state["adam.m/"+name]), argP(m.state["adam.v/"+name]),
			argP(p1), argP(p2), argP(ps))
	case compute.OptRMSProp:
		s.launch(kScaleRows, argN(n), argN(m.cfg.Dim), argI(pr), argP(m.state["rmsprop.v/"+name]), argP(p2))
	}
}

// embedChunk is the number of sequences Embed runs at once.
const embedChunk = 128

// Embed implements compute.Model: sequences truncated to MaxLen, in chunks
// padded to their bucket length; an empty sequence is an error.
func (m *model) Embed(seqs [][]int32) ([][]float32, error) {
	if err := m.dev.enter(); err != nil {
		return nil, err
	}
	defer m.dev.exit()
	out := make([][]float32, 0, len(seqs))
	e := m.cfg.EmbedDim()
	for lo := 0; lo < len(seqs); lo += embedChunk {
		part := make([][]int32, 0, embedChunk)
		longest := 0
		for i, q := range seqs[lo:min(lo+embedChunk, len(seqs))] {
			if len(q) == 0 {
				return nil, fmt.Errorf("embedding sequence %d: %w", lo+i, compute.ErrEmptySentence)
			}
			if len(q) > m.cfg.MaxLen {
				q = q[:m.cfg.MaxLen]
			}
			for _, id := range q {
				if id < 0 || int(id) >= m.cfg.Vocab {
					return nil, fmt.Errorf("embedding sequence %d: token id %d outside the vocabulary [0, %d)", lo+i, id, m.cfg.Vocab)
				}
			}
			part = append(part, q)
			longest = max(longest, len(q))
		}
		p, slot, err := m.prepare(m.batchInputs(part, compute.BucketLen(longest, m.cfg.BucketWidth), nil))
		if err != nil {
			return nil, fmt.Errorf("uploading sequences to %s: %w", m.dev.name(), err)
		}
		s := &seq{m: m}
		m.gather(s, p)
		m.encode(s, p)
		if err := errors.Join(s.err, m.done(slot)); err != nil {
			return nil, fmt.Errorf("running the %s encoder on %s: %w", m.cfg.Encoder, m.dev.name(), err)
		}
		v, err := m.downloadF(p.emb, len(part)*e)
		if err != nil {
			return nil, err
		}
		for i := range part {
			out = append(out, v[i*e:(i+1)*e:(i+1)*e])
		}
	}
	return out, nil
}

func (m *model) tensors(src map[string]ptr) ([]compute.Tensor, error) {
	if err := m.dev.enter(); err != nil {
		return nil, err
	}
	defer m.dev.exit()
	out := make([]compute.Tensor, len(m.specs))
	for i, s := range m.specs {
		v, err := m.downloadF(src[s.Name], compute.NumElems(s.Shape))
		if err != nil {
			return nil, err
		}
		out[i] = compute.Tensor{Name: s.Name, Shape: append([]int(nil), s.Shape...), Data: v}
	}
	return out, nil
}

// Params implements compute.Model. A device error (which the interface
// cannot return) panics: the device is lost.
func (m *model) Params() []compute.Tensor {
	ts, err := m.tensors(m.w)
	if err != nil {
		panic(fmt.Sprintf("cuda: reading the parameters from %s: %v", m.dev.name(), err))
	}
	return ts
}

// Grads implements compute.Model.
func (m *model) Grads() []compute.Tensor {
	ts, err := m.tensors(m.g)
	if err != nil {
		panic(fmt.Sprintf("cuda: reading the gradients from %s: %v", m.dev.name(), err))
	}
	return ts
}

// SetParams implements compute.Model.
func (m *model) SetParams(ts []compute.Tensor) error {
	if err := m.dev.enter(); err != nil {
		return err
	}
	defer m.dev.exit()
	for _, t := range ts {
		var spec *compute.ParamSpec
		for i := range m.specs {
			if m.specs[i].Name == t.Name {
				spec = &m.specs[i]
			}
		}
		if spec == nil {
			return fmt.Errorf("setting parameter %s: the %s model has none", t.Name, m.cfg.Encoder)
		}
		if len(t.Data) != compute.NumElems(spec.Shape) || !compute.SameShape(t.Shape, spec.Shape) {
			return fmt.Errorf("setting parameter %s: shape %v, want %v", t.Name, t.Shape, spec.Shape)
		}
		if err := m.uploadF(m.w[t.Name], t.Data); err != nil {
			return err
		}
	}
	return nil
}

// initName is the state tensor holding W_w,initial (as in the CPU backend).
const initName = "init/" + compute.ParamEmbeddings

// State implements compute.Model.
func (m *model) State() []compute.Tensor {
	if err := m.dev.enter(); err != nil {
		panic(fmt.Sprintf("cuda: reading the optimizer state: %v", err))
	}
	defer m.dev.exit()
	var out []compute.Tensor
	read := func(name string, p ptr, shape []int) {
		v, err := m.downloadF(p, compute.NumElems(shape))
		if err != nil {
			panic(fmt.Sprintf("cuda: reading %s from %s: %v", name, m.dev.name(), err))
		}
		out = append(out, compute.Tensor{Name: name, Shape: append([]int(nil), shape...), Data: v})
	}
	for _, name := range m.stateOrder {
		read(name, m.state[name], m.stateShape[name])
	}
	for _, name := range []string{compute.ParamEmbeddings, compute.ParamBigrams} { // as compute.Optimizer.State
		if _, lazy, _, _ := m.sparseTable(name); lazy != nil {
			last, lrs := lazy.Last(), lazy.LRs()
			out = append(out, compute.Tensor{Name: compute.CatchUpLastName(name), Shape: []int{len(last)}, Data: append([]float32(nil), last...)},
				compute.Tensor{Name: compute.CatchUpLRName(name), Shape: []int{len(lrs)}, Data: lrs})
		}
	}
	if !m.init.null() {
		read(initName, m.init, []int{m.cfg.Vocab, m.cfg.Dim})
	}
	return out
}

// SetState implements compute.Model, with the CPU backend's rules: every
// tensor of the optimiser, the rows' catch-up state when there (a
// checkpoint written before it has none), and the initial embeddings when
// λw > 0.
func (m *model) SetState(ts []compute.Tensor) error {
	if err := m.dev.enter(); err != nil {
		return err
	}
	defer m.dev.exit()
	seen, lastSeen := 0, map[string]bool{}
	tables := []string{compute.ParamEmbeddings, compute.ParamBigrams}
	for _, t := range ts {
		known := false
		for _, name := range tables {
			_, lazy, _, _ := m.sparseTable(name)
			if lazy == nil {
				continue
			}
			switch t.Name {
			case compute.CatchUpLastName(name):
				if err := lazy.SetLast(t.Data); err != nil {
					return err
				}
				lastSeen[name], known = true, true
			case compute.CatchUpLRName(name):
				if err := lazy.SetLRs(t.Data); err != nil {
					return err
				}
				known = true
			}
		}
		if known {
			continue
		}
		if p, ok := m.state[t.Name]; ok {
			shape := m.stateShape[t.Name]
			if !compute.SameShape(t.Shape, shape) || len(t.Data) != compute.NumElems(shape) {
				return fmt.Errorf("optimizer state %s: shape %v, want %v", t.Name, t.Shape, shape)
			}
			if err := m.uploadF(p, t.Data); err != nil {
				return err
			}
			seen++
			continue
		}
		if t.Name != initName || m.init.null() {
			return fmt.Errorf("optimizer state %s: unknown to a %s model with lambda_w %g", t.Name, m.cfg.Optimizer, m.cfg.LambdaW)
		}
		if len(t.Data) != m.cfg.Vocab*m.cfg.Dim {
			return fmt.Errorf("optimizer state %s: %d values, want %d", t.Name, len(t.Data), m.cfg.Vocab*m.cfg.Dim)
		}
		if err := m.uploadF(m.init, t.Data); err != nil {
			return err
		}
	}
	if seen != len(m.stateOrder) {
		return fmt.Errorf("optimizer state: %d of %d %s tensors given", seen, len(m.stateOrder), m.cfg.Optimizer)
	}
	for _, name := range tables {
		if _, lazy, _, _ := m.sparseTable(name); lazy != nil && !lastSeen[name] {
			lazy.Forget() // a checkpoint written before the catch-up
		}
	}
	return nil
}

func (m *model) release() error {
	errs := []error{m.releaseSnapshots()} // copies in flight end before the memory they read is freed
	if m.graphs != nil {
		errs = append(errs, m.graphs.drop(m.dev))
	}
	errs = append(errs, m.releaseStager())
	for _, b := range m.bufs {
		errs = append(errs, m.dev.free(b))
	}
	for k, b := range m.ws {
		errs = append(errs, m.dev.free(b))
		delete(m.ws, k)
	}
	m.bufs = nil
	return errors.Join(errs...)
}

// Close implements compute.Model: it frees the model's device memory.
func (m *model) Close() error {
	if err := m.dev.enter(); err != nil {
		return err
	}
	defer m.dev.exit()
	return m.release()
}

// rowSet collects the distinct rows of a table that a batch touches and
// lists them in increasing order: a bitmap over the table's rows, kept
// from batch to batch. (A map and a sort of the rows took 1.8 ms of a
// 4.1 ms step of avg at batch 1,000 on an H200, the device idle.)
type rowSet struct{ bits []uint64 }

// add puts id in the set; false, and nothing added, when it is not a row
// of a table of rows rows.
func (s *rowSet) add(id int32, rows int) bool {
	if id < 0 || int(id) >= rows {
		return false
	}
	if w := int(id) >> 6; w >= len(s.bits) {
		s.bits = append(s.bits, make([]uint64, (rows+63)/64-len(s.bits))...)
	}
	s.bits[id>>6] |= 1 << (id & 63)
	return true
}

// drain appends the set's rows in increasing order to dst[:0] and empties
// the set.
func (s *rowSet) drain(dst []int32) []int32 {
	dst = dst[:0]
	for w, x := range s.bits {
		if x == 0 {
			continue
		}
		for ; x != 0; x &= x - 1 {
			dst = append(dst, int32(w<<6|bits.TrailingZeros64(x)))
		}
		s.bits[w] = 0
	}
	return dst
}
