package corpora_test

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"strconv"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/parastream/parastream/corpora"
)

// redditRead reads data, given as a file's bytes, in a reddit format.
func redditRead(t *testing.T, format, data string, opts corpora.Options) ([]corpora.Example, []*corpora.ParseError, corpora.Stats) {
	t.Helper()
	f, err := corpora.LookupFormat(format)
	if err != nil {
		t.Fatal(err)
	}
	in, err := corpora.NewInput("mem.jsonl", strings.NewReader(data), opts.Limits)
	if err != nil {
		t.Fatal(err)
	}
	r, err := f.New([]*corpora.Input{in}, opts)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	var exs []corpora.Example
	var rejects []*corpora.ParseError
	err = corpora.Drain(r, func(e corpora.Example) error { exs = append(exs, e); return nil },
		func(pe *corpora.ParseError) error { rejects = append(rejects, pe); return nil })
	if err != nil {
		t.Fatalf("reading %q: %v", data, err)
	}
	return exs, rejects, r.Stats()
}

func TestRedditCommentsFixture(t *testing.T) {
	path := fixture("reddit/comments.jsonl")
	exs, rejects, st := mustReadAll(t, "reddit-comments", []string{path}, corpora.Options{})
	if st.Records != 24 || len(exs) != 20 || st.RejectedTotal() != 4 {
		t.Fatalf("got %d examples, stats %+v; want 20 examples of 24 records", len(exs), st)
	}
	wantRejects := []struct {
		line   int64
		reason corpora.Reason
	}{{6, corpora.ReasonBadJSON}, {14, corpora.ReasonMissingField}, {19, corpora.ReasonBadNumber}, {23, corpora.ReasonBadUTF8}}
	for i, w := range wantRejects {
		pe := rejects[i]
		if pe.Source.Line != w.line || pe.Reason != w.reason || pe.Source.File != path {
			t.Errorf("reject %d = %v, want %s at line %d", i, pe, w.reason, w.line)
		}
		if len(pe.Record) == 0 || pe.Record[0] != '{' {
			t.Errorf("reject %d keeps record %q", i, pe.Record)
		}
	}
	if !bytes.Contains(rejects[3].Record, []byte("caf\xe9")) {
		t.Errorf("bad UTF-8 reject lost its raw bytes: %q", rejects[3].Record)
	}

	first := exs[0]
	want := corpora.Example{
		ID: "t1_kod0bkd", Corpus: "reddit", Dataset: "woodworking", Group: "t3_1afjd7n",
		A: "Absolutely stunning. Really love this, perfect finish IMO as well.",
		Meta: map[string]string{"author": "DubsAli", "parent_id": "t3_1afjd7n", "link_id": "t3_1afjd7n",
			"subreddit": "woodworking", "created_utc": "1706745600", "score": "12"},
		Source: corpora.Source{File: path, Line: 1},
	}
	if !redditEqual(first, want) {
		t.Errorf("first comment =\n%+v\nwant\n%+v", first, want)
	}

	// Three threads; every reply's parent is in its own thread.
	byID := map[string]corpora.Example{}
	groups := map[string]int{}
	for _, e := range exs {
		byID[e.ID] = e
		groups[e.Group]++
		if e.B != "" || e.HasLabel || e.LangA != "" || e.LangB != "" {
			t.Errorf("%s: B, Label or languages set: %+v", e.ID, e)
		}
	}
	if len(groups) != 3 || groups["t3_1afjd7n"] != 8 || groups["t3_9fure"] != 6 || groups["t3_17863"] != 6 {
		t.Errorf("threads = %v", groups)
	}
	for _, e := range exs {
		parent := e.Meta["parent_id"]
		switch {
		case parent == e.Group: // top-level comment
		case strings.HasPrefix(parent, "t1_"):
			if p, ok := byID[parent]; !ok || p.Group != e.Group {
				t.Errorf("%s: parent %s is not in thread %s", e.ID, parent, e.Group)
			}
		default:
			t.Errorf("%s: parent_id %q", e.ID, parent)
		}
	}

	checks := []struct {
		id   string
		test func(corpora.Example) bool
		what string
	}{
		{"t1_kod0c03", func(e corpora.Example) bool { return e.A == "[deleted]" && e.Meta["author"] == "[deleted]" }, "deleted comment kept"},
		{"t1_c0cmuo2", func(e corpora.Example) bool { return e.A == "[removed]" }, "removed comment kept"},
		{"t1_kod0c04", func(e corpora.Example) bool {
			return e.Meta["author"] == "AutoModerator" && strings.Contains(e.A, "\n\n*I am a bot")
		}, "bot comment, newlines decoded"},
		{"t1_kod0c02", func(e corpora.Example) bool {
			return strings.Contains(e.A, "https://osmouk.com/pdf/polyx-oil-original.pdf")
		}, "URL"},
		{"t1_kod0c05", func(e corpora.Example) bool { return len(e.A) > 9000 && e.Source.Line == 7 }, "long comment"},
		{"t1_kod0c06", func(e corpora.Example) bool { return strings.Contains(e.A, "l’érable est « capricieux »") }, "French"},
		{"t1_c0cmuo4", func(e corpora.Example) bool { return strings.HasPrefix(e.A, "日本の大学") }, "Japanese"},
		{"t1_c0cmuol", func(e corpora.Example) bool { return e.Meta["created_utc"] == "1251763200" }, "created_utc as a string"},
		{"t1_c13", func(e corpora.Example) bool { return e.Meta["created_utc"] == "1134365188" }, "created_utc as an integer"},
		{"t1_kod0c01", func(e corpora.Example) bool {
			return e.Meta["created_utc"] == "1706745711" && e.A == `Thanks! It's hard maple with three coats of Osmo Polyx, "satin" finish.`
		}, "created_utc as a float, escaped quotes"},
		{"t1_c18", func(e corpora.Example) bool {
			_, hasScore := e.Meta["score"]
			return !hasScore && e.A == "Thanks \u2014 threading works now.\tTabs too."
		}, "no score, escapes decoded"},
	}
	for _, c := range checks {
		e, ok := byID[c.id]
		if !ok {
			t.Errorf("%s missing", c.id)
			continue
		}
		if !c.test(e) {
			t.Errorf("%s (%s): %+v", c.id, c.what, e)
		}
	}
}

