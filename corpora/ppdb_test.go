package corpora_test

import (
	"bufio"
	"bytes"
	"os"
	"path/filepath"
	"testing"

	"github.com/parastream/parastream/corpora"
)

func TestPPDBFixture2(t *testing.T) {
	exs, rejects, st := mustReadAll(t, "ppdb", []string{fixture("ppdb/ppdb-2.0-s-mini.raw")}, corpora.Options{})
	mosesWantRejects(t, rejects, map[int64]corpora.Reason{
		10: corpora.ReasonBadFeature, 11: corpora.ReasonBadFeature, 12: corpora.ReasonBadFeature,
		13: corpora.ReasonBadAlignment, 14: corpora.ReasonBadLHS, 15: corpora.ReasonFieldCount,
		16: corpora.ReasonEmptyText, 17: corpora.ReasonBadFeature, 18: corpora.ReasonBadFeature,
	})
	if len(exs) != 10 || st.Records != 20 || st.Skipped["blank_line"] != 1 {
		t.Fatalf("got %d examples, stats %+v", len(exs), st)
	}
	e := exs[0]
	if e.A != "what" || e.B != "identified" || e.LangA != "en" || e.LangB != "en" || e.Corpus != "ppdb" || e.Dataset != "ppdb-2.0-s-mini" {
		t.Errorf("first = %+v", e)
	}
	if e.ID != "ppdb:ppdb-2.0-s-mini:1" || e.Group != "ppdb:ppdb-2.0-s-mini:identified\twhat" || !e.HasLabel || e.Label != 3.27577 {
		t.Errorf("first provenance = %+v, group %q", e, e.Group)
	}
	for k, v := range map[string]string{
		"lhs": "[VBD]", "align": "0-0", "entailment": "Independent", "tier": "s",
		"f:PPDB2.0Score": "3.27577", "f:PPDB1.0Score": "24.353100", "f:-logp(LHS|e1)": "11.32647", "f:MVLSASim": "NA",
	} {
		if e.Meta[k] != v {
			t.Errorf("first Meta[%q] = %q, want %q", k, e.Meta[k], v)
		}
	}
	if len(e.Meta) != 4+7 {
		t.Errorf("first Meta has %d keys: %v", len(e.Meta), e.Meta)
	}
	// The reverse rule shares the group.
	if exs[1].A != "identified" || exs[1].Group != e.Group || exs[1].ID == e.ID {
		t.Errorf("reverse = %+v", exs[1])
	}
	if e := exs[5]; e.A != "the [NN,1] of" || e.B != "[NN,1] 's" || e.Meta["entailment"] != "OtherRelated" {
		t.Errorf("syntactic rule = %+v", e)
	}
	if e := exs[6]; e.Meta["align"] != "0-0 1-0 2-0" {
		t.Errorf("alignment past the phrase (as in the release) = %+v", e)
	}
	if e := exs[7]; !e.HasLabel || e.Label != 12.7491 || e.Meta["f:PPDB2.0Score"] != "NA" {
		t.Errorf("PPDB2.0Score=NA falls back to 1.0: %+v", e)
	}
	if e := exs[8]; e.A != "dog" || e.Label != 5 || e.Meta["entailment"] != "" || len(e.Meta) != 5 {
		t.Errorf("five-field rule in a 2.0 file = %+v", e)
	}
	for _, pe := range rejects {
		if pe.Source.Line == 17 && !contains(pe.Detail, "Lexical given twice") {
			t.Errorf("duplicate detail %q", pe.Detail)
		}
		if pe.Source.Line == 12 && !contains(pe.Detail, `"Synonym"`) {
			t.Errorf("entailment detail %q", pe.Detail)
		}
	}
}

func TestPPDBFixture1(t *testing.T) {
	exs, rejects, _ := mustReadAll(t, "ppdb", []string{fixture("ppdb/ppdb-1.0-s-mini.raw")}, corpora.Options{})
	mosesWantRejects(t, rejects, map[int64]corpora.Reason{
		6: corpora.ReasonBadFeature, 7: corpora.ReasonBadFeature, 8: corpora.ReasonBadFeature,
		9: corpora.ReasonBadAlignment, 10: corpora.ReasonFieldCount,
	})
	if len(exs) != 6 {
		t.Fatalf("got %d examples", len(exs))
	}
	e := exs[0]
	if e.A != "and" || e.B != "as well as" || e.HasLabel || e.Meta["lhs"] != "[CC]" || e.Meta["f:p(e|f)"] != "1.16440" || e.Meta["align"] != "0-0 0-1 0-2" {
		t.Errorf("first = %+v", e)
	}
	if _, ok := e.Meta["entailment"]; ok {
		t.Errorf("1.0 rule has an entailment: %v", e.Meta)
	}
	if e.Dataset != "ppdb-1.0-s-mini" || e.Meta["tier"] != "s" {
		t.Errorf("dataset %q tier %q", e.Dataset, e.Meta["tier"])
	}
	if e := exs[3]; e.A != "10/17/01" || e.B != "17/10/2001" {
		t.Errorf("dates = %+v", e)
	}
}

