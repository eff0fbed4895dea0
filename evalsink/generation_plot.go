package evalsink

import (
	"slices"
)

// generationSeries are a run's generation learning curves: BLEU-4, METEOR
// and TER ×100 of each generation set against the step, each point the
// latest evaluation of a step; nil without generation rows.
func generationSeries(rows []Result) []series {
	pts := map[string]map[int64]float64{}
	var names []string
	add := func(name string, step int64, v *float64) {
		if v == nil {
			return
		}
		if pts[name] == nil {
			pts[name] = map[int64]float64{}
			names = append(names, name)
		}
		pts[name][step] = *v // rows come in evaluation order: the latest wins
	}
	for _, r := range rows {
		if r.Kind != KindGeneration {
			continue
		}
		add(r.Dataset+" BLEU-4", r.Step, r.BLEU4)
		add(r.Dataset+" METEOR", r.Step, r.METEOR)
		add(r.Dataset+" TER", r.Step, r.TER)
	}
	slices.Sort(names)
	var ss []series
	for _, n := range names {
		s := series{name: n}
		for _, step := range slices.Sorted(func(yield func(int64) bool) {
			for k := range pts[n] {
				if !yield(k) {
					return
				}
			}
		}) {
			s.x, s.y = append(s.x, float64(step)), append(s.y, pts[n][step])
		}
		ss = append(ss, s)
	}
	return ss
}
