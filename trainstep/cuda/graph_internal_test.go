package cuda

import (
	"errors"
	"log/slog"
	"math/rand/v2"
	"strings"
	"testing"
	"unsafe"

	"github.com/parastream/parastream/trainstep/compute"
)

// TestCaptureRefusesHostWork: a step that reads the host mid-way (here a
// download) cannot be captured; runStep runs it eagerly, with the right
// result, and never tries that shape again. Captured work does not run
// until the graph is launched. The refusal is logged once, one line with
// the shape and the reason.
func TestCaptureRefusesHostWork(t *testing.T) {
	cfg := compute.Config{Encoder: compute.EncAvg, Dim: 4, Vocab: 5, BatchSize: 2}.Defaults()
	ps := compute.InitParams(cfg, rand.New(rand.NewPCG(1, 2)))
	var logged strings.Builder
	log := slog.New(slog.NewTextHandler(&logged, nil))
	m, err := newModel(newEmulator(), cfg, ps, Options{Logger: log})
	if err != nil {
		t.Fatal(err)
	}
	defer m.Close()
	buf, err := m.work("t.buf", 4)
	if err != nil {
		t.Fatal(err)
	}
	var seen []float32
	hostMidway := func(s *seq) stepOut {
		s.launch(kFillRows, argN(1), argN(4), argP(m.w[compute.ParamEmbeddings]), argP(buf))
		if s.err == nil {
			v := make([]float32, 4)
			s.err = m.dev.download(unsafe.Pointer(&v[0]), buf, 4)
			seen = v
		}
		return stepOut{}
	}
	key := graphKey{R: 2, T: 1}
	for i := range 3 {
		seen = nil
		if _, err := m.runStep(key, hostMidway); err != nil {
			t.Fatalf("run %d: %v", i, err)
		}
		if seen == nil || seen[0] != ps[0].Data[0] {
			t.Fatalf("run %d: the step read %v, want the first embedding row", i, seen)
		}
	}
	if err := m.graphs.refused[key]; !errors.Is(err, errCaptureUnsupported) {
		t.Errorf("shape refused with %v, want errCaptureUnsupported", err)
	}
	if m.graphs.captures != 0 || m.graphs.replays != 0 {
		t.Errorf("%d captures, %d replays of a step that reads the host", m.graphs.captures, m.graphs.replays)
	}
	if got := logged.String(); strings.Count(got, "\n") != 1 || !strings.Contains(got, "capture refused") ||
		!strings.Contains(got, "2 rows × 1 steps") || !strings.Contains(got, "a copy to pageable memory") {
		t.Errorf("logged %q: want one line with the shape and the reason", got)
	}

	// A capturable step: recorded, not run, until launched.
	m.dev.zero(buf, 4)
	fill := func(s *seq) stepOut {
		s.launch(kFillRows, argN(1), argN(4), argP(m.w[compute.ParamEmbeddings]), argP(buf))
		return stepOut{}
	}
	other := graphKey{R: 2, T: 2}
	if _, err := m.runStep(other, fill); err != nil { // eager: sizes the workspace
		t.Fatal(err)
	}
	m.dev.zero(buf, 4)
	e := m.dev.(*emulator)
	if err := e.beginCapture(); err != nil {
		t.Fatal(err)
	}
	if err := e.launch(kFillRows, args(argN(1), argN(4), argP(m.w[compute.ParamEmbeddings]), argP(buf))); err != nil {
		t.Fatal(err)
	}
	g, err := e.endCapture()
	if err != nil {
		t.Fatal(err)
	}
	if buf.b.host[0] != 0 {
		t.Fatalf("captured work ran during the capture")
	}
	if err := e.launchGraph(g); err != nil {
		t.Fatal(err)
	}
	if buf.b.host[0] != ps[0].Data[0] {
		t.Fatalf("replay wrote %v, want %v", buf.b.host[0], ps[0].Data[0])
	}
}

// TestTF32Rounding: the emulator's TF32 keeps 10 mantissa bits, rounding
// to nearest with ties away from zero.
func TestTF32Rounding(t *testing.T) {
	for _, c := range []struct{ in, want float32 }{
		{1, 1},
		{1 + 1.0/4096, 1},                  // below half a TF32 ulp (2^-10)
		{1 + 1.0/2048, 1 + 1.0/1024},       // a tie: away from zero
		{-(1 + 1.0/2048), -(1 + 1.0/1024)}, // and for negatives
		{1 + 3.0/4096, 1 + 1.0/1024},
		{0.1, 0.0999755859375},
	} {
		if got := TF32(c.in); got != c.want {
			t.Errorf("TF32(%v) = %v, want %v", c.in, got, c.want)
		}
	}
}

// TestUploadOrdering: the emulator's copy stream runs an upload only when
// an event recorded after it is waited for, and reads the page-locked
// buffer then; the stager waits before the step and guards each of its
// two buffers until the step that read it is done.
func TestUploadOrdering(t *testing.T) {
	e := newEmulator()
	dst, _ := e.alloc(2)
	h, _ := e.allocHost(2)
	h.host[0], h.host[1] = 1, 2
	if err := e.uploadAsync(ptr{b: dst}, h, 0, 2); err != nil {
		t.Fatal(err)
	}
	ev, _ := e.newEvent()
	if err := e.record(ev, true); err != nil {
		t.Fatal(err)
	}
	if dst.host[0] != 0 {
		t.Fatalf("the upload ran before anything waited for it")
	}
	h.host[0] = 3 // the host writes before the copy has run: the copy sees it
	if err := e.wait(ev); err != nil {
		t.Fatal(err)
	}
	if dst.host[0] != 3 || dst.host[1] != 2 {
		t.Fatalf("after the wait the device holds %v, want [3 2]", dst.host[:2])
	}

	cfg := compute.Config{Encoder: compute.EncAvg, Dim: 4, Vocab: 5, BatchSize: 2}.Defaults()
	m, err := newModel(e, cfg, compute.InitParams(cfg, rand.New(rand.NewPCG(1, 2))), Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer m.Close()
	var slots []int
	for i := range 3 {
		in := m.batchInputs([][]int32{{1, 2}, {int32(i)}}, 2, nil)
		p, slot, err := m.prepare(in)
		if err != nil {
			t.Fatal(err)
		}
		slots = append(slots, slot)
		// The step sees this batch, not the last one in that buffer.
		ids := p.ids.b.host[p.ids.off : p.ids.off+4]
		lens := p.lens.b.host[p.lens.off : p.lens.off+2]
		if got := unsafe.Slice((*int32)(unsafe.Pointer(&ids[0])), 4); got[2] != int32(i) {
			t.Errorf("batch %d: ids %v on the device", i, got)
		}
		if got := unsafe.Slice((*int32)(unsafe.Pointer(&lens[0])), 2); got[0] != 2 || got[1] != 1 {
			t.Errorf("batch %d: lens %v on the device", i, got)
		}
		if err := m.done(slot); err != nil {
			t.Fatal(err)
		}
	}
	if slots[0] == slots[1] || slots[0] != slots[2] {
		t.Errorf("upload buffers %v, want them taken in turn", slots)
	}
}
