package shards_test

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/parastream/parastream/shards"
)

// The interop test reads shards with DuckDB (the @duckdb/node-api package in
// tools/interop), a Parquet implementation independent of parquet-go, and
// compares every value with what was written. It needs node and
// `npm ci` in tools/interop; without them it skips, unless
// PARASTREAM_REQUIRE_INTEROP=1, when it fails.

// interopReader returns the command line that runs read_parquet.mjs, or
// skips (or fails) the test when node or the DuckDB package is missing.
func interopReader(t *testing.T) []string {
	t.Helper()
	dir := filepath.Join(repoRoot(), "tools", "interop")
	missing := func(what string) {
		msg := fmt.Sprintf("interop test: %s; install with `cd tools/interop && npm ci`", what)
		if os.Getenv("PARASTREAM_REQUIRE_INTEROP") == "1" {
			t.Fatal(msg + " (PARASTREAM_REQUIRE_INTEROP=1 makes this a failure)")
		}
		t.Skip("skipping " + msg)
	}
	node, err := exec.LookPath("node")
	if err != nil {
		missing("node is not in PATH")
	}
	if _, err := os.Stat(filepath.Join(dir, "node_modules", "@duckdb", "node-api", "package.json")); err != nil {
		missing("tools/interop/node_modules/@duckdb/node-api is absent")
	}
	return []string{node, filepath.Join(dir, "read_parquet.mjs")}
}

// duckdb runs read_parquet.mjs with args and returns its JSON lines.
func duckdb(t *testing.T, cmdline []string, args ...string) []map[string]any {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, cmdline[0], append(cmdline[1:], args...)...)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("%s %s: %v\n%s", filepath.Base(cmdline[1]), strings.Join(args, " "), err, stderr.String())
	}
	var lines []map[string]any
	sc := bufio.NewScanner(bytes.NewReader(out))
	sc.Buffer(nil, 64<<20)
	for sc.Scan() {
		dec := json.NewDecoder(bytes.NewReader(sc.Bytes()))
		dec.UseNumber()
		var m map[string]any
		if err := dec.Decode(&m); err != nil {
			t.Fatalf("line %d of DuckDB's output: %v: %.200s", len(lines)+1, err, sc.Bytes())
		}
		lines = append(lines, m)
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	return lines
}

// interopRows are rows that stress a reader: unicode, control characters,
// quotes, empty and long values, NULL and extreme numbers.
func interopRows() []shards.Row {
	f := func(v float64) *float64 { return &v }
	long := strings.Repeat("long ✓ text, ", 10_000) // 140 KB
	rows := []shards.Row{
		{
			ID: "plain:1", Corpus: "sts", Dataset: "2014/deft-forum", Split: "train",
			A: "A man is playing a guitar.", B: "A person plays guitar.", LangA: "en", LangB: "en",
			Context: []string{"what is he doing?", "look at that \"guy\"\t!"},
			Label:   f(4.2), GroupKey: "g1", SourceFile: "STS.input.deft-forum.txt", SourceLine: 1, SourceOffset: 0,
			Scores:  []float64{0.1, 0.2, 1.0 / 3},
			Meta:    map[string]string{"author": "bob", "parent_id": "t1_abc", "score": "17"},
			TokensA: []string{"a", "man", "is", "playing", "a", "guitar", "."},
			TokensB: []string{"a", "person", "plays", "guitar", "."},
			IDsA:    []int32{4, 17, 9, 1200, 4, 33, 2}, IDsB: []int32{4, 88, 71, 33, 2},
			TopicsA: []float32{0.1, 0.25, 0, 1e-7}, TopicsB: []float32{0.5, 0.5, 0, 0},
		},
		{ID: "empty:2", Corpus: "sts", Split: "train"}, // everything empty, label NULL
		{
			ID: "unicode:3", Corpus: "europarl", Dataset: "fr-en", Split: "dev",
			A: "Naïve café — déjà vu ☕ 🚀 日本語のテキスト", B: "مرحبا بالعالم \u200eעברית\u200f e\u0301 (combining)",
			LangA: "fr", LangB: "ar", Label: f(0), GroupKey: "ключ", SourceFile: "europarl-v7.fr-en.fr", SourceLine: 42, SourceOffset: 1 << 40,
			Meta:    map[string]string{"ключ": "значение", "emoji 🔑": "🔒", "empty": ""},
			TokensA: []string{"naïve", "café", "☕", "🚀", "日本語"}, TokensB: []string{"", " ", "مرحبا"},
		},
		{
			ID: "control:4", Corpus: "reddit", Dataset: "2015-01", Split: "test",
			A: "tab\there, newline\nthere, CR\r, quote \" and 'single', backslash \\ and \\n literal",
			B: "NUL\x00inside, bell\a, escape \x1b[0m, DEL\x7f", LangA: "en", LangB: "en",
			Label: f(-1.5), GroupKey: "t3_\"quoted\"", SourceFile: "RC_2015-01.bz2", SourceLine: math.MaxInt64, SourceOffset: math.MinInt64,
			Scores:  []float64{math.Inf(1), math.Inf(-1), math.NaN(), math.MaxFloat64, math.SmallestNonzeroFloat64, math.Copysign(0, -1)},
			Meta:    map[string]string{"body\tkey": "line1\nline2", "q\"uote": "\\", "sp ace": "  "},
			TokensA: []string{"tab\there", "new\nline", `"`}, TokensB: []string{"\x00"},
			IDsA: []int32{math.MaxInt32, math.MinInt32, 0, -1}, IDsB: []int32{},
			TopicsA: []float32{math.MaxFloat32, math.SmallestNonzeroFloat32, float32(math.Copysign(0, -1)), 1.0 / 3}, TopicsB: []float32{},
		},
		{
			ID: "long:5", Corpus: "simpwiki", Split: "train", A: long, B: strings.ToUpper(long),
			LangA: "en", LangB: "en", Label: f(1), GroupKey: long[:1000], SourceFile: "normal.aligned",
			TokensA: strings.Fields(long), IDsA: make([]int32, 5000), TopicsA: make([]float32, 300),
		},
	}
	// Enough ordinary rows for several row groups, to check the row order.
	for i, r := range testRows(99, 1500) {
		r.ID = fmt.Sprintf("gen:%d", i)
		rows = append(rows, r)
	}
	return rows
}

