package metric

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"math"
	"slices"
	"sync"

	"gonum.org/v1/gonum/floats"
	"gonum.org/v1/gonum/optimize"
)

// The classification tasks train an L2-regularised logistic regression on
// frozen sentence embeddings, as SentEval does with scikit-learn's
// LogisticRegression(C=c, penalty="l2", solver="lbfgs", fit_intercept=True).
// FitLogReg minimises the same objective:
//
//	C Σ_i loss_i + ½ ‖W‖²       (the intercepts are not penalised)
//
// where, with two classes, W is one weight vector and loss_i the logistic
// loss log(1 + exp(−s_i z_i)) of z_i = w·x_i + b and s_i = ±1 (class 1
// against class 0: scikit-learn's binary case); with three classes or more,
// W holds one weight vector per class and loss_i is the multinomial
// (softmax) loss −log p(y_i | x_i), as scikit-learn's lbfgs fits them
// (multi_class "auto" is "multinomial" for lbfgs with 3+ classes). The
// minimiser does not depend on the scaling: scikit-learn 1.2's lbfgs
// minimises the objective divided by C (Σ loss + ‖W‖²/(2C)), with its tol
// on that sum's gradient; FitLogReg divides by C·n (the mean loss plus
// ‖W‖²/(2Cn)), so that one tolerance suits sets of any size.

// Defaults of LogRegConfig.
const (
	// DefaultLogRegTol is the gradient tolerance: the largest component of
	// the per-item objective's gradient at the solution. (scikit-learn
	// 1.2's tol, 1e-4 by default, bounds the gradient of the sum, n times
	// larger; its L-BFGS-B usually stops first on a relative change of the
	// objective below scipy's default 2.2e-9, leaving a per-item
	// gradient of 5e-7 to 5e-5 in the tests.)
	DefaultLogRegTol = 1e-7
	// DefaultLogRegMaxIter bounds the L-BFGS iterations of one fit.
	DefaultLogRegMaxIter = 10000
	// logRegBlock is the rows of one block of the loss: the unit of the
	// parallel sum, whose partial sums are added in block order whatever
	// the number of workers (the same figures on any machine).
	logRegBlock = 1024
)

// Features is a dense row-major matrix of float64 features: Rows items of
// Cols features each (Data[i*Cols+j] is item i's feature j).
type Features struct {
	Rows, Cols int
	Data       []float64
}

// NewFeatures returns a zero matrix of rows items of cols features.
func NewFeatures(rows, cols int) Features {
	return Features{Rows: rows, Cols: cols, Data: make([]float64, rows*cols)}
}

// Row is item i's features (a view).
func (f Features) Row(i int) []float64 { return f.Data[i*f.Cols : (i+1)*f.Cols] }

// Subset returns a copy of the rows at idx, in that order.
func (f Features) Subset(idx []int) Features {
	out := NewFeatures(len(idx), f.Cols)
	for k, i := range idx {
		copy(out.Row(k), f.Row(i))
	}
	return out
}

// LogRegConfig configures FitLogReg.
type LogRegConfig struct {
	// C is the inverse of the penalty's strength, as scikit-learn's C.
	// Required, > 0.
	C float64
	// Tol is the gradient tolerance (see DefaultLogRegTol); 0 means the
	// default.
	Tol float64
	// MaxIter bounds the L-BFGS iterations; 0 means DefaultLogRegMaxIter.
	// A fit that reaches it keeps its last point and says so (Converged
	// false), as scikit-learn does.
	MaxIter int
	// Workers is the goroutines computing the loss (0 or 1: the calling
	// goroutine alone). Any number gives the same model, bit for bit.
	Workers int
	// Warm is a model to start from (a fit with another C on the same
	// data: a warm start along a C grid); nil starts from zero.
	Warm *LogReg
}

// LogReg is a fitted logistic regression.
type LogReg struct {
	// Classes is the number of classes, 0..Classes-1.
	Classes int
	// Coef holds the weights: one row for two classes (class 1 against
	// class 0, scikit-learn's coef_ of shape (1, d)), one row per class
	// otherwise; Intercept the intercepts likewise.
	Coef      [][]float64
	Intercept []float64
	// Objective is the minimised objective divided by C·n: the mean loss
	// plus ‖W‖²/(2Cn). GradNorm is the largest component of its gradient
	// at the solution, Iterations the L-BFGS iterations taken, Converged
	// false when MaxIter stopped the fit.
	Objective  float64
	GradNorm   float64
	Iterations int
	Converged  bool
}

// ErrLogRegData is returned for training data FitLogReg cannot use.
var ErrLogRegData = errors.New("evalsink: logistic regression: bad training data")

