package corpora_test

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/parastream/parastream/corpora"
)

// stsReasonCounts counts parse errors by reason.
func stsReasonCounts(rejects []*corpora.ParseError) map[corpora.Reason]int {
	m := make(map[corpora.Reason]int)
	for _, pe := range rejects {
		m[pe.Reason]++
	}
	return m
}

func TestSTSFixture(t *testing.T) {
	in := fixture("sts/2016/STS.input.mini.txt")
	exs, rejects, st := mustReadAll(t, "sts", []string{in, corpora.STSGoldPath(in)}, corpora.Options{})
	if len(exs) != 3 || st.Records != 7 || st.Skipped["ungraded"] != 1 {
		t.Fatalf("got %d examples, stats %+v; want 3 of 7 records, 1 ungraded", len(exs), st)
	}
	want := map[corpora.Reason]int{corpora.ReasonBadScore: 1, corpora.ReasonFieldCount: 1, corpora.ReasonBadNumber: 1}
	if got := stsReasonCounts(rejects); len(got) != len(want) || got[corpora.ReasonBadScore] != 1 || got[corpora.ReasonFieldCount] != 1 || got[corpora.ReasonBadNumber] != 1 {
		t.Fatalf("rejects by reason = %v, want %v", got, want)
	}
	for _, pe := range rejects {
		if pe.Source.File != in || len(pe.Record) == 0 {
			t.Errorf("reject %v: source %v, record %q", pe, pe.Source, pe.Record)
		}
	}
	if l := rejects[0].Source.Line; rejects[0].Reason != corpora.ReasonBadScore || l != 3 {
		t.Errorf("first reject = %v, want a bad score on line 3", rejects[0])
	}
	e := exs[0]
	if e.A != "Answers are given by people who have read the question carefully." || e.B != "People who read the question carefully give the answers." {
		t.Errorf("first pair = %q / %q", e.A, e.B)
	}
	if !e.HasLabel || e.Label != 4 || e.Corpus != "sts" || e.Dataset != "2016/mini" || e.ID != "sts:2016/mini:1" || e.Group != e.ID || e.LangA != "en" || e.LangB != "en" {
		t.Errorf("first example = %+v", e)
	}
	if e.Meta["source1"] != "answers.yahoo.com" || e.Meta["source2"] != "answers.yahoo.com" {
		t.Errorf("sources = %v", e.Meta)
	}
	e = exs[1]
	if e.A != `He said "no" and left.` || e.B != `"No," he said, leaving the room.` || e.Label != 3.8 || e.Source.Line != 4 || e.Meta["source1"] != "forum" {
		t.Errorf("quoted pair = %+v", e)
	}
	if e := exs[2]; e.Label != 4.6 || e.ID != "sts:2016/mini:7" {
		t.Errorf("last example = %+v", e)
	}
}

func TestSTSDatasetOverride(t *testing.T) {
	in := fixture("sts/2016/STS.input.mini.txt")
	exs, _, _ := mustReadAll(t, "sts", []string{in, corpora.STSGoldPath(in)}, corpora.Options{Dataset: "2016/answer-answer"})
	if exs[0].Dataset != "2016/answer-answer" || exs[0].ID != "sts:2016/answer-answer:1" {
		t.Errorf("first example = %+v", exs[0])
	}
}

