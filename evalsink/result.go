package evalsink

import (
	"cmp"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/parquet-go/parquet-go"

	"github.com/parastream/parastream/internal/atomicfile"
)

// ResultSchemaVersion is the version of the Result schema, in each part's
// footer under the key "parastream.results.schema_version". Version 2
// added the generation columns (bleu_1 to bleu_4, meteor, ter); version 3
// the classification figures (accuracy, f1), the bootstrap intervals
// (ci_low, ci_high) and the adaptation. Parts of earlier versions read
// with the columns they lack NULL or empty.
const ResultSchemaVersion = 3

// PartsDir is the directory of the Parquet parts under a results
// directory.
const PartsDir = "parts"

// Result is one row of the result tables: one figure set of one
// checkpoint on one set or aggregate. Its Parquet schema (DuckDB types in
// docs/evalsink.md) is the table's; Columns describes each field once for
// the CSV, the SQL table, the report, the figures and compare (a field
// without its entry fails a test). Figures are ×100; a figure the kind
// does not have is NULL.
type Result struct {
	// EvalID identifies the evaluation: the checkpoint, the evaluation
	// data and the options (see Key). Rows of one evaluation share it.
	EvalID string `parquet:"eval_id,dict" json:"eval_id"`
	Run    string `parquet:"run,dict" json:"run"`
	Model  string `parquet:"model,dict" json:"model"`
	Step   int64  `parquet:"step" json:"step"`
	Epoch  int64  `parquet:"epoch" json:"epoch"`
	// Checkpoint is the checkpoint directory; CheckpointID the sha256 of
	// its path, step and model.safetensors.
	Checkpoint   string `parquet:"checkpoint,dict" json:"checkpoint"`
	CheckpointID string `parquet:"checkpoint_id,dict" json:"checkpoint_id"`
	Corpus       string `parquet:"corpus,dict" json:"corpus"`
	Split        string `parquet:"split,dict" json:"split"`
	// Dataset is the set ("2014/deft-forum"), the year of a year's
	// aggregate ("2014"), or "all".
	Dataset string `parquet:"dataset,dict" json:"dataset"`
	Year    string `parquet:"year,dict" json:"year"`
	// Kind is one of the Kind constants.
	Kind string `parquet:"kind,dict" json:"kind"`
	// Pairs counts the pairs scored (retrieval: the queries).
	Pairs    int64    `parquet:"pairs" json:"pairs"`
	Pearson  *float64 `parquet:"pearson,optional" json:"pearson"`
	Spearman *float64 `parquet:"spearman,optional" json:"spearman"`
	PAt1     *float64 `parquet:"p_at_1,optional" json:"p_at_1"`
	PAt3     *float64 `parquet:"p_at_3,optional" json:"p_at_3"`
	PAt10    *float64 `parquet:"p_at_10,optional" json:"p_at_10"`
	MRR      *float64 `parquet:"mrr,optional" json:"mrr"`
	MAP      *float64 `parquet:"map,optional" json:"map"`
	// BLEU1 to BLEU4 (corpus BLEU with n-grams up to 1-4), METEOR and
	// TER are the generation figures of a KindGeneration row (see metric.BLEU,
	// METEOR, TER), ×100; NULL for other kinds.
	BLEU1  *float64 `parquet:"bleu_1,optional" json:"bleu_1"`
	BLEU2  *float64 `parquet:"bleu_2,optional" json:"bleu_2"`
	BLEU3  *float64 `parquet:"bleu_3,optional" json:"bleu_3"`
	BLEU4  *float64 `parquet:"bleu_4,optional" json:"bleu_4"`
	METEOR *float64 `parquet:"meteor,optional" json:"meteor"`
	TER    *float64 `parquet:"ter,optional" json:"ter"`
	// Accuracy and F1 are a classification row's figures (F1 of the
	// positive class, binary tasks only), ×100.
	Accuracy *float64 `parquet:"accuracy,optional" json:"accuracy"`
	F1       *float64 `parquet:"f1,optional" json:"f1"`
	// CILow and CIHigh hold the seeded bootstrap 95% interval of each of
	// the row's figures, by the figure's column name ("pearson", "map",
	// "accuracy"), ×100 like the figures. A figure without an interval
	// (a chance row, a generation row) has no key.
	CILow  map[string]float64 `parquet:"ci_low" json:"ci_low,omitempty"`
	CIHigh map[string]float64 `parquet:"ci_high" json:"ci_high,omitempty"`
	// Candidates is the responses each retrieval query ranks; 0 for
	// similarity.
	Candidates int64 `parquet:"candidates" json:"candidates"`
	// Scale is the similarity scale (ScaleCosine, ScaleAngular).
	Scale string `parquet:"scale,dict" json:"scale"`
	// Adaptation names the transformation applied to the frozen sentence
	// embeddings before scoring: "" for none (out of the box), or the
	// adaptation's name (AdaptationLinear). An adapted evaluation is an
	// evaluation of its own (its EvalID covers the adaptation).
	Adaptation  string    `parquet:"adaptation,dict" json:"adaptation"`
	EvaluatedAt time.Time `parquet:"evaluated_at,timestamp(millisecond)" json:"evaluated_at"`
	// Versions is the program's version and its key dependencies'.
	Versions string `parquet:"versions,dict" json:"versions"`
	// DataHash identifies the evaluation data (Sets.DataHash); ModelHash
	// is the sha256 of model.safetensors.
	DataHash  string `parquet:"data_hash,dict" json:"data_hash"`
	ModelHash string `parquet:"model_hash,dict" json:"model_hash"`
}

