package corpora

import (
	"bytes"
	"fmt"
	"io"
	"strings"
)

// Quora question pairs (quora_duplicate_questions.tsv): a header line
//
//	id	qid1	qid2	question1	question2	is_duplicate
//
// then one pair a record, tab-separated, with CSV-style quoting: a field
// that starts with a double quote runs to the matching closing quote, ""
// inside it is a literal quote, and it may hold tabs and newlines, so a
// record may span several physical lines. A quote inside an unquoted field
// is a literal character.
//
// Mapping to Example:
//   - A: question1; B: question2, verbatim (a newline inside a quoted field
//     is kept, as "\n").
//   - Label: is_duplicate, 0 or 1 (HasLabel is true): 1 where Quora's
//     moderators judged the two questions to ask the same thing.
//   - ID: "quora:" + id.
//   - Group: "quora:q" + the smaller of qid1 and qid2. A question takes
//     part in many pairs; grouping by the smaller id keeps most of a
//     question's pairs on one side of a split. It approximates the
//     connected components of the question graph, which a streaming reader
//     cannot compute: a pair whose smaller question is another one lands in
//     another group.
//   - Dataset: "quora", or Options.Dataset. LangA, LangB: "en", or Options.
//   - Meta: "qid1", "qid2".
//
// A file that does not start with the header line fails with a *FileError
// wrapping ErrFormat; the columns may come in any order. The header is
// counted as a skipped record ("header"); a pair whose question1 or
// question2 is empty or blank is skipped as "empty_pair".
//
// Rejected records: a field count other than the header's
// (ReasonFieldCount); an id, qid or is_duplicate that is not a number, or
// a label other than 0 or 1 (ReasonBadNumber); text after a closing quote
// other than a tab or the end of the line (ReasonBadQuote); a quote still
// open at the end of the file (ReasonUnterminatedQuot); a record longer
// than Limits.MaxLineBytes while its quote is open (ReasonRecordTooLarge;
// a single physical line over the limit is ReasonLineTooLong); invalid
// UTF-8 (ReasonBadUTF8). When a record that spans several lines fails on
// its quoting or its field count, the reader rejects its first line alone
// and reads the lines after it again as records of their own: a stray
// quote costs one line, not the rest of the file, and every line keeps its
// line number.
type QuoraReader struct {
	base
	recs    *quotedRecords
	dataset string
	langA   string
	langB   string
	col     [numQuoraCols]int // the field index of each column
	started bool
	err     error // a file-level error, returned again by every later call
}

// The columns of the Quora file.
const (
	qcID = iota
	qcQID1
	qcQID2
	qcQuestion1
	qcQuestion2
	qcIsDuplicate
	numQuoraCols
)

// quoraColumns returns the names of the columns, by index.
func quoraColumns() [numQuoraCols]string {
	return [numQuoraCols]string{"id", "qid1", "qid2", "question1", "question2", "is_duplicate"}
}

// NewQuoraReader reads a Quora question-pairs TSV file.
func NewQuoraReader(in *Input, opts Options) *QuoraReader {
	r := &QuoraReader{base: newBase(opts.Limits, in), recs: newQuotedRecords(newLineReader(in, opts.Limits), opts.Limits),
		dataset: opts.Dataset, langA: opts.LangA, langB: opts.LangB}
	if r.dataset == "" {
		r.dataset = "quora"
	}
	if r.langA == "" {
		r.langA = "en"
	}
	if r.langB == "" {
		r.langB = "en"
	}
	return r
}

// Next returns the next question pair.
func (r *QuoraReader) Next() (Example, error) {
	if r.err != nil {
		return Example{}, r.err
	}
	if !r.started {
		if err := r.header(); err != nil {
			r.err = err
			return Example{}, err
		}
	}
	for {
		fields, src, raw, err := r.recs.next()
		if err != nil {
			return r.rejected(err)
		}
		r.record()
		if !checkUTF8(raw) {
			return r.reject(src, ReasonBadUTF8, "", raw)
		}
		id, qid1, qid2 := fields[r.col[qcID]], fields[r.col[qcQID1]], fields[r.col[qcQID2]]
		for i, v := range [...][]byte{id, qid1, qid2} {
			if !isDigits(v) {
				return r.reject(src, ReasonBadNumber, fmt.Sprintf("%s %q is not a whole number", quoraColumns()[i], v), raw)
			}
		}
		var label float64
		switch dup := fields[r.col[qcIsDuplicate]]; string(dup) {
		case "0":
		case "1":
			label = 1
		default:
			return r.reject(src, ReasonBadNumber, fmt.Sprintf("is_duplicate %q is not 0 or 1", dup), raw)
		}
		q1, q2 := fields[r.col[qcQuestion1]], fields[r.col[qcQuestion2]]
		if len(bytes.TrimSpace(q1)) == 0 || len(bytes.TrimSpace(q2)) == 0 {
			r.skip("empty_pair")
			continue
		}
		group := qid1
		if lessDigits(qid2, qid1) {
			group = qid2
		}
		return r.emit(Example{
			ID: "quora:" + string(id), Corpus: "quora", Dataset: r.dataset,
			A: string(q1), B: string(q2), LangA: r.langA, LangB: r.langB,
			Label: label, HasLabel: true, Group: "quora:q" + string(group),
			Meta:   map[string]string{"qid1": string(qid1), "qid2": string(qid2)},
			Source: src,
		})
	}
}

