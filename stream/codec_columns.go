package stream

import (
	"errors"
	"fmt"
	"io"
	"strings"
	"unicode/utf8"

	"github.com/parquet-go/parquet-go"
	"github.com/parquet-go/parquet-go/encoding"

	"github.com/parastream/parastream/shards"
)

// readColumns decodes the named columns of every row group of pf into
// rows, which has room for pf's rows. It reads each column chunk page by
// page, straight from the pages' decoded arrays and levels, and builds the
// fields itself: parquet-go decompresses and decodes only those chunks, no
// reflection is involved and no parquet.Value is made. The strings of a
// page share one copy of its data, those of a dictionary page are the
// dictionary's, made once; the elements of a list column share one array
// per row group. Every string is checked to be UTF-8 as it is made (what
// shards.Row.Validate checks): a row that is not gives a *shards.RowError
// wrapping shards.ErrInvalidUTF8.
func readColumns(pf *parquet.File, rows []shards.Row, columns []string) error {
	var base int
	for _, rg := range pf.RowGroups() {
		n := rg.NumRows()
		if n < 0 || int64(base)+n > int64(len(rows)) {
			return fmt.Errorf("the row groups hold more than %d rows", len(rows))
		}
		part := rows[base : base+int(n)]
		chunks := rg.ColumnChunks()
		for _, name := range columns {
			if err := readColumn(chunks, part, name); err != nil {
				if re, ok := errors.AsType[*shards.RowError](err); ok {
					if name != "id" {
						re.ID = part[re.Index].ID // decoded when "id" came first
					}
					re.Index += base
					return err
				}
				return fmt.Errorf("column %s: %w", name, err)
			}
		}
		base += int(n)
	}
	if base != len(rows) {
		return fmt.Errorf("the row groups hold %d rows, the file %d", base, len(rows))
	}
	return nil
}

// readColumn decodes column name of one row group into rows. A string
// that is not UTF-8 is a *shards.RowError.
func readColumn(chunks []parquet.ColumnChunk, rows []shards.Row, name string) error {
	err := readField(chunks, rows, name)
	ir, ok := errors.AsType[invalidRow](err)
	if !ok {
		return err
	}
	re := &shards.RowError{Index: ir.row, Column: name, Err: shards.ErrInvalidUTF8}
	if s, ok := ir.value.(string); ok && name == "id" {
		re.ID = s
	}
	return re
}

