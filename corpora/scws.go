package corpora

import (
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"
)

// SCWSReader reads Stanford Contextual Word Similarities (SCWS, Huang et
// al. 2012), ratings.txt: no header, 18 tab-separated fields a line,
//
//	id word1 POS1 word2 POS2 context1 context2 average r1 ... r10
//
// where each context is tokenised, cased text holding its target word once
// as "<b> word </b>". Blank lines are skipped ("blank_line"). SCWS is one
// test set, without a split.
//
// Mapping to Example:
//   - A: context1, B: context2, with the <b> and </b> markers removed (the
//     target word stays in place) and white space collapsed to single
//     spaces. LangA, LangB: "en", or Options.
//   - Label: average, the mean rating (0-10); HasLabel is true.
//   - ID and Group: "scws:<id>".
//   - Dataset: "scws", or Options.Dataset.
//   - Meta: "word1", "word2", "pos1", "pos2"; "left1", "left2": the
//     context's text before the target word (markers removed, collapsed as
//     A and B are), so that the target's token position is the number of
//     tokens of left; "ratings": r1 to r10, comma-joined as in the file.
//
// Rejected records: invalid UTF-8 (ReasonBadUTF8); a number of fields
// other than 18 (ReasonFieldCount); an id that is not a whole number, an
// average or a rating that is not a number (ReasonBadNumber); an average or
// a rating outside 0-10 (ReasonBadScore); an empty word or a context
// without exactly one "<b> ... </b>" (ReasonMissingField); a line over
// Limits.MaxLineBytes (ReasonLineTooLong).
type SCWSReader struct {
	base
	lines        *lineReader
	dataset      string
	langA, langB string
	fields       [][]byte
}

const scwsFields = 18

// NewSCWSReader reads SCWS's ratings.txt.
func NewSCWSReader(in *Input, opts Options) *SCWSReader {
	r := &SCWSReader{base: newBase(opts.Limits, in), lines: newLineReader(in, opts.Limits)}
	r.langA, r.langB = langsOrDefault(opts, "en")
	r.dataset = opts.Dataset
	if r.dataset == "" {
		r.dataset = "scws"
	}
	return r
}

// scwsContext removes the markers of a context, returning the text and the
// part before the target word; ok is false without exactly one "<b>"
// followed by one "</b>".
func scwsContext(s string) (text, left string, ok bool) {
	before, rest, ok1 := strings.Cut(s, "<b>")
	target, after, ok2 := strings.Cut(rest, "</b>")
	if !ok1 || !ok2 || strings.Contains(after, "<b>") || strings.Contains(after, "</b>") || strings.Contains(target, "<b>") ||
		strings.TrimSpace(target) == "" {
		return "", "", false
	}
	return collapseSpace(before + " " + target + " " + after), collapseSpace(before), true
}

// Next returns the next pair of contexts.
func (r *SCWSReader) Next() (Example, error) {
	line, src, err := r.textLine(r.lines, "")
	if err != nil {
		return Example{}, err
	}
	r.fields = splitTabs(r.fields[:0], line)
	if len(r.fields) != scwsFields {
		return r.reject(src, ReasonFieldCount, fmt.Sprintf("%d field(s), want %d", len(r.fields), scwsFields), line)
	}
	f := func(i int) string { return strings.TrimSpace(string(r.fields[i])) }
	id := f(0)
	if !isDigits([]byte(id)) {
		return r.reject(src, ReasonBadNumber, fmt.Sprintf("id %q is not a whole number", id), line)
	}
	var scores [11]float64
	for i := range scores {
		v, err := strconv.ParseFloat(f(7+i), 64)
		if err != nil {
			return r.reject(src, ReasonBadNumber, fmt.Sprintf("field %d %q is not a number", 8+i, f(7+i)), line)
		}
		if !(v >= 0 && v <= 10) {
			return r.reject(src, ReasonBadScore, fmt.Sprintf("field %d %g is outside 0-10", 8+i, v), line)
		}
		scores[i] = v
	}
	if f(1) == "" || f(3) == "" {
		return r.reject(src, ReasonMissingField, "empty word", line)
	}
	a, left1, ok1 := scwsContext(string(r.fields[5]))
	b, left2, ok2 := scwsContext(string(r.fields[6]))
	if !ok1 || !ok2 {
		return r.reject(src, ReasonMissingField, "a context without exactly one <b> word </b>", line)
	}
	ratings := make([]string, 10)
	for i := range ratings {
		ratings[i] = f(8 + i)
	}
	return r.emit(Example{ID: "scws:" + id, Corpus: "scws", Dataset: r.dataset, A: a, B: b, LangA: r.langA, LangB: r.langB,
		Label: scores[0], HasLabel: true, Group: "scws:" + id, Source: src,
		Meta: map[string]string{"word1": f(1), "pos1": f(2), "word2": f(3), "pos2": f(4), "left1": left1, "left2": left2,
			"ratings": strings.Join(ratings, ",")}})
}

