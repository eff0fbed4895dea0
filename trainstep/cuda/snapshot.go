package cuda

import (
	"errors"
	"fmt"
	"math"
	"sync/atomic"

	"github.com/parastream/parastream/trainstep/compute"
)

// A snapshot (compute.Snapshotter) copies the parameters and the optimiser
// state to host memory on a copy stream while the trainer steps on: the
// copies wait for the work issued before (an event on the model's stream),
// the model's later work waits for the copies (an event on the copy
// stream: the next Update overwrites what they read), and the host waits
// for nothing until the checkpoint's writer calls Wait. On a GPU the host
// buffers are pinned (cuMemHostAlloc), allocated at the first snapshot and
// reused by the next ones; the emulator keeps the same contract with Go
// memory, the copies' data held back until Wait so that a reader that does
// not wait sees NaN.

// copyQueue copies device memory to host memory asynchronously: the GPU's
// copy stream (gpuCopier, driver_async.go) or the emulator's (emuCopier).
type copyQueue interface {
	// hostAlloc allocates host memory the copies may write (pinned on a
	// GPU); it lives until close.
	hostAlloc(words int) ([]float32, error)
	// begin orders the copies after the model's work issued so far.
	begin() error
	// copyOut issues a copy of words words at src into dst.
	copyOut(dst []float32, src ptr, words int) error
	// end orders the model's later work after the copies.
	end() error
	// wait blocks until the copies are done; it may run on any goroutine.
	wait() error
	// close waits for the copies and frees what the queue holds.
	close() error
}

// newCopyQueue makes dev's copy queue.
func newCopyQueue(dev device) (copyQueue, error) {
	switch d := dev.(type) {
	case *gpu:
		return newGPUCopier(d)
	case *emulator:
		return &emuCopier{}, nil
	}
	return nil, fmt.Errorf("cuda: %s cannot copy asynchronously", dev.name())
}

// snapArena is a model's snapshot machinery: the copy queue and one host
// buffer per tensor, reused by every snapshot.
type snapArena struct {
	q    copyQueue
	host map[string][]float32
	busy atomic.Bool
}

// snapSource is one device tensor a snapshot copies.
type snapSource struct {
	name  string
	shape []int
	src   ptr
}

// Snapshot implements compute.Snapshotter.
func (m *model) Snapshot() (compute.Snapshot, error) {
	if err := m.dev.enter(); err != nil {
		return nil, err
	}
	defer m.dev.exit()
	if m.snap == nil {
		q, err := newCopyQueue(m.dev)
		if err != nil {
			return nil, err
		}
		m.snap = &snapArena{q: q, host: map[string][]float32{}}
	}
	a := m.snap
	if !a.busy.CompareAndSwap(false, true) {
		return nil, errors.New("cuda: a snapshot of this model is outstanding: Release it before taking the next")
	}
	var params, state []snapSource
	for _, s := range m.specs {
		params = append(params, snapSource{s.Name, s.Shape, m.w[s.Name]})
	}
	for _, name := range m.stateOrder {
		state = append(state, snapSource{name, m.stateShape[name], m.state[name]})
	}
	var initial []snapSource
	if !m.init.null() {
		initial = append(initial, snapSource{initName, []int{m.cfg.Vocab, m.cfg.Dim}, m.init})
	}
	fail := func(err error) (compute.Snapshot, error) {
		a.busy.Store(false)
		return nil, fmt.Errorf("taking a snapshot on %s: %w", m.dev.name(), err)
	}
	if err := a.q.begin(); err != nil {
		return fail(err)
	}
	copyAll := func(srcs []snapSource) ([]compute.Tensor, error) {
		out := make([]compute.Tensor, len(srcs))
		for i, s := range srcs {
			n := compute.NumElems(s.shape)
			h, ok := a.host[s.name]
			if !ok {
				var err error
				if h, err = a.q.hostAlloc(n); err != nil {
					return nil, err
				}
				a.host[s.name] = h
			}
			if err := a.q.copyOut(h, s.src, n); err != nil {
				return nil, fmt.Errorf("copying %s: %w", s.name, err)
			}
			out[i] = compute.Tensor{Name: s.name, Shape: append([]int(nil), s.shape...), Data: h}
		}
		return out, nil
	}
	ps, err := copyAll(params)
	if err != nil {
		return fail(err)
	}
	st, err := copyAll(state)
	if err != nil {
		return fail(err)
	}
	in, err := copyAll(initial)
	if err != nil {
		return fail(err)
	}
	if err := a.q.end(); err != nil {
		return fail(err)
	}
	// The sparse update's catch-up state is on the host: copied now, in
	// State's order (before the initial embeddings).
	if m.lazy != nil {
		last, lrs := m.lazy.Last(), m.lazy.LRs()
		st = append(st, compute.Tensor{Name: compute.CatchUpLastName(compute.ParamEmbeddings), Shape: []int{len(last)}, Data: append([]float32(nil), last...)},
			compute.Tensor{Name: compute.CatchUpLRName(compute.ParamEmbeddings), Shape: []int{len(lrs)}, Data: append([]float32(nil), lrs...)})
	}
	return &snapshot{a: a, params: ps, state: append(st, in...)}, nil
}

// snapshot is one outstanding snapshot of a model.
type snapshot struct {
	a             *snapArena
	params, state []compute.Tensor
	released      bool
}

// Wait implements compute.Snapshot.
func (s *snapshot) Wait() ([]compute.Tensor, []compute.Tensor, error) {
	if s.released {
		return nil, nil, errors.New("cuda: Wait on a released snapshot")
	}
	if err := s.a.q.wait(); err != nil {
		return nil, nil, fmt.Errorf("waiting for the snapshot's copies: %w", err)
	}
	return s.params, s.state, nil
}

// Release implements compute.Snapshot: the host buffers serve the next
// snapshot.
func (s *snapshot) Release() {
	if !s.released {
		s.released = true
		s.params, s.state = nil, nil
		s.a.busy.Store(false)
	}
}

// releaseSnapshots frees the model's snapshot machinery (its Close): the
// copies in flight are waited for first.
func (m *model) releaseSnapshots() error {
	if m.snap == nil {
		return nil
	}
	err := m.snap.q.close()
	m.snap = nil
	return err
}

// emuCopier is the emulator's copyQueue. The emulator runs every call at
// once, so a copy is taken when issued; it is held in a staging slice, and
// the destination reads NaN until wait publishes it, as a GPU's pinned
// buffer holds no finished copy before the stream is synchronised.
type emuCopier struct {
	pending []emuCopy
}

type emuCopy struct{ dst, data []float32 }

func (e *emuCopier) hostAlloc(words int) ([]float32, error) { return make([]float32, words), nil }
func (e *emuCopier) begin() error                           { return nil }
func (e *emuCopier) end() error                             { return nil }

func (e *emuCopier) copyOut(dst []float32, src ptr, words int) error {
	if src.null() || src.b.host == nil || src.off < 0 || src.off+words > src.b.words || len(dst) < words {
		return fmt.Errorf("emulator: copying %d words at offset %d out of a NULL, freed or shorter buffer", words, src.off)
	}
	e.pending = append(e.pending, emuCopy{dst[:words], append([]float32(nil), src.b.host[src.off:src.off+words]...)})
	for i := range dst[:words] {
		dst[i] = float32(math.NaN())
	}
	return nil
}

func (e *emuCopier) wait() error {
	for _, c := range e.pending {
		copy(c.dst, c.data)
	}
	e.pending = nil
	return nil
}

func (e *emuCopier) close() error { return e.wait() }
