package corpora_test

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/parastream/parastream/corpora"
)

const msrpHeader = "Quality\t#1 ID\t#2 ID\t#1 String\t#2 String\r\n"

// msrpRead reads data, given as the bytes of a file called name, as MSRP.
func msrpRead(t *testing.T, name, data string, opts corpora.Options) ([]corpora.Example, []*corpora.ParseError, corpora.Stats, error) {
	t.Helper()
	in, err := corpora.NewInput(name, strings.NewReader(data), opts.Limits)
	if err != nil {
		t.Fatal(err)
	}
	r := corpora.NewMSRPReader(in, opts)
	defer r.Close()
	var exs []corpora.Example
	var rejects []*corpora.ParseError
	err = corpora.Drain(r, func(e corpora.Example) error { exs = append(exs, e); return nil },
		func(pe *corpora.ParseError) error { rejects = append(rejects, pe); return nil })
	return exs, rejects, r.Stats(), err
}

// lineStarts returns the byte offset of each line of b, from line 1.
func lineStarts(b []byte) []int64 {
	starts := []int64{0}
	for i, c := range b {
		if c == '\n' && i+1 < len(b) {
			starts = append(starts, int64(i+1))
		}
	}
	return starts
}

func TestMSRPFixture(t *testing.T) {
	path := fixture("msrp/msr_paraphrase_mini.txt")
	raw, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	exs, rejects, st := mustReadAll(t, "msrp", []string{path}, corpora.Options{})
	// 14 lines, the last without a line end: the header, 4 pairs and 9
	// malformed records.
	if len(exs) != 4 || st.Records != 14 || st.Examples != 4 || st.Skipped["header"] != 1 || st.RejectedTotal() != 9 {
		t.Fatalf("got %d examples, stats %+v; want 4 of 14 records, 9 rejected", len(exs), st)
	}
	wantRejects := []struct {
		line   int64
		reason corpora.Reason
		detail string
	}{
		{5, corpora.ReasonBadNumber, `Quality "2" is not 0 or 1`},
		{6, corpora.ReasonFieldCount, "4 field(s), the header has 5"},
		{7, corpora.ReasonEmptyText, "empty sentence"},
		{8, corpora.ReasonBadUTF8, ""},
		{9, corpora.ReasonBadNumber, `#1 ID "10a70" is not a whole number`},
		{10, corpora.ReasonFieldCount, "6 field(s), the header has 5"},
		{11, corpora.ReasonBadNumber, `Quality "" is not 0 or 1`},
		{12, corpora.ReasonMissingField, "empty #1 ID"},
		{13, corpora.ReasonFieldCount, "1 field(s), the header has 5"},
	}
	if len(rejects) != len(wantRejects) {
		t.Fatalf("rejects = %v, want %d", rejects, len(wantRejects))
	}
	starts := lineStarts(raw)
	lines := bytes.Split(raw, []byte("\r\n"))
	for i, w := range wantRejects {
		pe := rejects[i]
		if pe.Source.File != path || pe.Source.Line != w.line || pe.Source.Offset != starts[w.line-1] || pe.Reason != w.reason || pe.Detail != w.detail {
			t.Errorf("reject %d = %v at %+v, want %s: %s at line %d, offset %d", i, pe, pe.Source, w.reason, w.detail, w.line, starts[w.line-1])
		}
		if !bytes.Equal(pe.Record, lines[w.line-1]) {
			t.Errorf("reject at line %d keeps %q, want the line without its CRLF %q", w.line, pe.Record, lines[w.line-1])
		}
	}
	if got := st.Rejected; got[corpora.ReasonBadNumber] != 3 || got[corpora.ReasonFieldCount] != 3 || got[corpora.ReasonEmptyText] != 1 ||
		got[corpora.ReasonBadUTF8] != 1 || got[corpora.ReasonMissingField] != 1 {
		t.Errorf("rejected by reason = %v", got)
	}

	for _, e := range exs {
		if !e.HasLabel || e.Corpus != "msrp" || e.Dataset != "msrp/mini" || e.LangA != "en" || e.LangB != "en" || e.Source.File != path ||
			e.Source.Offset != starts[e.Source.Line-1] || len(e.Meta) != 2 || e.ID != "msrp:"+e.Meta["id1"]+"-"+e.Meta["id2"] {
			t.Errorf("%s: %+v", e.ID, e)
		}
		if strings.ContainsAny(e.A+e.B, "\r\ufeff") {
			t.Errorf("%s keeps a CR or a BOM: %q / %q", e.ID, e.A, e.B)
		}
	}
	checks := []struct {
		line      int64
		id, group string
		a, b      string
		label     float64
	}{
		{2, "msrp:1001-1002", "msrp:s1001", `The mayor called the plan "a bold step" for the harbour.`, `Calling the plan "a bold step", the mayor backed the harbour project.`, 1},
		{3, "msrp:1010-1003", "msrp:s1003", "Shares of the bakery chain fell 4 percent on Tuesday.", "The bakery chain opened two new stores in March.", 0},
		{4, "msrp:1020-1021", "msrp:s1020", `"We will rebuild the bridge by spring, the engineer said.`, "The engineer said the bridge would be rebuilt by spring.", 1},
		{14, "msrp:1205-1200", "msrp:s1200", "The museum\u2019s new wing cost \u20ac12 million \u2014 twice the estimate.", "The new wing of the museum cost \u20ac12 million, double what was planned.", 1},
	}
	for i, c := range checks {
		e := exs[i]
		if e.Source.Line != c.line || e.ID != c.id || e.Group != c.group || e.A != c.a || e.B != c.b || e.Label != c.label {
			t.Errorf("example %d = %+v\nwant line %d, %s, %s, %q / %q, %g", i, e, c.line, c.id, c.group, c.a, c.b, c.label)
		}
	}
	if m := exs[1].Meta; m["id1"] != "1010" || m["id2"] != "1003" {
		t.Errorf("meta = %v", m)
	}
}

