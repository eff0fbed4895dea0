package stream_test

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"io"
	"math"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/parquet-go/parquet-go"
	"github.com/parquet-go/parquet-go/encoding/thrift"
	"github.com/parquet-go/parquet-go/format"

	"github.com/parastream/parastream/shards"
	"github.com/parastream/parastream/stream"
)

// project returns r with only the named columns kept.
func project(r shards.Row, columns []string) shards.Row {
	var out shards.Row
	src, dst := reflect.ValueOf(r), reflect.ValueOf(&out).Elem()
	for i := range src.NumField() {
		name, _, _ := strings.Cut(src.Type().Field(i).Tag.Get("parquet"), ",")
		for _, c := range columns {
			if c == name {
				dst.Field(i).Set(src.Field(i))
			}
		}
	}
	return out
}

// columnRows are rows with every column in use: contexts, scores, empty
// and missing lists, NULL labels, maps, long strings, odd floats.
func columnRows() []shards.Row {
	rows := genRows("sts", "train", 5, 3000)
	for i := range rows {
		r := &rows[i]
		switch i % 7 {
		case 0:
			r.Context = []string{"earlier turn", "", "ünïcödé 字 " + strings.Repeat("x", i)}
			r.Scores = []float64{1.5, math.Inf(-1), math.Copysign(0, -1)}
		case 1:
			r.Label, r.Meta, r.TokensA, r.IDsA, r.TopicsB = nil, nil, nil, nil, nil
		case 2:
			r.Meta = map[string]string{"author": "a", "score": "12", "": "empty key"}
			r.Scores = []float64{math.NaN()}
		case 3:
			r.A, r.B = "", strings.Repeat("long text ", 500)
			r.SourceOffset = math.MaxInt64
		}
	}
	return rows
}

// sameRows compares rows, NaN equal to NaN.
func sameRows(t *testing.T, what string, got, want []shards.Row) {
	t.Helper()
	if len(got) != len(want) {
		t.Fatalf("%s: %d rows, want %d", what, len(got), len(want))
	}
	for i := range got {
		g, w := normalized(got[i]), normalized(want[i])
		if len(g.Scores) == 1 && len(w.Scores) == 1 && math.IsNaN(g.Scores[0]) && math.IsNaN(w.Scores[0]) {
			g.Scores, w.Scores = nil, nil
		}
		if !reflect.DeepEqual(g, w) {
			t.Fatalf("%s: row %d:\n got %+v\nwant %+v", what, i, got[i], want[i])
		}
	}
}

func TestDecodeColumns(t *testing.T) {
	rows := columnRows()
	m, err := stream.Encode(stream.Batch{Shard: "sts/train/p.parquet", First: 100, Rows: rows})
	if err != nil {
		t.Fatal(err)
	}
	full, err := stream.Decode(m)
	if err != nil {
		t.Fatal(err)
	}
	sameRows(t, "Decode", full.Rows, rows)
	// With every column, DecodeColumns gives exactly what Decode gives:
	// empty lists and maps empty, not nil.
	all, err := stream.DecodeColumns(m, stream.Columns())
	if err != nil {
		t.Fatal(err)
	}
	for i := range all.Rows {
		g, w := all.Rows[i], full.Rows[i]
		if i%7 == 2 { // NaN is not DeepEqual to itself
			g.Scores, w.Scores = nil, nil
		}
		if !reflect.DeepEqual(g, w) {
			t.Fatalf("row %d: DecodeColumns gave\n%#v\nDecode\n%#v", i, g, w)
		}
	}
	for _, cols := range [][]string{
		stream.Columns(),
		{"id", "label", "tokens_a", "tokens_b", "ids_a", "ids_b"},
		{"meta"},
		{"topics_b", "source_offset", "scores", "context", "split"},
	} {
		b, err := stream.DecodeColumns(m, cols)
		if err != nil {
			t.Fatal(err)
		}
		if b.Shard != full.Shard || b.First != full.First {
			t.Errorf("%v: batch %s %d, want %s %d", cols, b.Shard, b.First, full.Shard, full.First)
		}
		want := make([]shards.Row, len(rows))
		for i := range rows {
			want[i] = project(rows[i], cols)
		}
		sameRows(t, strings.Join(cols, ","), b.Rows, want)
	}
}

func TestDecodeColumnsChecks(t *testing.T) {
	m, err := stream.Encode(stream.Batch{Shard: "s", First: 0, Rows: genRows("sts", "train", 1, 10)})
	if err != nil {
		t.Fatal(err)
	}
	for _, cols := range [][]string{{"ids"}, {"id", "id"}, {"list"}} {
		if _, err := stream.DecodeColumns(m, cols); err == nil {
			t.Errorf("DecodeColumns(%q) accepted", cols)
		}
	}
	// What Decode refuses, DecodeColumns refuses: a corrupt value, a
	// wrong checksum, a row count other than the header's.
	bad := m
	bad.Value = append([]byte(nil), m.Value...)
	bad.Value[len(bad.Value)/2] ^= 0xff
	if _, err := stream.DecodeColumns(bad, []string{"id"}); !errors.Is(err, stream.ErrChecksum) {
		t.Errorf("a changed value: %v, want ErrChecksum", err)
	}
	short := withHeader(m, stream.HeaderRows, []byte("0-9"))
	if _, err := stream.DecodeColumns(short, []string{"ids_a"}); !errors.Is(err, stream.ErrPayload) {
		t.Errorf("a short range: %v, want ErrPayload", err)
	}
}