func TestPPDBNames(t *testing.T) {
	dir := t.TempDir()
	row := []byte("[NN] ||| a ||| b ||| PPDB2.0Score=1 ||| 0-0 ||| Equivalence\n")
	for _, tc := range []struct {
		name          string
		opts          corpora.Options
		dataset, tier string
		lang          string
	}{
		{"ppdb-2.0-s-all.gz", corpora.Options{}, "ppdb-2.0-s-all", "s", "en"},
		{"ppdb-1.0-xxxl-lexical", corpora.Options{}, "ppdb-1.0-xxxl-lexical", "xxxl", "en"},
		{"ppdb-2.0-tldr", corpora.Options{}, "ppdb-2.0-tldr", "tldr", "en"},
		{"ppdb-2.0-xl-phrasal.raw", corpora.Options{}, "ppdb-2.0-xl-phrasal", "xl", "en"},
		{"ppdb-2.0-small.raw", corpora.Options{}, "ppdb-2.0-small", "", "en"},
		{"rules.txt", corpora.Options{}, "rules", "", "en"},
		{"rules.txt", corpora.Options{Tier: "m", Dataset: "spa", LangA: "es"}, "spa", "m", "es"},
	} {
		p := filepath.Join(dir, tc.name)
		os.WriteFile(p, row, 0o644)
		exs, _, _ := mustReadAll(t, "ppdb", []string{p}, tc.opts)
		if len(exs) != 1 {
			t.Fatalf("%s: %d examples", tc.name, len(exs))
		}
		e := exs[0]
		if e.Dataset != tc.dataset || e.Meta["tier"] != tc.tier || e.LangA != tc.lang || e.LangB != tc.lang || e.ID != "ppdb:"+tc.dataset+":1" {
			t.Errorf("%s %+v: dataset %q tier %q langs %q %q id %q", tc.name, tc.opts, e.Dataset, e.Meta["tier"], e.LangA, e.LangB, e.ID)
		}
		os.Remove(p)
	}
}

func TestPPDBPairsFixture(t *testing.T) {
	exs, rejects, st := mustReadAll(t, "ppdb-pairs", []string{fixture("ppdb/lexical-pairs.tsv")}, corpora.Options{})
	mosesWantRejects(t, rejects, map[int64]corpora.Reason{
		6: corpora.ReasonFieldCount, 7: corpora.ReasonFieldCount, 8: corpora.ReasonEmptyText, 10: corpora.ReasonBadUTF8,
	})
	if len(exs) != 7 || st.Records != 12 || st.Skipped["blank_line"] != 1 {
		t.Fatalf("got %d examples, stats %+v", len(exs), st)
	}
	if e := exs[1]; e.A != "102,70" || e.B != "102.70" || e.HasLabel || e.Meta != nil || e.ID != "ppdb:lexical-pairs:2" {
		t.Errorf("second = %+v", e)
	}
	if exs[2].Group != exs[3].Group || exs[2].Group != "ppdb:lexical-pairs:automobile\tcar" {
		t.Errorf("car/automobile groups %q %q", exs[2].Group, exs[3].Group)
	}
	if e := exs[5]; e.B != "give up" {
		t.Errorf("phrase = %+v", e)
	}
}

func TestPPDBHumanFixture(t *testing.T) {
	exs, rejects, _ := mustReadAll(t, "ppdb-human", []string{fixture("ppdb/human-labels.tsv")}, corpora.Options{})
	mosesWantRejects(t, rejects, map[int64]corpora.Reason{
		5: corpora.ReasonBadNumber, 6: corpora.ReasonBadScore, 7: corpora.ReasonBadNumber, 8: corpora.ReasonBadScore,
		9: corpora.ReasonBadLHS, 10: corpora.ReasonFieldCount, 11: corpora.ReasonEmptyText, 12: corpora.ReasonBadScore,
		13: corpora.ReasonFieldCount,
	})
	if len(exs) != 5 {
		t.Fatalf("got %d examples", len(exs))
	}
	e := exs[0]
	if e.A != "this video" || e.B != "the movie" || !e.HasLabel || e.Label != 4 || len(e.Scores) != 5 || e.Scores[4] != 5 || e.Meta["lhs"] != "[NP]" || len(e.Meta) != 1 {
		t.Errorf("first = %+v", e)
	}
	if e.ID != "ppdb:human-labels:1" || e.Group != "ppdb:human-labels:the movie\tthis video" || e.Dataset != "human-labels" {
		t.Errorf("first provenance = %+v", e)
	}
	if exs[2].Group != exs[3].Group || exs[3].Label != 1.33333333333 {
		t.Errorf("editor/head = %+v / %+v", exs[2], exs[3])
	}
	for _, pe := range rejects {
		if pe.Source.Line == 8 && !contains(pe.Detail, "not the mean") {
			t.Errorf("mean detail %q", pe.Detail)
		}
	}
}

