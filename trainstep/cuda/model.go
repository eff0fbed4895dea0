package cuda

import (
	"errors"
	"fmt"
	"math"
	"slices"
	"unsafe"

	"github.com/parastream/parastream/trainstep/compute"
)

// model is one model's parameters, gradients, optimiser state and
// workspace on a device. Parameter and state names, shapes and order are
// those of compute.Layout and compute.Optimizer, so checkpoints are the
// CPU backend's.
type model struct {
	dev   device
	cfg   compute.Config
	specs []compute.ParamSpec
	w, g  map[string]ptr // parameters and gradients by name
	// Optimiser state ("adam.m/<param>", ...), in compute.Optimizer's order.
	state      map[string]ptr
	stateOrder []string
	stateShape map[string][]int
	init       ptr // W_w,initial of the λw term (NULL without λw)
	bufs       []*buffer
	ws         map[string]*buffer // workspace, grown on demand
	// rows lists the distinct embedding rows of the last batch, on the
	// host and in the "rows" workspace: a sparse update steps only them.
	rows []int32
	// lazy catches the rows up with the steps they were skipped (on the
	// host; nil for SGD and the dense update).
	lazy *compute.CatchUp
	// snap copies snapshots out (snapshot.go; nil before the first).
	snap *snapArena
}

// sparse reports whether the embeddings update only the batch's rows.
func (m *model) sparse() bool { return m.cfg.EmbeddingUpdate != compute.UpdateDense }