// readField is readColumn but for the error of a string that is not
// UTF-8, an invalidRow.
func readField(chunks []parquet.ColumnChunk, rows []shards.Row, name string) error {
	schema := rowSchema()
	leaf := func(path ...string) (parquet.ColumnChunk, int) {
		l, ok := schema.Lookup(path...)
		if !ok || l.ColumnIndex >= len(chunks) {
			panic("stream: no leaf column " + strings.Join(path, "."))
		}
		return chunks[l.ColumnIndex], l.MaxDefinitionLevel
	}
	// The leaf of a scalar column is the column, of a list column its
	// list.element (meta, a map, has two leaves: see below).
	var cc parquet.ColumnChunk
	var maxDef int
	if _, ok := schema.Lookup(name); ok {
		cc, maxDef = leaf(name)
	} else if _, ok := schema.Lookup(name, "list", "element"); ok {
		cc, maxDef = leaf(name, "list", "element")
	}
	str := func(set func(*shards.Row, string)) error {
		return readScalars(cc, maxDef, rows, new(stringPages).values, set)
	}
	strList := func(set func(*shards.Row, []string)) error {
		return readList(cc, maxDef, rows, new(stringPages).values, set)
	}
	i64 := func(set func(*shards.Row, int64)) error {
		return readScalars(cc, maxDef, rows, numbers((*encoding.Values).Int64), set)
	}
	float32s := numbers((*encoding.Values).Float)
	int32s := numbers((*encoding.Values).Int32)
	switch name {
	case "id":
		return str(func(r *shards.Row, v string) { r.ID = v })
	case "corpus":
		return str(func(r *shards.Row, v string) { r.Corpus = v })
	case "dataset":
		return str(func(r *shards.Row, v string) { r.Dataset = v })
	case "split":
		return str(func(r *shards.Row, v string) { r.Split = v })
	case "a":
		return str(func(r *shards.Row, v string) { r.A = v })
	case "b":
		return str(func(r *shards.Row, v string) { r.B = v })
	case "lang_a":
		return str(func(r *shards.Row, v string) { r.LangA = v })
	case "lang_b":
		return str(func(r *shards.Row, v string) { r.LangB = v })
	case "group_key":
		return str(func(r *shards.Row, v string) { r.GroupKey = v })
	case "source_file":
		return str(func(r *shards.Row, v string) { r.SourceFile = v })
	case "source_line":
		return i64(func(r *shards.Row, v int64) { r.SourceLine = v })
	case "source_offset":
		return i64(func(r *shards.Row, v int64) { r.SourceOffset = v })
	case "label":
		labels, starts, err := readLeaf(cc, len(rows), maxDef, numbers((*encoding.Values).Double))
		if err != nil {
			return err
		}
		for i := range rows {
			switch starts[i+1] - starts[i] {
			case 0: // NULL
			case 1:
				rows[i].Label = &labels[starts[i]]
			default:
				return fmt.Errorf("row %d has %d values", i, starts[i+1]-starts[i])
			}
		}
		return nil
	case "context":
		return strList(func(r *shards.Row, v []string) { r.Context = v })
	case "tokens_a":
		return strList(func(r *shards.Row, v []string) { r.TokensA = v })
	case "tokens_b":
		return strList(func(r *shards.Row, v []string) { r.TokensB = v })
	case "scores":
		return readList(cc, maxDef, rows, numbers((*encoding.Values).Double), func(r *shards.Row, v []float64) { r.Scores = v })
	case "ids_a":
		return readList(cc, maxDef, rows, int32s, func(r *shards.Row, v []int32) { r.IDsA = v })
	case "ids_b":
		return readList(cc, maxDef, rows, int32s, func(r *shards.Row, v []int32) { r.IDsB = v })
	case "topics_a":
		return readList(cc, maxDef, rows, float32s, func(r *shards.Row, v []float32) { r.TopicsA = v })
	case "topics_b":
		return readList(cc, maxDef, rows, float32s, func(r *shards.Row, v []float32) { r.TopicsB = v })
	case "meta":
		cc, maxDef := leaf(name, "key_value", "key")
		keys, kstarts, err := readLeaf(cc, len(rows), maxDef, new(stringPages).values)
		if err != nil {
			return err
		}
		cc, maxDef = leaf(name, "key_value", "value")
		values, vstarts, err := readLeaf(cc, len(rows), maxDef, new(stringPages).values)
		if err != nil {
			return err
		}
		for i := range rows {
			a, b := kstarts[i], kstarts[i+1]
			if va, vb := vstarts[i], vstarts[i+1]; va != a || vb != b {
				return fmt.Errorf("row %d has %d keys and %d values", i, b-a, vb-va)
			}
			m := make(map[string]string, b-a)
			for j := a; j < b; j++ {
				m[keys[j]] = values[j]
			}
			rows[i].Meta = m
		}
		return nil
	}
	panic("stream: no column " + name)
}

// invalidRow is a string that is not UTF-8 that readLeaf found, in row
// row of the row group.
type invalidRow struct {
	row   int
	value any
}

func (e invalidRow) Error() string {
	return fmt.Sprintf("row %d: %v", e.row, shards.ErrInvalidUTF8)
}

// readScalars reads a column of one value a row into the rows.
func readScalars[T any](cc parquet.ColumnChunk, maxDef int, rows []shards.Row, values pageValues[T], set func(*shards.Row, T)) error {
	vals, starts, err := readLeaf(cc, len(rows), maxDef, values)
	if err != nil {
		return err
	}
	for i := range rows {
		if starts[i+1]-starts[i] != 1 {
			return fmt.Errorf("row %d has %d values, want 1", i, starts[i+1]-starts[i])
		}
		set(&rows[i], vals[starts[i]])
	}
	return nil
}

