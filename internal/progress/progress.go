// Package progress formats where a long job with a known total stands, for
// the progress lines of the commands: done/total, rate and ETA.
package progress

import (
	"fmt"
	"time"
)

// ETA is "1200/6000 rows (20%), 340 rows/s, ETA 14s": done of total units
// after elapsed, the rate so far, and the time left at that rate. With no
// rate yet the ETA is "ETA ?"; at or past the total, "done".
func ETA(done, total int64, unit string, elapsed time.Duration) string {
	pct := 100.0
	if total > 0 {
		pct = 100 * float64(done) / float64(total)
	}
	rate := 0.0
	if s := elapsed.Seconds(); s > 0 {
		rate = float64(done) / s
	}
	return fmt.Sprintf("%d/%d %s (%.0f%%), %.0f %s/s, %s", done, total, unit, pct, rate, unit, Remaining(done, total, elapsed))
}

// Remaining is "ETA 14s": the time left to do total at the rate of done
// in elapsed; "ETA ?" with no rate yet, "done" at or past the total.
func Remaining(done, total int64, elapsed time.Duration) string {
	switch {
	case done >= total:
		return "done"
	case done <= 0 || elapsed <= 0:
		return "ETA ?"
	}
	return "ETA " + Duration(time.Duration(float64(total-done)/float64(done)*float64(elapsed)))
}

// Duration is d rounded for a person: "14s", "3m05s", "2h07m".
func Duration(d time.Duration) string {
	d = d.Round(time.Second)
	switch {
	case d < time.Minute:
		return fmt.Sprintf("%ds", int(d.Seconds()))
	case d < time.Hour:
		return fmt.Sprintf("%dm%02ds", int(d.Minutes()), int(d.Seconds())%60)
	}
	return fmt.Sprintf("%dh%02dm", int(d.Hours()), int(d.Minutes())%60)
}

// Every says whether a progress line is due: the first call, a call at
// least Interval after the last line, or the last (final) one.
type Every struct {
	Interval time.Duration
	last     time.Time
}

// Due reports whether a line is due at now, and if so counts it as written.
func (e *Every) Due(now time.Time, final bool) bool {
	if !final && !e.last.IsZero() && now.Sub(e.last) < e.Interval {
		return false
	}
	e.last = now
	return true
}
