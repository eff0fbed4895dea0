package metric

import (
	"cmp"
	"hash/fnv"
	"math"
	"math/rand/v2"
	"slices"
)

// A figure of a result row (a Pearson's r, an accuracy, a MAP) is computed
// from items: the pairs, sentences or queries the row scored. Keeping the
// items lets every figure get a bootstrap interval (resampling its items)
// and lets two checkpoints be compared on the same items (a paired
// bootstrap), for every task alike.

// Metrics of a Figure: how its value is computed from its items.
const (
	// MetricPearson is Pearson's r between Pred and Gold.
	MetricPearson = "pearson"
	// MetricSpearman is Spearman's ρ between Pred and Gold.
	MetricSpearman = "spearman"
	// MetricMean is the mean of Pred: an accuracy where Pred is 1 for a
	// correct item and 0 otherwise, a MAP where Pred is a query's average
	// precision.
	MetricMean = "mean"
	// MetricF1 is the F1 of class 1, Pred and Gold being 0/1 labels.
	MetricF1 = "f1"
)

// Item is one scored item of a figure.
type Item struct {
	// ID identifies the item in its set (a pair's or query's id), the
	// same for every checkpoint: a paired comparison matches items by
	// Group and ID.
	ID string
	// Group is the item's stratum: the set it belongs to in a figure
	// aggregated over sets (a year's mean), "" otherwise.
	Group string
	// Pred and Gold are the model's value and the gold value (see the
	// metrics).
	Pred, Gold float64
}

// Figure is one figure of a result row with the items it is computed
// from.
type Figure struct {
	// Column is the result column the figure fills: "pearson",
	// "spearman", "accuracy", "f1", "map", "mrr", "p_at_1", ...
	Column string
	// Metric is one of the Metric constants.
	Metric string
	// Weighted applies to items in several groups: the figure is the mean
	// of the groups' figures, weighted by their items when Weighted, plain
	// otherwise. Items all in one group give that group's figure.
	Weighted bool
	Items    []Item
}

// prepared is a figure's items arranged for fast resampling: the indexes
// of each group's items and, for a rank correlation, each group's items
// in the order of Pred and of Gold.
type prepared struct {
	groups         [][]int
	byPred, byGold [][]int
	// pred and gold are the items' values, flat.
	pred, gold []float64
}

// prepare arranges the items; groups come in the order they first appear.
func (f *Figure) prepare() *prepared {
	pos := map[string]int{}
	p := &prepared{pred: make([]float64, len(f.Items)), gold: make([]float64, len(f.Items))}
	for i, it := range f.Items {
		p.pred[i], p.gold[i] = it.Pred, it.Gold
		g, ok := pos[it.Group]
		if !ok {
			g = len(p.groups)
			pos[it.Group] = g
			p.groups = append(p.groups, nil)
		}
		p.groups[g] = append(p.groups[g], i)
	}
	if f.Metric == MetricSpearman {
		for _, idx := range p.groups {
			byPred, byGold := slices.Clone(idx), slices.Clone(idx)
			slices.SortStableFunc(byPred, func(a, b int) int { return compareFloat(f.Items[a].Pred, f.Items[b].Pred) })
			slices.SortStableFunc(byGold, func(a, b int) int { return compareFloat(f.Items[a].Gold, f.Items[b].Gold) })
			p.byPred, p.byGold = append(p.byPred, byPred), append(p.byGold, byGold)
		}
	}
	return p
}

// Value is the figure over all its items (not ×100).
func (f *Figure) Value() float64 {
	counts := make([]float64, len(f.Items))
	for i := range counts {
		counts[i] = 1
	}
	return f.value(f.prepare(), counts, nil)
}

