package corpora

import (
	"encoding/xml"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
)

// SemEvalCQAReader reads the SemEval-2016/2017 Task 3 (Qatar Living)
// community question answering XML for subtask B, question-question
// similarity: SemEval2016-Task3-CQA-QL-<part>.xml, UTF-8 with an inline
// DTD, CRLF line ends and the root element <xml version="1.0">. Each
// <OrgQuestion ORGQ_ID=..> holds OrgQSubject, OrgQBody and a <Thread>
// whose <RelQuestion> (attributes RELQ_ID, RELQ_RANKING_ORDER,
// RELQ_RELEVANCE2ORGQ, ...) holds RelQSubject and RelQBody, followed by its
// comments, which are not read. The release repeats an original question
// once per related question. The reader streams: it decodes one
// OrgQuestion element at a time (encoding/xml, HTML entities accepted), so
// memory does not grow with the file. XML that does not parse stops the
// file with a *FileError wrapping ErrFormat that gives the line.
//
// The gold file: when <the XML's path without .xml>.subtaskB.relevancy, or
// <the XML's path>.subtaskB.relevancy (as the release names it), sits
// beside a local input, the reader reads it in lockstep (its rows are in
// XML order: ORGQ_ID RELQ_ID rank score true|false) and checks each
// related question against it: a row naming other ids, or a file of
// another length, is a *FileError (ErrFormat, ErrLengthMismatch); a label
// that disagrees (true where the XML says Irrelevant, or false where it
// says PerfectMatch or Relevant) rejects the pair with ReasonBadLabel.
//
// Mapping to Example, one per RelQuestion:
//   - A: OrgQSubject + " " + OrgQBody; B: RelQSubject + " " + RelQBody (an
//     empty body leaves the subject alone); white space collapsed to
//     single spaces. LangA, LangB: "en", or Options.
//   - Label: 1 for PerfectMatch or Relevant, 0 for Irrelevant (as the
//     official scorer's MAP counts them); HasLabel is true.
//   - ID: "semeval-cqa:<RELQ_ID>"; Group: ORGQ_ID (the ranking unit).
//   - Dataset: "semeval-cqa/<part>" from the file name
//     (semeval-cqa/train-part2, semeval-cqa/dev), or Options.Dataset; its
//     split is train, dev or test by that name.
//   - Meta: "relevance" (RELQ_RELEVANCE2ORGQ as written), "orgq_id",
//     "relq_id", and "rank" (RELQ_RANKING_ORDER, the search engine's rank)
//     where present.
//
// Source.Line is the line of the <OrgQuestion> start tag. Rejected records
// (one a RelQuestion, or an OrgQuestion without one): invalid UTF-8 in the
// texts (ReasonBadUTF8); an empty ORGQ_ID or RELQ_ID, or an OrgQuestion
// without a RelQuestion (ReasonMissingField); a relevance other than the
// three, or one the gold file contradicts (ReasonBadLabel); an empty
// original question or related subject and body (ReasonEmptyText).
type SemEvalCQAReader struct {
	base
	dec          *xml.Decoder
	gold         *lineReader
	dataset      string
	langA, langB string
	pending      []semItem
	fields       [][]byte
	err          error
}

// semOrgQ is one OrgQuestion element.
type semOrgQ struct {
	ID      string `xml:"ORGQ_ID,attr"`
	Subject string `xml:"OrgQSubject"`
	Body    string `xml:"OrgQBody"`
	Threads []struct {
		RelQ []struct {
			ID        string `xml:"RELQ_ID,attr"`
			Rank      string `xml:"RELQ_RANKING_ORDER,attr"`
			Relevance string `xml:"RELQ_RELEVANCE2ORGQ,attr"`
			Subject   string `xml:"RelQSubject"`
			Body      string `xml:"RelQBody"`
		} `xml:"RelQuestion"`
	} `xml:"Thread"`
}

// semItem is one record of an OrgQuestion, returned by a later Next.
type semItem struct {
	e      Example
	reason Reason
	detail string
	raw    string // for a reject: the ids, the relevance and the texts
}

