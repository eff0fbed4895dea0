package transforms

import (
	"context"
	"maps"
	"sync"

	"github.com/apache/beam/sdks/v2/go/pkg/beam"
)

// CounterNamespace is the namespace of every Beam counter parastream's
// transforms report.
const CounterNamespace = "parastream"

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
		beam.NewCounter(CounterNamespace, name).Inc(ctx, n)
	}
	clear(c.m)
}

// Progress is a live, in-process view of a running pipeline's work, for the
// progress lines of long local runs: Prism runs the DoFns in this process,
// and Beam's committed counters arrive only when the job ends. On a cluster
// runner the DoFns run elsewhere and Progress stays at zero; use the
// runner's own UI there.
type Progress struct {
	mu sync.Mutex
	m  map[string]int64
}

// LocalProgress is the process's Progress.
var LocalProgress = &Progress{m: map[string]int64{}}

func (p *Progress) add(name string, n int64) {
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

// Reset clears the counts, before a new run.
func (p *Progress) Reset() {
	p.mu.Lock()
	clear(p.m)
	p.mu.Unlock()
}
