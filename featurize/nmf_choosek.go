package featurize

import (
	"context"
	"fmt"
	"slices"
)

// KError is one point of the curve ChooseK measures: the fit with K
// topics and its relative reconstruction error on the training matrix.
type KError struct {
	K         int
	RelError  float64
	Objective float64
	Iters     int
}

// ChooseK fits one model for each candidate number of topics (cfg.K is
// ignored) and picks k from the curve of training reconstruction error
// against k, as Amiri et al. (2016) set k "using the reconstruction error
// of NMF on training data for different values of k" (they do not state a
// rule). The rule here is the elbow (the "Kneedle" knee): with k and the
// error both scaled to [0,1] over the candidates, the chosen k is the one
// whose error lies farthest below the straight line from the smallest to
// the largest candidate, the point after which more topics buy least. When
// no point lies below that line (a straight or concave curve), or with
// fewer than three candidates, the candidate of least error is chosen; a
// flat curve (every k the same error) gives the smallest candidate.
//
// The curve is returned in increasing k, for printing and saving.
func ChooseK(ctx context.Context, X *CSR, candidates []int, cfg NMFConfig) (best int, curve []KError, err error) {
	ks := slices.Clone(candidates)
	slices.Sort(ks)
	ks = slices.Compact(ks)
	if len(ks) == 0 {
		return 0, nil, fmt.Errorf("choosing k: no candidates; give one or more numbers of topics")
	}
	for _, k := range ks {
		cfg.K = k
		m, res, err := FitNMF(ctx, X, cfg)
		if err != nil {
			return 0, curve, fmt.Errorf("choosing k: fitting k = %d: %w", k, err)
		}
		curve = append(curve, KError{K: k, RelError: res.RelError, Objective: m.Objective, Iters: res.Iters})
	}
	return kneeK(curve), curve, nil
}

// kneeK applies ChooseK's rule to a curve in increasing k.
func kneeK(curve []KError) int {
	lowest := curve[0]
	for _, p := range curve {
		if p.RelError < lowest.RelError {
			lowest = p
		}
	}
	n := len(curve)
	if n < 3 {
		return lowest.K
	}
	first, last := curve[0], curve[n-1]
	top, bottom := first.RelError, first.RelError
	for _, p := range curve {
		top, bottom = max(top, p.RelError), min(bottom, p.RelError)
	}
	if top == bottom {
		return first.K // a flat curve: more topics buy nothing
	}
	scale := func(p KError) (x, y float64) {
		return float64(p.K-first.K) / float64(last.K-first.K), (p.RelError - bottom) / (top - bottom)
	}
	_, y0 := scale(first)
	_, y1 := scale(last)
	best, gap := lowest.K, 0.0
	for _, p := range curve[1 : n-1] {
		x, y := scale(p)
		if d := y0 + (y1-y0)*x - y; d > gap {
			best, gap = p.K, d
		}
	}
	return best
}
