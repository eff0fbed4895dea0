package evalsink

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"

	"github.com/parquet-go/parquet-go"

	"github.com/parastream/parastream/internal/atomicfile"
)

// PredictionsDir is the directory of the predictions parts under a
// results directory: one part per evaluation, holding the items of every
// figure it reported, so that figures can be compared item by item later
// (Evaluator.Compare, eval watch).
const PredictionsDir = "predictions"

// Prediction is one item of one figure of an evaluation: a row of a
// predictions part.
type Prediction struct {
	EvalID   string  `parquet:"eval_id,dict"`
	Corpus   string  `parquet:"corpus,dict"`
	Split    string  `parquet:"split,dict"`
	Dataset  string  `parquet:"dataset,dict"`
	Kind     string  `parquet:"kind,dict"`
	Column   string  `parquet:"column,dict"`
	Metric   string  `parquet:"metric,dict"`
	Weighted bool    `parquet:"weighted"`
	Group    string  `parquet:"group,dict"`
	Item     string  `parquet:"item"`
	Pred     float64 `parquet:"pred"`
	Gold     float64 `parquet:"gold"`
}

// predictionsPath is the part holding an evaluation's predictions.
func predictionsPath(out, evalID string) string {
	return filepath.Join(out, PredictionsDir, "part-"+evalID+".parquet")
}

// figureKey identifies a figure within an evaluation.
type figureKey struct{ corpus, split, dataset, kind, column string }

// writePredictions writes the items of every figure of one evaluation,
// atomically.
func writePredictions(out, evalID string, rfs []RowFigures) error {
	var rows []Prediction
	for _, rf := range rfs {
		r := rf.Row
		for _, f := range rf.Figures {
			for _, it := range f.Items {
				rows = append(rows, Prediction{EvalID: evalID, Corpus: r.Corpus, Split: r.Split, Dataset: r.Dataset, Kind: r.Kind,
					Column: f.Column, Metric: f.Metric, Weighted: f.Weighted, Group: it.Group, Item: it.ID, Pred: it.Pred, Gold: it.Gold})
			}
		}
	}
	path := predictionsPath(out, evalID)
	f, err := atomicfile.Create(path)
	if err != nil {
		return fmt.Errorf("writing predictions: %w", err)
	}
	defer f.Abort()
	w := parquet.NewGenericWriter[Prediction](f, parquet.Compression(&parquet.Zstd))
	if _, err := w.Write(rows); err != nil {
		return fmt.Errorf("writing predictions %s: %w", path, err)
	}
	if err := w.Close(); err != nil {
		return fmt.Errorf("writing predictions %s: %w", path, err)
	}
	if err := f.Commit(); err != nil {
		return fmt.Errorf("writing predictions %s: %w", path, err)
	}
	return nil
}

// readFigures reads an evaluation's predictions back into its figures,
// in the order they were written.
func readFigures(out, evalID string) ([]figureKey, map[figureKey]*Figure, error) {
	path := predictionsPath(out, evalID)
	f, err := os.Open(path)
	if err != nil {
		return nil, nil, fmt.Errorf("reading predictions: %w", err)
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return nil, nil, err
	}
	pf, err := parquet.OpenFile(f, st.Size())
	if err != nil {
		return nil, nil, fmt.Errorf("reading predictions %s: %w", path, err)
	}
	r := parquet.NewGenericReader[Prediction](pf)
	defer r.Close()
	rows := make([]Prediction, pf.NumRows())
	n, err := r.Read(rows)
	if err != nil && !errors.Is(err, io.EOF) {
		return nil, nil, fmt.Errorf("reading predictions %s: %w", path, err)
	}
	if int64(n) != pf.NumRows() {
		return nil, nil, fmt.Errorf("reading predictions %s: %d of %d rows", path, n, pf.NumRows())
	}
	var order []figureKey
	figs := map[figureKey]*Figure{}
	for _, p := range rows {
		k := figureKey{p.Corpus, p.Split, p.Dataset, p.Kind, p.Column}
		fig := figs[k]
		if fig == nil {
			fig = &Figure{Column: p.Column, Metric: p.Metric, Weighted: p.Weighted}
			figs[k] = fig
			order = append(order, k)
		}
		fig.Items = append(fig.Items, Item{ID: p.Item, Group: p.Group, Pred: p.Pred, Gold: p.Gold})
	}
	return order, figs, nil
}

// ComparePredictions compares, figure by figure, evaluation b with
// evaluation a of the results directory out by paired bootstrap: every
// figure both report, in a's order. Figures sharing fewer than two items
// are left out.
func ComparePredictions(out, a, b string, boot Bootstrap) ([]Comparison, error) {
	order, fa, err := readFigures(out, a)
	if err != nil {
		return nil, err
	}
	_, fb, err := readFigures(out, b)
	if err != nil {
		return nil, err
	}
	var cs []Comparison
	for _, k := range order {
		other, ok := fb[k]
		if !ok {
			continue
		}
		c, ok := boot.Paired(figureName(Result{Corpus: k.corpus, Split: k.split, Dataset: k.dataset, Kind: k.kind}, k.column), fa[k], other)
		if !ok {
			continue
		}
		c.Corpus, c.Split, c.Dataset, c.Kind = k.corpus, k.split, k.dataset, k.kind
		cs = append(cs, c)
	}
	return cs, nil
}