func TestRedditSubmissionsFixture(t *testing.T) {
	path := fixture("reddit/submissions.jsonl")
	exs, rejects, st := mustReadAll(t, "reddit-submissions", []string{path}, corpora.Options{})
	if st.Records != 6 || len(exs) != 5 || len(rejects) != 1 {
		t.Fatalf("got %d examples, stats %+v", len(exs), st)
	}
	if pe := rejects[0]; pe.Reason != corpora.ReasonMissingField || pe.Source.Line != 6 {
		t.Errorf("reject = %v, want missing title at line 6", pe)
	}
	want := corpora.Example{
		ID: "t3_9fure", Corpus: "reddit", Dataset: "technology", Group: "t3_9fure",
		A:      "Ask r/tech: the first .edu domains?",
		B:      "Which universities had the first .edu domains?\n\nI remember CMU, MIT and Berkeley were among them, but I can't find a list.",
		Meta:   map[string]string{"author": "nostalgic_admin", "subreddit": "technology", "created_utc": "1251761000", "score": "152"},
		Source: corpora.Source{File: path, Line: 2, Offset: int64(len(redditFirstLine(t, path)))},
	}
	if !redditEqual(exs[1], want) {
		t.Errorf("second submission =\n%+v\nwant\n%+v", exs[1], want)
	}
	if exs[0].B != "" || exs[0].Meta["created_utc"] != "1706745000" || exs[2].Meta["created_utc"] != "1134364000" {
		t.Errorf("link posts: %+v / %+v", exs[0], exs[2])
	}
	if exs[3].Dataset != "france" || !strings.Contains(exs[3].B, "l’hiver") || exs[4].B != "[removed]" {
		t.Errorf("self posts: %+v / %+v", exs[3], exs[4])
	}
	// The threads of the comments fixture are the submissions' groups.
	comments, _, _ := mustReadAll(t, "reddit-comments", []string{fixture("reddit/comments.jsonl")}, corpora.Options{})
	threads := map[string]bool{}
	for _, e := range exs {
		threads[e.Group] = true
	}
	for _, c := range comments {
		if !threads[c.Group] {
			t.Errorf("comment %s is in thread %s, which no submission opens", c.ID, c.Group)
		}
	}
}