// NewSemEvalCQAReader reads one Task 3 XML file, with gold (nil for none)
// its subtask B relevancy file.
func NewSemEvalCQAReader(in, gold *Input, opts Options) *SemEvalCQAReader {
	inputs := []*Input{in}
	if gold != nil {
		inputs = append(inputs, gold)
	}
	r := &SemEvalCQAReader{base: newBase(opts.Limits, inputs...)}
	r.dec = xml.NewDecoder(in)
	r.dec.Strict = false
	r.dec.Entity = xml.HTMLEntity
	if gold != nil {
		r.gold = newLineReader(gold, opts.Limits)
	}
	r.langA, r.langB = langsOrDefault(opts, "en")
	r.dataset = opts.Dataset
	if r.dataset == "" {
		r.dataset = semEvalDataset(in.Name)
	}
	return r
}

// SemEvalGoldPath returns the subtask B gold file of a Task 3 XML path
// that exists beside it, or "".
func SemEvalGoldPath(xmlPath string) string {
	for _, p := range []string{strings.TrimSuffix(xmlPath, ".xml") + ".subtaskB.relevancy", xmlPath + ".subtaskB.relevancy"} {
		if st, err := os.Stat(p); err == nil && st.Mode().IsRegular() {
			return p
		}
	}
	return ""
}

// semEvalDataset derives "semeval-cqa/<part>" from a name such as
// SemEval2016-Task3-CQA-QL-train-part2.xml.
func semEvalDataset(path string) string {
	name := strings.ToLower(strings.TrimSuffix(baseName(path), ".xml"))
	if i := strings.LastIndex(name, "-ql-"); i >= 0 {
		name = name[i+len("-ql-"):]
	}
	if name == "" {
		return "semeval-cqa"
	}
	return "semeval-cqa/" + name
}

// Next returns the next related question.
func (r *SemEvalCQAReader) Next() (Example, error) {
	for len(r.pending) == 0 {
		if r.err != nil {
			return Example{}, r.err
		}
		if err := r.fill(); err != nil {
			r.err = err
			if err == io.EOF {
				r.err = r.goldEnd()
			}
		}
	}
	it := r.pending[0]
	r.pending = r.pending[1:]
	r.record()
	if it.reason != "" {
		return r.reject(it.e.Source, it.reason, it.detail, []byte(it.raw))
	}
	return r.emit(it.e)
}

// fill decodes the next OrgQuestion into pending.
func (r *SemEvalCQAReader) fill() error {
	for {
		line, _ := r.dec.InputPos()
		off := r.dec.InputOffset()
		tok, err := r.dec.Token()
		if err == io.EOF {
			return io.EOF
		}
		if err != nil {
			return r.syntax(err)
		}
		se, ok := tok.(xml.StartElement)
		if !ok || se.Name.Local != "OrgQuestion" {
			continue
		}
		var q semOrgQ
		if err := r.dec.DecodeElement(&q, &se); err != nil {
			return r.syntax(err)
		}
		src := Source{File: r.inputs[0].Name, Line: int64(line), Offset: off}
		return r.orgQuestion(&q, src)
	}
}

func (r *SemEvalCQAReader) syntax(err error) error {
	line, _ := r.dec.InputPos()
	var se *xml.SyntaxError
	if errors.As(err, &se) {
		line = se.Line
	}
	return &FileError{File: r.inputs[0].Name, Err: fmt.Errorf("%w: XML near line %d: %v", ErrFormat, line, err)}
}

// orgQuestion turns one OrgQuestion into pending items.
func (r *SemEvalCQAReader) orgQuestion(q *semOrgQ, src Source) error {
	a := collapseSpace(q.Subject + " " + q.Body)
	orgID := strings.TrimSpace(q.ID)
	n := 0
	for _, th := range q.Threads {
		for _, rq := range th.RelQ {
			n++
			relID := strings.TrimSpace(rq.ID)
			e := Example{ID: "semeval-cqa:" + relID, Corpus: "semeval-cqa", Dataset: r.dataset, A: a,
				B: collapseSpace(rq.Subject + " " + rq.Body), LangA: r.langA, LangB: r.langB, HasLabel: true, Group: orgID, Source: src,
				Meta: map[string]string{"relevance": rq.Relevance, "orgq_id": orgID, "relq_id": relID}}
			if rank := strings.TrimSpace(rq.Rank); rank != "" {
				e.Meta["rank"] = rank
			}
			it := semItem{e: e, raw: strings.Join([]string{orgID, relID, rq.Relevance, e.A, e.B}, "\t")}
			switch rq.Relevance {
			case "PerfectMatch", "Relevant":
				it.e.Label = 1
			case "Irrelevant":
			default:
				it.reason, it.detail = ReasonBadLabel, fmt.Sprintf("RELQ_RELEVANCE2ORGQ %q is not PerfectMatch, Relevant or Irrelevant", rq.Relevance)
			}
			if r.gold != nil {
				detail, err := r.checkGold(orgID, relID, it.e.Label == 1)
				if err != nil {
					return err
				}
				if it.reason == "" && detail != "" {
					it.reason, it.detail = ReasonBadLabel, detail
				}
			}
			switch {
			case it.reason != "":
			case orgID == "" || relID == "":
				it.reason, it.detail = ReasonMissingField, "empty ORGQ_ID or RELQ_ID"
			case !checkUTF8([]byte(e.A)) || !checkUTF8([]byte(e.B)):
				it.reason = ReasonBadUTF8
			case e.A == "" || e.B == "":
				it.reason, it.detail = ReasonEmptyText, "empty original question, or empty related subject and body"
			}
			r.pending = append(r.pending, it)
		}
	}
	if n == 0 {
		r.pending = append(r.pending, semItem{e: Example{ID: "semeval-cqa:" + orgID, Source: src}, reason: ReasonMissingField,
			detail: "OrgQuestion without a RelQuestion", raw: orgID + "\t" + a})
	}
	return nil
}

