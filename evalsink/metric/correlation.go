package metric

import (
	"math"
	"slices"
)

// Pearson is Pearson's correlation coefficient r of x and y (same length),
// computed in two passes in float64. It is 0, not NaN, where r is
// undefined: fewer than two pairs, or either side constant (zero
// variance), as when a model gives every pair the same score: such a
// model ranks nothing, and 0 is what "no linear relation" reads as.
func Pearson(x, y []float64) float64 {
	if len(x) != len(y) {
		panic("metric: Pearson of slices of different lengths")
	}
	n := len(x)
	if n < 2 {
		return 0
	}
	var mx, my float64
	for i := range x {
		mx += x[i]
		my += y[i]
	}
	mx /= float64(n)
	my /= float64(n)
	var sxy, sxx, syy float64
	for i := range x {
		dx, dy := x[i]-mx, y[i]-my
		sxy += dx * dy
		sxx += dx * dx
		syy += dy * dy
	}
	if sxx == 0 || syy == 0 {
		return 0
	}
	r := sxy / (math.Sqrt(sxx) * math.Sqrt(syy))
	return max(-1, min(1, r))
}

// Spearman is Spearman's rank correlation ρ of x and y: Pearson's r of
// their ranks, tied values sharing the average of their ranks (as
// scipy.stats.spearmanr). 0 where undefined, as Pearson.
func Spearman(x, y []float64) float64 {
	return Pearson(Ranks(x), Ranks(y))
}

// Ranks returns the rank of each value of x, from 1, ties given the
// average of the ranks they span. NaN sorts last.
func Ranks(x []float64) []float64 {
	idx := make([]int, len(x))
	for i := range idx {
		idx[i] = i
	}
	slices.SortStableFunc(idx, func(a, b int) int { return compareFloat(x[a], x[b]) })
	r := make([]float64, len(x))
	for i := 0; i < len(idx); {
		j := i + 1
		for j < len(idx) && compareFloat(x[idx[i]], x[idx[j]]) == 0 {
			j++
		}
		avg := float64(i+j+1) / 2 // ranks i+1 .. j
		for k := i; k < j; k++ {
			r[idx[k]] = avg
		}
		i = j
	}
	return r
}

func compareFloat(a, b float64) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	case a == b:
		return 0
	case math.IsNaN(a) && math.IsNaN(b):
		return 0
	case math.IsNaN(a):
		return 1
	}
	return -1
}

// Cosine is the cosine similarity of a and b in float64; 0 when either is
// the zero vector (or empty), so that an empty text or one of unknown
// words scores 0 against everything rather than NaN.
func Cosine(a, b []float32) float64 {
	if len(a) != len(b) {
		panic("metric: Cosine of vectors of different lengths")
	}
	var ab, aa, bb float64
	for i := range a {
		x, y := float64(a[i]), float64(b[i])
		ab += x * y
		aa += x * x
		bb += y * y
	}
	if aa == 0 || bb == 0 {
		return 0
	}
	return max(-1, min(1, ab/(math.Sqrt(aa)*math.Sqrt(bb))))
}

// Angular maps a cosine to the 0-5 scale of the STS gold scores as Yang et
// al. (2018, Eq. 2) do: 5(1 − arccos(cos)/π). cos 1 gives 5, 0 gives 2.5,
// −1 gives 0; cosines outside [−1, 1] (rounding) are clamped.
func Angular(cos float64) float64 {
	return 5 * (1 - math.Acos(max(-1, min(1, cos)))/math.Pi)
}