func TestPPDBSharedData(t *testing.T) {
	dir := sharedData(t, "corpora/ppdb")
	exs, rejects, st := mustReadAll(t, "ppdb", []string{filepath.Join(dir, "ppdb-2.0-tldr-sample.raw")}, corpora.Options{})
	if len(exs) != 233 || st.Records != 233 || len(rejects) != 0 {
		t.Fatalf("rules: %d examples, stats %+v, first reject %v", len(exs), st, rejects)
	}
	e := exs[0]
	if e.A != "what" || e.B != "identified" || e.Label != 3.27577 || e.Meta["tier"] != "tldr" || e.Dataset != "ppdb-2.0-tldr-sample" ||
		e.Meta["entailment"] != "Independent" || e.Meta["f:MVLSASim"] != "NA" || len(e.Meta) != 4+43 {
		t.Errorf("rules first = %+v (%d meta)", e, len(e.Meta))
	}
	classes := map[string]int{}
	for _, e := range exs {
		if !e.HasLabel {
			t.Fatalf("unlabelled rule %+v", e)
		}
		classes[e.Meta["entailment"]]++
	}
	if classes["Independent"] != 120 || classes["OtherRelated"] != 54 || classes["ForwardEntailment"] != 46 || classes["ReverseEntailment"] != 12 || classes["Equivalence"] != 1 {
		t.Errorf("entailment classes %v", classes)
	}

	exs, rejects, st = mustReadAll(t, "ppdb-pairs", []string{filepath.Join(dir, "ppdb-1.0-xxxl-lexical-synonym-pairs.tsv")}, corpora.Options{})
	if len(exs) != 210372 || st.Records != 210372 || len(rejects) != 0 {
		t.Fatalf("pairs: %d examples, stats %+v, first reject %v", len(exs), st, rejects)
	}
	if e := exs[0]; e.A != "10/17/01" || e.B != "17/10/2001" || e.Meta["tier"] != "xxxl" || e.Dataset != "ppdb-1.0-xxxl-lexical-synonym-pairs" {
		t.Errorf("pairs first = %+v", e)
	}
	if e := exs[1]; e.A != "102,70" || e.B != "102.70" {
		t.Errorf("pairs second = %+v", e)
	}

	exs, rejects, st = mustReadAll(t, "ppdb-human", []string{filepath.Join(dir, "ppdb-2.0-human-labels.tsv")}, corpora.Options{})
	if len(exs) != 26456 || st.Records != 26456 || len(rejects) != 0 {
		t.Fatalf("human: %d examples, stats %+v, first reject %v", len(exs), st, rejects)
	}
	if e := exs[0]; e.A != "this video" || e.B != "the movie" || e.Label != 4 || len(e.Scores) != 5 || e.Meta["lhs"] != "[NP]" {
		t.Errorf("human first = %+v", e)
	}
	ratings := map[int]int{}
	for _, e := range exs {
		ratings[len(e.Scores)]++
	}
	if ratings[5] != 24522 || ratings[4] != 1825 || ratings[3] != 108 || ratings[2] != 1 {
		t.Errorf("ratings a pair: %v", ratings)
	}
}

// ppdbSeeds adds a fixture and the first lines of a real file as seeds.
func ppdbSeeds(f *testing.F, fixtureRel, realRel string) {
	if b, err := os.ReadFile(fixture(fixtureRel)); err == nil {
		f.Add(b)
	}
	if realRel == "" {
		return
	}
	file, err := os.Open(filepath.Join(repoRoot(), "..", "shared", "data", realRel))
	if err != nil {
		return
	}
	defer file.Close()
	var lines [][]byte
	sc := bufio.NewScanner(file)
	for len(lines) < 20 && sc.Scan() {
		line := append([]byte(nil), sc.Bytes()...)
		lines = append(lines, line)
		f.Add(line)
	}
	if len(lines) > 0 {
		f.Add(append(bytes.Join(lines, []byte("\n")), '\n'))
	}
}

func FuzzPPDB(f *testing.F) {
	ppdbSeeds(f, "ppdb/ppdb-2.0-s-mini.raw", "corpora/ppdb/ppdb-2.0-tldr-sample.raw")
	ppdbSeeds(f, "ppdb/ppdb-1.0-s-mini.raw", "")
	f.Add([]byte("[X] ||| a ||| b ||| A=1 A=NA ||| 0-0 |||\n[X] ||| ||| ||| ||| |||"))
	f.Fuzz(func(t *testing.T, data []byte) { fuzzReader(t, "ppdb", data) })
}

func FuzzPPDBPairs(f *testing.F) {
	ppdbSeeds(f, "ppdb/lexical-pairs.tsv", "corpora/ppdb/ppdb-1.0-xxxl-lexical-synonym-pairs.tsv")
	f.Add([]byte("\x16\t\x1d\n\t\n"))
	f.Fuzz(func(t *testing.T, data []byte) { fuzzReader(t, "ppdb-pairs", data) })
}

func FuzzPPDBHuman(f *testing.F) {
	ppdbSeeds(f, "ppdb/human-labels.tsv", "corpora/ppdb/ppdb-2.0-human-labels.tsv")
	f.Add([]byte("1\t[X]\ta\tb\t1,\n"))
	f.Fuzz(func(t *testing.T, data []byte) { fuzzReader(t, "ppdb-human", data) })
}