func TestMSRPHeader(t *testing.T) {
	for _, c := range []struct{ name, data string }{
		{"empty", ""},
		{"BOM alone", "\ufeff"},
		{"no header", "1\t1\t2\ta\tb\r\n"},
		{"short header", "Quality\t#1 ID\t#2 ID\t#1 String\r\n1\t1\t2\ta\r\n"},
		{"Quora header", "id\tqid1\tqid2\tquestion1\tquestion2\tis_duplicate\n"},
		{"comma-separated", "Quality,#1 ID,#2 ID,#1 String,#2 String\n"},
		{"renamed column", "Label\t#1 ID\t#2 ID\t#1 String\t#2 String\n"},
	} {
		exs, _, _, err := msrpRead(t, "msr_paraphrase_train.txt", c.data, corpora.Options{})
		var fe *corpora.FileError
		if !errors.Is(err, corpora.ErrFormat) || !errors.As(err, &fe) || fe.File != "msr_paraphrase_train.txt" || len(exs) != 0 {
			t.Errorf("%s: err = %v, want a FileError wrapping ErrFormat", c.name, err)
		}
	}
	// A header line over the limit is no header either.
	_, _, _, err := msrpRead(t, "x.txt", strings.Repeat("Q", 100)+"\n", corpora.Options{Limits: corpora.Limits{MaxLineBytes: 64}})
	if !errors.Is(err, corpora.ErrFormat) {
		t.Errorf("long first line: err = %v, want ErrFormat", err)
	}

	// No BOM, LF line ends, columns in another order, an extra column:
	// all fine.
	data := "#2 String\t#1 String\tQuality\tnote\t#2 ID\t#1 ID\n" +
		"The dog barked.\tA dog was barking.\t1\tx\t20\t7\n"
	exs, rejects, st, err := msrpRead(t, "train.tsv", data, corpora.Options{Dataset: "mrpc", LangB: "de"})
	if err != nil || len(rejects) != 0 || len(exs) != 1 || st.Records != 2 {
		t.Fatalf("examples %v, rejects %v, stats %+v, err %v", exs, rejects, st, err)
	}
	e := exs[0]
	if e.ID != "msrp:7-20" || e.A != "A dog was barking." || e.B != "The dog barked." || e.Label != 1 || e.Group != "msrp:s7" ||
		e.Dataset != "mrpc" || e.LangA != "en" || e.LangB != "de" || e.Source.Line != 2 {
		t.Errorf("example = %+v", e)
	}
}