// TestDecodeColumnsRefusesInvalidUTF8: a value written by another writer
// with a string that is not UTF-8, in a plain column, a dictionary column,
// a list, a map, or cut inside a character between two list elements, is
// refused by DecodeColumns (which checks strings as it makes them) as by
// Decode (Row.Validate), naming the row and the column.
func TestDecodeColumnsRefusesInvalidUTF8(t *testing.T) {
	for _, c := range []struct {
		column string
		spoil  func(*shards.Row)
	}{
		{"id", func(r *shards.Row) { r.ID = "bad \xff" }},
		{"b", func(r *shards.Row) { r.B = "bad \xc3" }},
		{"corpus", func(r *shards.Row) { r.Corpus = "\xff" }},
		{"lang_b", func(r *shards.Row) { r.LangB = "e\x80" }},
		{"tokens_a", func(r *shards.Row) { r.TokensA = []string{"ok", "bad \xe2\x82"} }},
		// One character cut between two elements: their bytes together are UTF-8.
		{"tokens_b", func(r *shards.Row) { r.TokensB = []string{"x\xc3", "\xbc"} }},
		{"context", func(r *shards.Row) { r.Context = []string{"\xed\xa0\x80"} }},
		{"meta", func(r *shards.Row) { r.Meta = map[string]string{"k": "\xff"} }},
		{"meta", func(r *shards.Row) { r.Meta = map[string]string{"\xfe": "v"} }},
	} {
		rows := genRows("sts", "train", 1, 40)
		c.spoil(&rows[17])
		var buf bytes.Buffer
		w := parquet.NewGenericWriter[shards.Row](&buf,
			parquet.KeyValueMetadata(shards.MetadataSchemaVersion, strconv.Itoa(shards.SchemaVersion)))
		if _, err := w.Write(rows); err != nil {
			t.Fatal(err)
		}
		if err := w.Close(); err != nil {
			t.Fatal(err)
		}
		m := stream.Message("sts/train/p.parquet", "0-40", buf.Bytes())
		for _, decode := range []struct {
			name string
			f    func() (stream.Batch, error)
		}{
			{"Decode", func() (stream.Batch, error) { return stream.Decode(m) }},
			{"DecodeColumns", func() (stream.Batch, error) { return stream.DecodeColumns(m, stream.Columns()) }},
			{"DecodeColumns(" + c.column + ")", func() (stream.Batch, error) { return stream.DecodeColumns(m, []string{c.column}) }},
		} {
			_, err := decode.f()
			re, ok := errors.AsType[*shards.RowError](err)
			if !ok || !errors.Is(err, stream.ErrPayload) || !errors.Is(err, shards.ErrInvalidUTF8) || re.Index != 17 || re.Column != c.column {
				t.Errorf("%s with %s not UTF-8 in row 17: %v, want ErrPayload and a RowError for row 17, column %s", decode.name, c.column, err, c.column)
			}
		}
	}
}

// FuzzDecodeColumns: no value makes DecodeColumns panic, and rows that it
// and Decode both accept are the same.
func FuzzDecodeColumns(f *testing.F) {
	for i, n := range []int{1, 7, 40} {
		m, err := stream.Encode(stream.Batch{Shard: "sts/train/p.parquet", First: int64(i * 100), Rows: columnRows()[:n]})
		if err != nil {
			f.Fatal(err)
		}
		f.Add(m.Value, header(m, stream.HeaderRows))
	}
	f.Fuzz(func(t *testing.T, value []byte, rows string) {
		m := stream.Message("sts/train/p.parquet", rows, value)
		b, err := stream.DecodeColumns(m, stream.Columns())
		want, werr := stream.Decode(m)
		if err == nil && werr == nil {
			sameRows(t, "fuzzed", b.Rows, want.Rows)
		}
		if err != nil && err.Error() == "" {
			t.Fatal("an error with no message")
		}
	})
}

