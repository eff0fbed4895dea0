package corpora

import (
	"fmt"
	"strconv"
	"strings"
)

// ReasonTitleMismatch rejects a SimpWiki line whose article title differs
// between normal.aligned and simple.aligned: the two files are no longer
// aligned there.
const ReasonTitleMismatch Reason = "title_mismatch"

// SimpWiki, Coster and Kauchak's sentence-aligned English Wikipedia and
// Simple English Wikipedia (2011): normal.aligned and simple.aligned,
// aligned by line, each line article title<TAB>paragraph number<TAB>sentence.
//
// Mapping to Example:
//   - A: the sentence of normal.aligned; B: the sentence of the same line of
//     simple.aligned (trimmed). LangA, LangB: "en", or Options.
//   - Dataset: "simpwiki", or Options.Dataset.
//   - Label: none.
//   - Group: "simpwiki:<title>": an article's pairs stay on one side of a
//     split.
//   - ID: "<dataset>:<line>", so "simpwiki:<line>" by default.
//   - Meta: "title": the article title; "paragraph": the paragraph number
//     in the normal article; "paragraph_simple": the paragraph number in the
//     simple article.
//
// A line without exactly three columns (on either side) is rejected with
// ReasonFieldCount; a paragraph number that is not a non-negative integer
// with ReasonBadNumber; an empty title with ReasonMissingField; titles that
// differ between the two files with ReasonTitleMismatch; an empty sentence
// with ReasonEmptyText. Files of different lengths are a *FileError wrapping
// ErrLengthMismatch naming both files.
type SimpWikiReader struct {
	base
	lines        *alignedLines
	dataset      string
	langA, langB string
}

// NewSimpWikiReader reads normal.aligned and simple.aligned in lockstep.
func NewSimpWikiReader(normal, simple *Input, opts Options) *SimpWikiReader {
	r := &SimpWikiReader{base: newBase(opts.Limits, normal, simple), lines: newAlignedLines(normal, simple, opts.Limits)}
	r.langA, r.langB = langsOrDefault(opts, "en")
	r.dataset = opts.Dataset
	if r.dataset == "" {
		r.dataset = "simpwiki"
	}
	return r
}

// simpWikiLine is one parsed line of an .aligned file.
type simpWikiLine struct {
	title, sentence string
	paragraph       int
}

// simpWikiParse splits a line into its three columns.
func simpWikiParse(line []byte, side string) (simpWikiLine, Reason, string) {
	cols := strings.Split(string(line), "\t")
	if len(cols) != 3 {
		return simpWikiLine{}, ReasonFieldCount, fmt.Sprintf("%s: %d column(s), want title<TAB>paragraph<TAB>sentence", side, len(cols))
	}
	p, err := strconv.Atoi(strings.TrimSpace(cols[1]))
	if err != nil || p < 0 {
		return simpWikiLine{}, ReasonBadNumber, fmt.Sprintf("%s: paragraph number %q", side, cols[1])
	}
	l := simpWikiLine{title: strings.TrimSpace(cols[0]), paragraph: p, sentence: strings.TrimSpace(cols[2])}
	if l.title == "" {
		return simpWikiLine{}, ReasonMissingField, side + ": empty article title"
	}
	return l, "", ""
}

// Next returns the next sentence pair.
func (r *SimpWikiReader) Next() (Example, error) {
	la, lb, sa, _, err := r.lines.next()
	if err != nil {
		return r.rejected(err)
	}
	r.record()
	if !checkUTF8(la) || !checkUTF8(lb) {
		return r.reject(sa, ReasonBadUTF8, "", joinTab(la, lb))
	}
	n, reason, detail := simpWikiParse(la, "normal")
	if reason == "" {
		var s simpWikiLine
		s, reason, detail = simpWikiParse(lb, "simple")
		if reason == "" && s.title != n.title {
			reason, detail = ReasonTitleMismatch, fmt.Sprintf("normal %q, simple %q", n.title, s.title)
		}
		if reason == "" && (n.sentence == "" || s.sentence == "") {
			reason, detail = ReasonEmptyText, "empty sentence"
		}
		if reason == "" {
			return r.emit(Example{
				ID: r.dataset + ":" + strconv.FormatInt(sa.Line, 10), Corpus: "simpwiki", Dataset: r.dataset,
				A: n.sentence, B: s.sentence, LangA: r.langA, LangB: r.langB,
				Group: "simpwiki:" + n.title, Source: sa,
				Meta: map[string]string{
					"title": n.title, "paragraph": strconv.Itoa(n.paragraph), "paragraph_simple": strconv.Itoa(s.paragraph),
				},
			})
		}
	}
	return r.reject(sa, reason, detail, joinTab(la, lb))
}