// value is the figure over a resample of the items, given as each item's
// count in it (a multiset): computed in time linear in the items, ranks
// included, so a bootstrap of thousands of resamples stays cheap. scratch
// holds the ranks of a rank correlation (nil: allocated).
func (f *Figure) value(p *prepared, counts []float64, scratch []float64) float64 {
	var sum, w float64
	if f.Metric == MetricSpearman && len(scratch) < 2*len(f.Items) {
		scratch = make([]float64, 2*len(f.Items))
	}
	for g, idx := range p.groups {
		var n float64
		for _, i := range idx {
			n += counts[i]
		}
		if n == 0 {
			continue
		}
		var v float64
		switch f.Metric {
		case MetricPearson:
			v = weightedPearson(idx, counts, p.pred, p.gold)
		case MetricSpearman:
			rp, rg := scratch[:len(f.Items)], scratch[len(f.Items):]
			multisetRanks(p.byPred[g], counts, p.pred, rp)
			multisetRanks(p.byGold[g], counts, p.gold, rg)
			v = weightedPearson(idx, counts, rp, rg)
		case MetricMean:
			for _, i := range idx {
				v += counts[i] * p.pred[i]
			}
			v /= n
		case MetricF1:
			v = weightedF1(f.Items, idx, counts)
		default:
			panic("metric: unknown metric " + f.Metric)
		}
		wt := 1.0
		if f.Weighted {
			wt = n
		}
		sum += wt * v
		w += wt
	}
	if w == 0 {
		return math.NaN()
	}
	return sum / w
}

// weightedF1 is the F1 of class 1 over the items at idx, each counted
// counts[i] times; 0 when no item of class 1 is predicted right.
func weightedF1(items []Item, idx []int, counts []float64) float64 {
	var tp, fp, fn float64
	for _, i := range idx {
		pred, gold := items[i].Pred == 1, items[i].Gold == 1
		switch {
		case pred && gold:
			tp += counts[i]
		case pred:
			fp += counts[i]
		case gold:
			fn += counts[i]
		}
	}
	if tp == 0 {
		return 0
	}
	return 2 * tp / (2*tp + fp + fn)
}

// weightedPearson is Pearson's r of the items at idx, each counted
// counts[i] times; 0 when either side is constant, as Pearson.
func weightedPearson(idx []int, counts, x, y []float64) float64 {
	var n, mx, my float64
	for _, i := range idx {
		c := counts[i]
		n += c
		mx += c * x[i]
		my += c * y[i]
	}
	mx, my = mx/n, my/n
	var sxy, sxx, syy float64
	for _, i := range idx {
		c := counts[i]
		if c == 0 {
			continue
		}
		dx, dy := x[i]-mx, y[i]-my
		sxy += c * dx * dy
		sxx += c * dx * dx
		syy += c * dy * dy
	}
	if sxx == 0 || syy == 0 {
		return 0 // as Pearson
	}
	return max(-1, min(1, sxy/(math.Sqrt(sxx)*math.Sqrt(syy))))
}

// multisetRanks sets ranks[i] for the items in sorted (ordered by v) to
// their 1-based rank in the multiset where item i occurs counts[i] times,
// ties sharing their mean rank, as Ranks does for a plain sample.
func multisetRanks(sorted []int, counts, v, ranks []float64) {
	var below float64
	for s := 0; s < len(sorted); {
		e := s
		var m float64
		for e < len(sorted) && v[sorted[e]] == v[sorted[s]] {
			m += counts[sorted[e]]
			e++
		}
		r := below + (m+1)/2
		for _, i := range sorted[s:e] {
			ranks[i] = r
		}
		below += m
		s = e
	}
}

// Bootstrap configures the bootstrap: Resamples draws (0 means
// DefaultResamples) from a generator seeded by Seed and the figure's name,
// so an interval does not depend on the order figures are computed in.
type Bootstrap struct {
	Resamples int
	Seed      uint64
}

// DefaultResamples is the bootstrap's number of resamples.
const DefaultResamples = 1000

// rng returns the generator of one figure's resamples.
func (b Bootstrap) rng(name string) *rand.Rand {
	h := fnv.New64a()
	h.Write([]byte(name))
	return rand.New(rand.NewPCG(b.Seed, h.Sum64()))
}

// ResampleCount is the number of resamples drawn: Resamples, or
// DefaultResamples for 0.
func (b Bootstrap) ResampleCount() int { return cmp.Or(b.Resamples, DefaultResamples) }

// resample draws, for each group, as many of its items as it has, with
// replacement (a stratified resample: every group keeps its size), and
// sets counts to each item's multiplicity.
func resample(rng *rand.Rand, groups [][]int, counts []float64) {
	clear(counts)
	for _, idx := range groups {
		for range idx {
			counts[idx[rng.IntN(len(idx))]]++
		}
	}
}

