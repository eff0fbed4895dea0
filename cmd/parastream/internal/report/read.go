package report

import (
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/parastream/parastream/corpora"
)

// Read prints what reading one input gave (corpora.ReadAll): its counts,
// up to show examples and rejects, and its error or the hints of its
// outcome.
func Read(w io.Writer, rep corpora.ReadReport, show int) {
	st := rep.Stats
	fmt.Fprintf(w, "%s  %s\n", rep.Format, strings.Join(rep.Paths, " + "))
	fmt.Fprintf(w, "  records %d  examples %d  rejected %d%s  skipped %d%s  %s decompressed in %s\n",
		st.Records, st.Examples, st.RejectedTotal(), Breakdown(st.Rejected), Sum(st.Skipped), Breakdown(st.Skipped),
		HumanBytes(st.Bytes), rep.Elapsed.Round(time.Millisecond))
	for _, ex := range rep.Shown[:min(show, len(rep.Shown))] {
		fmt.Fprintf(w, "  example  %s\n", clip(ex.String(), 220))
	}
	for _, pe := range rep.Rejects[:min(show, len(rep.Rejects))] {
		fmt.Fprintf(w, "  reject   %s\n", clip(pe.Error(), 220))
	}
	if rep.Err != nil {
		fmt.Fprintf(w, "  ERROR    %v\n", rep.Err)
		return
	}
	o := outcome{read: st.Records, kept: st.Examples, keptNoun: "examples", dropped: map[string]int64{}}
	for r, n := range st.Rejected {
		o.dropped[string(r)] += n
	}
	for k, n := range st.Skipped {
		o.dropped[k] += n
	}
	for _, h := range o.hints() {
		fmt.Fprintf(w, "  %s\n", h)
	}
}

// ReadLine prints one input's read on one line: the format, the
// counts and, when the read failed, why.
func ReadLine(w io.Writer, rep corpora.ReadReport) {
	st := rep.Stats
	fmt.Fprintf(w, "  %-19s %4d records %4d examples %4d rejected %3d skipped", rep.Format, st.Records, st.Examples, st.RejectedTotal(), Sum(st.Skipped))
	if rep.Err != nil {
		fmt.Fprintf(w, "  ERROR %v", rep.Err)
	}
	fmt.Fprintln(w)
}

// ReadProgress is a corpora.ReadAllOptions.Progress printing a line of
// counts to w.
func ReadProgress(w io.Writer, format string) func(corpora.Stats, time.Duration) {
	return func(st corpora.Stats, elapsed time.Duration) {
		fmt.Fprintf(w, "  %s: %d examples, %d rejected, %s read, %.0f examples/s\n", format, st.Examples, st.RejectedTotal(), HumanBytes(st.Bytes), float64(st.Examples)/elapsed.Seconds())
	}
}
