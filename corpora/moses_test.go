package corpora_test

import (
	"bufio"
	"bytes"
	"compress/gzip"
	"errors"
	"io"
	"math"
	"os"
	"path/filepath"
	"testing"

	"github.com/parastream/parastream/corpora"
)

// mosesWantRejects checks rejects against line → reason, and that each detail
// says something.
func mosesWantRejects(t *testing.T, rejects []*corpora.ParseError, want map[int64]corpora.Reason) {
	t.Helper()
	got := map[int64]corpora.Reason{}
	for _, pe := range rejects {
		got[pe.Source.Line] = pe.Reason
		if pe.Reason != corpora.ReasonBadUTF8 && pe.Detail == "" {
			t.Errorf("reject %v has no detail", pe)
		}
		if len(pe.Record) == 0 {
			t.Errorf("reject %v keeps no record", pe)
		}
	}
	for line, r := range want {
		if got[line] != r {
			t.Errorf("line %d: reject reason %q, want %q", line, got[line], r)
		}
	}
	if len(got) != len(want) {
		t.Errorf("rejects %v, want %v", got, want)
	}
}

func TestMosesFixtureThreeFields(t *testing.T) {
	exs, rejects, st := mustReadAll(t, "moses", []string{fixture("moses/fr-en.phrase-table")}, corpora.Options{})
	mosesWantRejects(t, rejects, map[int64]corpora.Reason{
		8: corpora.ReasonBadNumber, 9: corpora.ReasonFieldCount, 10: corpora.ReasonEmptyText,
		11: corpora.ReasonScoreCount, 12: corpora.ReasonBadScore, 16: corpora.ReasonBadNumber, 17: corpora.ReasonBadUTF8,
	})
	if len(exs) != 13 || st.Records != 21 || st.Examples != 13 || st.RejectedTotal() != 7 || st.Skipped["blank_line"] != 1 {
		t.Fatalf("got %d examples, stats %+v", len(exs), st)
	}
	e := exs[0]
	if e.A != "la maison" || e.B != "the house" || e.LangA != "fr" || e.LangB != "en" || e.Dataset != "fr-en" || e.Corpus != "moses" {
		t.Errorf("first = %+v", e)
	}
	if e.ID != "moses:fr-en:1" || e.Group != "moses:fr-en:la maison" || e.Source.Line != 1 || e.Source.Offset != 0 {
		t.Errorf("first provenance = %+v", e)
	}
	if !e.HasLabel || e.Label != 0.7 || len(e.Scores) != 5 || e.Scores[0] != 0.8 || e.Scores[4] != 2.718 || e.Meta != nil {
		t.Errorf("first label %v %g, scores %v, meta %v", e.HasLabel, e.Label, e.Scores, e.Meta)
	}
	if exs[1].Group != e.Group || exs[3].Group == e.Group {
		t.Errorf("groups %q %q %q", e.Group, exs[1].Group, exs[3].Group)
	}
	if exs[7].A != "à l' école" || exs[7].ID != "moses:fr-en:13" {
		t.Errorf("accented row = %+v", exs[7])
	}
	last := exs[len(exs)-1]
	if last.ID != "moses:fr-en:21" || last.Label != 1.89321e-07 {
		t.Errorf("last row (no newline) = %+v", last)
	}
	for _, pe := range rejects {
		switch pe.Source.Line {
		case 11:
			if !contains(pe.Detail, "4 scores") || !contains(pe.Detail, "line 1") || !contains(pe.Detail, "has 5") {
				t.Errorf("score count detail %q", pe.Detail)
			}
		case 8:
			if !contains(pe.Detail, `"abc"`) {
				t.Errorf("bad number detail %q", pe.Detail)
			}
		}
	}
	// Appending to one row's scores must not touch the next row's.
	s := append(exs[0].Scores, 99)
	if exs[1].Scores[0] != 0.2 || len(s) != 6 {
		t.Errorf("scores share storage: %v", exs[1].Scores)
	}
}

