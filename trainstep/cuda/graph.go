package cuda

import (
	"container/list"
	"errors"
	"fmt"
	"unsafe"
)

// CUDA graphs and the batch upload.
//
// A training step's device work (ForwardBackward from the gather of the
// words to the non-finite flags) depends on the batch only through its
// shape and through data in device buffers, so it is captured once per
// shape into a CUDA graph and replayed for later batches of that shape:
// one cuGraphLaunch instead of some 4T+40 kernel launches and GEMMs. What
// changes from batch to batch (ids, lengths, noise multipliers, random
// negatives, the DAN's bigram ids, the hinge loss's negatives, the sim
// loss's targets) is copied into fixed device buffers before each replay, from
// page-locked host memory on a copy stream, double-buffered: the copy of
// a batch overlaps the device work still queued before it (the previous
// step's update), and events order copy before compute and compute
// before the next copy into the same buffers.

// errCaptureUnsupported is what a device call that a stream capture
// cannot record returns during one (a synchronous copy, an allocation):
// the step is then run eagerly, and that shape is not captured again.
var errCaptureUnsupported = errors.New("not allowed during a CUDA graph capture")

// streams is the part of device for graphs, events, page-locked memory
// and the copy stream. Work on the compute stream (launch, gemm, zero,
// copy, upload, download) runs in issue order; uploadAsync runs on the
// copy stream, ordered against the compute stream only by events.
type streams interface {
	// beginCapture records the compute stream's work into a graph
	// instead of running it; endCapture ends that and instantiates it.
	beginCapture() error
	endCapture() (graph, error)
	launchGraph(g graph) error
	destroyGraph(g graph) error
	// allocHost is page-locked host memory of words words.
	allocHost(words int) (*hostBuffer, error)
	freeHost(h *hostBuffer) error
	// uploadAsync copies words words of src from offset off to dst on
	// the copy stream.
	uploadAsync(dst ptr, src *hostBuffer, off, words int) error
	newEvent() (event, error)
	destroyEvent(e event) error
	// record marks the work issued so far on the copy stream (onCopy) or
	// the compute stream; wait makes the other stream's later work wait
	// for it; sync makes the host wait for it.
	record(e event, onCopy bool) error
	wait(e event) error
	sync(e event) error
}

// graph is an instantiated graph (a *gpuGraph or a *recording); event an
// event (a *gpuEvent or an *emuEvent).
type (
	graph any
	event any
)

// hostBuffer is page-locked host memory (Go memory in the emulator), seen
// as float32 words (int32 values are stored by their bits).
type hostBuffer struct {
	words int
	host  []float32
	p     unsafe.Pointer // from cuMemHostAlloc (nil in the emulator)
}

func (h *hostBuffer) ints() []int32 {
	return unsafe.Slice((*int32)(unsafe.Pointer(unsafe.SliceData(h.host))), len(h.host))
}

// DefaultMaxGraphs is the number of captured graphs a model keeps when
// Options.MaxGraphs is 0: a run's bucket shapes (MaxLen/BucketWidth
// lengths, full and last batches, two upload buffers) fit in it, and each
// graph holds only its nodes (kilobytes to a few MiB of device memory).
const DefaultMaxGraphs = 64

// graphKey is what a step's captured work depends on besides the device
// buffers: the rows and length of the batch, which upload buffer it came
// in, and whether it has noise and random negatives.
type graphKey struct {
	R, T, slot int
	drop, neg  bool
	update     bool // the dense part of Update (the others zero)
}

func (k graphKey) String() string {
	if k.update {
		return "the update"
	}
	return fmt.Sprintf("%d rows × %d steps (upload buffer %d, noise %v, random negatives %v)", k.R, k.T, k.slot, k.drop, k.neg)
}

// stepOut is where a step left what the host reads after it.
type stepOut struct {
	loss     lossTerms // the loss's terms (losses.go)
	partials []ptr     // the regularisers' partial sums (doubles), in model order
	lambdas  []float64
	flags    ptr      // one int per name of flagNames: non-finite gradient
	names    []string // compositional parameters, then "x"
}

type graphEntry struct {
	key graphKey
	g   graph
	out stepOut
	gen int // the model's workspace generation at capture
}