func TestSTSGoldPath(t *testing.T) {
	for in, want := range map[string]string{
		"eval/sts/2014/STS.input.deft-forum.txt":   "eval/sts/2014/STS.gs.deft-forum.txt",
		"STS.input.surprise.OnWN.txt":              "STS.gs.surprise.OnWN.txt",
		"2016/STS2016.input.answer-answer.txt":     "2016/STS2016.gs.answer-answer.txt",
		"2017/STS.input.track5.en-en.txt.gz":       "2017/STS.gs.track5.en-en.txt.gz",
		"eval/sts/2014/STS.gs.deft-forum.txt":      "",
		"eval/sts/2014/notes.txt":                  "",
		"eval/STS.input.x/STS.input.deft-news.txt": "eval/STS.input.x/STS.gs.deft-news.txt",
	} {
		if got := corpora.STSGoldPath(filepath.FromSlash(in)); got != filepath.FromSlash(want) {
			t.Errorf("STSGoldPath(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestSTSLengthMismatch(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "2014")
	os.Mkdir(dir, 0o755)
	in := filepath.Join(dir, "STS.input.x.txt")
	os.WriteFile(in, []byte("a\tb\nc\td\ne\tf\n"), 0o644)
	os.WriteFile(corpora.STSGoldPath(in), []byte("1\n2\n"), 0o644)
	exs, _, _, err := readAll(t, "sts", []string{in, corpora.STSGoldPath(in)}, corpora.Options{})
	if !errors.Is(err, corpora.ErrLengthMismatch) || !contains(err.Error(), in+" has 3 lines") || !contains(err.Error(), corpora.STSGoldPath(in)+" has 2") {
		t.Fatalf("err = %v, want ErrLengthMismatch naming both files", err)
	}
	if len(exs) != 2 || exs[0].Dataset != "2014/x" {
		t.Errorf("examples before the mismatch = %v", exs)
	}
}

func TestSTSBadScores(t *testing.T) {
	dir := t.TempDir()
	in := filepath.Join(dir, "STS.input.x.txt")
	os.WriteFile(in, []byte(strings.Repeat("a\tb\n", 8)), 0o644)
	os.WriteFile(corpora.STSGoldPath(in), []byte("-0.1\n5.01\nNaN\nInf\n1e400\n \n0\n5\n"), 0o644)
	exs, rejects, st := mustReadAll(t, "sts", []string{in, corpora.STSGoldPath(in)}, corpora.Options{})
	got := stsReasonCounts(rejects)
	if len(exs) != 2 || got[corpora.ReasonBadScore] != 2 || got[corpora.ReasonBadNumber] != 3 || st.Skipped["ungraded"] != 1 {
		t.Fatalf("examples %v, rejects %v, stats %+v", exs, got, st)
	}
	if exs[0].Label != 0 || exs[1].Label != 5 || exs[0].Dataset != filepath.Base(dir)+"/x" {
		t.Errorf("examples = %v", exs)
	}
}

// stsSets are the graded pairs and lines of every STS set in ../shared/data
// (see its README).
var stsSets = []struct {
	year, set      string
	graded, lines  int
	firstA, firstB string
	firstLabel     float64
}{
	{"2012", "MSRpar", 750, 750, "", "", 0},
	{"2012", "MSRvid", 750, 750, "", "", 0},
	{"2012", "SMTeuroparl", 459, 459, "", "", 0},
	{"2012", "surprise.OnWN", 750, 750, "", "", 0},
	{"2012", "surprise.SMTnews", 399, 399, "", "", 0},
	{"2012-train", "MSRpar", 750, 750,
		"But other sources close to the sale said Vivendi was keeping the door open to further bids and hoped to see bidders interested in individual assets team up.",
		"But other sources close to the sale said Vivendi was keeping the door open for further bids in the next day or two.", 4},
	{"2012-train", "MSRvid", 750, 750, "", "", 0},
	{"2012-train", "SMTeuroparl", 734, 734, "", "", 0},
	{"2013", "FNWN", 189, 189, "", "", 0},
	{"2013", "OnWN", 561, 561, "", "", 0},
	{"2013", "headlines", 750, 750, "", "", 0},
	{"2014", "OnWN", 750, 750, "", "", 0},
	{"2014", "deft-forum", 450, 450,
		"How about some testimonies from real health experts?",
		`Also, who's to say there aren't testimonies from "real" health experts on there?`, 3},
	{"2014", "deft-news", 300, 300, "", "", 0},
	{"2014", "headlines", 750, 750, "", "", 0},
	{"2014", "images", 750, 750, "", "", 0},
	{"2014", "tweet-news", 750, 750, "", "", 0},
	{"2015", "answers-forums", 375, 2000,
		"You'll need to check the particular policies of each publisher to see what is allowed and what is not allowed.",
		"If you need to publish the book and you have found one publisher that allows it.", 3},
	{"2015", "answers-students", 750, 1500, "", "", 0},
	{"2015", "belief", 375, 2000, "", "", 0},
	{"2015", "headlines", 750, 1500, "", "", 0},
	{"2015", "images", 750, 1500, "", "", 0},
}

func TestSTSSharedData(t *testing.T) {
	root := sharedData(t, "eval/sts")
	totals := map[string]int{}
	for _, c := range stsSets {
		in := filepath.Join(root, c.year, "STS.input."+c.set+".txt")
		exs, rejects, st := mustReadAll(t, "sts", []string{in, corpora.STSGoldPath(in)}, corpora.Options{})
		name := c.year + "/" + c.set
		if len(rejects) != 0 {
			t.Errorf("%s: rejects %v", name, rejects)
		}
		if len(exs) != c.graded || st.Records != int64(c.lines) || st.Skipped["ungraded"] != int64(c.lines-c.graded) {
			t.Errorf("%s: %d graded pairs of %d lines (stats %+v), want %d of %d", name, len(exs), st.Records, st, c.graded, c.lines)
			continue
		}
		totals[c.year] += len(exs)
		for _, e := range exs {
			if e.Dataset != name || !e.HasLabel || e.Label < 0 || e.Label > 5 || e.A == "" || e.B == "" || len(e.Meta) != 0 {
				t.Errorf("%s: example %+v", name, e)
				break
			}
		}
		if c.firstA != "" {
			e := exs[0]
			if e.A != c.firstA || e.B != c.firstB || e.Label != c.firstLabel {
				t.Errorf("%s: first graded pair = %q / %q (%g)", name, e.A, e.B, e.Label)
			}
		}
	}
	for year, want := range map[string]int{"2012": 3108, "2012-train": 2234, "2013": 1500, "2014": 3750, "2015": 3000} {
		if totals[year] != want {
			t.Errorf("STS %s: %d graded pairs, want %d", year, totals[year], want)
		}
	}
	// The first graded pair of 2015 answers-forums is on line 5.
	in := filepath.Join(root, "2015", "STS.input.answers-forums.txt")
	exs, _, _ := mustReadAll(t, "sts", []string{in, corpora.STSGoldPath(in)}, corpora.Options{})
	if exs[0].Source.Line != 1 || exs[1].Source.Line != 5 || exs[1].ID != "sts:2015/answers-forums:5" || exs[1].Label != 0.6 {
		t.Errorf("answers-forums: first graded pairs %v, %v", exs[0], exs[1])
	}
}

func TestSTSBFixture(t *testing.T) {
	exs, rejects, st := mustReadAll(t, "stsb", []string{fixture("stsb/sts-mini.csv")}, corpora.Options{})
	got := stsReasonCounts(rejects)
	if len(exs) != 5 || st.Records != 9 || got[corpora.ReasonBadScore] != 1 || got[corpora.ReasonBadNumber] != 1 ||
		got[corpora.ReasonFieldCount] != 1 || got[corpora.ReasonEmptyText] != 1 {
		t.Fatalf("got %d examples, rejects %v, stats %+v", len(exs), got, st)
	}
	e := exs[0]
	if e.A != "A plane is taking off." || e.B != "An air plane is taking off." || e.Label != 5 || !e.HasLabel ||
		e.Dataset != "stsb/mini" || e.ID != "stsb:mini:1" || e.Group != e.ID || e.Corpus != "stsb" {
		t.Errorf("first example = %+v", e)
	}
	if e.Meta["genre"] != "main-captions" || e.Meta["filename"] != "MSRvid" || e.Meta["year"] != "2012test" || e.Meta["sid"] != "0001" || len(e.Meta) != 4 {
		t.Errorf("first meta = %v", e.Meta)
	}
	if e := exs[1]; e.A != `"Then the captain was gone.` || e.B != "Then the captain came back." || e.Label != 0.8 {
		t.Errorf("unbalanced quote = %+v", e)
	}
	e = exs[3]
	if e.B != `Hagel laments "political" changes to US defence budget` || e.Label != 4 || e.Meta["source1"] != "Europe Media Monitor (http://emm.newsbrief.eu)" ||
		e.Meta["source2"] != "Europe Media Monitor (http://emm.newsbrief.eu)" || e.Meta["sid"] != "0573" {
		t.Errorf("extra columns = %+v", e)
	}
	if e := exs[4]; e.A != `"Fairies don't exist" - fine.` || e.B != `"Satyrs don't exist" - fine.` || e.Source.Line != 9 {
		t.Errorf("quoted pair = %+v", e)
	}
}

func TestSTSBSharedData(t *testing.T) {
	dir := sharedData(t, "eval/stsbenchmark")
	for _, c := range []struct {
		split      string
		pairs      int
		extra      int
		extraLine  int64
		extraA     string
		extraB     string
		extraLabel float64
	}{
		{"train", 5749, 197, 5553, "Driver backs into stroller with child, drives off", "Driver backs into mom, stroller with child then drives off", 4},
		{"dev", 1500, 22, 1479, "US Supreme Court limits president's recess appointments power", "High court checks President's recess appointment power", 5},
	} {
		exs, rejects, st := mustReadAll(t, "stsb", []string{filepath.Join(dir, "sts-"+c.split+".csv")}, corpora.Options{})
		if len(exs) != c.pairs || len(rejects) != 0 || st.Records != int64(c.pairs) {
			t.Errorf("%s: %d pairs, rejects %v, stats %+v; want %d", c.split, len(exs), rejects, st, c.pairs)
			continue
		}
		extra := 0
		for _, e := range exs {
			if e.Dataset != "stsb/"+c.split || e.Label < 0 || e.Label > 5 || e.A == "" || e.B == "" {
				t.Errorf("%s: example %+v", c.split, e)
				break
			}
			if _, ok := e.Meta["source1"]; ok {
				extra++
			}
		}
		if extra != c.extra {
			t.Errorf("%s: %d rows with extra columns, want %d", c.split, extra, c.extra)
		}
		e := exs[c.extraLine-1]
		if e.Source.Line != c.extraLine || e.A != c.extraA || e.B != c.extraB || e.Label != c.extraLabel ||
			e.Meta["source1"] != "Europe Media Monitor (http://emm.newsbrief.eu)" || e.Meta["year"] != "2016" || e.Meta["filename"] != "headlines" {
			t.Errorf("%s: line %d = %+v", c.split, c.extraLine, e)
		}
	}
	// A sentence that opens a quote and never closes it (CSV-unquoting
	// would swallow the rest of the file).
	exs, _, _ := mustReadAll(t, "stsb", []string{filepath.Join(dir, "sts-train.csv")}, corpora.Options{})
	if e := exs[2001]; e.A != `"Then the captain was gone.` || e.B != "Then the captain came back." || e.Label != 0.8 || e.ID != "stsb:train:2002" {
		t.Errorf("line 2002 = %+v", e)
	}
}

func TestSICKFixture(t *testing.T) {
	exs, rejects, st := mustReadAll(t, "sick", []string{fixture("sick/SICK_mini.txt")}, corpora.Options{})
	got := stsReasonCounts(rejects)
	if len(exs) != 4 || st.Records != 9 || st.Skipped["header"] != 1 || got[corpora.ReasonBadScore] != 1 || got[corpora.ReasonBadNumber] != 1 ||
		got[corpora.ReasonFieldCount] != 1 || got[corpora.ReasonMissingField] != 1 {
		t.Fatalf("got %d examples, rejects %v, stats %+v", len(exs), got, st)
	}
	e := exs[0]
	if e.A != "A group of kids is playing in a yard and an old man is standing in the background" || e.Label != 4.5 || !e.HasLabel ||
		e.ID != "sick:1" || e.Group != e.ID || e.Dataset != "sick/mini" || e.Corpus != "sick" || e.Meta["entailment"] != "NEUTRAL" || e.Source.Line != 2 {
		t.Errorf("first example = %+v", e)
	}
	if e := exs[3]; e.A != `Two "dogs" are fighting` || e.Label != 4 || e.ID != "sick:9" || e.Meta["entailment"] != "ENTAILMENT" {
		t.Errorf("last example = %+v", e)
	}
}

func TestSICKHeader(t *testing.T) {
	dir := t.TempDir()
	for name, data := range map[string]string{
		"SICK_nohead.txt": "1\tA dog runs\tA dog is running\t4.8\tENTAILMENT\n",
		"SICK_empty.txt":  "",
	} {
		p := filepath.Join(dir, name)
		os.WriteFile(p, []byte(data), 0o644)
		_, _, _, err := readAll(t, "sick", []string{p}, corpora.Options{})
		var fe *corpora.FileError
		if !errors.Is(err, corpora.ErrFormat) || !errors.As(err, &fe) || fe.File != p {
			t.Errorf("%s: err = %v, want a FileError wrapping ErrFormat", name, err)
		}
	}
	// A BOM before the header, columns in another order, CRLF line ends.
	p := filepath.Join(dir, "SICK_test_annotated.txt")
	os.WriteFile(p, []byte("\xef\xbb\xbfpair_ID\tsentence_A\tsentence_B\tentailment_label\trelatedness_score\r\n7\tA dog runs\tA dog is running\tENTAILMENT\t4.8\r\n"), 0o644)
	exs, rejects, _ := mustReadAll(t, "sick", []string{p}, corpora.Options{})
	if len(exs) != 1 || len(rejects) != 0 || exs[0].Label != 4.8 || exs[0].Meta["entailment"] != "ENTAILMENT" || exs[0].Dataset != "sick/test" || exs[0].B != "A dog is running" {
		t.Errorf("reordered header: %v, rejects %v", exs, rejects)
	}
}

func TestSICKSharedData(t *testing.T) {
	dir := sharedData(t, "eval/sick")
	for _, c := range []struct {
		split                          string
		pairs                          int
		entail, neutral, contradiction int
	}{
		{"train", 4500, 1299, 2536, 665},
		{"trial", 500, 144, 282, 74},
	} {
		exs, rejects, st := mustReadAll(t, "sick", []string{filepath.Join(dir, "SICK_"+c.split+".txt")}, corpora.Options{})
		if len(exs) != c.pairs || len(rejects) != 0 || st.Skipped["header"] != 1 || st.Records != int64(c.pairs+1) {
			t.Errorf("%s: %d pairs, rejects %v, stats %+v; want %d", c.split, len(exs), rejects, st, c.pairs)
			continue
		}
		judgments := map[string]int{}
		ids := map[string]bool{}
		for _, e := range exs {
			judgments[e.Meta["entailment"]]++
			ids[e.ID] = true
			if e.Dataset != "sick/"+c.split || e.Label < 1 || e.Label > 5 {
				t.Errorf("%s: example %+v", c.split, e)
				break
			}
		}
		if judgments["ENTAILMENT"] != c.entail || judgments["NEUTRAL"] != c.neutral || judgments["CONTRADICTION"] != c.contradiction || len(ids) != c.pairs {
			t.Errorf("%s: judgments %v, %d distinct ids", c.split, judgments, len(ids))
		}
	}
	exs, _, _ := mustReadAll(t, "sick", []string{filepath.Join(dir, "SICK_trial.txt")}, corpora.Options{})
	if e := exs[0]; e.ID != "sick:4" || e.A != "The young boys are playing outdoors and the man is smiling nearby" ||
		e.B != "There is no boy playing outdoors and there is no man smiling" || e.Label != 3.6 || e.Meta["entailment"] != "CONTRADICTION" {
		t.Errorf("first trial pair = %+v", e)
	}
	// readme.txt starts with a BOM and is no SICK file.
	_, _, _, err := readAll(t, "sick", []string{filepath.Join(dir, "readme.txt")}, corpora.Options{})
	if !errors.Is(err, corpora.ErrFormat) {
		t.Errorf("readme.txt: err = %v, want ErrFormat", err)
	}
}

// stsFirstLines returns the first n lines of a file, or nil when it is absent.
func stsFirstLines(path string, n int) []byte {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil
	}
	end := 0
	for i := 0; i < n && end < len(b); i++ {
		j := strings.IndexByte(string(b[end:]), '\n')
		if j < 0 {
			return b
		}
		end += j + 1
	}
	return b[:end]
}

// stsSharedFirstLines is stsFirstLines of a file under ../shared/data, without skipping.
func stsSharedFirstLines(rel string, n int) []byte {
	return stsFirstLines(filepath.Join(repoRoot(), "..", "shared", "data", rel), n)
}

func FuzzSTS(f *testing.F) {
	in := fixture("sts/2016/STS.input.mini.txt")
	f.Add(stsFirstLines(in, 20), stsFirstLines(corpora.STSGoldPath(in), 20))
	for _, set := range []string{"2015/STS.input.answers-forums.txt", "2014/STS.input.deft-forum.txt", "2012/STS.input.MSRpar.txt"} {
		in := "eval/sts/" + set
		if a, b := stsSharedFirstLines(in, 20), stsSharedFirstLines(strings.Replace(in, ".input.", ".gs.", 1), 20); a != nil && b != nil {
			f.Add(a, b)
		}
	}
	f.Add([]byte("a\tb\n\xff\tc\nd\n"), []byte("1\n\n2\n"))
	f.Fuzz(func(t *testing.T, input, gold []byte) {
		fuzzReader(t, "sts", input, gold)
		stsFuzzInvariants(t, "sts", 0, 5, input, gold)
	})
}

func FuzzSTSB(f *testing.F) {
	f.Add(stsFirstLines(fixture("stsb/sts-mini.csv"), 20))
	for _, p := range []string{"eval/stsbenchmark/sts-train.csv", "eval/stsbenchmark/sts-dev.csv"} {
		if b := stsSharedFirstLines(p, 20); b != nil {
			f.Add(b)
		}
	}
	f.Add([]byte("g\tf\ty\t1\t2\t\"a\tb\tc\td\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		fuzzReader(t, "stsb", data)
		stsFuzzInvariants(t, "stsb", 0, 5, data)
	})
}

func FuzzSICK(f *testing.F) {
	f.Add(stsFirstLines(fixture("sick/SICK_mini.txt"), 20))
	for _, p := range []string{"eval/sick/SICK_train.txt", "eval/sick/SICK_trial.txt", "eval/sick/readme.txt"} {
		if b := stsSharedFirstLines(p, 20); b != nil {
			f.Add(b)
		}
	}
	f.Add([]byte("\xef\xbb\xbfpair_ID\tsentence_A\tsentence_B\trelatedness_score\n1\ta\tb\t3\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		fuzzReader(t, "sick", data)
		stsFuzzInvariants(t, "sick", 1, 5, data)
	})
}

// stsFuzzInvariants reads datas as fuzzReader does and checks what every
// Example of these formats promises: non-empty valid texts, an ID, a label
// in [lo, hi] where the format has one (lo > hi: none), and records that are
// each an example, a reject or a skip.
func stsFuzzInvariants(t *testing.T, format string, lo, hi float64, datas ...[]byte) {
	f, err := corpora.LookupFormat(format)
	if err != nil {
		t.Fatal(err)
	}
	lim := corpora.Limits{MaxLineBytes: 4096, MaxDecompressedBytes: 1 << 20}
	inputs := make([]*corpora.Input, len(f.Files))
	for i := range inputs {
		if inputs[i], err = corpora.NewInput(f.Files[i], bytesReader(datas[min(i, len(datas)-1)]), lim); err != nil {
			return
		}
	}
	r, err := f.New(inputs, corpora.Options{Limits: lim})
	if err != nil {
		return
	}
	defer r.Close()
	err = corpora.Drain(r, func(e corpora.Example) error {
		if e.A == "" || e.B == "" || !utf8.ValidString(e.A) || !utf8.ValidString(e.B) || e.ID == "" || e.Group == "" || e.Corpus != f.Corpus {
			t.Fatalf("bad example %+v", e)
		}
		if lo <= hi && (!e.HasLabel || !(e.Label >= lo && e.Label <= hi)) {
			t.Fatalf("label of %+v outside [%g, %g]", e, lo, hi)
		}
		return nil
	}, nil)
	st := r.Stats()
	var skipped int64
	for _, n := range st.Skipped {
		skipped += n
	}
	if err == nil && st.Examples+st.RejectedTotal()+skipped != st.Records {
		t.Fatalf("records are not examples + rejects + skips: %+v", st)
	}
}
