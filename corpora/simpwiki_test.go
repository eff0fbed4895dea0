package corpora_test

import (
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"testing"

	"github.com/parastream/parastream/corpora"
)

func TestSimpWikiFixture(t *testing.T) {
	normal, simple := fixture("simpwiki/normal.aligned"), fixture("simpwiki/simple.aligned")
	exs, rejects, st := mustReadAll(t, "simpwiki", []string{normal, simple}, corpora.Options{})
	if len(exs) != 12 || st.Records != 16 || len(rejects) != 4 {
		t.Fatalf("got %d examples, %d rejects, stats %+v; want 12 and 4 of 16", len(exs), len(rejects), st)
	}
	for i, want := range []struct {
		line   int64
		reason corpora.Reason
	}{{4, corpora.ReasonTitleMismatch}, {8, corpora.ReasonFieldCount}, {13, corpora.ReasonBadNumber}, {16, corpora.ReasonEmptyText}} {
		pe := rejects[i]
		if pe.Source.Line != want.line || pe.Reason != want.reason || pe.Source.File != normal || len(pe.Record) == 0 {
			t.Errorf("reject %d = %v, want %s on line %d", i, pe, want.reason, want.line)
		}
	}
	if !contains(rejects[0].Detail, `"April (month)"`) || !contains(rejects[1].Detail, "simple") || !contains(rejects[2].Detail, `"two"`) {
		t.Errorf("details do not say what is wrong: %v", rejects)
	}
	e := exs[0]
	if e.A != "April is the fourth month of the year in the Julian and Gregorian calendars, and one of four months with a length of 30 days." ||
		e.B != "April is the fourth month of the year, and it has 30 days." {
		t.Errorf("first pair = %q / %q", e.A, e.B)
	}
	if e.ID != "simpwiki:1" || e.Corpus != "simpwiki" || e.Dataset != "simpwiki" || e.Group != "simpwiki:April" || e.HasLabel ||
		e.LangA != "en" || e.LangB != "en" || e.Source.Line != 1 || e.Source.File != normal {
		t.Errorf("first example = %+v", e)
	}
	groups := map[string]int{}
	for _, e := range exs {
		groups[e.Group]++
	}
	if len(groups) != 3 || groups["simpwiki:April"] != 4 || groups["simpwiki:Cat"] != 3 || groups["simpwiki:Mount Everest"] != 5 {
		t.Errorf("groups = %v", groups)
	}
	e = exs[10] // line 14: paragraph 2 in both articles, after a rejected line.
	if e.ID != "simpwiki:14" || e.Meta["title"] != "Mount Everest" || e.Meta["paragraph"] != "2" || e.Meta["paragraph_simple"] != "2" ||
		e.A != "Edmund Hillary and Tenzing Norgay made the first official ascent of Everest in 1953, using the southeast ridge route." {
		t.Errorf("line 14 = %+v", e)
	}
	if e := exs[11]; e.Meta["paragraph"] != "3" || e.Source.Line != 15 {
		t.Errorf("last example = %+v", e)
	}
}

func TestSimpWikiOptions(t *testing.T) {
	exs, _, _ := mustReadAll(t, "simpwiki", []string{fixture("simpwiki/normal.aligned"), fixture("simpwiki/simple.aligned")}, corpora.Options{Dataset: "simpwiki-v2"})
	if e := exs[0]; e.Dataset != "simpwiki-v2" || e.ID != "simpwiki-v2:1" || e.Group != "simpwiki:April" {
		t.Errorf("first example = %+v", e)
	}
}

func TestSimpWikiLengthMismatch(t *testing.T) {
	dir := t.TempDir()
	a, b := filepath.Join(dir, "normal.aligned"), filepath.Join(dir, "simple.aligned")
	os.WriteFile(a, []byte("A\t0\tOne.\nA\t0\tTwo.\n"), 0o644)
	os.WriteFile(b, []byte("A\t0\tOne.\nA\t0\tTwo.\nA\t1\tThree.\n"), 0o644)
	exs, _, _, err := readAll(t, "simpwiki", []string{a, b}, corpora.Options{})
	if !errors.Is(err, corpora.ErrLengthMismatch) || !contains(err.Error(), b+" has 3 lines") || !contains(err.Error(), a+" has 2") {
		t.Fatalf("err = %v, want ErrLengthMismatch naming both files", err)
	}
	if len(exs) != 2 {
		t.Errorf("%d examples before the mismatch, want 2", len(exs))
	}
}

