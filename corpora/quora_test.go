package corpora_test

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"slices"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/parastream/parastream/corpora"
)

const quoraHeader = "id\tqid1\tqid2\tquestion1\tquestion2\tis_duplicate\n"

// quoraRead reads data, given as a file's bytes, as Quora pairs.
func quoraRead(t *testing.T, data string, opts corpora.Options) ([]corpora.Example, []*corpora.ParseError, corpora.Stats, error) {
	t.Helper()
	in, err := corpora.NewInput("mem.tsv", strings.NewReader(data), opts.Limits)
	if err != nil {
		t.Fatal(err)
	}
	r := corpora.NewQuoraReader(in, opts)
	defer r.Close()
	var exs []corpora.Example
	var rejects []*corpora.ParseError
	err = corpora.Drain(r, func(e corpora.Example) error { exs = append(exs, e); return nil },
		func(pe *corpora.ParseError) error { rejects = append(rejects, pe); return nil })
	return exs, rejects, r.Stats(), err
}

type quoraReject struct {
	line   int64
	reason corpora.Reason
}

func quoraRejects(rejects []*corpora.ParseError) []quoraReject {
	out := make([]quoraReject, len(rejects))
	for i, pe := range rejects {
		out[i] = quoraReject{pe.Source.Line, pe.Reason}
	}
	return out
}

func TestQuoraFixture(t *testing.T) {
	path := fixture("quora/mini.tsv")
	exs, rejects, st := mustReadAll(t, "quora", []string{path}, corpora.Options{})
	// 16 lines: the header, 13 records on one line each, one on two lines.
	if st.Records != 15 || len(exs) != 8 || st.Skipped["header"] != 1 || st.Skipped["empty_pair"] != 1 {
		t.Fatalf("got %d examples, stats %+v", len(exs), st)
	}
	want := []quoraReject{
		{7, corpora.ReasonBadQuote},          // text after a closing quote
		{8, corpora.ReasonBadNumber},         // is_duplicate "yes"
		{9, corpora.ReasonFieldCount},        // five fields
		{10, corpora.ReasonBadQuote},         // a stray quote, closed by a quote at line 12
		{15, corpora.ReasonUnterminatedQuot}, // a stray quote still open at the end
	}
	if got := quoraRejects(rejects); !slices.Equal(got, want) {
		t.Errorf("rejects = %v, want %v", got, want)
	}
	if got := string(rejects[3].Record); got != "7\t15\t16\t\"Is this a stray quote?\tHow do I fix a stray quote?\t0" {
		t.Errorf("stray-quote reject keeps %q, want its first line alone", got)
	}

	ids := make([]string, len(exs))
	var dups int
	for i, e := range exs {
		ids[i] = e.ID
		if e.Label == 1 {
			dups++
		}
		if !e.HasLabel || e.Corpus != "quora" || e.Dataset != "quora" || e.LangA != "en" || e.LangB != "en" || e.Source.File != path {
			t.Errorf("%s: %+v", e.ID, e)
		}
	}
	// Records 8 and 9 come back after the stray quote at line 10 and 13
	// after the one at line 15.
	if want := []string{"quora:0", "quora:1", "quora:2", "quora:3", "quora:8", "quora:9", "quora:11", "quora:13"}; !slices.Equal(ids, want) || dups != 4 {
		t.Errorf("ids = %v with %d duplicates, want %v with 4", ids, dups, want)
	}
	checks := []struct {
		i           int
		line        int64
		a, b, group string
		label       float64
	}{
		{0, 2, "What is the step by step guide to invest in share market in india?", "What is the step by step guide to invest in share market?", "quora:q1", 0},
		{1, 3, `What does the word "hysteria" mean?`, `What is the meaning of the word "hysteria"?`, "quora:q3", 1},
		{2, 4, "Which is the best RO water purifier in Ahmedabad?\n", "What is the best water purifier available in India?", "quora:q5", 0},
		{3, 6, "How do I type a tab\tin a quoted field?", "How can I insert a tab character into a text box?", "quora:q7", 1},
		{4, 11, "What is Go?", "What is Golang?", "quora:q17", 1},
		{5, 12, `Why do people say "Go" and not "Golang"?`, `What is the "right" name for Go?`, "quora:q19", 0},
		{7, 16, "What is the last question?", "Which question comes last?", "quora:q27", 0},
	}
	for _, c := range checks {
		e := exs[c.i]
		if e.Source.Line != c.line || e.A != c.a || e.B != c.b || e.Group != c.group || e.Label != c.label {
			t.Errorf("example %d = %+v", c.i, e)
		}
	}
	if m := exs[3].Meta; m["qid1"] != "8" || m["qid2"] != "7" || len(m) != 2 {
		t.Errorf("meta = %v", m)
	}
}