func redditFirstLine(t *testing.T, path string) []byte {
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return b[:bytes.IndexByte(b, '\n')+1]
}

func redditEqual(a, b corpora.Example) bool {
	if len(a.Meta) != len(b.Meta) {
		return false
	}
	for k, v := range b.Meta {
		if a.Meta[k] != v {
			return false
		}
	}
	a.Meta, b.Meta = nil, nil
	a.Scores, b.Scores = nil, nil
	return a.ID == b.ID && a.Corpus == b.Corpus && a.Dataset == b.Dataset && a.A == b.A && a.B == b.B &&
		a.LangA == b.LangA && a.LangB == b.LangB && a.Label == b.Label && a.HasLabel == b.HasLabel &&
		a.Group == b.Group && a.Source == b.Source
}

func TestRedditSharedData(t *testing.T) {
	dir := sharedData(t, "corpora/reddit")
	// RC_sample.jsonl: 27 comments (26 newlines, the last line has none)
	// from 2005 to 2024, with created_utc as a float (lines 1-10), a string
	// (11-15, 27) and an integer (16-26).
	exs, rejects, st := mustReadAll(t, "reddit-comments", []string{dir + "/RC_sample.jsonl"}, corpora.Options{})
	if st.Records != 27 || len(exs) != 27 || len(rejects) != 0 {
		t.Fatalf("comments: %d examples, stats %+v", len(exs), st)
	}
	for _, c := range []struct {
		line          int
		id, group     string
		created, body string
	}{
		{1, "t1_kod0bkd", "t3_1afjd7n", "1706745600", "Absolutely stunning."},
		{7, "t1_kod0bkj", "t3_1afnkw1", "1706745600", "[removed]"},
		{11, "t1_c0cmuol", "t3_9fure", "1251763200", "um. www.cmu.edu"},
		{13, "t1_c0cmuon", "t3_9fymq", "1251763201", "[deleted]"},
		{16, "t1_c13", "t3_17863", "1134365188", "A look at Vietnam"},
		{21, "t1_fp09438", "t3_gaitju", "1588204800", "Would you ever"},
		{27, "t1_c63fp23", "t3_zc8wo", "1346790399", "The idea was"},
	} {
		e := exs[c.line-1]
		if e.ID != c.id || e.Group != c.group || e.Meta["created_utc"] != c.created || !strings.HasPrefix(e.A, c.body) || e.Source.Line != int64(c.line) {
			t.Errorf("line %d: %+v", c.line, e)
		}
	}
	for _, e := range exs {
		for _, k := range []string{"author", "parent_id", "link_id", "subreddit", "created_utc", "score"} {
			if _, ok := e.Meta[k]; !ok {
				t.Errorf("%s: no %s", e.ID, k)
			}
		}
		if e.Dataset != e.Meta["subreddit"] || e.Dataset == "" {
			t.Errorf("%s: dataset %q", e.ID, e.Dataset)
		}
	}

	// RS_sample.jsonl: 31 submissions, created_utc as a float (1-10), an
	// integer (11-20, 26-31) and a string (21-25). Line 2 is a crosspost
	// whose nested crosspost_parent_list has its own id, title and
	// created_utc: only the top-level ones count.
	exs, rejects, st = mustReadAll(t, "reddit-submissions", []string{dir + "/RS_sample.jsonl"}, corpora.Options{})
	if st.Records != 31 || len(exs) != 31 || len(rejects) != 0 {
		t.Fatalf("submissions: %d examples, stats %+v", len(exs), st)
	}
	for _, c := range []struct {
		line               int
		id, created, title string
	}{
		{2, "t3_1afwvv9", "1706745600", "Married Mississippi Pastor"},
		{11, "t3_87", "1119552233", "The Downing Street Memo"},
		{21, "t3_2f4i96", "1409529600", "Jewish Recipes."},
		{31, "t3_abdn5a", "1546306255", "What new stone sales"},
	} {
		e := exs[c.line-1]
		if e.ID != c.id || e.Group != c.id || e.Meta["created_utc"] != c.created || !strings.HasPrefix(e.A, c.title) {
			t.Errorf("line %d: %+v", c.line, e)
		}
	}
	var self int
	for _, e := range exs {
		if e.B != "" {
			self++
		}
	}
	if self != 11 {
		t.Errorf("%d submissions with selftext, want 11", self)
	}
}

