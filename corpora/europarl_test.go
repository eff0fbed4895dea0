package corpora_test

import (
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/parastream/parastream/corpora"
)

func TestEuroparlFixture(t *testing.T) {
	exs, rejects, st := mustReadAll(t, "europarl", []string{fixture("europarl/mini.fr-en.en"), fixture("europarl/mini.fr-en.fr")}, corpora.Options{})
	if len(rejects) != 0 {
		t.Fatalf("rejects: %v", rejects)
	}
	if len(exs) != 3 || st.Skipped["empty_pair"] != 1 || st.Records != 4 {
		t.Fatalf("got %d examples, stats %+v; want 3 and one empty pair", len(exs), st)
	}
	e := exs[2]
	if e.A != "Please rise, then, for this minute's silence." || e.B != "Je vous invite à vous lever pour cette minute de silence." {
		t.Errorf("last pair = %q / %q", e.A, e.B)
	}
	if e.LangA != "en" || e.LangB != "fr" || e.Dataset != "fr-en" || e.ID != "europarl:fr-en:4" || e.Source.Line != 4 {
		t.Errorf("provenance = %+v", e)
	}
}

func TestEuroparlLengthMismatch(t *testing.T) {
	dir := t.TempDir()
	a, b := filepath.Join(dir, "x.en"), filepath.Join(dir, "x.fr")
	os.WriteFile(a, []byte("one\ntwo\nthree\n"), 0o644)
	os.WriteFile(b, []byte("un\ndeux\n"), 0o644)
	_, _, _, err := readAll(t, "europarl", []string{a, b}, corpora.Options{})
	if !errors.Is(err, corpora.ErrLengthMismatch) {
		t.Fatalf("err = %v, want ErrLengthMismatch", err)
	}
	for _, want := range []string{a + " has 3 lines", b + " has 2"} {
		if !contains(err.Error(), want) {
			t.Errorf("error %q does not say %q", err, want)
		}
	}
}

func TestEuroparlSharedData(t *testing.T) {
	dir := sharedData(t, "corpora/europarl")
	exs, rejects, st := mustReadAll(t, "europarl", []string{filepath.Join(dir, "fr-en-raw/europarl-v7.fr-en.en"), filepath.Join(dir, "fr-en-raw/europarl-v7.fr-en.fr")}, corpora.Options{})
	// 3,000 lines, the last without a newline; 6 have an empty French side.
	if st.Records != 3000 || len(exs) != 2994 || st.Skipped["empty_pair"] != 6 || len(rejects) != 0 {
		t.Fatalf("raw: %d examples, stats %+v", len(exs), st)
	}
	exs, _, st = mustReadAll(t, "europarl", []string{filepath.Join(dir, "fr-en-tok/en"), filepath.Join(dir, "fr-en-tok/fr")}, corpora.Options{Dataset: "fr-en"})
	if len(exs) != 10000 || exs[0].LangA != "en" || exs[0].LangB != "fr" {
		t.Fatalf("tok: %d examples, first %+v, stats %+v", len(exs), exs[0], st)
	}
}

func FuzzEuroparl(f *testing.F) {
	for _, p := range []string{"europarl/mini.fr-en.en", "europarl/mini.fr-en.fr"} {
		if b, err := os.ReadFile(fixture(p)); err == nil {
			f.Add(b)
		}
	}
	f.Add([]byte("a\n\xff\xfe\n\r\n"))
	f.Fuzz(func(t *testing.T, data []byte) { fuzzReader(t, "europarl", data, data[:len(data)/2]) })
}