func TestInteropDuckDB(t *testing.T) {
	cmdline := interopReader(t)
	root := t.TempDir()
	rows := interopRows()
	infos := writeSplit(t, root, "mixed", "all", shards.WriterOptions{RowGroupRows: 400}, rows)
	name := filepath.Join(root, infos[0].Path)

	t.Run("describe", func(t *testing.T) {
		want := [][2]string{
			{"id", "VARCHAR"}, {"corpus", "VARCHAR"}, {"dataset", "VARCHAR"}, {"split", "VARCHAR"},
			{"a", "VARCHAR"}, {"b", "VARCHAR"}, {"context", "VARCHAR[]"}, {"lang_a", "VARCHAR"}, {"lang_b", "VARCHAR"},
			{"label", "DOUBLE"}, {"group_key", "VARCHAR"}, {"source_file", "VARCHAR"},
			{"source_line", "BIGINT"}, {"source_offset", "BIGINT"},
			{"scores", "DOUBLE[]"}, {"meta", "MAP(VARCHAR, VARCHAR)"},
			{"tokens_a", "VARCHAR[]"}, {"tokens_b", "VARCHAR[]"},
			{"ids_a", "INTEGER[]"}, {"ids_b", "INTEGER[]"},
			{"topics_a", "FLOAT[]"}, {"topics_b", "FLOAT[]"},
		}
		var got [][2]string
		for _, c := range duckdb(t, cmdline, "--describe", name) {
			got = append(got, [2]string{fmt.Sprint(c["column_name"]), fmt.Sprint(c["column_type"])})
		}
		if !slices.Equal(got, want) {
			t.Errorf("DuckDB DESCRIBE:\n got %v\nwant %v", got, want)
		}
	})

	t.Run("rows", func(t *testing.T) {
		got := duckdb(t, cmdline, name)
		if len(got) != len(rows) {
			t.Fatalf("DuckDB read %d rows, want %d", len(got), len(rows))
		}
		for i := range rows {
			compareRow(t, i, rows[i], got[i])
		}
	})
}