func TestRedditCreatedUTC(t *testing.T) {
	for _, c := range []struct {
		value  string
		want   string // "" with ok: absent
		reason corpora.Reason
	}{
		{`1134365188`, "1134365188", ""},
		{`"1251763200"`, "1251763200", ""},
		{`1706745600.0`, "1706745600", ""},
		{`1706745600.75`, "1706745600", ""},
		{`1.7067456e9`, "1706745600", ""},
		{`"1706745600.0"`, "1706745600", ""},
		{`"\u0031\u0032"`, "12", ""},
		{`-5`, "-5", ""},
		{`null`, "", ""},
		{`"abc"`, "", corpora.ReasonBadNumber},
		{`""`, "", corpora.ReasonBadNumber},
		{`" 12"`, "", corpora.ReasonBadNumber},
		{`"0x1p3"`, "", corpora.ReasonBadNumber},
		{`true`, "", corpora.ReasonBadNumber},
		{`[1]`, "", corpora.ReasonBadNumber},
		{`1e400`, "", corpora.ReasonBadNumber},
		{`99999999999999999999`, "", corpora.ReasonBadNumber},
	} {
		line := `{"id":"x","body":"b","created_utc":` + c.value + "}\n"
		exs, rejects, _ := redditRead(t, "reddit-comments", line, corpora.Options{})
		switch {
		case c.reason != "":
			if len(rejects) != 1 || rejects[0].Reason != c.reason {
				t.Errorf("%s: examples %v, rejects %v; want %s", c.value, exs, rejects, c.reason)
			}
		case len(exs) != 1:
			t.Errorf("%s: rejects %v", c.value, rejects)
		default:
			got, ok := exs[0].Meta["created_utc"]
			if got != c.want || ok != (c.want != "") {
				t.Errorf("%s: created_utc = %q, %v; want %q", c.value, got, ok, c.want)
			}
		}
	}
	// score goes through the same normalisation.
	exs, _, _ := redditRead(t, "reddit-submissions", `{"id":"x","title":"t","score":"7","created_utc":1.5}`, corpora.Options{})
	if len(exs) != 1 || exs[0].Meta["score"] != "7" || exs[0].Meta["created_utc"] != "1" {
		t.Errorf("submission: %+v", exs)
	}
}

