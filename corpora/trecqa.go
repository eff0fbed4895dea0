package corpora

import (
	"fmt"
	"io"
	"path/filepath"
	"strings"
)

// TrecQAReader reads TrecQA answer selection (Wang et al. 2007, as
// organised by Yao et al. 2013) in the a.toks/b.toks layout: a folder
// (train, raw-dev, clean-dev, raw-test, clean-test) of four line-aligned
// files, a.toks (the question, repeated once per candidate), b.toks (the
// candidate sentence), sim.txt (0 or 1) and id.txt (the question's id:
// integers in train, TREC "topic.question" strings such as 1.4 elsewhere,
// kept as strings). The format's one input is a.toks (extract's --input
// may name the folder); the reader opens the three others beside it.
// Files that differ in length fail with a *FileError wrapping
// ErrLengthMismatch that names them; a last line without a newline is a
// line. boundary.txt and numrels.txt are not read (they follow from
// id.txt and sim.txt). Lines are aligned, so a blank line is never
// skipped: it is a rejected record.
//
// Mapping to Example:
//   - A: the question; B: the candidate, trimmed. LangA, LangB: "en", or
//     Options.
//   - Label: sim, 1 where the candidate answers the question; HasLabel is
//     true.
//   - ID: "trecqa:<folder>:<line>"; Group: "trecqa:<folder>:<qid>".
//   - Dataset: "trecqa/<folder>", the folder's name (trecqa/train,
//     trecqa/raw-dev, trecqa/clean-dev), or Options.Dataset; its split
//     (its Eval.Split) is train, dev or test by that name.
//   - Meta: "qid", id.txt's id as written.
//
// Rejected records, located at a.toks's line: invalid UTF-8 in any file
// (ReasonBadUTF8); a sim other than 0 or 1 (ReasonBadNumber); an empty id
// (ReasonMissingField); an empty question or candidate (ReasonEmptyText);
// a line over Limits.MaxLineBytes in any file (ReasonLineTooLong).
type TrecQAReader struct {
	base
	lines        [4]*lineReader
	folder       string
	dataset      string
	langA, langB string
	err          error
}

// trecQAFiles are the files of a TrecQA folder, in the order
// NewTrecQAReader takes them.
func trecQAFiles() []string { return []string{"a.toks", "b.toks", "sim.txt", "id.txt"} }

// NewTrecQAReader reads the four files of a TrecQA folder: a.toks, b.toks,
// sim.txt and id.txt.
func NewTrecQAReader(a, b, sim, id *Input, opts Options) *TrecQAReader {
	r := &TrecQAReader{base: newBase(opts.Limits, a, b, sim, id)}
	for i, in := range r.inputs {
		r.lines[i] = newLineReader(in, opts.Limits)
	}
	r.langA, r.langB = langsOrDefault(opts, "en")
	r.folder = filepath.Base(filepath.Dir(a.Name))
	if r.folder == "." || r.folder == string(filepath.Separator) {
		r.folder = "trecqa"
	}
	r.dataset = opts.Dataset
	if r.dataset == "" {
		r.dataset = "trecqa/" + r.folder
	}
	return r
}

// openTrecQA opens the siblings of a.toks and returns the reader.
func openTrecQA(a *Input, opts Options) (Reader, error) {
	dir := filepath.Dir(a.Name)
	ins := []*Input{a}
	for _, name := range trecQAFiles()[1:] {
		in, err := Open(filepath.Join(dir, name), opts.Limits)
		if err == nil {
			err = in.SetEncoding(opts.Encoding)
		}
		if err != nil {
			for _, in := range ins[1:] {
				in.Close()
			}
			return nil, &FileError{File: a.Name, Err: fmt.Errorf("%w: a TrecQA folder holds a.toks, b.toks, sim.txt and id.txt: %v", ErrFormat, err)}
		}
		ins = append(ins, in)
	}
	return NewTrecQAReader(ins[0], ins[1], ins[2], ins[3], opts), nil
}

// Next returns the next question and candidate.
func (r *TrecQAReader) Next() (Example, error) {
	if r.err != nil {
		return Example{}, r.err
	}
	var lines [4][]byte
	var srcs [4]Source
	var errs [4]error
	ended := 0
	for i, l := range r.lines {
		lines[i], srcs[i], errs[i] = l.next()
		if errs[i] == io.EOF {
			ended++
		} else if errs[i] != nil && !IsParseError(errs[i]) {
			r.err = errs[i]
			return Example{}, r.err
		}
	}
	switch ended {
	case 4:
		return Example{}, io.EOF
	case 0:
	default:
		r.err = r.mismatch()
		return Example{}, r.err
	}
	src := srcs[0]
	r.record()
	for i, err := range errs {
		if pe := errorsAsParse(err); pe != nil {
			return r.reject(src, pe.Reason, trecQAFiles()[i]+": "+pe.Detail, pe.Record)
		}
	}
	raw := []byte(strings.Join([]string{string(lines[0]), string(lines[1]), string(lines[2]), string(lines[3])}, "\t"))
	for _, l := range lines {
		if !checkUTF8(l) {
			return r.reject(src, ReasonBadUTF8, "", raw)
		}
	}
	var label float64
	switch s := strings.TrimSpace(string(lines[2])); s {
	case "0":
	case "1":
		label = 1
	default:
		return r.reject(src, ReasonBadNumber, fmt.Sprintf("sim %q is not 0 or 1", s), raw)
	}
	qid := strings.TrimSpace(string(lines[3]))
	if qid == "" {
		return r.reject(src, ReasonMissingField, "empty id", raw)
	}
	a, b := strings.TrimSpace(string(lines[0])), strings.TrimSpace(string(lines[1]))
	if a == "" || b == "" {
		return r.reject(src, ReasonEmptyText, "empty question or candidate", raw)
	}
	return r.emit(Example{ID: fmt.Sprintf("trecqa:%s:%d", r.folder, src.Line), Corpus: "trecqa", Dataset: r.dataset,
		A: a, B: b, LangA: r.langA, LangB: r.langB, Label: label, HasLabel: true,
		Group: "trecqa:" + r.folder + ":" + qid, Source: src, Meta: map[string]string{"qid": qid}})
}

// mismatch drains every file to report their lengths.
func (r *TrecQAReader) mismatch() error {
	var parts []string
	for _, l := range r.lines {
		for {
			_, _, err := l.next()
			if err == io.EOF {
				break
			}
			if err != nil && !IsParseError(err) {
				return err
			}
		}
		parts = append(parts, fmt.Sprintf("%s has %d", l.in.Name, l.line))
	}
	return &FileError{File: r.inputs[0].Name, Err: fmt.Errorf("%w: %s lines", ErrLengthMismatch, strings.Join(parts, ", "))}
}

// trecQAFormats returns the formats this file reads; formatList lists it.
func trecQAFormats() (fs []Format) {
	fs = append(fs, Format{
		Name: "trecqa", Corpus: "trecqa", Files: []string{"a.toks"},
		Summary: "TrecQA answer selection: a folder's a.toks (given) with b.toks, sim.txt and id.txt beside it",
		Mapping: `A, B: a.toks, b.toks; Label: sim.txt (0/1); ID: "trecqa:<folder>:<line>"; Group: "trecqa:<folder>:"+qid; Dataset: trecqa/<folder>; Meta: qid`,
		New: func(in []*Input, o Options) (Reader, error) {
			return openTrecQA(in[0], o)
		},
		Eval: Eval{Task: TaskRanking, Order: 2, Split: splitInDataset},
	})
	return fs
}