func TestMosesFixtureFiveFields(t *testing.T) {
	exs, rejects, st := mustReadAll(t, "moses", []string{fixture("moses/de-en.phrase-table")}, corpora.Options{})
	mosesWantRejects(t, rejects, map[int64]corpora.Reason{
		8: corpora.ReasonBadAlignment, 9: corpora.ReasonBadAlignment, 10: corpora.ReasonBadNumber,
		11: corpora.ReasonEmptyText, 12: corpora.ReasonFieldCount, 13: corpora.ReasonScoreCount,
	})
	if len(exs) != 12 || st.Records != 18 {
		t.Fatalf("got %d examples, stats %+v", len(exs), st)
	}
	e := exs[0]
	if e.A != "das haus" || e.B != "the house" || e.LangA != "de" || e.LangB != "en" || e.Label != 0.666667 || len(e.Scores) != 4 {
		t.Errorf("first = %+v", e)
	}
	if e.Meta["align"] != "0-0 1-1" || e.Meta["counts"] != "10 9 6" || len(e.Meta) != 2 {
		t.Errorf("first meta = %v", e.Meta)
	}
	// "||| |||" ends the row with empty sparse features and properties.
	if e := exs[5]; e.A != "ich bin" || e.Meta["counts"] != "30 25 25" || len(e.Meta) != 2 {
		t.Errorf("seven-field row = %+v", e)
	}
	if e := exs[len(exs)-1]; e.A != "! als beweis dafür , daß dieses" || e.Meta["align"] != "1-0 2-1 3-1 5-2 6-3" || e.Label != 1 {
		t.Errorf("last = %+v", e)
	}
	for _, pe := range rejects {
		if pe.Source.Line == 9 && !contains(pe.Detail, "source position 5") {
			t.Errorf("out-of-range alignment detail %q", pe.Detail)
		}
	}
}

func TestMosesNames(t *testing.T) {
	dir := t.TempDir()
	row := []byte("a ||| b ||| 0.1 0.2 0.3 0.4\n")
	for _, tc := range []struct {
		path              string
		opts              corpora.Options
		langA, langB, set string
	}{
		{"de-en/phrase-table.gz", corpora.Options{}, "de", "en", "de-en"},
		{"model.fr-en/phrase-table", corpora.Options{}, "fr", "en", "fr-en"},
		{"fr-en/model/phrase-table.gz", corpora.Options{}, "fr", "en", "fr-en"},
		{"de-en/work/model/phrase-table.gz", corpora.Options{}, "", "", "phrase-table"},
		{"europarl.es-en.table", corpora.Options{}, "es", "en", "es-en"},
		{"phrase-table", corpora.Options{}, "", "", "phrase-table"},
		{"phrase-table.gz", corpora.Options{LangA: "it", LangB: "en"}, "it", "en", "it-en"},
		{"de-en/phrase-table", corpora.Options{LangA: "nl", Dataset: "wmt"}, "nl", "en", "wmt"},
	} {
		p := filepath.Join(dir, tc.path)
		os.MkdirAll(filepath.Dir(p), 0o755)
		if err := os.WriteFile(p, row, 0o644); err != nil {
			t.Fatal(err)
		}
		exs, _, _ := mustReadAll(t, "moses", []string{p}, tc.opts)
		if len(exs) != 1 {
			t.Fatalf("%s: %d examples", tc.path, len(exs))
		}
		e := exs[0]
		if e.LangA != tc.langA || e.LangB != tc.langB || e.Dataset != tc.set || e.ID != "moses:"+tc.set+":1" || e.Group != "moses:"+tc.set+":a" {
			t.Errorf("%s %+v: got %q %q %q %q", tc.path, tc.opts, e.LangA, e.LangB, e.Dataset, e.ID)
		}
		os.RemoveAll(filepath.Join(dir, tc.path))
	}
}