func TestSimpWikiMalformed(t *testing.T) {
	dir := t.TempDir()
	a, b := filepath.Join(dir, "normal.aligned"), filepath.Join(dir, "simple.aligned")
	os.WriteFile(a, []byte("A\t-1\tx\n\t0\tx\nA\t0\tx\tmore\nA\t0\t\xff\nA\t 3 \t  Padded.  \r\n"), 0o644)
	os.WriteFile(b, []byte("A\t0\tx\n\t0\tx\nA\t0\tx\nA\t0\tx\nA\t4\tPadded too.\r\n"), 0o644)
	exs, rejects, _ := mustReadAll(t, "simpwiki", []string{a, b}, corpora.Options{})
	want := []corpora.Reason{corpora.ReasonBadNumber, corpora.ReasonMissingField, corpora.ReasonFieldCount, corpora.ReasonBadUTF8}
	if len(rejects) != len(want) || len(exs) != 1 {
		t.Fatalf("examples %v, rejects %v", exs, rejects)
	}
	for i, r := range want {
		if rejects[i].Reason != r {
			t.Errorf("reject %d = %v, want %s", i, rejects[i], r)
		}
	}
	if e := exs[0]; e.A != "Padded." || e.B != "Padded too." || e.Meta["paragraph"] != "3" || e.Meta["paragraph_simple"] != "4" {
		t.Errorf("example = %+v", e)
	}
}

func TestTurkCorpusFixture(t *testing.T) {
	norm, simp := fixture("turkcorpus/mini.8turkers.tok.norm"), fixture("turkcorpus/mini.8turkers.tok.simp")
	exs, rejects, st := mustReadAll(t, "turkcorpus", []string{norm, simp}, corpora.Options{})
	if len(exs) != 5 || st.Records != 6 || len(rejects) != 1 || rejects[0].Reason != corpora.ReasonEmptyText || rejects[0].Source.Line != 5 {
		t.Fatalf("got %d examples, rejects %v, stats %+v; want 5 and an empty line 5", len(exs), rejects, st)
	}
	e := exs[0]
	if e.A != "the city is served by the sacramento international airport , located 10 miles -lrb- 16 km -rrb- northwest of downtown ." ||
		e.B != "the city is served by the sacramento international airport , which is 10 miles -lrb- 16 km -rrb- northwest of downtown ." {
		t.Errorf("first pair = %q / %q", e.A, e.B)
	}
	if e.ID != "turkcorpus:mini:1" || e.Group != e.ID || e.Corpus != "turkcorpus" || e.Dataset != "turkcorpus/mini" || e.HasLabel || e.LangA != "en" || e.LangB != "en" {
		t.Errorf("first example = %+v", e)
	}
	if e := exs[4]; e.Source.Line != 6 || e.ID != "turkcorpus:mini:6" {
		t.Errorf("last example (no final newline) = %+v", e)
	}
}

func TestTurkCorpusSharedData(t *testing.T) {
	dir := sharedData(t, "corpora/turkcorpus")
	for _, c := range []struct {
		split         string
		pairs         int
		firstA, lastB string
	}{
		{"tune", 2000,
			"adjacent counties are marin -lrb- to the south -rrb- , mendocino -lrb- to the north -rrb- , lake -lrb- northeast -rrb- , napa -lrb- to the east -rrb- , and solano and contra costa -lrb- to the southeast -rrb- .", ""},
		{"test", 359, "", ""},
	} {
		base := filepath.Join(dir, c.split+".8turkers.tok.")
		exs, rejects, st := mustReadAll(t, "turkcorpus", []string{base + "norm", base + "simp"}, corpora.Options{})
		if len(exs) != c.pairs || len(rejects) != 0 || st.Records != int64(c.pairs) {
			t.Errorf("%s: %d pairs, rejects %v, stats %+v; want %d", c.split, len(exs), rejects, st, c.pairs)
			continue
		}
		if c.firstA != "" && exs[0].A != c.firstA {
			t.Errorf("%s: first A = %q", c.split, exs[0].A)
		}
		last := exs[len(exs)-1]
		if last.Dataset != "turkcorpus/"+c.split || last.Source.Line != int64(c.pairs) || last.ID != "turkcorpus:"+c.split+":"+strconv.Itoa(c.pairs) {
			t.Errorf("%s: last example = %+v", c.split, last)
		}
	}
}

func FuzzSimpWiki(f *testing.F) {
	f.Add(stsFirstLines(fixture("simpwiki/normal.aligned"), 20), stsFirstLines(fixture("simpwiki/simple.aligned"), 20))
	f.Add([]byte("A\t0\tx\n\t\t\n"), []byte("A\t0\ty\nB\tx\t\n"))
	f.Fuzz(func(t *testing.T, normal, simple []byte) {
		fuzzReader(t, "simpwiki", normal, simple)
		stsFuzzInvariants(t, "simpwiki", 1, 0, normal, simple)
	})
}

func FuzzTurkCorpus(f *testing.F) {
	f.Add(stsFirstLines(fixture("turkcorpus/mini.8turkers.tok.norm"), 20), stsFirstLines(fixture("turkcorpus/mini.8turkers.tok.simp"), 20))
	for _, split := range []string{"tune", "test"} {
		a, b := stsSharedFirstLines("corpora/turkcorpus/"+split+".8turkers.tok.norm", 20), stsSharedFirstLines("corpora/turkcorpus/"+split+".8turkers.tok.simp", 20)
		if a != nil && b != nil {
			f.Add(a, b)
		}
	}
	f.Add([]byte("a\n\n\xff"), []byte("b\nc\n"))
	f.Fuzz(func(t *testing.T, norm, simp []byte) {
		fuzzReader(t, "turkcorpus", norm, simp)
		stsFuzzInvariants(t, "turkcorpus", 1, 0, norm, simp)
	})
}
