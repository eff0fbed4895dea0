package evalsink

import (
	"fmt"
	"slices"
	"strconv"
	"time"
)

// Column is one column of the result tables: a field of Result, named,
// typed and labelled once for every sink and view. The Parquet schema is
// Result's struct tags (Name is the field's tag name); the CSV, the SQL
// table, the report, the figures' bootstrap and compare read Columns. A
// new metric is a Result field and one entry in Columns (see
// docs/architecture.md, "Add a metric").
type Column struct {
	// Name is the column's name in Parquet, the CSV and SQL ("pearson").
	Name string
	// Version is the ResultSchemaVersion that added the column: the SQL
	// sink adds the columns of versions above 1 to a table created
	// before them.
	Version int
	// Label names a figure column in the report and in comparisons
	// ("Pearson's r", "P@1"); Symbol is its short name in a report line
	// whose table names the figures' family ("r"; "" for Label). Empty
	// for the other columns.
	Label, Symbol string
	// Kinds are the kinds of row that carry a figure column; the report
	// shows the figure in the tables of those kinds.
	Kinds []string
	// Items says whether a figure is computed from items (a
	// metric.Figure): it gets a bootstrap interval and eval compare
	// compares it.
	Items bool
	// field returns a pointer to the column's field of r: *string,
	// *int64, **float64 (a figure: NULL when nil), *map[string]float64
	// (an interval) or *time.Time.
	field func(r *Result) any
}

// similarityKinds are the kinds of row of the similarity tables.
func similarityKinds() []string {
	return []string{KindDataset, KindMean, KindWeightedMean, KindPooled, KindAverage}
}

// Columns returns the result tables' columns in the order of Result's
// fields: the order of the Parquet schema, the CSV and the SQL table.
func Columns() []Column {
	retrieval := []string{KindRetrieval, KindRetrievalChance}
	ranking := []string{KindRanking, KindRankingChance}
	correlation := append(similarityKinds(), KindWordContext)
	generation := []string{KindGeneration}
	return []Column{
		{Name: "eval_id", Version: 1, field: func(r *Result) any { return &r.EvalID }},
		{Name: "run", Version: 1, field: func(r *Result) any { return &r.Run }},
		{Name: "model", Version: 1, field: func(r *Result) any { return &r.Model }},
		{Name: "step", Version: 1, field: func(r *Result) any { return &r.Step }},
		{Name: "epoch", Version: 1, field: func(r *Result) any { return &r.Epoch }},
		{Name: "checkpoint", Version: 1, field: func(r *Result) any { return &r.Checkpoint }},
		{Name: "checkpoint_id", Version: 1, field: func(r *Result) any { return &r.CheckpointID }},
		{Name: "corpus", Version: 1, field: func(r *Result) any { return &r.Corpus }},
		{Name: "split", Version: 1, field: func(r *Result) any { return &r.Split }},
		{Name: "dataset", Version: 1, field: func(r *Result) any { return &r.Dataset }},
		{Name: "year", Version: 1, field: func(r *Result) any { return &r.Year }},
		{Name: "kind", Version: 1, field: func(r *Result) any { return &r.Kind }},
		{Name: "pairs", Version: 1, field: func(r *Result) any { return &r.Pairs }},
		{Name: "pearson", Version: 1, Label: "Pearson's r", Symbol: "r", Kinds: correlation, Items: true, field: func(r *Result) any { return &r.Pearson }},
		{Name: "spearman", Version: 1, Label: "Spearman's ρ", Symbol: "ρ", Kinds: correlation, Items: true, field: func(r *Result) any { return &r.Spearman }},
		{Name: "p_at_1", Version: 1, Label: "P@1", Kinds: retrieval, Items: true, field: func(r *Result) any { return &r.PAt1 }},
		{Name: "p_at_3", Version: 1, Label: "P@3", Kinds: retrieval, Items: true, field: func(r *Result) any { return &r.PAt3 }},
		{Name: "p_at_10", Version: 1, Label: "P@10", Kinds: retrieval, Items: true, field: func(r *Result) any { return &r.PAt10 }},
		{Name: "mrr", Version: 1, Label: "MRR", Kinds: slices.Concat(retrieval, ranking), Items: true, field: func(r *Result) any { return &r.MRR }},
		{Name: "map", Version: 1, Label: "MAP", Kinds: ranking, Items: true, field: func(r *Result) any { return &r.MAP }},
		{Name: "bleu_1", Version: 2, Label: "BLEU-1", Kinds: generation, field: func(r *Result) any { return &r.BLEU1 }},
		{Name: "bleu_2", Version: 2, Label: "BLEU-2", Kinds: generation, field: func(r *Result) any { return &r.BLEU2 }},
		{Name: "bleu_3", Version: 2, Label: "BLEU-3", Kinds: generation, field: func(r *Result) any { return &r.BLEU3 }},
		{Name: "bleu_4", Version: 2, Label: "BLEU-4", Kinds: generation, field: func(r *Result) any { return &r.BLEU4 }},
		{Name: "meteor", Version: 2, Label: "METEOR", Kinds: generation, field: func(r *Result) any { return &r.METEOR }},
		{Name: "ter", Version: 2, Label: "TER", Kinds: generation, field: func(r *Result) any { return &r.TER }},
		{Name: "accuracy", Version: 3, Label: "accuracy", Kinds: []string{KindClassification, KindClassificationHead}, Items: true, field: func(r *Result) any { return &r.Accuracy }},
		{Name: "f1", Version: 3, Label: "F1", Kinds: []string{KindClassification}, Items: true, field: func(r *Result) any { return &r.F1 }},
		{Name: "ci_low", Version: 3, field: func(r *Result) any { return &r.CILow }},
		{Name: "ci_high", Version: 3, field: func(r *Result) any { return &r.CIHigh }},
		{Name: "candidates", Version: 1, field: func(r *Result) any { return &r.Candidates }},
		{Name: "scale", Version: 1, field: func(r *Result) any { return &r.Scale }},
		{Name: "adaptation", Version: 3, field: func(r *Result) any { return &r.Adaptation }},
		{Name: "evaluated_at", Version: 1, field: func(r *Result) any { return &r.EvaluatedAt }},
		{Name: "versions", Version: 1, field: func(r *Result) any { return &r.Versions }},
		{Name: "data_hash", Version: 1, field: func(r *Result) any { return &r.DataHash }},
		{Name: "model_hash", Version: 1, field: func(r *Result) any { return &r.ModelHash }},
	}
}