// readList reads a list column's elements into the rows, the lists of
// the row group slices of one array. Empty lists are empty, not nil, as
// parquet-go reads them.
func readList[T any](cc parquet.ColumnChunk, maxDef int, rows []shards.Row, values pageValues[T], set func(*shards.Row, []T)) error {
	vals, starts, err := readLeaf(cc, len(rows), maxDef, values)
	if err != nil {
		return err
	}
	for i := range rows {
		a, b := starts[i], starts[i+1]
		set(&rows[i], vals[a:b:b])
	}
	return nil
}

// pageValues appends the values present in a page (those at the leaf's
// maximum definition level) to dst. A value that is not valid is
// reported by an invalidValue error, after every value of the page has
// been appended.
type pageValues[T any] func(p parquet.Page, dst []T) ([]T, error)

// invalidValue is the index within its page of a string that is not UTF-8.
type invalidValue int

func (i invalidValue) Error() string { return fmt.Sprintf("value %d is not UTF-8", int(i)) }

// readLeaf reads a leaf column chunk of a row group of n rows, page by
// page: vals are the values present (at definition level maxDef), and row
// i's values are vals[starts[i]:starts[i+1]]. A value of repetition level
// 0 (or any value of a column without levels) begins the next row; a
// level below maxDef is a NULL or an empty list. A chunk that holds more
// or fewer rows than n is an error; a string that is not UTF-8 an
// invalidRow error naming its row.
func readLeaf[T any](cc parquet.ColumnChunk, n, maxDef int, values pageValues[T]) (vals []T, starts []int, err error) {
	pages := cc.Pages()
	defer pages.Close()
	// NumValues comes from the footer: bounded, the rest grows as read.
	vals = make([]T, 0, min(max(cc.NumValues(), 0), MaxBatchRows))
	starts = make([]int, n+1)
	row := -1
	for {
		p, err := pages.ReadPage()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return nil, nil, err
		}
		row, vals, err = readPage(p, chunkShape{rows: n, maxDef: maxDef}, row, vals, starts, values)
		parquet.Release(p)
		if err != nil {
			return vals, nil, err
		}
	}
	if row != n-1 {
		return nil, nil, fmt.Errorf("the chunk holds %d rows, the row group %d", row+1, n)
	}
	starts[n] = len(vals)
	return vals, starts, nil
}

// chunkShape is what readPage knows of a column chunk: the rows of its row
// group and the column's maximum definition level.
type chunkShape struct {
	rows, maxDef int
}

// readPage is readLeaf's work on one page: it appends the page's values
// to vals and records where each row that begins in it starts. row is the
// last row begun before the page, and after it.
func readPage[T any](p parquet.Page, shape chunkShape, row int, vals []T, starts []int, values pageValues[T]) (int, []T, error) {
	n, maxDef := shape.rows, shape.maxDef
	first := len(vals)
	vals, err := values(p, vals)
	bad := -1
	if iv, ok := errors.AsType[invalidValue](err); ok {
		bad = first + int(iv)
	} else if err != nil {
		return row, vals, err
	}
	rep, def := p.RepetitionLevels(), p.DefinitionLevels()
	if len(rep) > 0 && len(def) > 0 && len(rep) != len(def) {
		return row, vals, fmt.Errorf("a page has %d repetition levels and %d definition levels", len(rep), len(def))
	}
	levels := max(len(rep), len(def))
	if levels == 0 {
		// One value a row.
		k := len(vals) - first
		if row+k >= n {
			return row, vals, fmt.Errorf("the chunk holds more than the row group's %d rows", n)
		}
		if bad >= 0 {
			return row, vals, invalidRow{row: row + 1 + bad - first, value: vals[bad]}
		}
		for j := first; j < len(vals); j++ {
			row++
			starts[row] = j
		}
		return row, vals, nil
	}
	v := first
	for j := range levels {
		if len(rep) == 0 || rep[j] == 0 {
			row++
			if row >= n {
				return row, vals, fmt.Errorf("the chunk holds more than the row group's %d rows", n)
			}
			starts[row] = v
		}
		if row < 0 {
			return row, vals, errors.New("the chunk does not begin with a row")
		}
		if len(def) == 0 || int(def[j]) == maxDef {
			if v == bad {
				return row, vals, invalidRow{row: row, value: vals[bad]}
			}
			v++
		}
	}
	if v != len(vals) {
		return row, vals, fmt.Errorf("a page holds %d values, its levels %d", len(vals)-first, v-first)
	}
	return row, vals, nil
}