// compareRow compares one row as written with DuckDB's JSON of it.
func compareRow(t *testing.T, i int, want shards.Row, got map[string]any) {
	t.Helper()
	errorf := func(col, format string, args ...any) {
		t.Helper()
		t.Errorf("row %d (%s) column %s: "+format, append([]any{i, want.ID, col}, args...)...)
	}
	if len(got) != 22 {
		t.Errorf("row %d has %d columns, want 22: %v", i, len(got), slices.Sorted(maps.Keys(got)))
	}
	for col, w := range map[string]string{
		"id": want.ID, "corpus": want.Corpus, "dataset": want.Dataset, "split": want.Split,
		"a": want.A, "b": want.B, "lang_a": want.LangA, "lang_b": want.LangB,
		"group_key": want.GroupKey, "source_file": want.SourceFile,
	} {
		if g, ok := got[col].(string); !ok || g != w {
			errorf(col, "got %.80q, want %.80q", got[col], w)
		}
	}
	for col, w := range map[string]int64{"source_line": want.SourceLine, "source_offset": want.SourceOffset} {
		if g, err := jsonInt(got[col]); err != nil || g != w {
			errorf(col, "got %v (%v), want %d", got[col], err, w)
		}
	}
	switch {
	case want.Label == nil && got["label"] != nil:
		errorf("label", "got %v, want NULL", got["label"])
	case want.Label != nil:
		if g, err := jsonFloat(got["label"]); err != nil || g != *want.Label {
			errorf("label", "got %v (%v), want %v", got["label"], err, *want.Label)
		}
	}
	compareList(t, errorf, "scores", got["scores"], want.Scores, func(g any, w float64) bool {
		f, err := jsonFloat(g)
		return err == nil && (f == w || math.IsNaN(f) && math.IsNaN(w)) && math.Signbit(f) == math.Signbit(w)
	})
	compareList(t, errorf, "context", got["context"], want.Context, func(g any, w string) bool { return g == w })
	compareList(t, errorf, "tokens_a", got["tokens_a"], want.TokensA, func(g any, w string) bool { return g == w })
	compareList(t, errorf, "tokens_b", got["tokens_b"], want.TokensB, func(g any, w string) bool { return g == w })
	sameInt := func(g any, w int32) bool { n, err := jsonInt(g); return err == nil && n == int64(w) }
	compareList(t, errorf, "ids_a", got["ids_a"], want.IDsA, sameInt)
	compareList(t, errorf, "ids_b", got["ids_b"], want.IDsB, sameInt)
	// float32 values: DuckDB widens them to float64; allow for a reader
	// that prints them at float32 precision.
	closeFloat32 := func(g any, w float32) bool {
		f, err := jsonFloat(g)
		return err == nil && math.Abs(f-float64(w)) <= 1e-6*math.Max(math.Abs(float64(w)), 1e-30)
	}
	compareList(t, errorf, "topics_a", got["topics_a"], want.TopicsA, closeFloat32)
	compareList(t, errorf, "topics_b", got["topics_b"], want.TopicsB, closeFloat32)

	meta, ok := got["meta"].(map[string]any)
	if !ok || len(meta) != len(want.Meta) {
		errorf("meta", "got %v, want %v", got["meta"], want.Meta)
		return
	}
	for k, w := range want.Meta {
		if meta[k] != w {
			errorf("meta", "key %q: got %q, want %q", k, meta[k], w)
		}
	}
}

func compareList[T any](t *testing.T, errorf func(col, format string, args ...any), col string, got any, want []T, same func(any, T) bool) {
	t.Helper()
	list, ok := got.([]any)
	if !ok || len(list) != len(want) {
		errorf(col, "got %.200v, want %d values %.200v", got, len(want), want)
		return
	}
	for j := range want {
		if !same(list[j], want[j]) {
			errorf(col, "value %d: got %v, want %v", j, list[j], want[j])
		}
	}
}

// jsonInt reads a BIGINT from read_parquet.mjs: a number, or a decimal
// string beyond 2^53.
func jsonInt(v any) (int64, error) {
	switch v := v.(type) {
	case json.Number:
		return v.Int64()
	case string:
		return strconv.ParseInt(v, 10, 64)
	}
	return 0, fmt.Errorf("not an integer: %T", v)
}

// jsonFloat reads a DOUBLE or FLOAT: a number, or "NaN", "Infinity",
// "-Infinity", "-0".
func jsonFloat(v any) (float64, error) {
	switch v := v.(type) {
	case json.Number:
		return strconv.ParseFloat(string(v), 64)
	case string:
		switch v {
		case "NaN":
			return math.NaN(), nil
		case "Infinity":
			return math.Inf(1), nil
		case "-Infinity":
			return math.Inf(-1), nil
		case "-0":
			return math.Copysign(0, -1), nil
		}
	}
	return 0, fmt.Errorf("not a number: %T %v", v, v)
}
