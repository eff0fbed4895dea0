package evalsink_test

import (
	"bufio"
	"os"
	"reflect"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/parastream/parastream/evalsink"
)

// resultColumns returns the Parquet names of Result's fields, in order.
func resultColumns(t *testing.T) []string {
	t.Helper()
	rt := reflect.TypeFor[evalsink.Result]()
	names := make([]string, rt.NumField())
	for i := range rt.NumField() {
		tag, ok := rt.Field(i).Tag.Lookup("parquet")
		if !ok {
			t.Fatalf("Result.%s has no parquet tag", rt.Field(i).Name)
		}
		names[i], _, _ = strings.Cut(tag, ",")
	}
	return names
}

// TestColumnsCoverResult: the column table has an entry for each field of
// Result and a field for each entry, in the field's order and under its
// Parquet name; each entry reads its own field (setting that field alone
// changes that column's CSV cell alone); a figure column has a label and
// the kinds that carry it.
func TestColumnsCoverResult(t *testing.T) {
	fields := resultColumns(t)
	cols := evalsink.Columns()
	var names []string
	for _, c := range cols {
		names = append(names, c.Name)
	}
	for _, f := range fields {
		if !slices.Contains(names, f) {
			t.Errorf("Result's field %q has no entry in evalsink.Columns: add one", f)
		}
	}
	for _, n := range names {
		if !slices.Contains(fields, n) {
			t.Errorf("column %q of evalsink.Columns is no field of Result: add the field (parquet:%q)", n, n)
		}
	}
	if !slices.Equal(fields, names) {
		t.Fatalf("columns %v,\nwant Result's fields in order %v", names, fields)
	}
	one := 7.5
	for i, field := range fields {
		var r evalsink.Result
		v := reflect.ValueOf(&r).Elem().Field(i)
		switch v.Interface().(type) {
		case string:
			v.SetString("x")
		case int64:
			v.SetInt(3)
		case *float64:
			v.Set(reflect.ValueOf(&one))
		case map[string]float64:
			v.Set(reflect.ValueOf(map[string]float64{"pearson": 1}))
		case time.Time:
			v.Set(reflect.ValueOf(time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)))
		default:
			t.Fatalf("Result's field %q has a type the column table does not write: %s", field, v.Type())
		}
		var zero evalsink.Result
		for _, c := range cols {
			changed := c.Text(&r) != c.Text(&zero)
			if changed != (c.Name == field) {
				t.Errorf("setting Result's %q changes column %q: %v", field, c.Name, changed)
			}
		}
	}
	for _, c := range cols {
		if c.IsFigure() && (c.Label == "" || len(c.Kinds) == 0) {
			t.Errorf("figure column %q: give it a Label and the Kinds of row that carry it", c.Name)
		}
		if !c.IsFigure() && (c.Label != "" || len(c.Kinds) > 0 || c.Items) {
			t.Errorf("column %q is no figure: it takes no Label, Kinds or Items", c.Name)
		}
		if c.Version < 1 || c.Version > evalsink.ResultSchemaVersion {
			t.Errorf("column %q: Version %d, want 1 to ResultSchemaVersion (%d)", c.Name, c.Version, evalsink.ResultSchemaVersion)
		}
	}
}

// TestDocsListEveryColumn: docs/evalsink.md's table of the result
// columns names every column with its DuckDB type, and no other.
func TestDocsListEveryColumn(t *testing.T) {
	f, err := os.Open("../docs/evalsink.md")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	documented := map[string]string{} // column: DuckDB type
	in := false
	code := regexp.MustCompile("`([a-z0-9_]+)`")
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		line := sc.Text()
		if line == "| column | DuckDB type | what |" {
			in = true
			continue
		}
		if in && !strings.HasPrefix(line, "|") {
			break
		}
		cells := strings.Split(line, "|")
		if !in || len(cells) < 3 || strings.HasPrefix(cells[1], "---") {
			continue
		}
		for _, m := range code.FindAllStringSubmatch(cells[1], -1) {
			documented[m[1]] = strings.TrimSpace(cells[2])
		}
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	if len(documented) == 0 {
		t.Fatal("docs/evalsink.md has no table headed | column | DuckDB type | what |")
	}
	for _, c := range evalsink.Columns() {
		typ, ok := documented[c.Name]
		switch {
		case !ok:
			t.Errorf("docs/evalsink.md's column table does not list %q: add it (%s)", c.Name, c.DuckDBType())
		case typ != c.DuckDBType():
			t.Errorf("docs/evalsink.md gives %q the type %s, want %s", c.Name, typ, c.DuckDBType())
		}
		delete(documented, c.Name)
	}
	for name := range documented {
		t.Errorf("docs/evalsink.md lists %q, which is no column", name)
	}
}
