package evalsink

import "github.com/parastream/parastream/evalsink/plot"

// generationSeries are a run's generation learning curves: BLEU-4, METEOR
// and TER ×100 of each generation set against the step, each point the
// latest evaluation of a step; nil without generation rows.
func generationSeries(rows []Result) []plot.Series {
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
	return stepSeries(names, pts)
}