func newModel(dev device, cfg compute.Config, params []compute.Tensor) (m *model, err error) {
	m = &model{dev: dev, cfg: cfg, specs: compute.Layout(cfg), w: map[string]ptr{}, g: map[string]ptr{},
		state: map[string]ptr{}, stateShape: map[string][]int{}, ws: map[string]*buffer{}}
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

// work is the workspace buffer name of at least words words.
func (m *model) work(name string, words int) (ptr, error) {
	if b, ok := m.ws[name]; ok && b.words >= words {
		return ptr{b: b}, nil
	} else if ok {
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

func (s *seq) launch(k *kernel, a ...arg) {
	if s.err == nil {
		s.err = s.m.dev.launch(k, a)
	}
}

// mm is the row-major product C (M×N, row length ldc) = op(A)·op(B) +
// beta·C with op(A) M×K and op(B) K×N, A and B stored row-major with row
// lengths lda and ldb (A is K×M when tA). It is cublasSgemm on the
// transposed problem: row-major C is column-major C^T = op(B)^T·op(A)^T.
func (s *seq) mm(tA, tB bool, M, N, K int, a ptr, lda int, b ptr, ldb int, beta float32, c ptr, ldc int) {
	if s.err == nil {
		s.err = s.m.dev.gemm(tB, tA, N, M, K, 1, b, ldb, a, lda, beta, c, ldc)
	}
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

// pass is one batch on the device: R rows padded to T steps.
type pass struct {
	R, T      int
	ids, lens ptr // int32 (R, T) and (R)
	drop      ptr // (R, T, Dim) multipliers or NULL
	x         ptr // (T, R, Dim) gathered words
	emb       ptr // (R, EmbedDim) sentence embeddings
	z, h, c   ptr // LSTM: activations (T, R, 4H), states (T+1, R, H) with step -1 first
	gz, ga    ptr // GRAN: gates (T, R, Dim) and gated words
	dx        ptr // (T, R, Dim) gradient of x
	seqs      [][]int32
	lensHost  []int32
}

// prepare uploads seqs (each at most T long) and gathers their words.
func (m *model) prepare(s *seq, seqs [][]int32, T int, drop []float32) *pass {
	R, d := len(seqs), m.cfg.Dim
	p := &pass{R: R, T: T, seqs: seqs}
	ids := make([]int32, R*T)
	p.lensHost = make([]int32, R)
	for r, q := range seqs {
		copy(ids[r*T:], q)
		p.lensHost[r] = int32(len(q))
	}
	p.ids, p.lens = s.work("ids", R*T), s.work("lens", R)
	p.x = s.work("x", T*R*d)
	if drop != nil {
		p.drop = s.work("drop", len(drop))
	}
	if s.err != nil {
		return p
	}
	s.err = errors.Join(m.uploadI(p.ids, ids), m.uploadI(p.lens, p.lensHost))
	if s.err == nil && drop != nil {
		s.err = m.uploadF(p.drop, drop)
	}
	s.launch(kGather, argN(R), argN(T), argN(d), argI(p.ids), argI(p.lens), argP(m.w[compute.ParamEmbeddings]), argP(p.drop), argP(p.x))
	return p
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
		drop = append(append(make([]float32, 0, 2*len(b.DropA)), b.DropA...), b.DropB...)
	}
	s := &seq{m: m}
	m.rows = m.rows[:0]
	seen := map[int32]bool{}
	for _, q := range append(append([][]int32(nil), b.A...), b.B...) {
		for _, id := range q {
			if !seen[id] {
				seen[id] = true
				m.rows = append(m.rows, id)
			}
		}
	}
	slices.Sort(m.rows)
	if m.lazy != nil {
		// The batch's rows owed steps of the sparse update take them
		// before the forward pass reads them, as dense Adam's would have.
		owed, d1, d2, sz := m.lazy.Prepare(m.rows)
		m.catchUp(s, owed, d1, d2, sz)
	}
	p := m.prepare(s, append(append([][]int32(nil), b.A...), b.B...), b.Len, drop)
	m.encode(s, p)
	loss, dEmb := m.margin(s, p.emb, n, b)
	m.encodeBackward(s, p, dEmb)
	ge := m.g[compute.ParamEmbeddings]
	s.zero(ge, m.cfg.Vocab*d)
	if s.err == nil {
		s.err = m.uploadI(s.work("rows", len(m.rows)), m.rows)
	}
	s.launch(kScatter, argN(p.R), argN(p.T), argN(d), argI(p.ids), argI(p.lens), argP(p.drop), argP(p.dx), argP(ge))
	if s.err != nil {
		return 0, fmt.Errorf("%s/%s step on %s: %w", m.cfg.Encoder, m.cfg.Loss, m.dev.name(), s.err)
	}
	reg, err := m.regularise()
	if err != nil {
		return 0, err
	}
	loss += reg
	if math.IsNaN(loss) || math.IsInf(loss, 0) {
		return loss, fmt.Errorf("loss %v: %w", loss, compute.ErrNonFinite)
	}
	if name, err := m.nonFinite(p); err != nil {
		return loss, err
	} else if name != "" {
		return loss, fmt.Errorf("gradient of %s: %w", name, compute.ErrNonFinite)
	}
	return loss, nil
}

// regularise adds λc‖W_c‖² and λw‖W_w − W_w,initial‖² to the gradients and
// returns them (partial sums in double from the device, added on the host).
func (m *model) regularise() (float64, error) {
	var loss float64
	sumsq := func(name string, w0 ptr, lambda float64) error {
		part, err := m.work("partials", 2*sumsqThreads)
		if err != nil {
			return err
		}
		n := m.numel(name)
		if err := m.dev.launch(kSumsqGrad, args(argN(n), argP(m.w[name]), argP(w0), argS(float32(lambda)), argP(m.g[name]), argD(part))); err != nil {
			return err
		}
		ps := make([]float64, sumsqThreads)
		if err := m.dev.download(unsafe.Pointer(&ps[0]), part, 2*sumsqThreads); err != nil {
			return err
		}
		var ss float64
		for _, v := range ps {
			ss += v
		}
		loss += lambda * ss
		return nil
	}
	if lc := m.cfg.LambdaC; lc > 0 {
		for _, sp := range m.specs {
			if sp.Compositional {
				if err := sumsq(sp.Name, ptr{}, lc); err != nil {
					return 0, err
				}
			}
		}
	}
	if lw := m.cfg.LambdaW; lw > 0 {
		if m.sparse() {
			// Lazy: only the batch's rows are pulled back.
			part, err := m.work("partials", 2*sumsqThreads)
			if err != nil {
				return 0, err
			}
			rows, err := m.work("rows", len(m.rows))
			if err != nil {
				return 0, err
			}
			if err := m.dev.launch(kSumsqGradRows, args(argN(len(m.rows)), argN(m.cfg.Dim), argI(rows), argP(m.w[compute.ParamEmbeddings]),
				argP(m.init), argS(float32(lw)), argP(m.g[compute.ParamEmbeddings]), argD(part))); err != nil {
				return 0, err
			}
			ps := make([]float64, sumsqThreads)
			if err := m.dev.download(unsafe.Pointer(&ps[0]), part, 2*sumsqThreads); err != nil {
				return 0, err
			}
			var ss float64
			for _, v := range ps {
				ss += v
			}
			loss += lw * ss
		} else if err := sumsq(compute.ParamEmbeddings, m.init, lw); err != nil {
			return 0, err
		}
	}
	return loss, nil
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

// nonFinite names the first compositional gradient, or "x" for the input
// gradient, holding a NaN or an infinity ("" when none does): the CPU
// backend's check (the embedding gradients are sums of x's).
func (m *model) nonFinite(p *pass) (string, error) {
	flag, err := m.work("flag", 1)
	if err != nil {
		return "", err
	}
	check := func(v ptr, n int) (bool, error) {
		if err := m.dev.zero(flag, 1); err != nil {
			return false, err
		}
		if err := m.dev.launch(kNonFinite, args(argN(n), argP(v), argI(flag))); err != nil {
			return false, err
		}
		var f int32
		err := m.dev.download(unsafe.Pointer(&f), flag, 1)
		return f != 0, err
	}
	for _, s := range m.specs {
		if !s.Compositional {
			continue
		}
		if bad, err := check(m.g[s.Name], compute.NumElems(s.Shape)); err != nil || bad {
			return s.Name, err
		}
	}
	if bad, err := check(p.dx, p.T*p.R*m.cfg.Dim); err != nil || bad {
		return "x", err
	}
	return "", nil
}

// Update implements compute.Model.
func (m *model) Update(step int64, lr float64) error {
	if step < 1 {
		return fmt.Errorf("update step %d: steps count from 1", step)
	}
	if err := m.dev.enter(); err != nil {
		return err
	}
	defer m.dev.exit()
	c := m.cfg
	s := &seq{m: m}
	for _, sp := range m.specs {
		n, w, g := compute.NumElems(sp.Shape), m.w[sp.Name], m.g[sp.Name]
		if lo, hi, ok := compute.HeldCellBias(c, sp.Name, n); ok {
			s.zero(g.at(lo), hi-lo) // held at its initial value: no step, no moments
		}
		if sp.Name == compute.ParamEmbeddings && m.sparse() {
			rows := s.work("rows", len(m.rows))
			nr, width := argN(len(m.rows)), argN(c.Dim)
			var d1, d2, sz ptr
			if m.lazy != nil {
				f1, f2, fs := m.lazy.Factors(m.rows, step, lr)
				d1, d2, sz = m.uploadFactors(s, f1, f2, fs)
			}
			switch c.Optimizer {
			case compute.OptSGD:
				s.launch(kSGDRows, nr, width, argI(rows), argP(w), argP(g), argS(float32(lr)))
			case compute.OptRMSProp:
				s.launch(kRMSPropRows, nr, width, argI(rows), argP(w), argP(g), argP(m.state["rmsprop.v/"+sp.Name]), argP(d2),
					argS(float32(lr)), argS(float32(c.Rho)), argS(float32(c.Eps)))
			case compute.OptAdam:
				c1 := float32(1 / (1 - math.Pow(c.Beta1, float64(step))))
				c2 := float32(1 / (1 - math.Pow(c.Beta2, float64(step))))
				s.launch(kAdamRows, nr, width, argI(rows), argP(w), argP(g), argP(m.state["adam.m/"+sp.Name]), argP(m.state["adam.v/"+sp.Name]),
					argP(d1), argP(d2), argP(sz),
					argS(float32(lr)), argS(float32(c.Beta1)), argS(float32(c.Beta2)), argS(c1), argS(c2), argS(float32(c.Eps)))
			}
			continue
		}
		switch c.Optimizer {
		case compute.OptSGD:
			s.launch(kSGD, argN(n), argP(w), argP(g), argS(float32(lr)))
		case compute.OptRMSProp:
			s.launch(kRMSProp, argN(n), argP(w), argP(g), argP(m.state["rmsprop.v/"+sp.Name]), argS(float32(lr)), argS(float32(c.Rho)), argS(float32(c.Eps)))
		case compute.OptAdam:
			c1 := float32(1 / (1 - math.Pow(c.Beta1, float64(step))))
			c2 := float32(1 / (1 - math.Pow(c.Beta2, float64(step))))
			s.launch(kAdam, argN(n), argP(w), argP(g), argP(m.state["adam.m/"+sp.Name]), argP(m.state["adam.v/"+sp.Name]),
				argS(float32(lr)), argS(float32(c.Beta1)), argS(float32(c.Beta2)), argS(c1), argS(c2), argS(float32(c.Eps)))
		default:
			return fmt.Errorf("optimizer %q: use adam, sgd or rmsprop", c.Optimizer)
		}
	}
	if s.err != nil {
		return fmt.Errorf("%s update on %s: %w", c.Optimizer, m.dev.name(), s.err)
	}
	return nil
}

// Flush implements compute.Flusher: the embedding rows owed steps of the
// sparse update catch up (compute.CatchUp.Flush), as the CPU backend's.
func (m *model) Flush(step int64) error {
	if m.lazy == nil {
		return nil
	}
	rows, d1, d2, sz := m.lazy.Flush(step)
	if len(rows) == 0 {
		return nil
	}
	if err := m.dev.enter(); err != nil {
		return err
	}
	defer m.dev.exit()
	s := &seq{m: m}
	m.catchUp(s, rows, d1, d2, sz)
	if s.err != nil {
		return fmt.Errorf("catching up %d embedding rows on %s: %w", len(rows), m.dev.name(), s.err)
	}
	return nil
}

// uploadFactors puts compute.CatchUp's factors of the listed rows in the
// lazy.d1, lazy.d2 and lazy.s workspaces.
func (m *model) uploadFactors(s *seq, d1, d2, sz []float32) (p1, p2, ps ptr) {
	n := len(d1)
	p1, p2, ps = s.work("lazy.d1", n), s.work("lazy.d2", n), s.work("lazy.s", n)
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

// catchUp applies compute.CatchUp's factors to the listed embedding rows
// on the device: w steps s·m/√v, m and v decay (RMSProp: v decays).
func (m *model) catchUp(s *seq, rows []int32, d1, d2, sz []float32) {
	n := len(rows)
	if n == 0 {
		return
	}
	pr := s.work("lazy.rows", n)
	if s.err == nil {
		s.err = m.uploadI(pr, rows)
	}
	p1, p2, ps := m.uploadFactors(s, d1, d2, sz)
	name, w := compute.ParamEmbeddings, m.w[compute.ParamEmbeddings]
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
		s := &seq{m: m}
		p := m.prepare(s, part, compute.BucketLen(longest, m.cfg.BucketWidth), nil)
		m.encode(s, p)
		if s.err != nil {
			return nil, fmt.Errorf("running the %s encoder on %s: %w", m.cfg.Encoder, m.dev.name(), s.err)
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
	if m.lazy != nil { // as compute.Optimizer.State
		last, lrs := m.lazy.Last(), m.lazy.LRs()
		out = append(out, compute.Tensor{Name: compute.CatchUpLastName(compute.ParamEmbeddings), Shape: []int{len(last)}, Data: append([]float32(nil), last...)},
			compute.Tensor{Name: compute.CatchUpLRName(compute.ParamEmbeddings), Shape: []int{len(lrs)}, Data: lrs})
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
	seen, lastSeen := 0, false
	for _, t := range ts {
		if m.lazy != nil {
			switch t.Name {
			case compute.CatchUpLastName(compute.ParamEmbeddings):
				if err := m.lazy.SetLast(t.Data); err != nil {
					return err
				}
				lastSeen = true
				continue
			case compute.CatchUpLRName(compute.ParamEmbeddings):
				if err := m.lazy.SetLRs(t.Data); err != nil {
					return err
				}
				continue
			}
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
	if m.lazy != nil && !lastSeen {
		m.lazy.Forget() // a checkpoint written before the catch-up
	}
	return nil
}

func (m *model) release() error {
	errs := []error{m.releaseSnapshots()} // copies in flight end before the memory they read is freed
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