// graphCache holds a model's captured steps, least recently used evicted
// first past limit.
type graphCache struct {
	limit    int
	order    *list.List // of *graphEntry, most recent first
	byKey    map[graphKey]*list.Element
	warm     map[graphKey]bool // run eagerly once: the workspace is sized
	refused  map[graphKey]error
	captures int
	replays  int
	evicted  int
}

func newGraphCache(limit int) *graphCache {
	if limit <= 0 {
		limit = DefaultMaxGraphs
	}
	return &graphCache{limit: limit, order: list.New(), byKey: map[graphKey]*list.Element{},
		warm: map[graphKey]bool{}, refused: map[graphKey]error{}}
}

// drop destroys every graph (the workspace moved, or the model closes).
func (c *graphCache) drop(dev device) error {
	var errs []error
	for el := c.order.Front(); el != nil; el = el.Next() {
		errs = append(errs, dev.destroyGraph(el.Value.(*graphEntry).g))
	}
	c.order.Init()
	clear(c.byKey)
	return errors.Join(errs...)
}

// runStep runs body, the device work of a step of shape key: replayed
// from its graph, captured (the second time the shape comes, the first
// having sized the workspace), or eagerly.
func (m *model) runStep(key graphKey, body func(s *seq) stepOut) (stepOut, error) {
	c := m.graphs
	eager := func() (stepOut, error) {
		s := &seq{m: m}
		out := body(s)
		if s.err == nil && c != nil {
			c.warm[key] = true
		}
		return out, s.err
	}
	if c == nil || c.refused[key] != nil {
		return eager()
	}
	if el, ok := c.byKey[key]; ok {
		e := el.Value.(*graphEntry)
		if e.gen == m.gen {
			c.order.MoveToFront(el)
			c.replays++
			return e.out, m.dev.launchGraph(e.g)
		}
		// A workspace buffer it uses was reallocated: every graph is
		// stale (the workspace only grows, so this settles).
		if err := c.drop(m.dev); err != nil {
			return stepOut{}, err
		}
	}
	if !c.warm[key] {
		return eager()
	}
	if err := m.dev.beginCapture(); err != nil {
		return stepOut{}, fmt.Errorf("capturing the step of %v: %w", key, err)
	}
	m.capturing = true
	s := &seq{m: m}
	out := body(s)
	m.capturing = false
	g, err := m.dev.endCapture()
	if s.err != nil || err != nil {
		if g != nil {
			err = errors.Join(err, m.dev.destroyGraph(g))
		}
		if s.err != nil && errors.Is(s.err, errCaptureUnsupported) {
			// Something in the step needs the host mid-way: run this
			// shape eagerly from now on, and say so once.
			c.refused[key] = s.err
			m.log.Warn("cuda: CUDA graph capture refused; this shape runs eagerly from now on (slower)",
				"device", m.dev.name(), "shape", key.String(), "reason", s.err.Error())
			return eager()
		}
		return stepOut{}, errors.Join(s.err, err)
	}
	for c.order.Len() >= c.limit {
		old := c.order.Back()
		e := c.order.Remove(old).(*graphEntry)
		delete(c.byKey, e.key)
		c.evicted++
		if err := m.dev.destroyGraph(e.g); err != nil {
			return stepOut{}, err
		}
	}
	c.byKey[key] = c.order.PushFront(&graphEntry{key: key, g: g, out: out, gen: m.gen})
	c.captures++
	return out, m.dev.launchGraph(g)
}

// uploadSlot is one of the two upload buffers: page-locked host memory,
// its device twin, and the events ordering them.
type uploadSlot struct {
	host     *hostBuffer
	dev      *buffer
	copied   event // the copy into dev is done
	consumed event // the step reading dev is done
	used     bool  // copied and consumed have been recorded
}

// stager double-buffers the batch upload.
type stager struct {
	slots [2]uploadSlot
	next  int
}

// inputs are a batch's per-step data, packed into an upload buffer in
// this order: ids (R·T), lens (R), drop (R·T·Dim), negRand (R), useMax
// (R), bigrams (DAN: R·T + R), hinge (the hinge loss's negatives and
// their inverse lists), target (the sim loss's target distributions).
// Which parts are there and their sizes follow from the graph key and the
// configuration, so a captured step finds each at the same offset.
type inputs struct {
	R, T            int
	ids, lens       []int32
	drop            []float32
	negRand, useMax []int32
	bigrams         []int32
	hinge           []int32
	target          []float32
	// konst is added to the loss on the host (the sim loss's Σ p·log p):
	// it changes from batch to batch, so it is not the step's.
	konst float64
}