func TestQuoraSharedData(t *testing.T) {
	path := sharedData(t, "corpora/quora/quora_duplicate_questions.sample.tsv")
	exs, rejects, st := mustReadAll(t, "quora", []string{path}, corpora.Options{})
	// 10,000 lines: the header and 9,998 pairs, one of which spans lines
	// 2,334-2,335.
	if len(exs) != 9998 || len(rejects) != 0 || st.Records != 9999 || st.Skipped["header"] != 1 {
		t.Fatalf("%d examples, stats %+v", len(exs), st)
	}
	var dups int
	var multi []corpora.Example
	for _, e := range exs {
		if e.Label == 1 {
			dups++
		}
		if strings.Contains(e.A, "\n") || strings.Contains(e.B, "\n") {
			multi = append(multi, e)
		}
	}
	if dups != 3710 {
		t.Errorf("%d duplicates, want 3,710", dups)
	}
	if len(multi) != 1 {
		t.Fatalf("%d pairs hold a newline, want 1", len(multi))
	}
	e := multi[0]
	if e.ID != "quora:2332" || e.Source.Line != 2334 || e.A != "Which is the best RO water purifier in Ahmedabad?\n" || e.Group != "quora:q4637" {
		t.Errorf("multi-line pair = %+v", e)
	}
	if next := exs[2333]; next.ID != "quora:2333" || next.Source.Line != 2336 {
		t.Errorf("the pair after it = %+v", next)
	}
	// Doubled quotes inside quoted fields (line 10).
	if e := exs[8]; e.B != `When do you use "&" instead of "and"?` || e.Source.Line != 10 {
		t.Errorf("line 10 = %+v", e)
	}
}

func TestQuoraHeader(t *testing.T) {
	for _, c := range []struct{ name, data string }{
		{"empty", ""},
		{"no header", "0\t1\t2\ta\tb\t0\n"},
		{"short header", "id\tqid1\tqid2\tquestion1\tquestion2\n"},
		{"comma-separated", "id,qid1,qid2,question1,question2,is_duplicate\n"},
		{"bad quote", "\"id\"x\tqid1\tqid2\tquestion1\tquestion2\tis_duplicate\n"},
	} {
		_, _, _, err := quoraRead(t, c.data, corpora.Options{})
		var fe *corpora.FileError
		if !errors.Is(err, corpora.ErrFormat) || !errors.As(err, &fe) || fe.File != "mem.tsv" {
			t.Errorf("%s: err = %v, want a FileError wrapping ErrFormat", c.name, err)
		}
	}
	// A byte-order mark, CRLF line ends, quoted names and another column
	// order are all fine; a CRLF inside a quoted field reads as "\n".
	data := "\ufeff\"is_duplicate\"\tquestion2\tquestion1\tqid2\tqid1\tid\r\n" +
		"1\t\"Why?\r\nReally?\"\tHow come?\t12\t3\t7\r\n"
	exs, rejects, st, err := quoraRead(t, data, corpora.Options{Dataset: "qqp", LangA: "fr"})
	if err != nil || len(rejects) != 0 || len(exs) != 1 {
		t.Fatalf("examples %v, rejects %v, err %v", exs, rejects, err)
	}
	e := exs[0]
	if e.ID != "quora:7" || e.A != "How come?" || e.B != "Why?\nReally?" || e.Label != 1 || e.Group != "quora:q3" ||
		e.Dataset != "qqp" || e.LangA != "fr" || e.LangB != "en" || e.Source.Line != 2 {
		t.Errorf("example = %+v", e)
	}
	if st.Records != 2 {
		t.Errorf("stats %+v", st)
	}
}

