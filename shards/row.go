package shards

import (
	"fmt"
	"maps"
	"slices"
	"unicode/utf8"

	"github.com/parastream/parastream/corpora"
)

// SchemaVersion is the version of the Row schema. It is written into every
// shard's key/value metadata (under MetadataSchemaVersion) and into the
// manifest. It changes when a column is added, removed, renamed or retyped;
// readers refuse shards and manifests from a newer version.
const SchemaVersion = 1

// Key/value metadata written into the footer of every shard.
const (
	// MetadataSchemaVersion holds SchemaVersion in decimal.
	MetadataSchemaVersion = "parastream.schema_version"
	// MetadataCorpus holds the corpus the shard belongs to.
	MetadataCorpus = "parastream.corpus"
	// MetadataSplit holds the split the shard belongs to.
	MetadataSplit = "parastream.split"
)

// Row is one record of a shard: a corpora.Example, the split it was assigned
// to, and the features that featurize adds. Every field is one column:
//
//	column         Parquet type (logical)                 DuckDB type              from
//	id             BYTE_ARRAY (STRING)                    VARCHAR                  Example.ID
//	corpus         BYTE_ARRAY (STRING), dictionary        VARCHAR                  Example.Corpus
//	dataset        BYTE_ARRAY (STRING), dictionary        VARCHAR                  Example.Dataset
//	split          BYTE_ARRAY (STRING), dictionary        VARCHAR                  the split: train, dev, test
//	a              BYTE_ARRAY (STRING)                    VARCHAR                  Example.A
//	b              BYTE_ARRAY (STRING)                    VARCHAR                  Example.B
//	context        LIST<STRING>                           VARCHAR[]                Example.Context (earlier turns, oldest first)
//	lang_a         BYTE_ARRAY (STRING), dictionary        VARCHAR                  Example.LangA
//	lang_b         BYTE_ARRAY (STRING), dictionary        VARCHAR                  Example.LangB
//	label          optional DOUBLE                        DOUBLE (NULL: no label)  Example.Label if HasLabel
//	group_key      BYTE_ARRAY (STRING)                    VARCHAR                  Example.Group
//	source_file    BYTE_ARRAY (STRING), dictionary        VARCHAR                  Example.Source.File
//	source_line    INT64                                  BIGINT                   Example.Source.Line
//	source_offset  INT64                                  BIGINT                   Example.Source.Offset
//	scores         LIST<DOUBLE>                           DOUBLE[]                 Example.Scores
//	meta           MAP<STRING, STRING>                    MAP(VARCHAR, VARCHAR)    Example.Meta
//	tokens_a       LIST<STRING>                           VARCHAR[]                tokens of A (transforms)
//	tokens_b       LIST<STRING>                           VARCHAR[]                tokens of B (transforms)
//	ids_a          LIST<INT32>                            INTEGER[]                vocabulary ids of A (featurize)
//	ids_b          LIST<INT32>                            INTEGER[]                vocabulary ids of B (featurize)
//	topics_a       LIST<FLOAT>                            FLOAT[]                  NMF topic vector of A (featurize)
//	topics_b       LIST<FLOAT>                            FLOAT[]                  NMF topic vector of B (featurize)
//
// Lists use the standard three-level LIST layout (a required group annotated
// LIST holding a repeated group "list" holding a required "element"), and
// meta the standard MAP layout (a repeated group "key_value" of a required
// "key" and a required "value"), so Arrow, DuckDB, Spark and pandas read them
// as lists and maps. Lists and maps are never NULL: a missing list is an
// empty one. label is the only nullable column. Every string must be UTF-8
// (see Validate): Writer.Write refuses a row that is not.
//
// The columns are in the order above, which is the field order of Row.
type Row struct {
	ID           string            `parquet:"id"`
	Corpus       string            `parquet:"corpus,dict"`
	Dataset      string            `parquet:"dataset,dict"`
	Split        string            `parquet:"split,dict"`
	A            string            `parquet:"a"`
	B            string            `parquet:"b"`
	Context      []string          `parquet:"context,list"`
	LangA        string            `parquet:"lang_a,dict"`
	LangB        string            `parquet:"lang_b,dict"`
	Label        *float64          `parquet:"label,optional"`
	GroupKey     string            `parquet:"group_key"`
	SourceFile   string            `parquet:"source_file,dict"`
	SourceLine   int64             `parquet:"source_line"`
	SourceOffset int64             `parquet:"source_offset"`
	Scores       []float64         `parquet:"scores,list"`
	Meta         map[string]string `parquet:"meta" parquet-key:",dict"`
	TokensA      []string          `parquet:"tokens_a,list"`
	TokensB      []string          `parquet:"tokens_b,list"`
	IDsA         []int32           `parquet:"ids_a,list"`
	IDsB         []int32           `parquet:"ids_b,list"`
	TopicsA      []float32         `parquet:"topics_a,list"`
	TopicsB      []float32         `parquet:"topics_b,list"`
}

// FromExample makes the row of e in the given split. The row shares no memory
// with e: Scores and Meta are copied. The token, id and topic lists are left
// empty for the later stages to fill. An Example without a label
// (HasLabel false) gets a NULL label, whatever its Label field holds.
func FromExample(e corpora.Example, split string) Row {
	r := Row{
		ID:           e.ID,
		Corpus:       e.Corpus,
		Dataset:      e.Dataset,
		Split:        split,
		A:            e.A,
		B:            e.B,
		LangA:        e.LangA,
		LangB:        e.LangB,
		GroupKey:     e.Group,
		SourceFile:   e.Source.File,
		SourceLine:   e.Source.Line,
		SourceOffset: e.Source.Offset,
	}
	if e.HasLabel {
		label := e.Label
		r.Label = &label
	}
	if len(e.Context) > 0 {
		r.Context = slices.Clone(e.Context)
	}
	if len(e.Scores) > 0 {
		r.Scores = slices.Clone(e.Scores)
	}
	if len(e.Meta) > 0 {
		r.Meta = maps.Clone(e.Meta)
	}
	return r
}