func (in *inputs) words() int {
	return len(in.ids) + len(in.lens) + len(in.drop) + len(in.negRand) + len(in.useMax) +
		len(in.bigrams) + len(in.hinge) + len(in.target)
}

// uploaded are the device addresses of an upload buffer's parts (NULL
// where absent).
type uploaded struct {
	ids, lens ptr // int32 (R, T) and (R)
	drop      ptr // (R, T, Dim) multipliers or NULL
	negRand   ptr // int32 (R) random negatives or NULL
	useMax    ptr // int32 (R): 1 where the row takes the hardest negative
	bigrams   ptr // int32 DAN: bigram ids (R, T), then each row's count (R)
	hinge     ptr // int32 hinge: negB, negA (n·k each), inverse lists
	target    ptr // sim: target distributions (n, SimK)
}

// stage copies in into the next upload buffer on the copy stream and makes
// the compute stream wait for it; it returns the slot used and the device
// addresses of the parts. Call done(slot) after the step's device work is
// issued.
func (m *model) stage(in *inputs) (slot int, at uploaded, err error) {
	st := &m.stager
	slot = st.next
	st.next = 1 - st.next
	sl := &st.slots[slot]
	n := in.words()
	if sl.copied == nil {
		if sl.copied, err = m.dev.newEvent(); err != nil {
			return
		}
		if sl.consumed, err = m.dev.newEvent(); err != nil {
			return
		}
	}
	if sl.used {
		// The host buffer may still be read by the last copy from it, and
		// the device buffer by the last step that read it.
		if err = m.dev.sync(sl.copied); err != nil {
			return
		}
		if err = m.dev.sync(sl.consumed); err != nil {
			return
		}
	}
	if sl.host == nil || sl.host.words < n {
		if sl.host != nil {
			if err = m.dev.freeHost(sl.host); err != nil {
				return
			}
			sl.host = nil
		}
		if sl.host, err = m.dev.allocHost(max(n, 1024)); err != nil {
			return
		}
	}
	if sl.dev == nil || sl.dev.words < n {
		if sl.dev != nil {
			if err = m.dev.free(sl.dev); err != nil {
				return
			}
			sl.dev = nil
		}
		if sl.dev, err = m.dev.alloc(max(n, 1024)); err != nil {
			return
		}
		m.gen++ // graphs read the old one
	}
	hi, hf := sl.host.ints(), sl.host.host
	base := ptr{b: sl.dev}
	off := 0
	ints := func(v []int32) ptr {
		if v == nil {
			return ptr{}
		}
		copy(hi[off:], v)
		p := base.at(off)
		off += len(v)
		return p
	}
	floats := func(v []float32) ptr {
		if v == nil {
			return ptr{}
		}
		copy(hf[off:], v)
		p := base.at(off)
		off += len(v)
		return p
	}
	at.ids, at.lens = ints(in.ids), ints(in.lens)
	at.drop = floats(in.drop)
	at.negRand, at.useMax = ints(in.negRand), ints(in.useMax)
	at.bigrams, at.hinge = ints(in.bigrams), ints(in.hinge)
	at.target = floats(in.target)
	if err = m.dev.uploadAsync(base, sl.host, 0, off); err != nil {
		return
	}
	if err = m.dev.record(sl.copied, true); err != nil {
		return
	}
	err = m.dev.wait(sl.copied)
	return
}

// done marks the end of the device work that reads slot's buffer.
func (m *model) done(slot int) error {
	sl := &m.stager.slots[slot]
	sl.used = true
	return m.dev.record(sl.consumed, false)
}

// releaseStager frees the upload buffers and events.
func (m *model) releaseStager() error {
	var errs []error
	for i := range m.stager.slots {
		sl := &m.stager.slots[i]
		if sl.used {
			errs = append(errs, m.dev.sync(sl.consumed))
		}
		if sl.host != nil {
			errs = append(errs, m.dev.freeHost(sl.host))
		}
		if sl.dev != nil {
			errs = append(errs, m.dev.free(sl.dev))
		}
		for _, e := range []event{sl.copied, sl.consumed} {
			if e != nil {
				errs = append(errs, m.dev.destroyEvent(e))
			}
		}
		*sl = uploadSlot{}
	}
	return errors.Join(errs...)
}