// WikiQAReader reads WikiQA (Yang et al. 2015): WikiQA-<split>.tsv (often
// gzipped), with the header
//
//	QuestionID	Question	DocumentID	DocumentTitle	SentenceID	Sentence	Label
//
// (columns found by name, in any order), then one candidate sentence a
// line. The release has CRLF line ends, other copies LF: both read. Fields
// are split on tabs only (sentences hold '"'). A file whose first line is
// not the header fails with a *FileError wrapping ErrFormat; the header is
// counted as skipped ("header"), blank lines as "blank_line".
//
// Mapping to Example:
//   - A: Question; B: Sentence, trimmed. LangA, LangB: "en", or Options.
//   - Label: 1 where the sentence answers the question, 0 where not;
//     HasLabel is true.
//   - ID: "wikiqa:<QuestionID>:<SentenceID>"; Group: QuestionID.
//   - Dataset: "wikiqa/<split>" from the file name (train, dev or test;
//     "wikiqa/test" for a name without one), or Options.Dataset.
//   - Meta: "question_id", "document_title", "sentence_id".
//
// Rejected records: invalid UTF-8 (ReasonBadUTF8); a number of fields
// other than the header's (ReasonFieldCount); a Label other than 0 or 1
// (ReasonBadNumber); an empty QuestionID or SentenceID
// (ReasonMissingField); an empty question or sentence (ReasonEmptyText); a
// line over Limits.MaxLineBytes (ReasonLineTooLong).
type WikiQAReader struct {
	base
	lines        *lineReader
	dataset      string
	langA, langB string
	fields       [][]byte
	ncols        int
	col          []int
	err          error
}

// The columns of WikiQA, by index of col.
const (
	wqQID = iota
	wqQuestion
	wqTitle
	wqSID
	wqSentence
	wqLabel
)

func wikiQAColumns() []string {
	return []string{"QuestionID", "Question", "DocumentTitle", "SentenceID", "Sentence", "Label"}
}

// NewWikiQAReader reads one WikiQA file.
func NewWikiQAReader(in *Input, opts Options) *WikiQAReader {
	r := &WikiQAReader{base: newBase(opts.Limits, in), lines: newLineReader(in, opts.Limits)}
	r.langA, r.langB = langsOrDefault(opts, "en")
	r.dataset = opts.Dataset
	if r.dataset == "" {
		r.dataset = "wikiqa/" + splitName(baseName(in.Name), "test")
	}
	return r
}

// Next returns the next candidate sentence.
func (r *WikiQAReader) Next() (Example, error) {
	if r.err != nil {
		return Example{}, r.err
	}
	if r.col == nil {
		if err := r.header(); err != nil {
			r.err = err
			return Example{}, err
		}
	}
	line, src, err := r.textLine(r.lines, "")
	if err != nil {
		return Example{}, err
	}
	r.fields = splitTabs(r.fields[:0], line)
	if len(r.fields) != r.ncols {
		return r.reject(src, ReasonFieldCount, fmt.Sprintf("%d field(s), the header has %d", len(r.fields), r.ncols), line)
	}
	f := func(c int) string { return strings.TrimSpace(string(r.fields[r.col[c]])) }
	var label float64
	switch l := f(wqLabel); l {
	case "0":
	case "1":
		label = 1
	default:
		return r.reject(src, ReasonBadNumber, fmt.Sprintf("Label %q is not 0 or 1", l), line)
	}
	qid, sid := f(wqQID), f(wqSID)
	if qid == "" || sid == "" {
		return r.reject(src, ReasonMissingField, "empty QuestionID or SentenceID", line)
	}
	a, b := f(wqQuestion), f(wqSentence)
	if a == "" || b == "" {
		return r.reject(src, ReasonEmptyText, "empty question or sentence", line)
	}
	return r.emit(Example{ID: "wikiqa:" + qid + ":" + sid, Corpus: "wikiqa", Dataset: r.dataset, A: a, B: b, LangA: r.langA, LangB: r.langB,
		Label: label, HasLabel: true, Group: qid, Source: src,
		Meta: map[string]string{"question_id": qid, "document_title": f(wqTitle), "sentence_id": sid}})
}

// header reads the first line, which must be the header.
func (r *WikiQAReader) header() error {
	want := strings.Join(wikiQAColumns(), "\t")
	line, _, err := r.lines.next()
	if err != nil && err != io.EOF && !IsParseError(err) {
		return err
	}
	if err != io.EOF {
		r.record()
	}
	if err == nil {
		r.fields = splitTabs(r.fields[:0], line)
		r.col = findColumns(r.fields, wikiQAColumns())
	}
	if err != nil || slices.Contains(r.col, -1) {
		return &FileError{File: r.inputs[0].Name, Err: fmt.Errorf("%w: the first line is not the WikiQA header %q", ErrFormat, want)}
	}
	r.ncols = len(r.fields)
	r.skip("header")
	return nil
}

// scwsFormats returns the formats this file reads (SCWS and WikiQA);
// formatList lists it.
func scwsFormats() (fs []Format) {
	fs = append(fs, Format{
		Name: "scws", Corpus: "scws", Files: []string{"ratings"},
		Summary: "SCWS contextual word similarity: ratings.txt, 18 tab-separated fields",
		Mapping: `A, B: context1, context2 without the <b> </b> markers; Label: average rating (0-10); ID, Group: "scws:"+id; Dataset: scws; Meta: word1, word2, pos1, pos2, left1, left2, ratings`,
		New: func(in []*Input, o Options) (Reader, error) {
			return NewSCWSReader(in[0], o), nil
		},
		Eval: Eval{Task: TaskWordContext, Order: 1, Split: wholeSet},
	}, Format{
		Name: "wikiqa", Corpus: "wikiqa", Files: []string{"tsv"},
		Summary: "WikiQA answer selection: WikiQA-<split>.tsv[.gz] with its header",
		Mapping: `A, B: Question, Sentence; Label: Label (0/1); ID: "wikiqa:"+QuestionID+":"+SentenceID; Group: QuestionID; Dataset: wikiqa/<split>; Meta: question_id, document_title, sentence_id`,
		New: func(in []*Input, o Options) (Reader, error) {
			return NewWikiQAReader(in[0], o), nil
		},
		Eval: Eval{Task: TaskRanking, Order: 3, Split: splitInDataset},
	})
	return fs
}