func TestRedditRecords(t *testing.T) {
	for _, c := range []struct {
		name   string
		line   string
		reason corpora.Reason // "" for an example
		check  func(corpora.Example) bool
	}{
		{"minimal", `{"id":"abc","body":""}`, "", func(e corpora.Example) bool {
			return e.ID == "t1_abc" && e.A == "" && e.Group == "t1_abc" && e.Dataset == "" && len(e.Meta) == 0
		}},
		{"prefixed id", `{"id":"t1_abc","body":"x","link_id":"17863"}`, "", func(e corpora.Example) bool {
			return e.ID == "t1_abc" && e.Group == "t3_17863" && e.Meta["link_id"] == "17863"
		}},
		{"null meta", `{"id":"a","body":"x","author":null,"score":null,"subreddit":null}`, "", func(e corpora.Example) bool {
			return len(e.Meta) == 0
		}},
		{"whitespace", " \t{ \"id\" : \"a\" , \"body\" : \"x\" } \r", "", func(e corpora.Example) bool { return e.A == "x" }},
		{"surrogate pair", `{"id":"a","body":"\ud83d\ude00 \u00e9\/\\\"\b\f\n\r\t"}`, "", func(e corpora.Example) bool {
			return e.A == "😀 é/\\\"\b\f\n\r\t"
		}},
		{"lone surrogate", `{"id":"a","body":"x\ud800y\udc00\ud800\u0041"}`, "", func(e corpora.Example) bool {
			return e.A == "x\uFFFDy\uFFFD\uFFFDA"
		}},
		{"escaped key", `{"\u0069d":"a","bo\u0064y":"x"}`, "", func(e corpora.Example) bool { return e.ID == "t1_a" && e.A == "x" }},
		{"last key wins", `{"id":"a","body":"x","body":"y","id":"b"}`, "", func(e corpora.Example) bool { return e.ID == "t1_b" && e.A == "y" }},
		{"keys match exactly", `{"ID":"a","id":"b","Body":"x","body":"y"}`, "", func(e corpora.Example) bool { return e.ID == "t1_b" && e.A == "y" }},
		{"nested keys ignored", `{"replies":{"id":"z","body":"no"},"id":"a","x":[{"body":1},[],{}],"body":"yes"}`, "", func(e corpora.Example) bool {
			return e.ID == "t1_a" && e.A == "yes"
		}},
		{"truncated", `{"id":"a","body":"x`, corpora.ReasonBadJSON, nil},
		{"trailing text", `{"id":"a","body":"x"} {}`, corpora.ReasonBadJSON, nil},
		{"not an object", `["id","body"]`, corpora.ReasonBadJSON, nil},
		{"null", `null`, corpora.ReasonBadJSON, nil},
		{"bad literal", `{"id":"a","body":"x","edited":fals}`, corpora.ReasonBadJSON, nil},
		{"bad number", `{"id":"a","body":"x","ups":01}`, corpora.ReasonBadJSON, nil},
		{"control character", "{\"id\":\"a\",\"body\":\"x\ty\"}", corpora.ReasonBadJSON, nil},
		{"bad escape", `{"id":"a","body":"\x41"}`, corpora.ReasonBadJSON, nil},
		{"numeric body", `{"id":"a","body":5}`, corpora.ReasonBadJSON, nil},
		{"numeric id", `{"id":5,"body":"x"}`, corpora.ReasonBadJSON, nil},
		{"author object", `{"id":"a","body":"x","author":{}}`, corpora.ReasonBadJSON, nil},
		{"no id", `{"body":"x","name":"t1_a"}`, corpora.ReasonMissingField, nil},
		{"empty id", `{"id":"","body":"x"}`, corpora.ReasonMissingField, nil},
		{"null body", `{"id":"a","body":null}`, corpora.ReasonMissingField, nil},
		{"no body", `{"id":"a"}`, corpora.ReasonMissingField, nil},
		{"bad UTF-8", "{\"id\":\"a\",\"body\":\"\xff\"}", corpora.ReasonBadUTF8, nil},
	} {
		exs, rejects, st := redditRead(t, "reddit-comments", c.line+"\n", corpora.Options{})
		if st.Records != 1 {
			t.Errorf("%s: stats %+v", c.name, st)
		}
		if c.reason != "" {
			if len(rejects) != 1 || rejects[0].Reason != c.reason || rejects[0].Source.Line != 1 || string(rejects[0].Record) != c.line {
				t.Errorf("%s: examples %+v, rejects %v; want %s", c.name, exs, rejects, c.reason)
			}
			continue
		}
		if len(exs) != 1 || !c.check(exs[0]) {
			t.Errorf("%s: examples %+v, rejects %v", c.name, exs, rejects)
		}
	}
}

func TestRedditLinesAndLimits(t *testing.T) {
	data := "\n" + `{"id":"a","body":"x"}` + "\r\n   \n" + `{"id":"b","body":"` + strings.Repeat("y", 200) + `"}` + "\n" + `{"id":"c","body":"z"}`
	exs, rejects, st := redditRead(t, "reddit-comments", data, corpora.Options{Limits: corpora.Limits{MaxLineBytes: 100}})
	if len(exs) != 2 || exs[0].ID != "t1_a" || exs[1].ID != "t1_c" || exs[1].Source.Line != 5 {
		t.Errorf("examples %+v", exs)
	}
	if len(rejects) != 1 || rejects[0].Reason != corpora.ReasonLineTooLong || rejects[0].Source.Line != 4 {
		t.Errorf("rejects %v", rejects)
	}
	if st.Records != 5 || st.Skipped["blank_line"] != 2 || st.Examples != 2 {
		t.Errorf("stats %+v", st)
	}
	// Options.Dataset and the languages override.
	exs, _, _ = redditRead(t, "reddit-comments", `{"id":"a","body":"x","subreddit":"de"}`, corpora.Options{Dataset: "rc-2015-01", LangA: "de", LangB: "de"})
	if exs[0].Dataset != "rc-2015-01" || exs[0].Meta["subreddit"] != "de" || exs[0].LangA != "de" {
		t.Errorf("overrides: %+v", exs[0])
	}
}