func TestQuoraRecords(t *testing.T) {
	for _, c := range []struct {
		name    string
		body    string
		opts    corpora.Options
		ids     []string
		rejects []quoraReject
	}{
		{"trailing tab", "1\t2\t3\ta\tb\t0\t\n2\t4\t5\tc\td\t1\n", corpora.Options{},
			[]string{"quora:2"}, []quoraReject{{2, corpora.ReasonFieldCount}}},
		{"bad label", "1\t2\t3\ta\tb\t2\n2\t4\t5\tc\td\t1.0\n3\t6\t7\te\tf\t\n", corpora.Options{},
			nil, []quoraReject{{2, corpora.ReasonBadNumber}, {3, corpora.ReasonBadNumber}, {4, corpora.ReasonBadNumber}}},
		{"bad ids", "x\t2\t3\ta\tb\t0\n1\t-2\t3\ta\tb\t0\n1\t2\t\ta\tb\t0\n", corpora.Options{},
			nil, []quoraReject{{2, corpora.ReasonBadNumber}, {3, corpora.ReasonBadNumber}, {4, corpora.ReasonBadNumber}}},
		{"bad UTF-8", "1\t2\t3\ta\xff\tb\t0\n", corpora.Options{}, nil, []quoraReject{{2, corpora.ReasonBadUTF8}}},
		{"blank question", "1\t2\t3\t  \tb\t0\n2\t4\t5\t\"\"\tb\t0\n3\t6\t7\ta\tb\t0\n", corpora.Options{},
			[]string{"quora:3"}, nil},
		{"quote inside an unquoted field", "1\t2\t3\tsay \"hi\"\tb\"\t0\n", corpora.Options{}, []string{"quora:1"}, nil},
		{"empty quoted field then more", "1\t2\t3\t\"a\"\"\"\t\"\"\"b\"\t0\n", corpora.Options{}, []string{"quora:1"}, nil},
		{"bad quote on a later line", "1\t2\t3\t\"a\n\"x\tb\t0\n2\t4\t5\tc\td\t1\n", corpora.Options{},
			[]string{"quora:2"}, []quoraReject{{2, corpora.ReasonBadQuote}, {3, corpora.ReasonUnterminatedQuot}}},
		{"multi-line record with too many fields", "1\t2\t3\t\"a\nb\"\tc\td\t0\n2\t4\t5\tc\td\t1\n", corpora.Options{},
			[]string{"quora:2"}, []quoraReject{{2, corpora.ReasonFieldCount}, {3, corpora.ReasonFieldCount}}},
		// The record opened at line 2 passes 64 bytes at line 3, which is
		// read again.
		{"record too large", "1\t2\t3\t\"" + strings.Repeat("a", 30) + "\n" + strings.Repeat("b", 30) + "\n2\t4\t5\tc\td\t1\n", corpora.Options{Limits: corpora.Limits{MaxLineBytes: 64}},
			[]string{"quora:2"}, []quoraReject{{2, corpora.ReasonRecordTooLarge}, {3, corpora.ReasonFieldCount}}},
		// A physical line over the limit inside a quoted field: the
		// record and the line are both rejected.
		{"long line inside a quote", "1\t2\t3\t\"a\n" + strings.Repeat("b", 100) + "\n2\t4\t5\tc\td\t1\n", corpora.Options{Limits: corpora.Limits{MaxLineBytes: 64}},
			[]string{"quora:2"}, []quoraReject{{2, corpora.ReasonRecordTooLarge}, {3, corpora.ReasonLineTooLong}}},
		{"long line", strings.Repeat("b", 100) + "\n2\t4\t5\tc\td\t1", corpora.Options{Limits: corpora.Limits{MaxLineBytes: 64}},
			[]string{"quora:2"}, []quoraReject{{2, corpora.ReasonLineTooLong}}},
		{"unterminated at the end", "1\t2\t3\ta\t\"b", corpora.Options{}, nil, []quoraReject{{2, corpora.ReasonUnterminatedQuot}}},
		{"stray quotes back to back", "1\t2\t3\t\"a\tb\t0\n2\t4\t5\t\"c\td\t0\n3\t6\t7\te\tf\t1\n", corpora.Options{},
			[]string{"quora:3"}, []quoraReject{{2, corpora.ReasonBadQuote}, {3, corpora.ReasonUnterminatedQuot}}},
	} {
		exs, rejects, st, err := quoraRead(t, quoraHeader+c.body, c.opts)
		if err != nil {
			t.Errorf("%s: %v", c.name, err)
			continue
		}
		ids := make([]string, len(exs))
		for i, e := range exs {
			ids[i] = e.ID
		}
		if !slices.Equal(ids, c.ids) || !slices.Equal(quoraRejects(rejects), c.rejects) {
			t.Errorf("%s: ids %v, rejects %v; want %v, %v", c.name, ids, rejects, c.ids, c.rejects)
		}
		if st.Examples+st.RejectedTotal()+st.Skipped["header"]+st.Skipped["empty_pair"] != st.Records {
			t.Errorf("%s: counts do not add up: %+v", c.name, st)
		}
	}
}