// checkGold reads the gold file's next row and compares it with a related
// question: a disagreement on the label is a detail for a reject, other
// differences a file error.
func (r *SemEvalCQAReader) checkGold(orgID, relID string, relevant bool) (string, error) {
	gold := r.inputs[1].Name
	line, src, err := r.gold.next()
	if err == io.EOF {
		return "", &FileError{File: gold, Err: fmt.Errorf("%w: %s ends before related question %s of %s", ErrLengthMismatch, gold, relID, r.inputs[0].Name)}
	}
	if err != nil {
		return "", &FileError{File: gold, Err: err}
	}
	r.fields = splitTabs(r.fields[:0], line)
	if len(r.fields) != 5 || string(r.fields[0]) != orgID || string(r.fields[1]) != relID {
		return "", &FileError{File: gold, Err: fmt.Errorf("%w: line %d is %q, the XML's next related question is %s %s: the gold file does not follow the XML",
			ErrFormat, src.Line, line[:min(len(line), 200)], orgID, relID)}
	}
	switch g := string(r.fields[4]); {
	case g == "true" && !relevant, g == "false" && relevant:
		return fmt.Sprintf("%s:%d says %s", gold, src.Line, g), nil
	case g != "true" && g != "false":
		return fmt.Sprintf("%s:%d has the label %q, not true or false", gold, src.Line, g), nil
	}
	return "", nil
}

// goldEnd checks the gold file has no rows left once the XML has ended.
func (r *SemEvalCQAReader) goldEnd() error {
	if r.gold == nil {
		return io.EOF
	}
	for {
		line, src, err := r.gold.next()
		if err == io.EOF {
			return io.EOF
		}
		if err != nil && !IsParseError(err) {
			return err
		}
		if len(line) > 0 || err != nil {
			return &FileError{File: r.inputs[1].Name, Err: fmt.Errorf("%w: line %d is past the XML's last related question", ErrLengthMismatch, src.Line)}
		}
	}
}

// semEvalFormats returns the formats this file reads; formatList lists it.
func semEvalFormats() (fs []Format) {
	fs = append(fs, Format{
		Name: "semeval-cqa", Corpus: "semeval-cqa", Files: []string{"xml"},
		Summary: "SemEval-2016/2017 Task 3 subtask B (question similarity) XML, checked against the .subtaskB.relevancy gold beside it",
		Mapping: `A: OrgQSubject+" "+OrgQBody; B: RelQSubject+" "+RelQBody; Label: 1 PerfectMatch/Relevant, 0 Irrelevant; ID: "semeval-cqa:"+RELQ_ID; Group: ORGQ_ID; Dataset: semeval-cqa/<part>; Meta: relevance, orgq_id, relq_id, rank`,
		New: func(in []*Input, o Options) (Reader, error) {
			var gold *Input
			if p := SemEvalGoldPath(in[0].Name); p != "" {
				g, err := Open(p, o.Limits)
				if err != nil {
					return nil, err
				}
				gold = g
			}
			return NewSemEvalCQAReader(in[0], gold, o), nil
		},
		Eval: Eval{Task: TaskRanking, Order: 1, Split: splitInDataset},
	})
	return fs
}
