package transforms

import (
	"context"
	"maps"
	"sync"

	"github.com/apache/beam/sdks/v2/go/pkg/beam"

	"github.com/parastream/parastream/internal/beamfn"
)

// counters accumulates a bundle's counts locally and reports them as Beam
// counters when the bundle finishes: Counter.Inc per record would cost a
// lookup on the hot path.
type counters struct {
	m map[string]int64
}

func (c *counters) reset() {
	if c.m == nil {
		c.m = make(map[string]int64)
	}
	clear(c.m)
}

func (c *counters) add(name string, n int64) {
	if n == 0 {
		return
	}
	if c.m == nil {
		c.m = make(map[string]int64)
	}
	c.m[name] += n
}

// flush reports the counts and clears them.
func (c *counters) flush(ctx context.Context) {
	for name, n := range c.m {
		beam.NewCounter(beamfn.CounterNamespace, name).Inc(ctx, n)
	}
	clear(c.m)
}

// Progress is a live, in-process view of a running pipeline's work, for the
// progress lines of long local runs: Prism runs the DoFns in this process,
// and Beam's committed counters arrive only when the job ends. The driver
// makes one with NewProgress and runs the pipeline with the context
// WithProgress gives; the DoFns find it in their context. On a cluster
// runner the DoFns run elsewhere, find none, and the Progress stays at zero;
// use the runner's own UI there.
type Progress struct {
	mu sync.Mutex
	m  map[string]int64
}

// NewProgress returns an empty Progress.
func NewProgress() *Progress { return &Progress{m: map[string]int64{}} }

type progressKey struct{}

// WithProgress returns ctx carrying p: a pipeline run in-process with that
// context (beam.Run on Prism, whose loopback workers run the DoFns under
// the context the run was given) counts its work into p.
func WithProgress(ctx context.Context, p *Progress) context.Context {
	return context.WithValue(ctx, progressKey{}, p)
}

// progressFrom is the Progress ctx carries, or nil, which counts nothing.
func progressFrom(ctx context.Context) *Progress {
	p, _ := ctx.Value(progressKey{}).(*Progress)
	return p
}

func (p *Progress) add(name string, n int64) {
	if p == nil {
		return
	}
	p.mu.Lock()
	p.m[name] += n
	p.mu.Unlock()
}

// Snapshot copies the counts.
func (p *Progress) Snapshot() map[string]int64 {
	p.mu.Lock()
	defer p.mu.Unlock()
	return maps.Clone(p.m)
}
