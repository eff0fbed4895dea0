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

	"github.com/parastream/parastream/corpora"
)

// rejectAt is a reject's line and reason.
type rejectAt struct {
	line   int64
	reason corpora.Reason
}

// checkFixture reads a fixture and checks the ids of its examples, where
// and why it rejects, and that the counts add up.
func checkFixture(t *testing.T, format, rel string, ids []string, rejects []rejectAt) []corpora.Example {
	t.Helper()
	path := fixture(rel)
	exs, pes, st := mustReadAll(t, format, []string{path}, corpora.Options{})
	var gotIDs []string
	for _, e := range exs {
		gotIDs = append(gotIDs, e.ID)
		if e.Corpus != format || e.Source.File != path || !e.HasLabel || e.A == "" {
			t.Errorf("%s: %+v", rel, e)
		}
	}
	var got []rejectAt
	for _, pe := range pes {
		got = append(got, rejectAt{pe.Source.Line, pe.Reason})
		if pe.Source.File != path || len(pe.Record) == 0 {
			t.Errorf("%s: reject %v at %+v keeps %q", rel, pe, pe.Source, pe.Record)
		}
	}
	if !slices.Equal(gotIDs, ids) || !slices.Equal(got, rejects) {
		t.Errorf("%s: ids %q, rejects %v\nwant %q, %v", rel, gotIDs, got, ids, rejects)
	}
	var skipped int64
	for _, n := range st.Skipped {
		skipped += n
	}
	if st.Examples+st.RejectedTotal()+skipped != st.Records {
		t.Errorf("%s: counts do not add up: %+v", rel, st)
	}
	return exs
}

func TestSNLIFixture(t *testing.T) {
	exs := checkFixture(t, "snli", "evalsets/snli_1.0_dev.mini.txt", []string{"snli:1.jpg#0r1e", "snli:1.jpg#0r2c", "snli:2.jpg#1r1n"},
		[]rejectAt{{5, corpora.ReasonBadLabel}})
	if e := exs[0]; e.A != "A man plays a guitar." || e.B != "A person makes music." || e.Label != 0 || e.Group != "1.jpg#0" || e.Dataset != "snli/dev" ||
		e.Meta["gold_label"] != "entailment" || e.Meta["caption_id"] != "1.jpg#0" || e.Meta["pair_id"] != "1.jpg#0r1e" || e.Source.Line != 2 {
		t.Errorf("%+v", e)
	}
	if exs[1].B != `Nobody is "playing".` || exs[1].Label != 2 || exs[2].Label != 1 {
		t.Errorf("%+v", exs[1:])
	}
	m := checkFixture(t, "snli", "evalsets/multinli_1.0_dev_matched.mini.jsonl", []string{"snli:31193n", "snli:31193e"}, []rejectAt{{3, corpora.ReasonBadJSON}})
	if e := m[0]; e.Dataset != "multinli/dev_matched" || e.Group != "31193" || e.Meta["genre"] != "government" || e.Meta["caption_id"] != "31193" {
		t.Errorf("%+v", e)
	}
	// Neither JSON nor the header.
	_, _, _, err := readAllData(t, "snli", "x.txt", "entailment\ta\tb\n")
	if !errors.Is(err, corpora.ErrFormat) {
		t.Errorf("no header: %v", err)
	}
}

func TestSNLIDataset(t *testing.T) {
	for name, want := range map[string]string{
		"snli_1.0_dev.jsonl.gz": "snli/dev", "snli_1.0_train.first1024.jsonl.gz": "snli/train", "snli_1.0_dev.first10.txt": "snli/dev",
		"multinli_1.0_dev_matched.jsonl": "multinli/dev_matched", "data/snli_1.0_test.jsonl": "snli/test", "nli.jsonl": "snli",
	} {
		exs, _, _, err := readAllData(t, "snli", name, `{"gold_label":"neutral","sentence1":"a","sentence2":"b"}`)
		if err != nil || len(exs) != 1 || exs[0].Dataset != want || exs[0].ID != "snli:"+want+":1" {
			t.Errorf("%s: %v %v, want %s", name, exs, err, want)
		}
	}
}