// TestConsumerColumns: a consumer asking for some columns hands out every
// row once, with those columns and no others.
func TestConsumerColumns(t *testing.T) {
	b := published(t, map[string]int{"train": 3000}, 1000)
	cols := []string{"id", "label", "ids_a", "tokens_b"}
	cfg := consumerConfig(t, b, "columns", 1)
	cfg.Columns = cols
	ctx := context.Background()
	c, err := stream.NewConsumer(ctx, cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	want := map[string]shards.Row{}
	for _, r := range genRows("sts", "train", splitSeed("train"), 3000) {
		want[r.ID] = project(r, cols)
	}
	for {
		rec, err := c.Next(ctx)
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		w, ok := want[rec.ID]
		if !ok {
			t.Fatalf("row %q came twice, or is not in the split", rec.ID)
		}
		delete(want, rec.ID)
		if !reflect.DeepEqual(normalized(rec.Row), normalized(w)) {
			t.Fatalf("row %s:\n got %+v\nwant %+v", rec.ID, rec.Row, w)
		}
	}
	if len(want) != 0 {
		t.Errorf("%d rows never came", len(want))
	}
	cfg.Columns = []string{"ids"}
	if err := cfg.Validate(); err == nil || !strings.Contains(err.Error(), "ids_a") {
		t.Errorf("Validate with a column that does not exist: %v, want an error listing the columns", err)
	}
}

// BenchmarkDecodeColumns decodes one message of 2,080 featurized rows (a
// shard's row group) with every column, and with the trainer's columns.
func BenchmarkDecodeColumns(b *testing.B) {
	m, err := stream.Encode(stream.Batch{Shard: "bench/train/part-0.parquet", Rows: genRows("bench", "train", 1, 2080)})
	if err != nil {
		b.Fatal(err)
	}
	for _, c := range []struct {
		name    string
		columns []string
	}{
		{"all", stream.Columns()},
		{"train", []string{"id", "label", "ids_a", "ids_b"}},
	} {
		b.Run(c.name, func(b *testing.B) {
			b.SetBytes(int64(len(m.Value)))
			b.ReportAllocs()
			for b.Loop() {
				if _, err := stream.DecodeColumns(m, c.columns); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// TestDecodeColumnsAllocsPerRow guards the decoder's hot path against an
// allocation per row: a message of 2,080 rows (a shard's row group)
// decoded with the trainer's columns allocates per message and per page,
// never per row; with every column, the one map a row's meta needs is
// all a row adds.
func TestDecodeColumnsAllocsPerRow(t *testing.T) {
	const rows = 2080
	m, err := stream.Encode(stream.Batch{Shard: "bench/train/part-0.parquet", Rows: genRows("bench", "train", 1, rows)})
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		name    string
		columns []string
		ceiling float64 // allocations a row
	}{
		{"train", []string{"id", "label", "tokens_a", "tokens_b", "ids_a", "ids_b"}, 0.25},
		{"all", stream.Columns(), 2.5},
	} {
		perRow := testing.AllocsPerRun(5, func() {
			if _, err := stream.DecodeColumns(m, c.columns); err != nil {
				t.Fatal(err)
			}
		}) / rows
		t.Logf("%s columns: %.3f allocations a row", c.name, perRow)
		if perRow > c.ceiling {
			t.Errorf("DecodeColumns with the %s columns allocates %.3f times a row, more than %.2f: something allocates per row", c.name, perRow, c.ceiling)
		}
	}
}

// TestDecodeRefusesPagesOutsideTheirChunk: a value whose footer puts a
// column chunk's first data page outside the chunk's bytes (as a fuzzed
// value did: a dictionary page at 1,830, the chunk 92 bytes long, its data
// page said to be at 3,015, inside another column) is refused by Decode
// and DecodeColumns alike, naming the column, where each had read it its
// own way.
func TestDecodeRefusesPagesOutsideTheirChunk(t *testing.T) {
	m, err := stream.Encode(stream.Batch{Shard: "sts/train/p.parquet", First: 0, Rows: columnRows()[:7]})
	if err != nil {
		t.Fatal(err)
	}
	v := m.Value
	n := int(binary.LittleEndian.Uint32(v[len(v)-8:]))
	var md format.FileMetaData
	if err := thrift.Unmarshal(new(thrift.CompactProtocol), v[len(v)-8-n:len(v)-8], &md); err != nil {
		t.Fatal(err)
	}
	const col = 15 // meta.key_value.key
	c := &md.RowGroups[0].Columns[col].MetaData
	c.DataPageOffset = md.RowGroups[0].Columns[col+2].MetaData.DataPageOffset // tokens_a's
	footer, err := thrift.Marshal(new(thrift.CompactProtocol), &md)
	if err != nil {
		t.Fatal(err)
	}
	bad := append(slices.Clone(v[:len(v)-8-n]), footer...)
	bad = binary.LittleEndian.AppendUint32(bad, uint32(len(footer)))
	bad = append(bad, "PAR1"...)
	bm := stream.Message("sts/train/p.parquet", header(m, stream.HeaderRows), bad)
	for name, decode := range map[string]func() error{
		"Decode":        func() error { _, err := stream.Decode(bm); return err },
		"DecodeColumns": func() error { _, err := stream.DecodeColumns(bm, stream.Columns()); return err },
	} {
		err := decode()
		if !errors.Is(err, stream.ErrPayload) || !strings.Contains(err.Error(), "meta.key_value.key") {
			t.Errorf("%s of a chunk whose data page lies in another column: %v, want ErrPayload naming the column", name, err)
		}
	}
	if _, err := stream.Decode(m); err != nil {
		t.Fatalf("the value before the change: %v", err)
	}
}