// TurkCorpus (Xu et al. 2016): English Wikipedia sentences and their
// simplifications, derived from PWKP, in files such as
// tune.8turkers.tok.norm and tune.8turkers.tok.simp aligned by line,
// lowercased and tokenised (-lrb- for "(").
//
// Mapping to Example:
//   - A: the line of the .norm file; B: the same line of the .simp file
//     (trimmed, otherwise as in the files). LangA, LangB: "en", or Options.
//   - Dataset: "turkcorpus/<split>", the split being the file name up to
//     its first dot ("tune", "test"), or Options.Dataset.
//   - Label: none. Group: the ID (each pair stands alone).
//   - ID: "turkcorpus:<split>:<line>", the split being the dataset without
//     its "turkcorpus/" prefix.
//
// An empty line on either side is rejected with ReasonEmptyText. Files of
// different lengths are a *FileError wrapping ErrLengthMismatch naming both
// files.
type TurkCorpusReader struct {
	base
	lines        *alignedLines
	dataset      string
	idPrefix     string
	langA, langB string
}

// NewTurkCorpusReader reads a .norm file and its .simp file in lockstep.
func NewTurkCorpusReader(norm, simp *Input, opts Options) *TurkCorpusReader {
	r := &TurkCorpusReader{base: newBase(opts.Limits, norm, simp), lines: newAlignedLines(norm, simp, opts.Limits)}
	r.langA, r.langB = langsOrDefault(opts, "en")
	r.dataset = opts.Dataset
	if r.dataset == "" {
		split, _, _ := strings.Cut(baseName(norm.Name), ".")
		r.dataset = "turkcorpus/" + split
	}
	r.idPrefix = "turkcorpus:" + strings.TrimPrefix(r.dataset, "turkcorpus/") + ":"
	return r
}

// Next returns the next sentence pair.
func (r *TurkCorpusReader) Next() (Example, error) {
	a, b, raw, sa, err := r.textPair(r.lines)
	if err != nil {
		return Example{}, err
	}
	if a == "" || b == "" {
		return r.reject(sa, ReasonEmptyText, "empty sentence", raw)
	}
	id := r.idPrefix + strconv.FormatInt(sa.Line, 10)
	return r.emit(Example{
		ID: id, Corpus: "turkcorpus", Dataset: r.dataset, A: a, B: b, LangA: r.langA, LangB: r.langB,
		Group: id, Source: sa,
	})
}

// simpWikiFormats returns the formats this file reads; formatList lists it.
func simpWikiFormats() (fs []Format) {
	fs = append(fs, Format{
		Name: "simpwiki", Corpus: "simpwiki", Files: []string{"normal", "simple"},
		Summary: "Coster and Kauchak SimpWiki: normal.aligned and simple.aligned, title<TAB>paragraph<TAB>sentence aligned by line",
		Mapping: "A, B: the normal and simple sentences; Group: simpwiki:<title>; Dataset: simpwiki; ID: simpwiki:<line>; Meta title, paragraph, paragraph_simple; no Label",
		New: func(in []*Input, o Options) (Reader, error) {
			return NewSimpWikiReader(in[0], in[1], o), nil
		},
	})
	fs = append(fs, Format{
		Name: "turkcorpus", Corpus: "turkcorpus", Files: []string{"norm", "simp"},
		Summary: "TurkCorpus: <split>.8turkers.tok.norm and .tok.simp aligned by line, lowercased and tokenised",
		Mapping: "A, B: the norm and simp lines; Dataset: turkcorpus/<split>; Group = ID = turkcorpus:<split>:<line>; no Label",
		New: func(in []*Input, o Options) (Reader, error) {
			return NewTurkCorpusReader(in[0], in[1], o), nil
		},
	})
	return fs
}
