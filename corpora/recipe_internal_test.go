package corpora

import (
	"bytes"
	"errors"
	"io"
	"os"
	"path/filepath"
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
			return &pipeReader{in: in[0], lines: newLineReader(in[0], o.Limits), st: Stats{Rejected: map[Reason]int64{}}}, nil
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
