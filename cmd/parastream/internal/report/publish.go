package report

import (
	"fmt"
	"io"
	"sync"
	"time"

	"github.com/parastream/parastream/internal/progress"
	"github.com/parastream/parastream/stream"
)

// PublishEvery is how far apart publish's progress lines are.
const PublishEvery = 3 * time.Second

// PublishProgress is a stream.PublishConfig.Progress printing to w, every
// PublishEvery and when a topic is done, where the topic stands: the rows
// this run writes done of those left to write, their rate and the ETA, the
// rows already there, and the messages and bytes written.
func PublishProgress(w io.Writer) func(stream.Progress) {
	var mu sync.Mutex
	due := map[string]*progress.Every{}
	return func(p stream.Progress) {
		mu.Lock()
		defer mu.Unlock()
		e := due[p.Topic]
		if e == nil {
			e = &progress.Every{Interval: PublishEvery}
			due[p.Topic] = e
		}
		if e.Due(time.Now(), p.Done) {
			fmt.Fprintln(w, PublishLine(p))
		}
	}
}

// PublishLine is one progress line of publish.
func PublishLine(p stream.Progress) string {
	return fmt.Sprintf("%s: %s; %d already there, %d messages, %s", p.Topic,
		progress.ETA(p.Present-p.Skipped, p.Rows-p.Skipped, "rows", p.Elapsed), p.Skipped, p.Messages, HumanBytes(p.Bytes))
}