// Key is a row's unique key in every sink: the evaluation and the figure.
func (r Result) Key() string {
	return strings.Join([]string{r.EvalID, r.Corpus, r.Split, r.Dataset, r.Kind}, "\x00")
}

// partPath is the part holding an evaluation's rows.
func partPath(out, evalID string) string {
	return filepath.Join(out, PartsDir, "part-"+evalID+".parquet")
}

// writePart writes the rows of one evaluation as a part under out,
// atomically (temporary name, synced, renamed, directory synced).
func writePart(out, evalID string, rows []Result) (string, error) {
	path := partPath(out, evalID)
	f, err := atomicfile.Create(path)
	if err != nil {
		return "", fmt.Errorf("writing results part: %w", err)
	}
	defer f.Abort()
	w := parquet.NewGenericWriter[Result](f,
		parquet.Compression(&parquet.Zstd),
		parquet.KeyValueMetadata("parastream.results.schema_version", fmt.Sprint(ResultSchemaVersion)))
	if _, err := w.Write(rows); err != nil {
		return "", fmt.Errorf("writing results part %s: %w", path, err)
	}
	if err := w.Close(); err != nil {
		return "", fmt.Errorf("writing results part %s: %w", path, err)
	}
	if err := f.Commit(); err != nil {
		return "", fmt.Errorf("writing results part %s: %w", path, err)
	}
	return path, nil
}

// readPart reads the rows of one part.
func readPart(path string) ([]Result, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return nil, err
	}
	pf, err := parquet.OpenFile(f, st.Size())
	if err != nil {
		return nil, fmt.Errorf("reading results part %s: %w", path, err)
	}
	r := parquet.NewGenericReader[Result](pf)
	defer r.Close()
	rows := make([]Result, pf.NumRows())
	n, err := r.Read(rows)
	if err != nil && !errors.Is(err, io.EOF) {
		return nil, fmt.Errorf("reading results part %s: %w", path, err)
	}
	if int64(n) != pf.NumRows() {
		return nil, fmt.Errorf("reading results part %s: %d of %d rows", path, n, pf.NumRows())
	}
	for i := range rows {
		rows[i].EvaluatedAt = rows[i].EvaluatedAt.UTC()
	}
	return rows, nil
}

// readParts reads the rows of every part-*.parquet of dir with read, in
// the order of the parts' names (none: no rows).
func readParts[T any](dir string, read func(path string) ([]T, error)) ([]T, error) {
	names, err := filepath.Glob(filepath.Join(dir, "part-*.parquet"))
	if err != nil {
		return nil, err
	}
	slices.Sort(names)
	var all []T
	for _, name := range names {
		rows, err := read(name)
		if err != nil {
			return nil, err
		}
		all = append(all, rows...)
	}
	return all, nil
}

// ReadResults reads every part under the results directory out, in a
// stable order: run, step, then as each evaluation wrote them.
func ReadResults(out string) ([]Result, error) {
	all, err := readParts(filepath.Join(out, PartsDir), readPart)
	if err != nil {
		return nil, err
	}
	slices.SortStableFunc(all, func(a, b Result) int {
		return cmp.Or(cmp.Compare(a.Run, b.Run), cmp.Compare(a.Step, b.Step), a.EvaluatedAt.Compare(b.EvaluatedAt))
	})
	return all, nil
}