// readAllData reads data as the bytes of a file called name.
func readAllData(t *testing.T, format, name, data string) ([]corpora.Example, []*corpora.ParseError, corpora.Stats, error) {
	t.Helper()
	f, err := corpora.LookupFormat(format)
	if err != nil {
		t.Fatal(err)
	}
	in, err := corpora.NewInput(name, strings.NewReader(data), corpora.Limits{})
	if err != nil {
		t.Fatal(err)
	}
	r, err := corpora.NewReader(f, []*corpora.Input{in}, corpora.Options{})
	if err != nil {
		return nil, nil, corpora.Stats{}, err
	}
	defer r.Close()
	var exs []corpora.Example
	var pes []*corpora.ParseError
	err = corpora.Drain(r, func(e corpora.Example) error { exs = append(exs, e); return nil },
		func(pe *corpora.ParseError) error { pes = append(pes, pe); return nil })
	return exs, pes, r.Stats(), err
}

func TestSSTFixture(t *testing.T) {
	exs := checkFixture(t, "sst", "evalsets/sentiment-dev", []string{"sst:dev:1", "sst:dev:2", "sst:dev:7"},
		[]rejectAt{{4, corpora.ReasonFieldCount}, {5, corpora.ReasonBadNumber}, {6, corpora.ReasonEmptyText}})
	if e := exs[2]; e.A != "the best film of the year , ` ` bar none '' ." || e.B != "" || e.Label != 1 || e.Group != e.ID || e.Dataset != "sst/dev" {
		t.Errorf("%+v", e)
	}
	g := checkFixture(t, "sst", "evalsets/SST-2-train.tsv", []string{"sst:train:2", "sst:train:3", "sst:train:4"}, nil)
	if g[0].Dataset != "sst/train" || g[0].A != "hide new secretions from the parental units" || g[2].Label != 1 {
		t.Errorf("%+v", g[0])
	}
	for name, want := range map[string]string{"sentiment-test": "sst/test", "dev.tsv": "sst/dev", "SST-2-dev.tsv": "sst/dev", "train.tsv": "sst/train", "sst.txt": "sst/test"} {
		exs, _, _, err := readAllData(t, "sst", name, "sentence\tlabel\na \t0\n")
		if err != nil || len(exs) != 1 || exs[0].Dataset != want {
			t.Errorf("%s: %v %v, want %s", name, exs, err, want)
		}
	}
}

func TestMRFixture(t *testing.T) {
	pos := checkFixture(t, "mr", "evalsets/mr/rt-polarity.pos", []string{"mr:pos:1", "mr:pos:2", "mr:pos:4"}, nil)
	if pos[1].A != "effective but too-tepid biopic\u0085 with a caf\u00e9 scene" || pos[2].A != "\u0091simply\u0092 the best \u0096 really" ||
		pos[0].Label != 1 || pos[0].B != "" || pos[0].Dataset != "mr" {
		t.Errorf("%q", []string{pos[0].A, pos[1].A, pos[2].A})
	}
	neg := checkFixture(t, "mr", "evalsets/mr/rt-polarity.neg", []string{"mr:neg:1", "mr:neg:2"}, nil)
	// A trailing U+0085 is white space to Python's strip, as to Go's.
	if neg[1].A != "it's so laddish and juvenile" || neg[1].Label != 0 {
		t.Errorf("%+v", neg[1])
	}
	// With Encoding utf-8 the bytes are rejected.
	_, pes, _ := mustReadAll(t, "mr", []string{fixture("evalsets/mr/rt-polarity.pos")}, corpora.Options{Encoding: "utf-8"})
	if len(pes) != 2 || pes[0].Reason != corpora.ReasonBadUTF8 || pes[0].Source.Line != 2 {
		t.Errorf("utf-8: %v", pes)
	}
	_, _, _, err := readAllData(t, "mr", "rt-polarity.txt", "a\n")
	if !errors.Is(err, corpora.ErrFormat) {
		t.Errorf("no .pos/.neg: %v", err)
	}
}