func TestMSRPDataset(t *testing.T) {
	for name, want := range map[string]string{
		"msr_paraphrase_train.txt":                "msrp/train",
		"data/msrp/msr_paraphrase_test.txt.gz":    "msrp/test",
		"MSR_Paraphrase_Test.TXT":                 "msrp/test",
		"train.tsv":                               "msrp",
		"msr_paraphrase_.txt":                     "msrp",
		filepath.Join("msrp", "msr_paraphrase_x"): "msrp/x",
	} {
		exs, _, _, err := msrpRead(t, name, msrpHeader+"0\t1\t2\ta\tb\r\n", corpora.Options{})
		if err != nil || len(exs) != 1 || exs[0].Dataset != want {
			t.Errorf("%s: dataset of %v (err %v), want %s", name, exs, err, want)
		}
	}
}

func TestMSRPRecords(t *testing.T) {
	for _, c := range []struct {
		name    string
		body    string
		opts    corpora.Options
		ids     []string
		reasons []corpora.Reason
	}{
		{"quality", "1\t1\t2\ta\tb\r\n0\t3\t4\tc\td\r\n01\t5\t6\te\tf\r\n1.0\t7\t8\tg\th\r\n 1\t9\t10\ti\tj\r\n-1\t11\t12\tk\tl\r\n",
			corpora.Options{}, []string{"msrp:1-2", "msrp:3-4"}, []corpora.Reason{corpora.ReasonBadNumber, corpora.ReasonBadNumber, corpora.ReasonBadNumber, corpora.ReasonBadNumber}},
		{"ids", "1\t-1\t2\ta\tb\r\n1\t1\t\ta\tb\r\n1\t1\t2 \ta\tb\r\n1\t0012\t3\ta\tb\r\n", corpora.Options{},
			[]string{"msrp:0012-3"}, []corpora.Reason{corpora.ReasonBadNumber, corpora.ReasonMissingField, corpora.ReasonBadNumber}},
		{"blank sentences", "1\t1\t2\t\tb\r\n1\t3\t4\ta\t \r\n1\t5\t6\t\u00a0\tb\r\n1\t7\t8\t  a  \t b\r\n", corpora.Options{},
			[]string{"msrp:7-8"}, []corpora.Reason{corpora.ReasonEmptyText, corpora.ReasonEmptyText, corpora.ReasonEmptyText}},
		{"quotes are text", "1\t1\t2\t\"a\tb\"\r\n0\t3\t4\t\"\"\t\"\r\n1\t5\t6\tsay \"hi\tb\r\n", corpora.Options{},
			[]string{"msrp:1-2", "msrp:3-4", "msrp:5-6"}, nil},
		{"bad UTF-8", "1\t1\t2\ta\xff\tb\r\n1\t3\t4\ta\tb\xc3\r\n", corpora.Options{}, nil, []corpora.Reason{corpora.ReasonBadUTF8, corpora.ReasonBadUTF8}},
		{"long line", "1\t1\t2\t" + strings.Repeat("a", 100) + "\tb\r\n1\t3\t4\ta\tb", corpora.Options{Limits: corpora.Limits{MaxLineBytes: 64}},
			[]string{"msrp:3-4"}, []corpora.Reason{corpora.ReasonLineTooLong}},
		{"blank lines", "\r\n1\t1\t2\ta\tb\r\n\n\r\n", corpora.Options{}, []string{"msrp:1-2"},
			[]corpora.Reason{corpora.ReasonFieldCount, corpora.ReasonFieldCount, corpora.ReasonFieldCount}},
		{"mixed line ends", "1\t1\t2\ta\tb\n0\t3\t4\tc\td\r\n1\t5\t6\te\tf", corpora.Options{}, []string{"msrp:1-2", "msrp:3-4", "msrp:5-6"}, nil},
		{"a BOM after the first line is text", "1\t1\t2\t\ufeffa\tb\r\n\ufeff1\t3\t4\tc\td\r\n", corpora.Options{},
			[]string{"msrp:1-2"}, []corpora.Reason{corpora.ReasonBadNumber}},
	} {
		exs, rejects, st, err := msrpRead(t, "m.txt", "\ufeff"+msrpHeader+c.body, c.opts)
		if err != nil {
			t.Errorf("%s: %v", c.name, err)
			continue
		}
		ids := make([]string, len(exs))
		for i, e := range exs {
			ids[i] = e.ID
		}
		reasons := make([]corpora.Reason, len(rejects))
		for i, pe := range rejects {
			reasons[i] = pe.Reason
			if pe.Source.File != "m.txt" || pe.Source.Line < 2 || pe.Source.Offset <= 0 {
				t.Errorf("%s: reject %v at %+v", c.name, pe, pe.Source)
			}
		}
		if !slices.Equal(ids, c.ids) || !slices.Equal(reasons, c.reasons) {
			t.Errorf("%s: ids %v, rejects %v; want %v, %v", c.name, ids, rejects, c.ids, c.reasons)
		}
		if st.Examples+st.RejectedTotal()+st.Skipped["header"] != st.Records {
			t.Errorf("%s: counts do not add up: %+v", c.name, st)
		}
	}
	// Quotes and surrounding spaces.
	exs, _, _, _ := msrpRead(t, "m.txt", msrpHeader+"1\t1\t2\t \"a\tb\" \r\n1\t3\t4\t\"\"\t\"\r\n", corpora.Options{})
	if len(exs) != 2 || exs[0].A != `"a` || exs[0].B != `b"` || exs[1].A != `""` || exs[1].B != `"` {
		t.Errorf("quoted fields read as %+v", exs)
	}
}