// FitLogReg fits an L2-regularised logistic regression of the labels y (in
// 0..classes-1, classes ≥ 2) on the features x, with L-BFGS (gonum's, More
// and Thuente's line search). Deterministic: the same data and
// configuration give the same model on any machine and any Workers. Every
// class should occur in y: a class without items drives its unpenalised
// intercept towards −∞ (the fit then stops at MaxIter).
func FitLogReg(ctx context.Context, x Features, y []int, classes int, cfg LogRegConfig) (*LogReg, error) {
	switch {
	case classes < 2:
		return nil, fmt.Errorf("%w: %d classes, want 2 or more", ErrLogRegData, classes)
	case x.Rows == 0 || x.Rows != len(y) || len(x.Data) != x.Rows*x.Cols:
		return nil, fmt.Errorf("%w: %d labels for %d rows of %d features (%d values)", ErrLogRegData, len(y), x.Rows, x.Cols, len(x.Data))
	case !(cfg.C > 0) || math.IsInf(cfg.C, 1):
		return nil, fmt.Errorf("%w: C %g, want a positive number", ErrLogRegData, cfg.C)
	}
	for i, c := range y {
		if c < 0 || c >= classes {
			return nil, fmt.Errorf("%w: label %d of item %d is not in 0..%d", ErrLogRegData, c, i, classes-1)
		}
	}
	l := newLogLoss(x, y, classes, cfg)
	init := make([]float64, l.params())
	if w := cfg.Warm; w != nil {
		if w.Classes != classes || len(w.Coef) != l.k || len(w.Coef[0]) != x.Cols {
			return nil, fmt.Errorf("%w: a warm start of %d classes for %d classes of %d features", ErrLogRegData, w.Classes, classes, x.Cols)
		}
		for k := range l.k {
			copy(init[k*x.Cols:], w.Coef[k])
			init[l.k*x.Cols+k] = w.Intercept[k]
		}
	}
	tol := cmp.Or(cfg.Tol, DefaultLogRegTol)
	maxIter := cmp.Or(cfg.MaxIter, DefaultLogRegMaxIter)
	p := optimize.Problem{
		Func: l.fn,
		Grad: l.grad,
		Status: func() (optimize.Status, error) {
			if err := ctx.Err(); err != nil {
				return optimize.Failure, err
			}
			return optimize.NotTerminated, nil
		},
	}
	settings := &optimize.Settings{
		GradientThreshold: tol,
		MajorIterations:   maxIter,
		// No stop on a stalled objective: the gradient decides (a flat
		// objective near the optimum moves less than its rounding).
		Converger: optimize.NeverTerminate{},
	}
	res, err := optimize.Minimize(p, init, settings, &optimize.LBFGS{Linesearcher: &optimize.MoreThuente{}, GradStopThreshold: math.NaN()})
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	if res == nil {
		return nil, fmt.Errorf("fitting logistic regression: %w", err)
	}
	w := res.Location.X
	g := make([]float64, len(w))
	f := l.eval(g, w)
	m := &LogReg{Classes: classes, Objective: f, GradNorm: floats.Norm(g, math.Inf(1)), Iterations: res.Stats.MajorIterations}
	m.Converged = m.GradNorm <= tol
	if err != nil && !m.Converged {
		// The line search cannot lower the objective any more: at the
		// limit of float64 precision, accepted near the optimum (within
		// scikit-learn's own default tolerance).
		if !errors.Is(err, optimize.ErrLinesearcherFailure) && !errors.Is(err, optimize.ErrNoProgress) || m.GradNorm > 1e-4 {
			return nil, fmt.Errorf("fitting logistic regression (C %g, %d iterations, gradient %.3g): %w", cfg.C, m.Iterations, m.GradNorm, err)
		}
		m.Converged = true
	}
	for k := range l.k {
		m.Coef = append(m.Coef, slices.Clone(w[k*x.Cols:(k+1)*x.Cols]))
		m.Intercept = append(m.Intercept, w[l.k*x.Cols+k])
	}
	return m, nil
}

// Decision returns the model's scores of one item: its z (one value) for
// two classes, one value per class otherwise.
func (m *LogReg) Decision(dst, x []float64) []float64 {
	dst = dst[:0]
	for k, w := range m.Coef {
		dst = append(dst, floats.Dot(w, x)+m.Intercept[k])
	}
	return dst
}

// Predict returns the most probable class of each item of x (ties: the
// lower class; two classes: class 1 when z > 0, as scikit-learn).
func (m *LogReg) Predict(x Features) []int {
	out := make([]int, x.Rows)
	z := make([]float64, 0, len(m.Coef))
	for i := range x.Rows {
		z = m.Decision(z, x.Row(i))
		if len(z) == 1 {
			out[i] = int(b2f(z[0] > 0))
			continue
		}
		best := 0
		for k, v := range z {
			if v > z[best] {
				best = k
			}
		}
		out[i] = best
	}
	return out
}

// logLoss is the objective of one fit and its gradient, over blocks of
// rows. Parameters: k rows of cols weights, then k intercepts (k = 1 for
// two classes).
type logLoss struct {
	x       Features
	y       []int
	k       int
	c       float64
	workers int
	// parts[b] holds block b's gradient sum, losses[b] its loss sum.
	parts  [][]float64
	losses []float64
	// scratch[b] holds block b's scores of one item (k of them).
	scratch [][]float64
	// the last point evaluated, its objective and gradient: Minimize asks
	// for the function and the gradient at one point in two calls.
	lastX, lastG []float64
	lastF        float64
	haveLast     bool
}