func TestTrecQAFixture(t *testing.T) {
	exs := checkFixture(t, "trecqa", "evalsets/trecqa/mini-dev/a.toks", []string{"trecqa:mini-dev:1", "trecqa:mini-dev:2", "trecqa:mini-dev:4", "trecqa:mini-dev:5"},
		[]rejectAt{{3, corpora.ReasonBadNumber}, {6, corpora.ReasonEmptyText}})
	if e := exs[2]; e.A != "who wrote hamlet ?" || e.B != "shakespeare wrote hamlet ." || e.Label != 1 || e.Group != "trecqa:mini-dev:2" ||
		e.Meta["qid"] != "2" || e.Dataset != "trecqa/mini-dev" || exs[0].Meta["qid"] != "1.4" {
		t.Errorf("%+v", e)
	}
	// Files of different lengths.
	dir := filepath.Join(t.TempDir(), "raw-test")
	os.Mkdir(dir, 0o755)
	for name, data := range map[string]string{"a.toks": "q\nq\n", "b.toks": "a\nb\n", "sim.txt": "1\n0\n", "id.txt": "7\n"} {
		os.WriteFile(filepath.Join(dir, name), []byte(data), 0o644)
	}
	exs, _, _, err := readAll(t, "trecqa", []string{filepath.Join(dir, "a.toks")}, corpora.Options{})
	var fe *corpora.FileError
	if !errors.Is(err, corpora.ErrLengthMismatch) || !errors.As(err, &fe) || len(exs) != 1 || exs[0].Dataset != "trecqa/raw-test" {
		t.Errorf("mismatch: %v, %v", exs, err)
	}
	os.Remove(filepath.Join(dir, "sim.txt"))
	if _, err := corpora.OpenFormat("trecqa", []string{filepath.Join(dir, "a.toks")}, corpora.Options{}); !errors.Is(err, corpora.ErrFormat) {
		t.Errorf("no sim.txt: %v", err)
	}
}

func TestWikiQAFixture(t *testing.T) {
	exs := checkFixture(t, "wikiqa", "evalsets/WikiQA-dev.tsv", []string{"wikiqa:Q1:D1-0", "wikiqa:Q1:D1-1", "wikiqa:Q1:D1-2", "wikiqa:Q2:D2-2"},
		[]rejectAt{{5, corpora.ReasonBadNumber}, {6, corpora.ReasonFieldCount}})
	if e := exs[2]; e.A != "how are glacier caves formed?" || e.B != `A glacier cave is a cave formed within the ice of a "glacier".` || e.Label != 1 ||
		e.Group != "Q1" || e.Dataset != "wikiqa/dev" || e.Meta["document_title"] != "Glacier cave" || e.Meta["sentence_id"] != "D1-2" || e.Meta["question_id"] != "Q1" {
		t.Errorf("%+v", e)
	}
	for _, data := range []string{"", "Q1\tq\tD1\tt\tD1-0\ts\t0\n", "QuestionID\tQuestion\n"} {
		if _, _, _, err := readAllData(t, "wikiqa", "WikiQA-train.tsv", data); !errors.Is(err, corpora.ErrFormat) {
			t.Errorf("%q: %v", data, err)
		}
	}
}

func TestSCWSFixture(t *testing.T) {
	exs := checkFixture(t, "scws", "evalsets/ratings.txt", []string{"scws:1", "scws:2"},
		[]rejectAt{{3, corpora.ReasonMissingField}, {4, corpora.ReasonBadScore}, {5, corpora.ReasonFieldCount}})
	e := exs[0]
	if e.A != "He sat on the bank of the river ." || e.B != "The shore was sandy ." || e.Label != 7.5 || e.Meta["left1"] != "He sat on the" ||
		e.Meta["left2"] != "The" || e.Meta["word1"] != "bank" || e.Meta["pos2"] != "n" || e.Meta["ratings"] != "7.0,8.0,6.0,9.0,7.0,8.0,7.0,6.0,9.0,8.0" || e.Dataset != "scws" {
		t.Errorf("%+v", e)
	}
	// The target is the token after left.
	if e := exs[1]; e.Meta["left1"] != "" || strings.Fields(e.B)[len(strings.Fields(e.Meta["left2"]))] != "bank" {
		t.Errorf("%+v", e)
	}
}

