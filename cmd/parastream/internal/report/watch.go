package report

import (
	"fmt"
	"io"
	"sync"

	"github.com/parastream/parastream/evalsink"
)

// Watch prints eval watch's lines: one per checkpoint evaluated or
// skipped (Checkpoint, for evalsink.Config.Watched), and what the watch
// did when it stops (Stopped).
type Watch struct {
	w io.Writer

	mu        sync.Mutex
	evaluated int
	skipped   int
	runs      map[string]bool
	best      *evalsink.Watched
}

// NewWatch prints to w.
func NewWatch(w io.Writer) *Watch { return &Watch{w: w, runs: map[string]bool{}} }

// Checkpoint prints the line of one checkpoint and counts it.
func (r *Watch) Checkpoint(c evalsink.Watched) {
	r.mu.Lock()
	defer r.mu.Unlock()
	fmt.Fprintln(r.w, c.Line())
	if c.Skipped != "" {
		r.skipped++
		return
	}
	r.evaluated++
	r.runs[c.Run] = true
	if c.HasValue && (r.best == nil || c.Value >= r.best.Value) {
		b := c
		r.best = &b
	}
}

// Stopped prints the watch's summary: what it evaluated and skipped, the
// best headline figure seen, and where the results are.
func (r *Watch) Stopped(out string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	line := fmt.Sprintf("stopped: evaluated %s of %s, skipped %d", plural(int64(r.evaluated), "checkpoint"), plural(int64(len(r.runs)), "run"), r.skipped)
	if r.best != nil {
		line += fmt.Sprintf("; best %s %.1f (%s step %d)", r.best.Headline, r.best.Value, r.best.Run, r.best.Step)
	}
	fmt.Fprintf(r.w, "%s; results in %s\n", line, out)
}