func TestMSRPSharedData(t *testing.T) {
	path := sharedData(t, "corpora/msrp/msr_paraphrase_train.txt")
	raw, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	exs, rejects, st := mustReadAll(t, "msrp", []string{path}, corpora.Options{})
	// 4,077 lines: the header (after a BOM) and 4,076 pairs, CRLF.
	if len(exs) != 4076 || len(rejects) != 0 || st.Records != 4077 || st.Skipped["header"] != 1 || st.Bytes != int64(len(raw)) {
		t.Fatalf("%d examples, rejects %v, stats %+v", len(exs), rejects, st)
	}
	labels := map[float64]int{}
	ids := map[string]bool{}
	groups := map[string]bool{}
	groupsOf := map[string]map[string]bool{} // sentence id -> its pairs' groups
	pairsOf := map[string]int{}
	quoted := 0
	starts := lineStarts(raw)
	for i, e := range exs {
		labels[e.Label]++
		ids[e.ID] = true
		groups[e.Group] = true
		for _, s := range []string{e.Meta["id1"], e.Meta["id2"]} {
			if groupsOf[s] == nil {
				groupsOf[s] = map[string]bool{}
			}
			groupsOf[s][e.Group] = true
			pairsOf[s]++
		}
		if strings.Contains(e.A+e.B, `"`) {
			quoted++
		}
		if e.Corpus != "msrp" || e.Dataset != "msrp/train" || !e.HasLabel || e.A == "" || e.B == "" || e.LangA != "en" || e.LangB != "en" ||
			strings.ContainsAny(e.A+e.B, "\r\n\t\ufeff") || e.Source.Line != int64(i+2) || e.Source.Offset != starts[i+1] {
			t.Errorf("example %+v", e)
			break
		}
	}
	if labels[1] != 2753 || labels[0] != 1323 || len(labels) != 2 {
		t.Errorf("labels %v, want 2,753 paraphrases and 1,323 not", labels)
	}
	if len(ids) != 4076 {
		t.Errorf("%d distinct ids, want 4,076", len(ids))
	}
	// Sentences in several pairs (the figures of MSRPReader's doc).
	split, shared, most := 0, 0, 0
	for s, gs := range groupsOf {
		if len(gs) > 1 {
			split++
		}
		if pairsOf[s] > 1 {
			shared++
		}
		most = max(most, pairsOf[s])
	}
	if len(groups) != 3955 || len(groupsOf) != 7817 || shared != 308 || most != 4 || split != 201 {
		t.Errorf("%d groups over %d sentences, %d sentences in several pairs (at most %d), %d in two groups; want 3,955, 7,817, 308 (4), 201",
			len(groups), len(groupsOf), shared, most, split)
	}
	if quoted != 854 {
		t.Errorf("%d pairs hold a quote, want 854", quoted)
	}
	// Line 2, after the header and its BOM: quotes kept verbatim.
	if e := exs[0]; e.ID != "msrp:702876-702977" || e.Group != "msrp:s702876" || e.Label != 1 || e.Source.Offset != 44 ||
		e.A != `Amrozi accused his brother, whom he called "the witness", of deliberately distorting his evidence.` ||
		e.B != `Referring to him as only "the witness", Amrozi accused his brother of deliberately distorting his evidence.` {
		t.Errorf("line 2 = %+v", e)
	}
	// A sentence that starts with a quote (line 22); #1 ID above #2 ID and
	// a curly apostrophe (line 58).
	if e := exs[20]; e.Source.Line != 22 || e.Label != 0 || !strings.HasPrefix(e.A, `"I think you'll see a lot of job growth in the next two years," he said`) ||
		e.B != `"I think you'll see a lot of job growth in the next two years," said Mankiw.` {
		t.Errorf("line 22 = %+v", e)
	}
	if e := exs[56]; e.Source.Line != 58 || e.ID != "msrp:213302-213135" || e.Group != "msrp:s213135" || !strings.Contains(e.A, "president\u2019s appearance.") {
		t.Errorf("line 58 = %+v", e)
	}
	if e := exs[4075]; e.Source.Line != 4077 || e.ID != "msrp:453575-453448" || e.Label != 0 ||
		e.B != "The 30-year bond US30YT=RR grew 1-3/32 for a yield of 4.30 percent, down from 4.35 percent late Wednesday." {
		t.Errorf("last line = %+v", e)
	}
}