func TestQuoraGroup(t *testing.T) {
	exs, _, _, err := quoraRead(t, quoraHeader+"1\t100\t99\ta\tb\t0\n2\t0099\t100\tc\td\t0\n3\t9\t10\te\tf\t0\n", corpora.Options{})
	if err != nil || len(exs) != 3 {
		t.Fatal(exs, err)
	}
	// Compared as numbers, not as text.
	if exs[0].Group != "quora:q99" || exs[1].Group != "quora:q0099" || exs[2].Group != "quora:q9" {
		t.Errorf("groups %q %q %q", exs[0].Group, exs[1].Group, exs[2].Group)
	}
}

func FuzzQuora(f *testing.F) {
	if b, err := os.ReadFile(fixture("quora/mini.tsv")); err == nil {
		f.Add(b, "", "")
	}
	// From the real sample: the header and the first pairs, and the pair
	// that spans two lines with its neighbours.
	if b, err := os.ReadFile(repoRoot() + "/../shared/data/corpora/quora/quora_duplicate_questions.sample.tsv"); err == nil {
		lines := bytes.SplitAfter(b, []byte("\n"))
		if len(lines) > 2340 {
			f.Add(bytes.Join(lines[:12], nil), "", "")
			f.Add(append([]byte(quoraHeader), bytes.Join(lines[2331:2337], nil)...), "", "")
		}
	}
	f.Add([]byte("1\t2\t3\t\"a\n\"x\tb\t0\n"), "a \"quoted\"\tquestion\n", "b")
	f.Add([]byte(""), "\"", "\"\"")
	f.Fuzz(func(t *testing.T, data []byte, q1, q2 string) {
		fuzzReader(t, "quora", data)
		fuzzReader(t, "quora", append([]byte(quoraHeader), data...))
		quoraRoundTrip(t, q1, q2)
	})
}

// quoraRoundTrip writes a pair with quoting and checks that it reads back.
func quoraRoundTrip(t *testing.T, q1, q2 string) {
	for _, q := range []string{q1, q2} {
		if !utf8.ValidString(q) || strings.TrimSpace(q) == "" || strings.Contains(q, "\r") || len(q) > 1000 {
			return
		}
	}
	quote := func(s string) string { return `"` + strings.ReplaceAll(s, `"`, `""`) + `"` }
	data := quoraHeader + "5\t10\t11\t" + quote(q1) + "\t" + quote(q2) + "\t1\n" + "6\t12\t13\tx\ty\t0\n"
	exs, rejects, _, err := quoraRead(t, data, corpora.Options{})
	if err != nil || len(rejects) != 0 || len(exs) != 2 {
		t.Fatalf("%q: examples %v, rejects %v, err %v", data, exs, rejects, err)
	}
	if exs[0].A != q1 || exs[0].B != q2 || exs[1].Source.Line != int64(3+strings.Count(q1+q2, "\n")) {
		t.Fatalf("%q read back as %+v, then %+v", data, exs[0], exs[1])
	}
}

func ExampleNewQuoraReader() {
	tsv := "id\tqid1\tqid2\tquestion1\tquestion2\tis_duplicate\n" +
		"7\t15\t14\t\"What does \"\"hysteria\"\" mean?\"\tWhat is hysteria?\t1\n"
	in, _ := corpora.NewInput("quora.tsv", strings.NewReader(tsv), corpora.Limits{})
	r := corpora.NewQuoraReader(in, corpora.Options{})
	defer r.Close()
	e, _ := r.Next()
	fmt.Println(e)
	fmt.Println(e.Group, e.Source)
	// Output:
	// quora:7 [quora/quora] A="What does \"hysteria\" mean?" B="What is hysteria?" label=1 qid1="15" qid2="14"
	// quora:q14 quora.tsv:2
}