// header reads the header line and maps the columns.
func (r *QuoraReader) header() error {
	r.started = true
	name := r.inputs[0].Name
	cols := quoraColumns()
	fields, _, raw, err := r.recs.next()
	switch {
	case err == io.EOF:
		return &FileError{File: name, Err: fmt.Errorf("%w: empty file, want the Quora header %q", ErrFormat, strings.Join(cols[:], "\t"))}
	case err != nil && !IsParseError(err):
		return err
	}
	for i := range r.col {
		r.col[i] = -1
	}
	if err == nil && len(fields) == numQuoraCols {
		for i, f := range fields {
			for c, want := range cols {
				if string(f) == want && r.col[c] < 0 {
					r.col[c] = i
				}
			}
		}
	}
	for _, c := range r.col {
		if c < 0 {
			if pe := errorsAsParse(err); pe != nil {
				raw = pe.Record
			}
			return &FileError{File: name, Err: fmt.Errorf("%w: first line is not the Quora header %q: %q",
				ErrFormat, strings.Join(cols[:], "\t"), raw[:min(len(raw), 200)])}
		}
	}
	r.record()
	r.skip("header")
	r.recs.want = numQuoraCols
	return nil
}

// isDigits reports whether b is a non-empty run of ASCII digits.
func isDigits(b []byte) bool {
	for _, c := range b {
		if c < '0' || c > '9' {
			return false
		}
	}
	return len(b) > 0
}

// lessDigits compares two runs of digits as numbers.
func lessDigits(a, b []byte) bool {
	a, b = bytes.TrimLeft(a, "0"), bytes.TrimLeft(b, "0")
	if len(a) != len(b) {
		return len(a) < len(b)
	}
	return bytes.Compare(a, b) < 0
}

// quotedRecords splits the lines of a tab-separated file into records,
// where a field that starts with a double quote may hold tabs, doubled
// quotes and newlines. It keeps exact line numbers and holds at most one
// record (bounded by Limits.MaxLineBytes) in memory.
//
// encoding/csv (Comma '\t', LazyQuotes) would read the same records, but
// it grows a record without bound while a quote stays open, reports only
// the line where it noticed a problem, and cannot step back after a stray
// quote: with LazyQuotes one unbalanced quote swallows the rest of the file
// into one field.
type quotedRecords struct {
	lr   *lineReader
	max  int
	keep int
	// want is the number of fields a record must have; 0 accepts any.
	want int
	// pending holds lines read ahead and given back after a failed
	// multi-line record; they are read again before the line reader.
	pending []quotedLine
	// held holds copies of the lines of the current record while it spans
	// several.
	held   []quotedLine
	out    []byte // the decoded fields, one after the other
	ends   []int  // where each field ends in out
	fields [][]byte
	raw    []byte
}

type quotedLine struct {
	text []byte
	src  Source
	err  error
}

func newQuotedRecords(lr *lineReader, lim Limits) *quotedRecords {
	lim = lim.withDefaults()
	return &quotedRecords{lr: lr, max: lim.MaxLineBytes, keep: lim.MaxRejectBytes}
}

func (q *quotedRecords) line() ([]byte, Source, error) {
	if len(q.pending) > 0 {
		l := q.pending[0]
		q.pending = q.pending[1:]
		if len(q.pending) == 0 {
			q.pending = nil
		}
		return l.text, l.src, l.err
	}
	return q.lr.next()
}