func TestMosesForms(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "t")
	os.WriteFile(p, []byte(""+
		"a ||| b ||| 0.5 0.5\n"+ // fewer than three scores: no label
		"a ||| b ||| 0.5 0.5 ||| 0-0\n"+ // alignment without counts
		"a ||| b ||| 0.5 0.5 ||| ||| 1 1 1\n"+ // empty alignment
		"a ||| b ||| 0.5 0.5 ||| 0-0 ||| 1 1 1 ||| s=1 ||| {{k v}}\r\n"+ // seven fields, CRLF
		"a ||| b ||| 0.5 inf\n"+
		"a ||| b ||| \n"+
		"a ||| b ||| 0.5 0.5 ||| 0-1\n"+
		"a ||| b ||| 0.5 0.5 ||| 0-0 ||| -1\n"), 0o644)
	exs, rejects, _ := mustReadAll(t, "moses", []string{p}, corpora.Options{})
	mosesWantRejects(t, rejects, map[int64]corpora.Reason{5: corpora.ReasonBadNumber, 6: corpora.ReasonMissingField, 7: corpora.ReasonBadAlignment, 8: corpora.ReasonBadNumber})
	if len(exs) != 4 {
		t.Fatalf("%d examples", len(exs))
	}
	if exs[0].HasLabel || exs[0].Meta != nil {
		t.Errorf("two scores: %+v", exs[0])
	}
	if m := exs[1].Meta; m["align"] != "0-0" || len(m) != 1 {
		t.Errorf("four fields: %v", m)
	}
	if m := exs[2].Meta; m["align"] != "" || m["counts"] != "1 1 1" || len(m) != 2 {
		t.Errorf("empty alignment: %v", m)
	}
	if m := exs[3].Meta; m["sparse"] != "s=1" || m["properties"] != "{{k v}}" || len(m) != 4 {
		t.Errorf("seven fields: %v", m)
	}
}

func TestMosesLatin1(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "de-en.table")
	os.WriteFile(p, []byte("f\xfcr ||| for ||| 0.4 0.5 0.8 0.6\nStra\xdfe ||| street ||| 1 1 1 1\n"), 0o644)
	exs, rejects, st := mustReadAll(t, "moses", []string{p}, corpora.Options{})
	if len(exs) != 0 || st.Rejected[corpora.ReasonBadUTF8] != 2 || !contains(rejects[0].Detail, "latin1") {
		t.Fatalf("moses on Latin-1: %d examples, stats %+v", len(exs), st)
	}
	exs, _, _ = mustReadAll(t, "moses", []string{p}, corpora.Options{Encoding: "latin1"})
	if len(exs) != 2 || exs[0].A != "für" || exs[1].A != "Straße" || exs[1].Group != "moses:de-en:Straße" || exs[0].Corpus != "moses" {
		t.Fatalf("moses with latin1 encoding: %+v", exs)
	}
}

func TestMosesTruncatedGzip(t *testing.T) {
	data, err := os.ReadFile(fixture("moses/de-en.phrase-table"))
	if err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	zw := gzip.NewWriter(&buf)
	zw.Write(data)
	zw.Close()
	p := filepath.Join(t.TempDir(), "de-en.phrase-table.gz")
	os.WriteFile(p, buf.Bytes()[:buf.Len()*2/3], 0o644)
	_, _, _, err = readAll(t, "moses", []string{p}, corpora.Options{})
	var fe *corpora.FileError
	if !errors.Is(err, corpora.ErrTruncated) || !errors.As(err, &fe) || fe.File != p {
		t.Fatalf("err = %v, want a FileError naming %s wrapping ErrTruncated", err, p)
	}
}

// TestMosesSharedData reads the two real tables. Both are German to
// English: the one under fr-en/ is named for French but holds German
// phrases ("für", "der europäischen"), in ISO-8859-1.
func TestMosesSharedData(t *testing.T) {
	dir := sharedData(t, "corpora/moses")
	deEn := filepath.Join(dir, "de-en/phrase-table.gz")
	exs, rejects, st := mustReadAll(t, "moses", []string{deEn}, corpora.Options{})
	if len(exs) != 91883 || st.Records != 91883 || len(rejects) != 0 {
		t.Fatalf("de-en: %d examples, stats %+v, first reject %v", len(exs), st, rejects)
	}
	e := exs[0]
	if e.A != "! als beweis dafür , daß dieses" || e.B != "as proof that this" || e.LangA != "de" || e.LangB != "en" || e.Dataset != "de-en" {
		t.Errorf("de-en first = %+v", e)
	}
	if len(e.Scores) != 4 || e.Label != 1 || e.Meta["align"] != "1-0 2-1 3-1 5-2 6-3" || e.Meta["counts"] != "2 1 1" {
		t.Errorf("de-en first scores %v label %g meta %v", e.Scores, e.Label, e.Meta)
	}
	checkDirectProbability(t, "de-en", exs)

	frEn := filepath.Join(dir, "fr-en/phrase-table.gz")
	exs, _, st = mustReadAll(t, "moses", []string{frEn}, corpora.Options{})
	if st.Records != 52567 || len(exs) != 47116 || st.Rejected[corpora.ReasonBadUTF8] != 5451 || st.RejectedTotal() != 5451 {
		t.Fatalf("fr-en as UTF-8: %d examples, stats %+v", len(exs), st)
	}
	exs, rejects, st = mustReadAll(t, "moses", []string{frEn}, corpora.Options{Encoding: "latin1"})
	if len(exs) != 52567 || st.Records != 52567 || len(rejects) != 0 {
		t.Fatalf("fr-en: %d examples, stats %+v, first reject %v", len(exs), st, rejects)
	}
	e = exs[0]
	if e.A != "% aller" || e.B != "% of all the" || e.LangA != "fr" || e.Dataset != "fr-en" || len(e.Scores) != 5 || e.Scores[4] != 2.718 || e.Label != 0.030303 || e.Meta != nil {
		t.Errorf("fr-en first = %+v", e)
	}
	if e := exs[2018]; e.A != ", für" || e.Source.Line != 2019 {
		t.Errorf("fr-en line 2019 = %+v", e)
	}
	checkDirectProbability(t, "fr-en", exs)
}