// Example returns the corpora.Example the row was made from: for every
// Example e with HasLabel or a zero Label, FromExample(e, s).Example()
// equals e, except that empty Scores and Meta come back nil. The row's split
// and features have no place in an Example and are dropped. The Example
// TakeExample is FromExample without the copies of e's slices and map: the
// row takes them over, and the caller must not use e afterwards. Readers
// hand out a fresh Example each time, so a pipeline can take them.
func TakeExample(e *corpora.Example, split string) Row {
	r := Row{
		ID: e.ID, Corpus: e.Corpus, Dataset: e.Dataset, Split: split,
		A: e.A, B: e.B, Context: e.Context, LangA: e.LangA, LangB: e.LangB,
		GroupKey: e.Group, SourceFile: e.Source.File, SourceLine: e.Source.Line, SourceOffset: e.Source.Offset,
		Scores: e.Scores, Meta: e.Meta,
	}
	if e.HasLabel {
		label := e.Label
		r.Label = &label
	}
	*e = corpora.Example{}
	return r
}

// shares no memory with the row.
func (r Row) Example() corpora.Example {
	e := corpora.Example{
		ID:      r.ID,
		Corpus:  r.Corpus,
		Dataset: r.Dataset,
		A:       r.A,
		B:       r.B,
		LangA:   r.LangA,
		LangB:   r.LangB,
		Group:   r.GroupKey,
		Source: corpora.Source{
			File:   r.SourceFile,
			Line:   r.SourceLine,
			Offset: r.SourceOffset,
		},
	}
	if r.Label != nil {
		e.Label, e.HasLabel = *r.Label, true
	}
	if len(r.Context) > 0 {
		e.Context = slices.Clone(r.Context)
	}
	if len(r.Scores) > 0 {
		e.Scores = slices.Clone(r.Scores)
	}
	if len(r.Meta) > 0 {
		e.Meta = maps.Clone(r.Meta)
	}
	return e
}

// Validate reports a row that would make a shard other readers refuse:
// Parquet STRING values must be UTF-8 (DuckDB, for one, rejects the whole
// file otherwise). The error is a *RowError wrapping ErrInvalidUTF8.
func (r Row) Validate() error {
	bad := func(column string) error {
		return &RowError{ID: r.ID, Column: column, Err: ErrInvalidUTF8}
	}
	for _, c := range []struct{ name, v string }{
		{"id", r.ID}, {"corpus", r.Corpus}, {"dataset", r.Dataset}, {"split", r.Split},
		{"a", r.A}, {"b", r.B}, {"lang_a", r.LangA}, {"lang_b", r.LangB},
		{"group_key", r.GroupKey}, {"source_file", r.SourceFile},
	} {
		if !utf8.ValidString(c.v) {
			return bad(c.name)
		}
	}
	for k, v := range r.Meta {
		if !utf8.ValidString(k) || !utf8.ValidString(v) {
			return bad("meta")
		}
	}
	if !validStrings(r.Context) {
		return bad("context")
	}
	if !validStrings(r.TokensA) {
		return bad("tokens_a")
	}
	if !validStrings(r.TokensB) {
		return bad("tokens_b")
	}
	return nil
}

// validStrings reports whether every string of ss is valid UTF-8. Tokens are
// short and mostly ASCII, so a call of utf8.ValidString each costs more than
// the check: one pass ORs all their bytes, and only a list with a byte of
// 0x80 or above is checked string by string (strings, not their
// concatenation: a rune split across two tokens is invalid in both).
func validStrings(ss []string) bool {
	var or byte
	for _, s := range ss {
		for i := 0; i < len(s); i++ {
			or |= s[i]
		}
	}
	if or < utf8.RuneSelf {
		return true
	}
	for _, s := range ss {
		if !utf8.ValidString(s) {
			return false
		}
	}
	return true
}

// RowError is a row the Writer refused. Write returns it before writing any
// row of the call, so the caller can reject that row and write the others.
type RowError struct {
	// Index is the row's index among the rows given to Write.
	Index int
	// ID is the row's ID (possibly itself invalid UTF-8).
	ID string
	// Column names the offending column.
	Column string
	Err    error
}

func (e *RowError) Error() string {
	return fmt.Sprintf("row %d (id %q): column %s: %v", e.Index, e.ID, e.Column, e.Err)
}

// Unwrap returns the cause, such as ErrInvalidUTF8.
func (e *RowError) Unwrap() error { return e.Err }

// estimatedSize is an upper bound of the bytes the row adds to a row group
// before encoding and compression. The writer plans shard sizes with it.
func (r *Row) estimatedSize() int64 {
	const fixed = 4 + 8 + 8 + 8 // label, source_line, source_offset, levels
	n := fixed + len(r.ID) + len(r.Corpus) + len(r.Dataset) + len(r.Split) +
		len(r.A) + len(r.B) + len(r.LangA) + len(r.LangB) + len(r.GroupKey) +
		len(r.SourceFile) + 4*10 // a length prefix per string column
	n += 8 * len(r.Scores)
	for k, v := range r.Meta {
		n += len(k) + len(v) + 8
	}
	for _, t := range r.TokensA {
		n += len(t) + 4
	}
	for _, t := range r.TokensB {
		n += len(t) + 4
	}
	n += 4 * (len(r.IDsA) + len(r.IDsB) + len(r.TopicsA) + len(r.TopicsB))
	return int64(n)
}
