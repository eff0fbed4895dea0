package corpora

import (
	"bytes"
	"compress/gzip"
	"errors"
	"io"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// pipeReader is the toy format of TestAddFormatRecipe: one pair a line,
// "a|b". It is docs/architecture.md's recipe "Add a corpus format"
// followed once: a Reader over the shared line reader, and a Format
// registered with its name, files, summary, mapping and constructor.
type pipeReader struct {
	in    *Input
	lines *lineReader
	st    Stats
}

func newPipeReader(in *Input, o Options) *pipeReader {
	return &pipeReader{in: in, lines: newLineReader(in, o.Limits), st: Stats{Rejected: map[Reason]int64{}}}
}

func (r *pipeReader) Next() (Example, error) {
	line, src, err := r.lines.next()
	r.st.Bytes = r.in.BytesRead()
	if err != nil {
		return Example{}, err
	}
	r.st.Records++
	a, b, ok := bytes.Cut(line, []byte("|"))
	if !ok {
		r.st.Rejected[ReasonFieldCount]++
		return Example{}, &ParseError{Source: src, Reason: ReasonFieldCount, Detail: "no |", Record: bytes.Clone(line)}
	}
	r.st.Examples++
	return Example{ID: "toy:" + src.String(), Corpus: "toy", Dataset: "toy", A: string(a), B: string(b)}, nil
}

func (r *pipeReader) Stats() Stats { return r.st }
func (r *pipeReader) Close() error { return r.in.Close() }

// TestAddFormatRecipe registers a toy format through register, as formats
// does for each entry of formatList, and reads a file with it through the
// registry's open, the path OpenFormat (`parastream read`, the extract
// pipeline) takes. The toy is added to a registry of its own, so the
// package's formats stay as they are.
func TestAddFormatRecipe(t *testing.T) {
	reg := formats()
	reg.register(Format{
		Name: "toy-pipes", Corpus: "toy", Files: []string{"pairs"},
		Summary: "a toy format: one pair a line, a|b",
		Mapping: "A, B: the two sides of the line; no Label",
		New: func(in []*Input, o Options) (Reader, error) {
			return newPipeReader(in[0], o), nil
		},
	})
	if _, err := reg.lookup("toy-pipes"); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "pairs.txt")
	if err := os.WriteFile(path, []byte("a cat|a feline\nbroken line\nhello|hi\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	r, err := reg.open("toy-pipes", []string{path}, Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	var got []string
	var rejects int
	for {
		ex, err := r.Next()
		var pe *ParseError
		switch {
		case errors.Is(err, io.EOF):
		case errors.As(err, &pe):
			rejects++
			continue
		case err != nil:
			t.Fatal(err)
		default:
			got = append(got, ex.A+" = "+ex.B)
			continue
		}
		break
	}
	if len(got) != 2 || got[0] != "a cat = a feline" || got[1] != "hello = hi" || rejects != 1 || r.Stats().Examples != 2 {
		t.Errorf("examples %q, %d rejects, stats %+v", got, rejects, r.Stats())
	}
	if _, err := LookupFormat("toy-pipes"); err == nil {
		t.Error("the toy format leaked into the package's formats")
	}
}

// namedReader names its reader's examples' dataset after its file, as the
// evaluation sets' readers do ("toy/dev" for toy_dev.txt).
type namedReader struct {
	Reader
	dataset string
}

func (r namedReader) Next() (Example, error) {
	ex, err := r.Reader.Next()
	ex.Dataset = r.dataset
	return ex, err
}

// TestAddEvalSetRecipe is docs/architecture.md's recipe "Add an evaluation
// set" followed once in corpora: the toy format of TestAddFormatRecipe,
// its datasets named by split, marked as a similarity set with an official
// split rule. The registry then finds its Eval by its corpus (what
// extraction's split and single-text choice and evalsink's LoadSets read,
// through Evaluation), its rows take the split their dataset names, and
// it is listed among the evaluation sets at its place in the report.
// (evalsink's TestEvalSetsHaveTasks and pipelines' TestEvalFormatsExtract
// and TestEvalDataTarget check the recipe's other steps for the real
// formats.)
func TestAddEvalSetRecipe(t *testing.T) {
	reg := formats()
	reg.register(Format{
		Name: "toy-sts", Corpus: "toy", Files: []string{"pairs"},
		Summary: "a toy similarity set: one pair a line, a|b; toy_<split>.txt",
		Mapping: "A, B: the two sides of the line; Dataset: toy/<split> from the file name",
		New: func(in []*Input, o Options) (Reader, error) {
			return namedReader{Reader: newPipeReader(in[0], o), dataset: "toy/" + splitName(baseName(in[0].Name), "test")}, nil
		},
		Eval: Eval{Task: TaskSimilarity, Order: 4, Split: splitInDataset},
	})
	e := reg.evaluation("toy")
	if !e.Evaluated() || e.Task != TaskSimilarity {
		t.Fatalf("the toy's evaluation %+v", e)
	}
	var order []string
	for _, f := range reg.evalFormats() {
		if f.Eval.Task == TaskSimilarity {
			order = append(order, f.Corpus)
		}
	}
	if want := []string{"sts", "stsb", "sick", "toy"}; !slices.Equal(order, want) {
		t.Errorf("similarity sets in the report's order %v, want %v", order, want)
	}
	splits := map[string]string{}
	for _, name := range []string{"toy_train.txt", "toy_dev.txt.gz", "toy.txt"} {
		path := filepath.Join(t.TempDir(), name)
		if err := writeMaybeGzip(path, "a cat|a feline\n"); err != nil {
			t.Fatal(err)
		}
		r, err := reg.open("toy-sts", []string{path}, Options{})
		if err != nil {
			t.Fatal(err)
		}
		ex, err := r.Next()
		r.Close()
		if err != nil {
			t.Fatal(err)
		}
		split, ok := reg.evaluation(ex.Corpus).OfficialSplit(ex.Dataset)
		if !ok {
			t.Fatalf("%s: no official split", name)
		}
		splits[ex.Dataset] = split
	}
	if want := map[string]string{"toy/train": "train", "toy/dev": "dev", "toy/test": "test"}; !maps.Equal(splits, want) {
		t.Errorf("official splits %v, want %v", splits, want)
	}
	if Evaluation("toy").Evaluated() {
		t.Error("the toy set leaked into the package's formats")
	}
}

// writeMaybeGzip writes text to path, gzip-compressed where the name ends
// in .gz.
func writeMaybeGzip(path, text string) error {
	if !strings.HasSuffix(path, ".gz") {
		return os.WriteFile(path, []byte(text), 0o644)
	}
	var b bytes.Buffer
	zw := gzip.NewWriter(&b)
	zw.Write([]byte(text))
	if err := zw.Close(); err != nil {
		return err
	}
	return os.WriteFile(path, b.Bytes(), 0o644)
}