// Interval is the percentile bootstrap 95% interval of a figure (not
// ×100): the 2.5th and 97.5th percentiles of the figure over resamples of
// its items (stratified by group). ok is false when the figure has fewer
// than two items or most resamples give no value (a constant
// prediction's correlation).
func (b Bootstrap) Interval(name string, f *Figure) (lo, hi float64, ok bool) {
	if len(f.Items) < 2 {
		return 0, 0, false
	}
	p := f.prepare()
	rng := b.rng(name)
	n := b.ResampleCount()
	vals := make([]float64, 0, n)
	counts, scratch := make([]float64, len(f.Items)), make([]float64, 2*len(f.Items))
	for range n {
		resample(rng, p.groups, counts)
		if v := f.value(p, counts, scratch); !math.IsNaN(v) {
			vals = append(vals, v)
		}
	}
	if len(vals) < n/2 {
		return 0, 0, false
	}
	return percentile(vals, 0.025), percentile(vals, 0.975), true
}

// percentile is the p-quantile of vals (sorted in place), interpolated
// linearly between order statistics as numpy's default does.
func percentile(vals []float64, p float64) float64 {
	slices.Sort(vals)
	pos := p * float64(len(vals)-1)
	i := int(pos)
	if i >= len(vals)-1 {
		return vals[len(vals)-1]
	}
	frac := pos - float64(i)
	return vals[i] + frac*(vals[i+1]-vals[i])
}

// Verdicts of a Comparison.
const (
	VerdictBetter = "better"
	VerdictWorse  = "worse"
	VerdictNoise  = "within noise"
)

// Comparison is the paired bootstrap comparison of one figure of two
// evaluations on the same items: B against A.
type Comparison struct {
	Corpus, Split, Dataset, Kind, Column string
	// Items counts the items both evaluations scored.
	Items int
	// A and B are the figures (×100) over the shared items; Diff is B − A;
	// Lo and Hi the bootstrap 95% interval of the difference.
	A, B, Diff, Lo, Hi float64
	// Verdict is VerdictBetter when the interval lies above 0 (B is
	// better), VerdictWorse below 0, VerdictNoise when it holds 0.
	Verdict string
}

// Paired compares figure fb of evaluation B with fa of evaluation A on the
// items both have (matched by Group and ID), resampling the same items for
// both. Higher is better for every figure this package computes. ok is
// false when they share fewer than two items.
func (b Bootstrap) Paired(name string, fa, fb *Figure) (c Comparison, ok bool) {
	type key struct{ group, id string }
	inB := make(map[key]int, len(fb.Items))
	for i, it := range fb.Items {
		inB[key{it.Group, it.ID}] = i
	}
	sa := Figure{Column: fa.Column, Metric: fa.Metric, Weighted: fa.Weighted}
	sb := Figure{Column: fb.Column, Metric: fb.Metric, Weighted: fb.Weighted}
	for _, it := range fa.Items {
		if j, found := inB[key{it.Group, it.ID}]; found {
			sa.Items = append(sa.Items, it)
			sb.Items = append(sb.Items, fb.Items[j])
		}
	}
	if len(sa.Items) < 2 {
		return Comparison{}, false
	}
	c = Comparison{Column: fa.Column, Items: len(sa.Items), A: 100 * sa.Value(), B: 100 * sb.Value()}
	c.Diff = c.B - c.A
	// The groups of sb are sa's: its items are in sa's order.
	pa, pb := sa.prepare(), sb.prepare()
	rng := b.rng(name)
	n := b.ResampleCount()
	diffs := make([]float64, 0, n)
	counts, scratch := make([]float64, len(sa.Items)), make([]float64, 2*len(sa.Items))
	for range n {
		resample(rng, pa.groups, counts)
		va, vb := sa.value(pa, counts, scratch), sb.value(pb, counts, scratch)
		if !math.IsNaN(va) && !math.IsNaN(vb) {
			diffs = append(diffs, 100*(vb-va))
		}
	}
	if len(diffs) < n/2 {
		return Comparison{}, false
	}
	c.Lo, c.Hi = percentile(diffs, 0.025), percentile(diffs, 0.975)
	switch {
	case c.Lo > 0:
		c.Verdict = VerdictBetter
	case c.Hi < 0:
		c.Verdict = VerdictWorse
	default:
		c.Verdict = VerdictNoise
	}
	return c, true
}
