package metric

import (
	"math"
	"math/rand/v2"
	"testing"
)

// randomFigure makes n items of two groups whose Pred follows Gold with
// noise; values are rounded so that ties occur.
func randomFigure(metric string, n int, seed uint64, noise float64) Figure {
	rng := rand.New(rand.NewPCG(seed, 1))
	f := Figure{Column: "x", Metric: metric}
	for i := range n {
		g := rng.Float64() * 5
		p := math.Round((g+noise*rng.NormFloat64())*4) / 4
		it := Item{ID: string(rune('a'+i%26)) + string(rune('0'+i/26%10)) + string(rune('A'+i/260)), Group: []string{"s1", "s2"}[i%2], Pred: p, Gold: math.Round(g)}
		if metric == MetricMean || metric == MetricF1 {
			it.Pred, it.Gold = b2f(p > 2.5), b2f(g > 2.5)
			if metric == MetricMean {
				it.Pred = b2f(it.Pred == it.Gold)
			}
		}
		f.Items = append(f.Items, it)
	}
	return f
}

// explicit computes a figure the plain way over the multiset the counts
// give: each item repeated counts[i] times, per group, then the groups'
// mean.
func explicit(f Figure, counts []float64) float64 {
	byGroup := map[string][2][]float64{}
	var order []string
	n := map[string]float64{}
	for i, it := range f.Items {
		if _, ok := byGroup[it.Group]; !ok {
			order = append(order, it.Group)
		}
		pg := byGroup[it.Group]
		for range int(counts[i]) {
			pg[0], pg[1] = append(pg[0], it.Pred), append(pg[1], it.Gold)
		}
		byGroup[it.Group] = pg
		n[it.Group] += counts[i]
	}
	var sum, w float64
	for _, g := range order {
		pred, gold := byGroup[g][0], byGroup[g][1]
		if len(pred) == 0 {
			continue
		}
		var v float64
		switch f.Metric {
		case MetricPearson:
			v = Pearson(pred, gold)
		case MetricSpearman:
			v = Spearman(pred, gold)
		case MetricMean:
			for _, p := range pred {
				v += p
			}
			v /= float64(len(pred))
		case MetricF1:
			var tp, fp, fn float64
			for i := range pred {
				switch {
				case pred[i] == 1 && gold[i] == 1:
					tp++
				case pred[i] == 1:
					fp++
				case gold[i] == 1:
					fn++
				}
			}
			if tp > 0 {
				v = 2 * tp / (2*tp + fp + fn)
			}
		}
		wt := 1.0
		if f.Weighted {
			wt = n[g]
		}
		sum += wt * v
		w += wt
	}
	return sum / w
}

// TestFigureValueMatchesPlainMetrics checks the linear-time resample
// arithmetic (multiset ranks with ties, weighted sums) against the plain
// metrics over the explicitly repeated items, for every metric, weighted
// and not.
func TestFigureValueMatchesPlainMetrics(t *testing.T) {
	for _, metric := range []string{MetricPearson, MetricSpearman, MetricMean, MetricF1} {
		for _, weighted := range []bool{false, true} {
			f := randomFigure(metric, 301, 7, 1)
			f.Weighted = weighted
			ones := make([]float64, len(f.Items))
			for i := range ones {
				ones[i] = 1
			}
			if got, want := f.Value(), explicit(f, ones); math.Abs(got-want) > 1e-12 {
				t.Errorf("%s weighted=%v: Value %v, plain %v", metric, weighted, got, want)
			}
			p := f.prepare()
			rng := rand.New(rand.NewPCG(3, 4))
			counts := make([]float64, len(f.Items))
			for range 20 {
				resample(rng, p.groups, counts)
				if got, want := f.value(p, counts, nil), explicit(f, counts); math.Abs(got-want) > 1e-12 {
					t.Fatalf("%s weighted=%v: resample value %v, plain %v", metric, weighted, got, want)
				}
			}
		}
	}
}

// TestBootstrapIntervalOfAMean checks the interval of an accuracy against
// the normal approximation p ± 1.96·sqrt(p(1−p)/n), and that it is seeded.
func TestBootstrapIntervalOfAMean(t *testing.T) {
	f := Figure{Column: "accuracy", Metric: MetricMean}
	for i := range 2000 {
		f.Items = append(f.Items, Item{ID: string(rune(i)), Pred: b2f(i%10 < 7)})
	}
	b := Bootstrap{Resamples: 2000, Seed: 1}
	lo, hi, ok := b.Interval("acc", &f)
	if !ok {
		t.Fatal("no interval")
	}
	half := 1.96 * math.Sqrt(0.7*0.3/2000)
	if math.Abs(lo-(0.7-half)) > 0.004 || math.Abs(hi-(0.7+half)) > 0.004 {
		t.Errorf("interval [%.4f, %.4f], normal approximation [%.4f, %.4f]", lo, hi, 0.7-half, 0.7+half)
	}
	lo2, hi2, _ := b.Interval("acc", &f)
	if lo2 != lo || hi2 != hi {
		t.Errorf("same seed, different intervals: [%v, %v] and [%v, %v]", lo, hi, lo2, hi2)
	}
	lo3, hi3, _ := Bootstrap{Resamples: 2000, Seed: 2}.Interval("acc", &f)
	if lo3 == lo && hi3 == hi {
		t.Errorf("another seed gave the same interval")
	}
}

// TestPairedComparison: a figure against itself is within noise with a
// zero difference; a clearly better prediction is better, and the worse
// one worse; items are matched by id whatever their order.
func TestPairedComparison(t *testing.T) {
	good := randomFigure(MetricPearson, 400, 1, 0.3)
	bad := randomFigure(MetricPearson, 400, 1, 3)
	b := Bootstrap{Seed: 5}
	c, ok := b.Paired("p", &good, &good)
	if !ok || c.Verdict != VerdictNoise || c.Diff != 0 || c.Lo != 0 || c.Hi != 0 {
		t.Errorf("self comparison: %+v", c)
	}
	// Reverse bad's items: matching is by group and id.
	for i, j := 0, len(bad.Items)-1; i < j; i, j = i+1, j-1 {
		bad.Items[i], bad.Items[j] = bad.Items[j], bad.Items[i]
	}
	c, ok = b.Paired("p", &bad, &good)
	if !ok || c.Verdict != VerdictBetter || c.Items != 400 || c.Lo <= 0 {
		t.Errorf("good against bad: %+v", c)
	}
	if c.A >= c.B || math.Abs(c.B-100*good.Value()) > 1e-9 {
		t.Errorf("figures: A %v B %v, good %v", c.A, c.B, 100*good.Value())
	}
	c, _ = b.Paired("p", &good, &bad)
	if c.Verdict != VerdictWorse || c.Hi >= 0 {
		t.Errorf("bad against good: %+v", c)
	}
}
