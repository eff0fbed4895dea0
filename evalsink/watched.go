package evalsink

import (
	"fmt"
	"strings"
)

// Watched is what eval watch did with one announced checkpoint: evaluated
// it (its headline figure, and the verdict against the run's best before
// it) or skipped it (Skipped says why).
type Watched struct {
	Run  string
	Step int64
	Dir  string
	// Headline names the headline figure ("Average of 19 sets Pearson's
	// r"); Value is its value ×100; HasValue is false when the evaluation
	// has no figure with an interval.
	Headline string
	Value    float64
	HasValue bool
	// Against is the step of the run's best evaluation before it, when
	// there is one (Compared); Diff, DiffLow, DiffHigh and Verdict are
	// the headline's difference from it, its 95% interval and verdict.
	Compared                bool
	Against                 int64
	Diff, DiffLow, DiffHigh float64
	Verdict                 string
	Skipped                 string
}

// Line is w in one line, as eval watch prints it.
func (w Watched) Line() string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s step %d: ", w.Run, w.Step)
	if w.Skipped != "" {
		b.WriteString("skipped: " + w.Skipped)
		return b.String()
	}
	if !w.HasValue {
		b.WriteString("evaluated (no figure with an interval to compare)")
		return b.String()
	}
	fmt.Fprintf(&b, "%s %.1f", w.Headline, w.Value)
	if w.Compared {
		fmt.Fprintf(&b, "; vs step %d %s (%s): %s", w.Against, signed(w.Diff), diffInterval(w.DiffLow, w.DiffHigh), w.Verdict)
	} else {
		b.WriteString("; the run's first evaluation")
	}
	return b.String()
}

// watchedOf is the Watched of an evaluation sum and its comparison c
// (nil: none before it) under the headline spec.
func watchedOf(sum *Summary, c *CheckpointComparison, spec string) Watched {
	w := Watched{}
	if len(sum.Rows) == 0 {
		return w
	}
	w.Run, w.Step = displayRun(sum.Rows[0]), sum.Rows[0].Step
	if h := c.Headline(); h != nil {
		w.Headline, w.Value, w.HasValue = h.Label+" "+columnName(h.Column), h.B, true
		w.Compared, w.Against, w.Diff, w.DiffLow, w.DiffHigh, w.Verdict = true, h.StepA, h.Diff, h.CILow, h.CIHigh, h.Verdict
		return w
	}
	head, _, ok := chooseHeadline(rowFigureKeys(sum.Rows), spec)
	if !ok {
		return w
	}
	for i := range sum.Rows {
		r := &sum.Rows[i]
		if keyOf(*r) != (lineKey{head.corpus, head.split, head.dataset, head.kind}) {
			continue
		}
		if p, err := r.column(head.column); err == nil && *p != nil {
			w.Headline = strings.ReplaceAll(lineLabel(*r), "**", "") + " " + columnName(head.column)
			w.Value, w.HasValue = **p, true
		}
		break
	}
	return w
}