func newLogLoss(x Features, y []int, classes int, cfg LogRegConfig) *logLoss {
	k := classes
	if classes == 2 {
		k = 1
	}
	l := &logLoss{x: x, y: y, k: k, c: cfg.C, workers: max(1, cfg.Workers)}
	blocks := (x.Rows + logRegBlock - 1) / logRegBlock
	l.parts = make([][]float64, blocks)
	for b := range l.parts {
		l.parts[b] = make([]float64, l.params())
	}
	l.losses = make([]float64, blocks)
	l.scratch = make([][]float64, blocks)
	for b := range l.scratch {
		l.scratch[b] = make([]float64, k)
	}
	l.lastX, l.lastG = make([]float64, l.params()), make([]float64, l.params())
	return l
}

func (l *logLoss) params() int { return l.k * (l.x.Cols + 1) }

func (l *logLoss) fn(w []float64) float64 {
	if !l.haveLast || !floats.Equal(w, l.lastX) {
		l.lastF = l.eval(l.lastG, w)
		copy(l.lastX, w)
		l.haveLast = true
	}
	return l.lastF
}

func (l *logLoss) grad(g, w []float64) {
	l.fn(w)
	copy(g, l.lastG)
}

// eval sets g to the gradient of the per-item objective at w and returns
// the objective.
func (l *logLoss) eval(g, w []float64) float64 {
	blocks := len(l.parts)
	if l.workers == 1 || blocks == 1 {
		for b := range blocks {
			l.block(b, w)
		}
	} else {
		var wg sync.WaitGroup
		next := make(chan int, blocks)
		for b := range blocks {
			next <- b
		}
		close(next)
		for range min(l.workers, blocks) {
			wg.Go(func() {
				for b := range next {
					l.block(b, w)
				}
			})
		}
		wg.Wait()
	}
	clear(g)
	var loss float64
	for b := range blocks {
		floats.Add(g, l.parts[b])
		loss += l.losses[b]
	}
	n := float64(l.x.Rows)
	weights := w[:l.k*l.x.Cols]
	floats.Scale(1/n, g)
	floats.AddScaled(g[:len(weights)], 1/(l.c*n), weights)
	return loss/n + floats.Dot(weights, weights)/(2*l.c*n)
}

// block sets parts[b] and losses[b] to block b's sums of the gradient of
// the loss (unpenalised, not divided by n) and of the loss.
func (l *logLoss) block(b int, w []float64) {
	g := l.parts[b]
	clear(g)
	d := l.x.Cols
	lo, hi := b*logRegBlock, min((b+1)*logRegBlock, l.x.Rows)
	var loss float64
	if l.k == 1 {
		wv, bias := w[:d], w[d]
		gw := g[:d]
		for i := lo; i < hi; i++ {
			x := l.x.Row(i)
			z := floats.Dot(wv, x) + bias
			// loss log(1+e^z) − y z; its derivative σ(z) − y.
			var r float64
			if l.y[i] == 1 {
				loss += softplus(-z)
				r = -sigmoid(-z)
			} else {
				loss += softplus(z)
				r = sigmoid(z)
			}
			floats.AddScaled(gw, r, x)
			g[d] += r
		}
		l.losses[b] = loss
		return
	}
	k := l.k
	z := l.scratch[b]
	for i := lo; i < hi; i++ {
		x := l.x.Row(i)
		zmax := math.Inf(-1)
		for c := range k {
			z[c] = floats.Dot(w[c*d:(c+1)*d], x) + w[k*d+c]
			zmax = max(zmax, z[c])
		}
		zy := z[l.y[i]] - zmax
		var sum float64
		for c := range k {
			z[c] = math.Exp(z[c] - zmax)
			sum += z[c]
		}
		// loss log Σ e^z − z_y; its derivative p_c − [c = y].
		loss += math.Log(sum) - zy
		for c := range k {
			r := z[c] / sum
			if c == l.y[i] {
				r--
			}
			floats.AddScaled(g[c*d:(c+1)*d], r, x)
			g[k*d+c] += r
		}
	}
	l.losses[b] = loss
}

// softplus is log(1 + e^z) without overflow.
func softplus(z float64) float64 {
	if z > 0 {
		return z + math.Log1p(math.Exp(-z))
	}
	return math.Log1p(math.Exp(z))
}

// sigmoid is 1/(1 + e^−z) without overflow.
func sigmoid(z float64) float64 {
	if z >= 0 {
		return 1 / (1 + math.Exp(-z))
	}
	e := math.Exp(z)
	return e / (1 + e)
}

// b2f is 1 for true, 0 for false.
func b2f(b bool) float64 {
	if b {
		return 1
	}
	return 0
}