func TestSemEvalCQAFixture(t *testing.T) {
	exs := checkFixture(t, "semeval-cqa", "evalsets/semeval/SemEval2016-Task3-CQA-QL-dev.xml",
		[]string{"semeval-cqa:Q1_R4", "semeval-cqa:Q1_R5", "semeval-cqa:Q1_R9"},
		[]rejectAt{{59, corpora.ReasonBadLabel}, {74, corpora.ReasonBadLabel}})
	e := exs[0]
	if e.A != "Good Bank Which is a good bank as per your experience in Doha" || e.B != "Best bank? Which bank is the best one?" || e.Label != 1 ||
		e.Group != "Q1" || e.Dataset != "semeval-cqa/dev" || e.Source.Line != 11 || e.Meta["rank"] != "4" || e.Meta["relevance"] != "PerfectMatch" ||
		e.Meta["orgq_id"] != "Q1" || e.Meta["relq_id"] != "Q1_R4" {
		t.Errorf("%+v", e)
	}
	if exs[1].B != "Banks & loans" || exs[1].Label != 1 || exs[2].Label != 0 || exs[1].Source.Line != 27 {
		t.Errorf("%+v", exs[1:])
	}
	// Without the gold file, Q2_R2 is read; a gold file out of order or too
	// short is a file error.
	raw, err := os.ReadFile(fixture("evalsets/semeval/SemEval2016-Task3-CQA-QL-dev.xml"))
	if err != nil {
		t.Fatal(err)
	}
	exs, pes, _, err := readAllData(t, "semeval-cqa", "SemEval2016-Task3-CQA-QL-train-part2.xml", string(raw))
	if err != nil || len(exs) != 4 || len(pes) != 1 || exs[3].Dataset != "semeval-cqa/train-part2" || exs[3].ID != "semeval-cqa:Q2_R2" {
		t.Errorf("no gold: %v %v %v", exs, pes, err)
	}
	dir := t.TempDir()
	xmlPath := filepath.Join(dir, "SemEval2016-Task3-CQA-QL-test.xml")
	os.WriteFile(xmlPath, raw, 0o644)
	for _, gold := range []string{"Q1\tQ1_R4\t4\t0.25\ttrue\n", "Q1\tQ1_R5\t4\t0.25\ttrue\n", strings.Repeat("Q1\tQ1_R4\t4\t0.25\ttrue\n", 6)} {
		os.WriteFile(filepath.Join(dir, "SemEval2016-Task3-CQA-QL-test.subtaskB.relevancy"), []byte(gold), 0o644)
		_, _, _, err := readAll(t, "semeval-cqa", []string{xmlPath}, corpora.Options{})
		var fe *corpora.FileError
		if !errors.As(err, &fe) {
			t.Errorf("gold %q: %v", gold, err)
		}
	}
	// Broken XML.
	_, _, _, err = readAllData(t, "semeval-cqa", "x.xml", string(raw[:len(raw)/2])+"<<")
	if !errors.Is(err, corpora.ErrFormat) {
		t.Errorf("broken XML: %v", err)
	}
}

func TestEvalSetFormatsListed(t *testing.T) {
	for _, name := range []string{"snli", "msrp", "sst", "mr", "semeval-cqa", "trecqa", "wikiqa", "scws"} {
		f, err := corpora.LookupFormat(name)
		if err != nil || f.Corpus != name || f.Summary == "" || f.Mapping == "" {
			t.Errorf("%s: %+v, %v", name, f, err)
		}
	}
}

// fuzzEval checks a reader over data: no panic, and every example and
// reject is consistent (located in the file, a label in range, the corpus
// named).
func fuzzEval(t *testing.T, format, name string, data []byte, labelMax float64) {
	f, _ := corpora.LookupFormat(format)
	in, err := corpora.NewInput(name, bytes.NewReader(data), corpora.Limits{MaxLineBytes: 4096, MaxDecompressedBytes: 1 << 20})
	if err != nil {
		return
	}
	r, err := corpora.NewReader(f, []*corpora.Input{in}, corpora.Options{Limits: corpora.Limits{MaxLineBytes: 4096, MaxDecompressedBytes: 1 << 20}})
	if err != nil {
		return
	}
	defer r.Close()
	err = corpora.Drain(r, func(e corpora.Example) error {
		if e.Corpus != format || e.ID == "" || e.Group == "" || e.A == "" || e.A != strings.TrimSpace(e.A) || e.B != strings.TrimSpace(e.B) ||
			!e.HasLabel || e.Label < 0 || e.Label > labelMax || e.Source.File != name || e.Source.Line < 1 || e.Source.Offset < 0 || e.Source.Offset > 2*int64(len(data)) { // Latin-1 decoding (MR) may double the bytes
			return fmt.Errorf("inconsistent example %+v", e)
		}
		return nil
	}, func(pe *corpora.ParseError) error {
		if pe.Source.File != name || pe.Source.Line < 1 || pe.Reason == "" {
			return fmt.Errorf("inconsistent reject %+v", pe)
		}
		return nil
	})
	var fe *corpora.FileError
	if err != nil && !errors.As(err, &fe) {
		t.Fatal(err)
	}
	st := r.Stats()
	if st.Examples+st.RejectedTotal() > st.Records {
		t.Fatalf("counts do not add up: %+v", st)
	}
}

