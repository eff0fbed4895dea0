package report

import (
	"bytes"
	"strings"
	"testing"
	"time"

	"github.com/parastream/parastream/stream"
)

// TestPublishProgress: the line gives the rows this run writes of those
// left, the rate and the ETA; a topic's lines come a few seconds apart and
// at its end.
func TestPublishProgress(t *testing.T) {
	p := stream.Progress{Topic: "ps.quora.train", Rows: 7000, Present: 2200, Skipped: 1000, Messages: 12, Bytes: 3 << 20, Elapsed: 4 * time.Second}
	want := "ps.quora.train: 1200/6000 rows (20%), 300 rows/s, ETA 16s; 1000 already there, 12 messages, 3.0 MiB"
	if got := PublishLine(p); got != want {
		t.Errorf("line %q, want %q", got, want)
	}
	var out bytes.Buffer
	f := PublishProgress(&out)
	for range 50 {
		f(p)
		f(stream.Progress{Topic: "ps.sts.train", Rows: 10, Present: 1})
	}
	p.Present, p.Done = 7000, true
	f(p)
	lines := strings.Split(strings.TrimSpace(out.String()), "\n")
	if len(lines) != 3 || !strings.HasSuffix(lines[2], "done; 1000 already there, 12 messages, 3.0 MiB") {
		t.Errorf("%d lines, want the first of each topic and the end:\n%s", len(lines), out.String())
	}
}