// checkDirectProbability is the evidence for Label: φ(e|f) sums to 1 over
// the translations of each source phrase. (The first score, φ(f|e), does
// not: it sums to 1 over the sources of each target phrase instead.)
func checkDirectProbability(t *testing.T, name string, exs []corpora.Example) {
	t.Helper()
	sum := map[string]float64{}
	for _, e := range exs {
		sum[e.Group] += e.Label
	}
	for g, s := range sum {
		if math.Abs(s-1) > 0.01 {
			t.Errorf("%s: φ(e|f) of %q sums to %g", name, g, s)
			return
		}
	}
}

// realMosesLines returns the first n lines of a real phrase table, or nil.
func realMosesLines(rel string, n int) [][]byte {
	f, err := os.Open(filepath.Join(repoRoot(), "..", "shared", "data", rel))
	if err != nil {
		return nil
	}
	defer f.Close()
	zr, err := gzip.NewReader(f)
	if err != nil {
		return nil
	}
	var out [][]byte
	sc := bufio.NewScanner(zr)
	for len(out) < n && sc.Scan() {
		out = append(out, append([]byte(nil), sc.Bytes()...))
	}
	return out
}

func FuzzMoses(f *testing.F) {
	for _, p := range []string{"moses/fr-en.phrase-table", "moses/de-en.phrase-table"} {
		if b, err := os.ReadFile(fixture(p)); err == nil {
			f.Add(b)
		}
	}
	for _, p := range []string{"corpora/moses/fr-en/phrase-table.gz", "corpora/moses/de-en/phrase-table.gz"} {
		lines := realMosesLines(p, 20)
		for _, l := range lines {
			f.Add(l)
		}
		if len(lines) > 0 {
			f.Add(append(bytes.Join(lines, []byte("\n")), '\n'))
		}
	}
	f.Add([]byte("a ||| b ||| 1 ||| |||"))
	f.Add([]byte("||| ||| |||\n |||  ||| \n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		fuzzReader(t, "moses", data)
		fuzzReaderOpts(t, "moses", corpora.Options{Encoding: "latin1"}, data)
	})
}

// BenchmarkMoses reads the real de-en table (decompressed in memory once)
// and reports rows a second.
func BenchmarkMoses(b *testing.B) {
	path := sharedData(b, "corpora/moses/de-en/phrase-table.gz")
	f, err := os.Open(path)
	if err != nil {
		b.Fatal(err)
	}
	zr, err := gzip.NewReader(f)
	if err != nil {
		b.Fatal(err)
	}
	data, err := io.ReadAll(zr)
	f.Close()
	if err != nil {
		b.Fatal(err)
	}
	format, err := corpora.LookupFormat("moses")
	if err != nil {
		b.Fatal(err)
	}
	b.SetBytes(int64(len(data)))
	b.ReportAllocs()
	var rows int64
	for b.Loop() {
		in, err := corpora.NewInput("de-en/phrase-table", bytes.NewReader(data), corpora.Limits{})
		if err != nil {
			b.Fatal(err)
		}
		r, err := format.New([]*corpora.Input{in}, corpora.Options{})
		if err != nil {
			b.Fatal(err)
		}
		if err := corpora.Drain(r, nil, nil); err != nil {
			b.Fatal(err)
		}
		rows += r.Stats().Examples
		r.Close()
	}
	b.ReportMetric(float64(rows)/b.Elapsed().Seconds(), "rows/s")
}