// numbers reads the values of numeric pages, plain or dictionary-encoded.
func numbers[T any](get func(*encoding.Values) []T) pageValues[T] {
	return func(p parquet.Page, dst []T) ([]T, error) {
		data := p.Data()
		d := p.Dictionary()
		if d == nil {
			return append(dst, get(&data)...), nil
		}
		dictData := d.Page().Data()
		dict := get(&dictData)
		for _, i := range data.Int32() {
			if i < 0 || int(i) >= len(dict) {
				return dst, fmt.Errorf("dictionary index %d out of %d", i, len(dict))
			}
			dst = append(dst, dict[i])
		}
		return dst, nil
	}
}

// stringPages reads the values of the byte-array pages of one column
// chunk as strings, checked to be UTF-8: those of a plain page share one
// copy of its data; those of dictionary pages are the dictionary's
// strings, made and checked once.
type stringPages struct {
	dict    parquet.Dictionary
	entries []string
	invalid []bool // per entry; nil when every entry is UTF-8
}

func (sp *stringPages) values(p parquet.Page, dst []string) ([]string, error) {
	d := p.Dictionary()
	if d == nil {
		return appendStrings(dst, p.Data())
	}
	if d != sp.dict {
		entries, err := appendStrings(nil, d.Page().Data())
		sp.invalid = nil
		if _, ok := errors.AsType[invalidValue](err); ok {
			sp.invalid = make([]bool, len(entries))
			for i, e := range entries {
				sp.invalid[i] = !utf8.ValidString(e)
			}
		} else if err != nil {
			return dst, fmt.Errorf("dictionary: %w", err)
		}
		sp.dict, sp.entries = d, entries
	}
	first, bad := len(dst), -1
	data := p.Data()
	for _, i := range data.Int32() {
		if i < 0 || int(i) >= len(sp.entries) {
			return dst, fmt.Errorf("dictionary index %d out of %d", i, len(sp.entries))
		}
		if sp.invalid != nil && sp.invalid[i] && bad < 0 {
			bad = len(dst) - first
		}
		dst = append(dst, sp.entries[i])
	}
	if bad >= 0 {
		return dst, invalidValue(bad)
	}
	return dst, nil
}

// appendStrings appends the byte-array values v holds to dst as strings
// that share one copy of their bytes. A value that is not UTF-8 gives an
// invalidValue error, the first one's index, once all are appended.
func appendStrings(dst []string, v encoding.Values) ([]string, error) {
	data, offsets := v.ByteArray()
	if len(offsets) < 2 {
		return dst, nil
	}
	lo, hi := offsets[0], offsets[len(offsets)-1]
	if lo > hi || int(hi) > len(data) {
		return dst, fmt.Errorf("byte array offsets %d to %d out of %d bytes", lo, hi, len(data))
	}
	all := string(data[lo:hi])
	// The whole is UTF-8 and no value begins inside a character: then
	// every value is UTF-8. Checking the whole at once takes the fast
	// ASCII path.
	valid := utf8.ValidString(all)
	bad := -1
	end := uint32(len(all))
	for j := range len(offsets) - 1 {
		a, b := offsets[j]-lo, offsets[j+1]-lo
		if a > b || b > end {
			return dst, fmt.Errorf("byte array offsets %d to %d out of %d bytes", offsets[j], offsets[j+1], len(data))
		}
		s := all[a:b]
		split := a < end && !utf8.RuneStart(all[a]) || b < end && !utf8.RuneStart(all[b])
		if bad < 0 && (!valid || split) && !utf8.ValidString(s) {
			bad = j
		}
		dst = append(dst, s)
	}
	if bad >= 0 {
		return dst, invalidValue(bad)
	}
	return dst, nil
}