// next returns the fields of the next record, its source (where it
// starts) and its raw text (its lines joined by "\n"), all valid until the
// next call. Errors are io.EOF, a *ParseError for a bad record or line, or
// a file-level error.
func (q *quotedRecords) next() (fields [][]byte, src Source, raw []byte, err error) {
	ln, src, err := q.line()
	if err != nil {
		return nil, src, nil, err
	}
	q.out, q.ends, q.held = q.out[:0], q.ends[:0], q.held[:0]
	open, bad := q.feed(ln, false)
	size := len(ln)
	if open {
		q.held = append(q.held, quotedLine{text: bytes.Clone(ln), src: src})
	}
	for open && bad == "" {
		next, nsrc, err := q.line()
		switch {
		case err == io.EOF:
			return q.fail(ReasonUnterminatedQuot, fmt.Sprintf("quote of field %d still open at the end of the file", len(q.ends)+1), nil)
		case IsParseError(err):
			return q.fail(ReasonRecordTooLarge, fmt.Sprintf("quote of field %d still open at line %d, which is over the limit", len(q.ends)+1, nsrc.Line),
				&quotedLine{src: nsrc, err: err})
		case err != nil:
			return nil, src, nil, err
		}
		size += 1 + len(next)
		if size > q.max {
			return q.fail(ReasonRecordTooLarge, fmt.Sprintf("quote of field %d still open after %d bytes at line %d, limit %d", len(q.ends)+1, size, nsrc.Line, q.max),
				&quotedLine{text: bytes.Clone(next), src: nsrc})
		}
		q.held = append(q.held, quotedLine{text: bytes.Clone(next), src: nsrc})
		q.out = append(q.out, '\n')
		open, bad = q.feed(next, true)
	}
	if bad != "" {
		if len(q.held) > 0 {
			return q.fail(ReasonBadQuote, fmt.Sprintf("line %d: %s", q.held[len(q.held)-1].src.Line, bad), nil)
		}
		return nil, src, nil, q.parseError(src, ReasonBadQuote, bad, ln)
	}
	if q.want > 0 && len(q.ends) != q.want {
		detail := fmt.Sprintf("%d fields, want %d", len(q.ends), q.want)
		if len(q.held) > 0 {
			return q.fail(ReasonFieldCount, fmt.Sprintf("%d fields over lines %d-%d, want %d", len(q.ends), src.Line, q.held[len(q.held)-1].src.Line, q.want), nil)
		}
		return nil, src, nil, q.parseError(src, ReasonFieldCount, detail, ln)
	}
	q.fields = q.fields[:0]
	start := 0
	for _, end := range q.ends {
		q.fields = append(q.fields, q.out[start:end])
		start = end
	}
	raw = ln
	if len(q.held) > 0 {
		q.raw = q.raw[:0]
		for i, l := range q.held {
			if i > 0 {
				q.raw = append(q.raw, '\n')
			}
			q.raw = append(q.raw, l.text...)
		}
		raw = q.raw
	}
	return q.fields, src, raw, nil
}

// feed parses one physical line of the current record. open says whether
// the line starts inside a quoted field; the result says whether it ends
// inside one (the record goes on), or what is wrong.
func (q *quotedRecords) feed(ln []byte, open bool) (stillOpen bool, bad string) {
	i := 0
	for {
		if !open {
			if i < len(ln) && ln[i] == '"' {
				open = true
				i++
			} else {
				j := bytes.IndexByte(ln[i:], '\t')
				if j < 0 {
					q.out = append(q.out, ln[i:]...)
					q.ends = append(q.ends, len(q.out))
					return false, ""
				}
				q.out = append(q.out, ln[i:i+j]...)
				q.ends = append(q.ends, len(q.out))
				i += j + 1
				continue
			}
		}
		j := bytes.IndexByte(ln[i:], '"')
		if j < 0 {
			q.out = append(q.out, ln[i:]...)
			return true, ""
		}
		q.out = append(q.out, ln[i:i+j]...)
		i += j + 1
		if i < len(ln) && ln[i] == '"' { // a doubled quote stands for one
			q.out = append(q.out, '"')
			i++
			continue
		}
		open = false
		q.ends = append(q.ends, len(q.out))
		if i == len(ln) {
			return false, ""
		}
		if ln[i] != '\t' {
			return false, fmt.Sprintf("%q at byte %d after the closing quote of field %d", ln[i], i+1, len(q.ends))
		}
		i++
	}
}

// fail rejects a record that spans several lines as its first line alone
// and gives back the lines after it (and extra, the line that broke it,
// if any) to be read again.
func (q *quotedRecords) fail(reason Reason, detail string, extra *quotedLine) ([][]byte, Source, []byte, error) {
	first := q.held[0]
	back := make([]quotedLine, 0, len(q.held)+len(q.pending))
	back = append(back, q.held[1:]...)
	if extra != nil {
		back = append(back, *extra)
	}
	q.pending = append(back, q.pending...)
	q.held = q.held[:0]
	return nil, first.src, nil, q.parseError(first.src, reason, detail+"; the lines after it are read again", first.text)
}

func (q *quotedRecords) parseError(src Source, reason Reason, detail string, raw []byte) error {
	return &ParseError{Source: src, Reason: reason, Detail: detail, Record: bytes.Clone(raw[:min(len(raw), q.keep)])}
}

// quoraFormats returns the formats this file reads; formatList lists it.
func quoraFormats() (fs []Format) {
	fs = append(fs, Format{
		Name: "quora", Corpus: "quora", Files: []string{"pairs"},
		Summary: "Quora question pairs: TSV with a header and CSV-style quoting",
		Mapping: `A, B: question1, question2; Label: is_duplicate (0 or 1); ID: "quora:"+id; Group: "quora:q"+min(qid1, qid2); Dataset: quora; LangA, LangB: en; Meta: qid1, qid2`,
		New: func(in []*Input, o Options) (Reader, error) {
			return NewQuoraReader(in[0], o), nil
		},
		Eval: Eval{Task: TaskRetrieval, Order: 2},
	})
	return fs
}