func TestRedditDeepNesting(t *testing.T) {
	// encoding/json allows 10,000 levels, the top-level object included.
	deep := func(n int) string {
		return `{"id":"a","body":"x","d":` + strings.Repeat("[", n) + strings.Repeat("]", n) + "}"
	}
	if exs, rejects, _ := redditRead(t, "reddit-comments", deep(9999), corpora.Options{Limits: corpora.Limits{MaxLineBytes: 1 << 16}}); len(exs) != 1 {
		t.Errorf("9,999 nested arrays: rejects %v", rejects)
	}
	if _, rejects, _ := redditRead(t, "reddit-comments", deep(10000), corpora.Options{Limits: corpora.Limits{MaxLineBytes: 1 << 16}}); len(rejects) != 1 || rejects[0].Reason != corpora.ReasonBadJSON {
		t.Errorf("10,000 nested arrays: rejects %v", rejects)
	}
}

func TestRedditFormats(t *testing.T) {
	for _, name := range []string{"reddit-comments", "reddit-submissions"} {
		f, err := corpora.LookupFormat(name)
		if err != nil || f.Corpus != "reddit" || len(f.Files) != 1 || f.Mapping == "" {
			t.Errorf("%s: %+v, %v", name, f, err)
		}
	}
}

// redditFuzzSeeds adds each fixture and sample file whole and line by line.
func redditFuzzSeeds(f *testing.F, files ...string) {
	for _, p := range files {
		b, err := os.ReadFile(p)
		if err != nil {
			continue
		}
		f.Add(b)
		for line := range bytes.Lines(b) {
			f.Add(bytes.TrimSuffix(line, []byte("\n")))
		}
	}
	f.Add([]byte(`{"id":"a","body":"\ud83d\ude00","created_utc":"1.5e9","score":-1}`))
	f.Add([]byte(`{"id":"a","body":"x","d":[[{"a":[]}],{},"\u0000"],"e":-0.0e+0}`))
}

func redditSample(rel string) string { return repoRoot() + "/../shared/data/corpora/reddit/" + rel }

func FuzzRedditComments(f *testing.F) {
	redditFuzzSeeds(f, fixture("reddit/comments.jsonl"), redditSample("RC_sample.jsonl"))
	f.Fuzz(func(t *testing.T, data []byte) {
		fuzzReader(t, "reddit-comments", data)
		redditDifferential(t, "reddit-comments", data)
	})
}

func FuzzRedditSubmissions(f *testing.F) {
	redditFuzzSeeds(f, fixture("reddit/submissions.jsonl"), redditSample("RS_sample.jsonl"))
	f.Fuzz(func(t *testing.T, data []byte) {
		fuzzReader(t, "reddit-submissions", data)
		redditDifferential(t, "reddit-submissions", data)
	})
}