func seedFuzz(f *testing.F, rels ...string) {
	for _, rel := range rels {
		if b, err := os.ReadFile(fixture(rel)); err == nil {
			f.Add(b)
		}
	}
	f.Add([]byte(""))
	f.Add([]byte("\t\n\r\n"))
}

func FuzzSNLI(f *testing.F) {
	seedFuzz(f, "evalsets/snli_1.0_dev.mini.txt", "evalsets/multinli_1.0_dev_matched.mini.jsonl")
	f.Fuzz(func(t *testing.T, data []byte) {
		fuzzEval(t, "snli", "snli_1.0_dev.txt", data, 2)
	})
}

func FuzzSST(f *testing.F) {
	seedFuzz(f, "evalsets/sentiment-dev", "evalsets/SST-2-train.tsv")
	f.Fuzz(func(t *testing.T, data []byte) {
		fuzzEval(t, "sst", "sentiment-dev", data, 1)
	})
}

func FuzzMR(f *testing.F) {
	seedFuzz(f, "evalsets/mr/rt-polarity.pos")
	f.Fuzz(func(t *testing.T, data []byte) {
		fuzzEval(t, "mr", "rt-polarity.neg", data, 1)
	})
}

func FuzzWikiQA(f *testing.F) {
	seedFuzz(f, "evalsets/WikiQA-dev.tsv")
	f.Fuzz(func(t *testing.T, data []byte) {
		fuzzEval(t, "wikiqa", "WikiQA-dev.tsv", data, 1)
	})
}

func FuzzSCWS(f *testing.F) {
	seedFuzz(f, "evalsets/ratings.txt")
	f.Fuzz(func(t *testing.T, data []byte) {
		fuzzEval(t, "scws", "ratings.txt", data, 10)
	})
}

func FuzzSemEvalCQA(f *testing.F) {
	seedFuzz(f, "evalsets/semeval/SemEval2016-Task3-CQA-QL-dev.xml")
	f.Fuzz(func(t *testing.T, data []byte) {
		fuzzEval(t, "semeval-cqa", "x-dev.xml", data, 1)
	})
}

func FuzzTrecQA(f *testing.F) {
	f.Add([]byte("q\nq\n"), []byte("a\nb"), []byte("1\n0\n"), []byte("1.4\n1.4\n"))
	f.Add([]byte("q\n\n"), []byte("a\nb\nc"), []byte("x\n"), []byte(""))
	f.Fuzz(func(t *testing.T, a, b, sim, id []byte) {
		var ins []*corpora.Input
		for i, d := range [][]byte{a, b, sim, id} {
			in, err := corpora.NewInput(fmt.Sprintf("dev/%d", i), bytes.NewReader(d), corpora.Limits{MaxLineBytes: 4096})
			if err != nil {
				return
			}
			ins = append(ins, in)
		}
		r := corpora.NewTrecQAReader(ins[0], ins[1], ins[2], ins[3], corpora.Options{Limits: corpora.Limits{MaxLineBytes: 4096}})
		defer r.Close()
		err := corpora.Drain(r, func(e corpora.Example) error {
			if e.Corpus != "trecqa" || e.A == "" || e.B == "" || (e.Label != 0 && e.Label != 1) || e.Meta["qid"] == "" ||
				e.Group != "trecqa:dev:"+e.Meta["qid"] || e.Dataset != "trecqa/dev" || e.Source.Line < 1 {
				return fmt.Errorf("inconsistent %+v", e)
			}
			return nil
		}, nil)
		var fe *corpora.FileError
		if err != nil && !errors.As(err, &fe) {
			t.Fatal(err)
		}
		if err == nil && bytes.Count(a, []byte("\n"))+1 < int(r.Stats().Records) {
			t.Fatalf("more records than lines: %+v", r.Stats())
		}
	})
}