func FuzzMSRP(f *testing.F) {
	if b, err := os.ReadFile(fixture("msrp/msr_paraphrase_mini.txt")); err == nil {
		f.Add(b, "", "")
	}
	// The real file's BOM, header and first pairs, and the pair whose
	// sentences start with a quote.
	if b := stsSharedFirstLines("corpora/msrp/msr_paraphrase_train.txt", 60); b != nil {
		lines := bytes.SplitAfter(b, []byte("\n"))
		f.Add(bytes.Join(lines[:12], nil), "", "")
		f.Add(append([]byte(msrpHeader), bytes.Join(lines[20:23], nil)...), "", "")
		f.Add(append([]byte(msrpHeader), lines[57]...), "", "")
	}
	f.Add([]byte("\ufeff"+msrpHeader+"1\t1\t2\t\"a\tb\"\r\n2\t3\r\n\r\n"), `he said "yes`, "\u2019")
	f.Add([]byte(""), "\t", "\r\n")
	f.Fuzz(func(t *testing.T, data []byte, s1, s2 string) {
		fuzzReader(t, "msrp", data)
		fuzzReader(t, "msrp", append([]byte("\ufeff"+msrpHeader), data...))
		stsFuzzInvariants(t, "msrp", 0, 1, append([]byte(msrpHeader), data...))
		msrpRoundTrip(t, s1, s2)
	})
}

// msrpRoundTrip writes a pair of sentences as the release does (BOM, CRLF)
// and checks that it reads back.
func msrpRoundTrip(t *testing.T, s1, s2 string) {
	for _, s := range []string{s1, s2} {
		if !utf8.ValidString(s) || strings.TrimSpace(s) != s || s == "" || strings.ContainsAny(s, "\t\r\n") || len(s) > 1000 {
			return
		}
	}
	data := "\ufeff" + msrpHeader + "1\t12\t11\t" + s1 + "\t" + s2 + "\r\n0\t13\t14\tx\ty\r\n"
	exs, rejects, _, err := msrpRead(t, "m.txt", data, corpora.Options{})
	if err != nil || len(rejects) != 0 || len(exs) != 2 {
		t.Fatalf("%q: examples %v, rejects %v, err %v", data, exs, rejects, err)
	}
	if e := exs[0]; e.A != s1 || e.B != s2 || e.Label != 1 || e.ID != "msrp:12-11" || e.Group != "msrp:s11" || exs[1].Source.Line != 3 {
		t.Fatalf("%q read back as %+v, then %+v", data, exs[0], exs[1])
	}
}

func ExampleNewMSRPReader() {
	tsv := "\ufeffQuality\t#1 ID\t#2 ID\t#1 String\t#2 String\r\n" +
		"1\t2002\t1998\tShe called it \"a fair deal\".\tIt was \"a fair deal\", she said.\r\n"
	in, _ := corpora.NewInput("msr_paraphrase_train.txt", strings.NewReader(tsv), corpora.Limits{})
	r := corpora.NewMSRPReader(in, corpora.Options{})
	defer r.Close()
	e, _ := r.Next()
	fmt.Println(e)
	fmt.Println(e.Group, e.Source)
	// Output:
	// msrp:2002-1998 [msrp/msrp/train] A="She called it \"a fair deal\"." B="It was \"a fair deal\", she said." label=1 id1="2002" id2="1998"
	// msrp:s1998 msr_paraphrase_train.txt:2
}