// redditDifferential checks the reader against encoding/json on a single
// line: the same lines are valid, and the same values come out.
func redditDifferential(t *testing.T, format string, line []byte) {
	if bytes.ContainsAny(line, "\r\n") || bytes.HasPrefix(line, []byte("\xef\xbb\xbf")) || len(line) > 4096 {
		return
	}
	f, _ := corpora.LookupFormat(format)
	in, err := corpora.NewInput("fuzz", bytes.NewReader(line), corpora.Limits{})
	if err != nil {
		return // compressed-looking bytes
	}
	if in.Compression != corpora.None {
		return
	}
	r, _ := f.New([]*corpora.Input{in}, corpora.Options{})
	defer r.Close()
	e, err := r.Next()
	reason := corpora.Reason("")
	var pe *corpora.ParseError
	if errors.As(err, &pe) {
		reason = pe.Reason
	} else if err != nil && err != io.EOF {
		t.Fatalf("Next: %v", err)
	}

	if len(bytes.Trim(line, " \t")) == 0 {
		if err != io.EOF {
			t.Fatalf("blank line gave %v, %v", e, err)
		}
		return
	}
	if !utf8.Valid(line) {
		if reason != corpora.ReasonBadUTF8 {
			t.Fatalf("invalid UTF-8 gave %v, %v", e, err)
		}
		return
	}
	var m map[string]json.RawMessage
	if !json.Valid(line) || json.Unmarshal(line, &m) != nil || m == nil {
		if reason != corpora.ReasonBadJSON {
			t.Fatalf("encoding/json refuses %q; reader gave %v, %v", line, e, err)
		}
		return
	}
	// The line is a JSON object: work out what the reader should make of it.
	ok := true
	str := func(k string) (string, bool) {
		v, has := m[k]
		if !has || string(v) == "null" {
			return "", false
		}
		var s string
		if json.Unmarshal(v, &s) != nil {
			ok = false
		}
		return s, true
	}
	num := func(k string) (string, bool) {
		v, has := m[k]
		if !has || string(v) == "null" {
			return "", false
		}
		var s string
		if json.Unmarshal(v, &s) == nil {
			v = []byte(s)
		}
		var n json.Number
		if len(v) == 0 || (v[0] != '-' && (v[0] < '0' || v[0] > '9')) || json.Unmarshal(v, &n) != nil {
			ok = false
			return "", true
		}
		if i, err := n.Int64(); err == nil {
			return strconv.FormatInt(i, 10), true
		}
		fl, err := n.Float64()
		if err != nil || math.Abs(fl) >= 1<<63 {
			ok = false
			return "", true
		}
		return strconv.FormatInt(int64(math.Floor(fl)), 10), true
	}
	prefix, textKey, metaKeys := "t1_", "body", []string{"author", "subreddit", "parent_id", "link_id"}
	if format == "reddit-submissions" {
		prefix, textKey, metaKeys = "t3_", "title", []string{"author", "subreddit"}
	}
	id, hasID := str("id")
	text, hasText := str(textKey)
	selftext, _ := str("selftext")
	meta := map[string]string{}
	for _, k := range metaKeys {
		if v, has := str(k); has {
			meta[k] = v
		}
	}
	for _, k := range []string{"created_utc", "score"} {
		if v, has := num(k); has {
			meta[k] = v
		}
	}
	if !ok || !hasID || id == "" || !hasText {
		if err == nil || (reason != corpora.ReasonBadJSON && reason != corpora.ReasonMissingField && reason != corpora.ReasonBadNumber) {
			t.Fatalf("%q: reader gave %+v, %v; want a reject", line, e, err)
		}
		return
	}
	if err != nil {
		t.Fatalf("%q: reader rejected it: %v", line, err)
	}
	wantID := prefix + strings.TrimPrefix(id, prefix)
	if e.ID != wantID || e.A != text || (format == "reddit-submissions" && e.B != selftext) || e.Dataset != meta["subreddit"] {
		t.Fatalf("%q: got %+v", line, e)
	}
	if len(e.Meta) != len(meta) {
		t.Fatalf("%q: meta %v, want %v", line, e.Meta, meta)
	}
	for k, v := range meta {
		if e.Meta[k] != v {
			t.Fatalf("%q: meta %v, want %v", line, e.Meta, meta)
		}
	}
}

func ExampleNewRedditCommentsReader() {
	dump := `{"author":"kn0thing","body":"Threading works now.","created_utc":"1251763200","id":"c0cmuol","link_id":"t3_9fure","parent_id":"t1_c0cmjyg","score":3,"subreddit":"technology","ups":3}
{"author":"spez","body":"This line was cut in the mid`
	in, _ := corpora.NewInput("RC_2009-09", strings.NewReader(dump), corpora.Limits{})
	r := corpora.NewRedditCommentsReader(in, corpora.Options{})
	defer r.Close()
	corpora.Drain(r,
		func(e corpora.Example) error { fmt.Println(e); return nil },
		func(pe *corpora.ParseError) error { fmt.Println("rejected:", pe.Source, pe.Reason); return nil })
	// Output:
	// t1_c0cmuol [reddit/technology] A="Threading works now." author="kn0thing" created_utc="1251763200" link_id="t3_9fure" parent_id="t1_c0cmjyg"
	// rejected: RC_2009-09:2 bad_json
}