// IsFigure says whether c is a figure column (×100, NULL for a kind
// without it).
func (c Column) IsFigure() bool {
	_, ok := c.field(&Result{}).(**float64)
	return ok
}

// Figure returns the field of r that holds figure column c.
func (c Column) Figure(r *Result) **float64 {
	p, ok := c.field(r).(**float64)
	if !ok {
		panic("evalsink: column " + c.Name + " is not a figure")
	}
	return p
}

// Carries says whether rows of kind carry figure column c.
func (c Column) Carries(kind string) bool { return slices.Contains(c.Kinds, kind) }

// columnType is how each sink writes a column of one Go type: its SQL
// and DuckDB types, its CSV cell and its SQL argument (of a pointer to the
// field).
type columnType struct {
	sql, duckdb string
	text        func(p any) string
	value       func(p any) any
}

// typ returns the columnType of c's field.
func (c Column) typ() columnType {
	switch c.field(&Result{}).(type) {
	case *string:
		t := columnType{sql: "text NOT NULL", duckdb: "VARCHAR",
			text: func(p any) string { return *p.(*string) }, value: func(p any) any { return *p.(*string) }}
		if c.Version > 1 {
			t.sql += " DEFAULT ''" // for the rows before the column
		}
		return t
	case *int64:
		return columnType{sql: "bigint NOT NULL", duckdb: "BIGINT",
			text: func(p any) string { return strconv.FormatInt(*p.(*int64), 10) }, value: func(p any) any { return *p.(*int64) }}
	case **float64:
		return columnType{sql: "double precision", duckdb: "DOUBLE",
			text: func(p any) string {
				if v := *p.(**float64); v != nil {
					return strconv.FormatFloat(*v, 'g', -1, 64)
				}
				return ""
			},
			value: func(p any) any { return *p.(**float64) }}
	case *map[string]float64:
		return columnType{sql: "jsonb", duckdb: "MAP(VARCHAR, DOUBLE)",
			text: func(p any) string { return intervalJSON(*p.(*map[string]float64)) }, value: func(p any) any { return sqlInterval(*p.(*map[string]float64)) }}
	case *time.Time:
		return columnType{sql: "timestamptz NOT NULL", duckdb: "TIMESTAMP WITH TIME ZONE",
			text: func(p any) string { return p.(*time.Time).UTC().Format(time.RFC3339Nano) }, value: func(p any) any { return *p.(*time.Time) }}
	}
	panic("evalsink: column " + c.Name + " of a type no sink writes")
}

// Text is the column's value in r as the CSV writes it: a NULL figure and
// an empty interval are empty, a time is UTC RFC 3339 with nanoseconds.
func (c Column) Text(r *Result) string { return c.typ().text(c.field(r)) }

// Value is the column's value in r as the SQL sink inserts it.
func (c Column) Value(r *Result) any { return c.typ().value(c.field(r)) }

// SQLType is the column's type and constraints in the SQL table. A text
// column added after version 1 defaults to "" for the rows before it.
func (c Column) SQLType() string { return c.typ().sql }

// DuckDBType is the column's type as DuckDB reads the Parquet parts (the
// type docs/evalsink.md gives).
func (c Column) DuckDBType() string { return c.typ().duckdb }

// figureColumn returns the figure column named name.
func figureColumn(name string) (Column, error) {
	for _, c := range Columns() {
		if c.Name == name && c.IsFigure() {
			return c, nil
		}
	}
	return Column{}, fmt.Errorf("evalsink: no figure column %q", name)
}

// figureColumns returns the names of the figure columns computed from
// items: those with intervals, which compare compares.
func figureColumns() []string {
	var names []string
	for _, c := range Columns() {
		if c.Items {
			names = append(names, c.Name)
		}
	}
	return names
}

// columnName is how the report and comparisons name a figure column: its
// Label (the name itself for a column without one).
func columnName(col string) string {
	if c, err := figureColumn(col); err == nil && c.Label != "" {
		return c.Label
	}
	return col
}
