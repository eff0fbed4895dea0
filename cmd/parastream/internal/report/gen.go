package report

import (
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/parastream/parastream/corpora/synth"
)

// Gen prints what synth.Generate wrote of a corpus in elapsed.
func Gen(w io.Writer, corpus string, res synth.Result, elapsed time.Duration) {
	st, sub := res.Stats, res.Submissions
	secs := elapsed.Seconds()
	threads := ""
	switch {
	case corpus != "reddit":
	case sub.Rows == 0:
		threads = fmt.Sprintf(" in %d threads", st.Threads)
	default:
		threads = fmt.Sprintf(" in %d threads; %d submissions, %d malformed", st.Threads, sub.Rows, sub.Malformed)
	}
	files := make([]string, len(res.Files))
	for i, f := range res.Files {
		files[i] = f.Name
		if f.Codec != synth.CodecNone {
			files[i] += fmt.Sprintf(" (%s %s)", f.Codec, HumanBytes(f.Bytes))
		}
	}
	fmt.Fprintf(w, "gen %s: %d rows, %d malformed%s%s; %s in %s (%.0f MB/s, %.0f rows/s) to %s\n",
		corpus, st.Rows, st.Malformed, Breakdown(st.MalformedByReason), threads,
		HumanBytes(st.Bytes+sub.Bytes), elapsed.Round(time.Millisecond), float64(st.Bytes+sub.Bytes)/1e6/secs, float64(st.Rows)/secs,
		strings.Join(files, ", "))
}

// GenProgress is a synth.Config.Progress printing a line of counts to w
// every two seconds from began.
func GenProgress(w io.Writer, corpus string, began time.Time) func(synth.Stats) {
	next := began.Add(2 * time.Second)
	return func(st synth.Stats) {
		if now := time.Now(); now.After(next) {
			secs := now.Sub(began).Seconds()
			fmt.Fprintf(w, "  gen %s: %d rows, %s, %.0f MB/s, %.0f rows/s\n", corpus, st.Rows, HumanBytes(st.Bytes), float64(st.Bytes)/1e6/secs, float64(st.Rows)/secs)
			next = now.Add(2 * time.Second)
		}
	}
}
