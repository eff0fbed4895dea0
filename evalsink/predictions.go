package evalsink

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"

	"github.com/parquet-go/parquet-go"

	"github.com/parastream/parastream/evalsink/metric"
	"github.com/parastream/parastream/internal/atomicfile"
)

// PredictionsDir is the directory of the predictions parts under a
// results directory: one part per evaluation, holding the items of every
// figure it reported, so that figures can be compared item by item later
// (CompareEvaluations: eval compare, eval watch).
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

// evalOptions are the options of an evaluation that change its figures,
// beside the checkpoint, kept in its predictions part's footer (key
// optionsKey) so that eval watch compares a checkpoint only with
// evaluations made alike.
type evalOptions struct {
	DataHash   string `json:"data_hash"`
	Scale      string `json:"scale"`
	Candidates int    `json:"candidates"`
	Seed       uint64 `json:"seed"`
	Adaptation string `json:"adaptation"`
}

const optionsKey = "parastream.eval.options"

// writePredictions writes the items of every figure of one evaluation,
// with its options, atomically.
func writePredictions(out, evalID string, rfs []RowFigures, opts evalOptions) error {
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
	meta, err := json.Marshal(opts)
	if err != nil {
		return fmt.Errorf("writing predictions: %w", err)
	}
	w := parquet.NewGenericWriter[Prediction](f, parquet.Compression(&parquet.Zstd), parquet.KeyValueMetadata(optionsKey, string(meta)))
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

// readOptions reads the options of an evaluation from its predictions
// part; ok is false when it has none (no predictions, or written before
// they were kept).
func readOptions(out, evalID string) (opts evalOptions, ok bool, err error) {
	path := predictionsPath(out, evalID)
	f, err := os.Open(path)
	if errors.Is(err, os.ErrNotExist) {
		return opts, false, nil
	} else if err != nil {
		return opts, false, fmt.Errorf("reading predictions: %w", err)
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return opts, false, fmt.Errorf("reading predictions: %w", err)
	}
	pf, err := parquet.OpenFile(f, st.Size(), parquet.SkipPageIndex(true), parquet.SkipBloomFilters(true))
	if err != nil {
		return opts, false, fmt.Errorf("reading predictions %s: %w", path, err)
	}
	meta, found := pf.Lookup(optionsKey)
	if !found {
		return opts, false, nil
	}
	if err := json.Unmarshal([]byte(meta), &opts); err != nil {
		return opts, false, fmt.Errorf("reading predictions %s: %s: %w", path, optionsKey, err)
	}
	return opts, true, nil
}

// readFigures reads an evaluation's predictions back into its figures,
// in the order they were written.
func readFigures(out, evalID string) ([]figureKey, map[figureKey]*metric.Figure, error) {
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
	figs := map[figureKey]*metric.Figure{}
	for _, p := range rows {
		k := figureKey{p.Corpus, p.Split, p.Dataset, p.Kind, p.Column}
		fig := figs[k]
		if fig == nil {
			fig = &metric.Figure{Column: p.Column, Metric: p.Metric, Weighted: p.Weighted}
			figs[k] = fig
			order = append(order, k)
		}
		fig.Items = append(fig.Items, metric.Item{ID: p.Item, Group: p.Group, Pred: p.Pred, Gold: p.Gold})
	}
	return order, figs, nil
}

// ComparePredictions compares, figure by figure, evaluation b with
// evaluation a of the results directory out by paired bootstrap: every
// figure both report, in a's order, computed on every core. Figures
// sharing fewer than two items are left out.
func ComparePredictions(out, a, b string, boot metric.Bootstrap) ([]metric.Comparison, error) {
	order, fa, err := readFigures(out, a)
	if err != nil {
		return nil, err
	}
	_, fb, err := readFigures(out, b)
	if err != nil {
		return nil, err
	}
	var keys []figureKey
	for _, k := range order {
		if _, ok := fb[k]; ok {
			keys = append(keys, k)
		}
	}
	type paired struct {
		c  metric.Comparison
		ok bool
	}
	res := make([]paired, len(keys))
	parallelAll(len(keys), func(i int) {
		k := keys[i]
		c, ok := boot.Paired(figureName(Result{Corpus: k.corpus, Split: k.split, Dataset: k.dataset, Kind: k.kind}, k.column), fa[k], fb[k])
		c.Corpus, c.Split, c.Dataset, c.Kind = k.corpus, k.split, k.dataset, k.kind
		res[i] = paired{c, ok}
	})
	var cs []metric.Comparison
	for _, p := range res {
		if p.ok {
			cs = append(cs, p.c)
		}
	}
	return cs, nil
}
