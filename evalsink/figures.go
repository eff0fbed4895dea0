package evalsink

import (
	"context"
	"fmt"
	"math"
	"runtime"
	"sync"

	"github.com/parastream/parastream/evalsink/metric"
)

// RowFigures is a result row with the figures it reports.
type RowFigures struct {
	Row     Result
	Figures []metric.Figure
}

// column returns the field of r that holds the figure column names.
func (r *Result) column(name string) (**float64, error) {
	c, err := figureColumn(name)
	if err != nil {
		return nil, err
	}
	return c.Figure(r), nil
}

// figureName names a figure for its generator: the row's key but the
// evaluation, and the column.
func figureName(r Result, column string) string {
	return r.Corpus + "\x00" + r.Split + "\x00" + r.Dataset + "\x00" + r.Kind + "\x00" + column
}

// withIntervals returns the rows with each figure's bootstrap interval set
// (CILow, CIHigh, ×100), computed on every core. A figure's column must
// hold the figure's value (×100) already, or be NULL (then it is set): a
// figure computed two ways that disagree is an error.
func withIntervals(rfs []RowFigures, b metric.Bootstrap) ([]Result, error) {
	type job struct{ row, fig int }
	type interval struct {
		lo, hi float64
		ok     bool
	}
	rows := make([]Result, len(rfs))
	var jobs []job
	for i, rf := range rfs {
		r := rf.Row
		for fi := range rf.Figures {
			f := &rf.Figures[fi]
			p, err := r.column(f.Column)
			if err != nil {
				return nil, err
			}
			v := 100 * f.Value()
			if *p == nil {
				*p = ptr(v)
			} else if math.Abs(**p-v) > 1e-6*max(1, math.Abs(v)) {
				return nil, fmt.Errorf("evalsink: %s %s %s: %s is %g, its items give %g", r.Corpus, r.Dataset, r.Kind, f.Column, **p, v)
			}
			jobs = append(jobs, job{i, fi})
		}
		rows[i] = r
	}
	out := make([]interval, len(jobs))
	parallelAll(len(jobs), func(j int) {
		jb := jobs[j]
		f := &rfs[jb.row].Figures[jb.fig]
		lo, hi, ok := b.Interval(figureName(rows[jb.row], f.Column), f)
		out[j] = interval{lo, hi, ok}
	})
	for j, jb := range jobs {
		if !out[j].ok {
			continue
		}
		r := &rows[jb.row]
		if r.CILow == nil {
			r.CILow, r.CIHigh = map[string]float64{}, map[string]float64{}
		}
		col := rfs[jb.row].Figures[jb.fig].Column
		r.CILow[col], r.CIHigh[col] = 100*out[j].lo, 100*out[j].hi
	}
	return rows, nil
}

// parallelAll calls f(i) for every i in [0, n), on every core.
func parallelAll(n int, f func(i int)) {
	_ = parallel(context.Background(), n, runtime.GOMAXPROCS(0), func(i int) error { f(i); return nil })
}

// parallel runs f(0) .. f(n-1) on up to workers goroutines and returns the
// first error (by index); each f writes only its own results, so the
// outcome does not depend on the order they run in.
func parallel(ctx context.Context, n, workers int, f func(i int) error) error {
	errs := make([]error, n)
	next := make(chan int)
	var wg sync.WaitGroup
	for range max(1, min(workers, n)) {
		wg.Go(func() {
			for i := range next {
				if err := ctx.Err(); err != nil {
					errs[i] = err
					continue
				}
				errs[i] = f(i)
			}
		})
	}
	for i := range n {
		next <- i
	}
	close(next)
	wg.Wait()
	for _, err := range errs {
		if err != nil {
			return err
		}
	}
	return nil
}
