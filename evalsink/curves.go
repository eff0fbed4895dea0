package evalsink

import (
	"fmt"
	"maps"
	"math"
	"path/filepath"
	"reflect"
	"slices"
	"strings"

	"github.com/parastream/parastream/evalsink/metric"
	"github.com/parastream/parastream/evalsink/plot"
)

// curveKinds returns the aggregate kinds that get a learning curve each.
func curveKinds() []string { return []string{KindMean, KindWeightedMean, KindPooled} }

// WriteCurves draws, for each run and aggregate kind, the learning curves:
// Pearson's r × 100 of each STS year's aggregate of that kind, and of the
// average over all sets, against the training step; and for a run with
// generation rows, BLEU-4, METEOR and TER of each generation set. It
// writes curves-<run>-<kind>.png (kind "generation" for the latter) under
// dir and returns the paths. Kinds whose curves are the same (each year one
// set: its mean, weighted mean and pooled figure agree) share one figure,
// named for the first and titled with all.
func WriteCurves(dir string, rows []Result) ([]string, error) {
	byRun := map[string][]Result{}
	var runs []string
	for _, r := range rows {
		run := displayRun(r) // an adapted evaluation: curves of its own
		if _, ok := byRun[run]; !ok {
			runs = append(runs, run)
		}
		byRun[run] = append(byRun[run], r)
	}
	slices.Sort(runs)
	var paths []string
	for _, run := range runs {
		for _, g := range curveGroups(byRun[run]) {
			path := filepath.Join(dir, fmt.Sprintf("curves-%s-%s.png", fileSafe(run), g.kinds[0]))
			names := make([]string, len(g.kinds))
			for i, k := range g.kinds {
				names[i] = kindName(k)
			}
			title := fmt.Sprintf("%s: STS %s, Pearson's r x100 (95%% intervals)", run, strings.Join(names, " = "))
			if err := plot.Lines(path, plot.Labels{Title: title, X: "training step", Y: "r x100"}, g.ss); err != nil {
				return nil, fmt.Errorf("drawing %s: %w", path, err)
			}
			paths = append(paths, path)
		}
		if ss := generationSeries(byRun[run]); len(ss) > 0 {
			path := filepath.Join(dir, fmt.Sprintf("curves-%s-%s.png", fileSafe(run), KindGeneration))
			if err := plot.Lines(path, plot.Labels{Title: run + ": generation x100, BLEU-4, METEOR, TER (TER: lower is better)", X: "training step", Y: "x100"}, ss); err != nil {
				return nil, fmt.Errorf("drawing %s: %w", path, err)
			}
			paths = append(paths, path)
		}
	}
	return paths, nil
}

// curveGroup is the curves of one or more aggregate kinds that are equal.
type curveGroup struct {
	kinds []string
	ss    []plot.Series
}

// curveGroups are a run's STS curves, one group per distinct set of lines.
func curveGroups(rows []Result) []curveGroup {
	var gs []curveGroup
next:
	for _, kind := range curveKinds() {
		ss := curveSeries(rows, kind)
		if len(ss) == 0 {
			continue
		}
		for i := range gs {
			if reflect.DeepEqual(gs[i].ss, ss) {
				gs[i].kinds = append(gs[i].kinds, kind)
				continue next
			}
		}
		gs = append(gs, curveGroup{kinds: []string{kind}, ss: ss})
	}
	return gs
}

func kindName(kind string) string {
	switch kind {
	case KindWeightedMean:
		return "weighted mean"
	}
	return kind
}

// curveSeries are a run's lines for one aggregate kind: one per STS year
// and split, plus the average, each point the latest evaluation of a step.
func curveSeries(rows []Result, kind string) []plot.Series {
	pts := map[string]map[int64]float64{}
	ci := map[string]map[int64][2]float64{}
	var names []string
	for _, r := range rows {
		if (r.Kind != kind && r.Kind != KindAverage) || r.Pearson == nil {
			continue
		}
		name := "STS " + r.Year
		if r.Split != "test" && r.Kind != KindAverage && !strings.HasSuffix(r.Year, r.Split) {
			name += " " + r.Split
		}
		if r.Kind == KindAverage {
			name = "average"
		}
		if pts[name] == nil {
			pts[name] = map[int64]float64{}
			names = append(names, name)
		}
		pts[name][r.Step] = *r.Pearson // rows come in evaluation order: the latest wins
		lo, okLo := r.CILow["pearson"]
		hi, okHi := r.CIHigh["pearson"]
		if okLo && okHi {
			if ci[name] == nil {
				ci[name] = map[int64][2]float64{}
			}
			ci[name][r.Step] = [2]float64{lo, hi}
		}
	}
	if len(names) == 0 || (len(names) == 1 && names[0] == "average") {
		return nil
	}
	ss := stepSeries(names, pts)
	for i := range ss {
		curveIntervals(&ss[i], ci[ss[i].Name])
	}
	return ss
}

// curveIntervals gives s the intervals of its points when every point has
// one (the average has none: it is not resampled).
func curveIntervals(s *plot.Series, ci map[int64][2]float64) {
	if len(ci) == 0 {
		return
	}
	lo, hi := make([]float64, len(s.X)), make([]float64, len(s.X))
	for i, x := range s.X {
		iv, ok := ci[int64(x)]
		if !ok {
			return
		}
		lo[i], hi[i] = iv[0], iv[1]
	}
	s.Lo, s.Hi = lo, hi
}

// stepSeries is a series a name, sorted by name, of the name's points
// (step → value) in step order.
func stepSeries(names []string, pts map[string]map[int64]float64) []plot.Series {
	slices.Sort(names)
	ss := make([]plot.Series, 0, len(names))
	for _, n := range names {
		s := plot.Series{Name: n}
		for _, step := range slices.Sorted(maps.Keys(pts[n])) {
			s.X, s.Y = append(s.X, float64(step)), append(s.Y, pts[n][step])
		}
		ss = append(ss, s)
	}
	return ss
}

// scatterAxis is the y axis of the scatter plot on a scale: its label and
// range. The cosine's range reaches down to the lowest prediction.
func scatterAxis(scale string, pred []float64) (label string, lo, hi float64) {
	if scale == ScaleAngular {
		return "predicted 5(1 - arccos(cos)/pi)", 0, 5
	}
	lo = 0
	for _, p := range pred {
		lo = min(lo, math.Floor(p*10)/10)
	}
	return "predicted cosine", max(-1, lo), 1
}

// WriteScatter plots a set's predictions on the evaluation's scale
// (base.Scale: the cosine, or the cosine mapped to 0-5 by metric.Angular), the
// figures the report correlates, against its gold scores.
func WriteScatter(path string, sc *Scored, base Result) error {
	pred := sc.Pred
	lo, hi := 0.0, 5.0
	for _, g := range sc.Gold {
		lo, hi = min(lo, g), max(hi, g)
	}
	r := 100 * metric.Pearson(sc.Pred, sc.Gold)
	ylabel, y0, y1 := scatterAxis(base.Scale, pred)
	title := fmt.Sprintf("%s step %d: %s (r x100 = %.1f, %d pairs)", base.Run, base.Step, sc.Set.Dataset, r, len(pred))
	return plot.Scatter(path, plot.Labels{Title: title, X: "gold score", Y: ylabel}, plot.Range{X0: lo, X1: hi, Y0: y0, Y1: y1},
		plot.Series{Name: fmt.Sprintf("%d pairs", len(pred)), X: sc.Gold, Y: pred})
}
