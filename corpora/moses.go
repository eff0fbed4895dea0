package corpora

import (
	"bytes"
	"fmt"
	"math"
	"path/filepath"
	"regexp"
	"strconv"
)

// ReasonScoreCount rejects a phrase-table row whose number of scores differs
// from the file's first good row: every row of one table carries the same
// scores in the same order, so a row with more or fewer is misaligned.
const ReasonScoreCount Reason = "score_count"

// Moses phrase tables (train-model.perl output, such as
// model/phrase-table.gz): one phrase pair a line, fields separated by
// "|||" standing as a token between spaces:
//
//	source ||| target ||| scores [||| alignment [||| counts [||| sparse [||| properties]]]]
//
// Both forms in use are read, and may mix in one file: three fields
// (source, target, scores) and five (adding the word alignment and the
// counts). Four fields (an alignment, no counts) and the sixth and seventh
// fields newer Moses versions write (sparse features and key-value
// properties, usually empty as in "||| |||") are accepted too.
//
// The scores, in the standard Moses order, are the inverse phrase
// translation probability φ(f|e), the inverse lexical weight lex(f|e), the
// direct phrase translation probability φ(e|f), the direct lexical weight
// lex(e|f) and, in older tables, the phrase penalty exp(1) = 2.718, where f
// is the source phrase and e the target phrase. Their number is not fixed,
// but all the rows of one file must have as many as its first good row.
//
// Mapping to Example:
//   - A: the source phrase; B: the target phrase (both trimmed of spaces).
//   - LangA, LangB: from Options, or else from a language pair such as
//     "fr-en" in the file name or the names of the two directories above
//     it, read the Moses way, source first: "de-en" means German to
//     English.
//   - Dataset: Options.Dataset, or else that pair ("fr-en"), or else
//     LangA-LangB when Options gives both, or else the file name.
//   - Label: φ(e|f), the direct phrase translation probability, the third
//     score; HasLabel is true. (Checked on the real tables: the third score
//     sums to 1 over the translations of every source phrase, and in the
//     five-field table it equals joint count / source count.) A table with
//     fewer than three scores has no label.
//   - Scores: all the scores, as float64, in file order.
//   - ID: "moses:<dataset>:<line>".
//   - Group: "moses:<dataset>:<source phrase>", so that all the
//     translations of one source phrase stay on one side of a split.
//   - Meta: "align", the word alignment "i-j ..." (source position i,
//     target position j, from 0), present when the row has one (it may be
//     empty); "counts", the counts field as written: count(e) count(f)
//     count(f,e) in current Moses; "sparse" and "properties", fields six
//     and seven where not empty.
//
// A line that is not UTF-8 is rejected with ReasonBadUTF8 (old tables, such
// as Moses's sample models, are in ISO-8859-1: read those with
// Options.Encoding "latin1"). Other rejects: fewer than three or more than seven
// fields, ReasonFieldCount; an empty phrase, ReasonEmptyText; a score or
// count that is not a finite number, ReasonBadNumber; no scores at all,
// ReasonMissingField; a differing number of scores, ReasonScoreCount; a
// direct phrase probability outside [0, 1], ReasonBadScore; an alignment
// point that is not i-j or points past the end of a phrase,
// ReasonBadAlignment. Blank lines are skipped and counted as "blank_line".
type MosesReader struct {
	base
	lines        *lineReader
	dataset      string
	langA, langB string
	prefix       string // "moses:<dataset>:"

	nScores     int   // scores a row, set by the first good row
	nScoresLine int64 // the line of that row

	fields  [][]byte
	scratch []float64 // the row's scores while they are checked
	slab    []float64 // backing store handed out as Example.Scores
	str     []byte    // the row's strings, built as one
}

// mosesMaxFields is the most fields a row may have.
const mosesMaxFields = 7

// mosesDirectPhrase is the index of φ(e|f) among the scores.
const mosesDirectPhrase = 2

// pairPattern finds a language pair such as "fr-en" standing alone in a
// name: "europarl.fr-en.gz" and "fr-en" match, "phrase-table" does not.
const pairPattern = `(?:^|[^A-Za-z])([a-z]{2})-([a-z]{2})(?:[^A-Za-z]|$)`

// NewMosesReader reads a phrase table in UTF-8.
func NewMosesReader(in *Input, opts Options) *MosesReader {
	r := &MosesReader{base: newBase(opts.Limits, in), lines: newLineReader(in, opts.Limits)}
	r.langA, r.langB = opts.LangA, opts.LangB
	pair, src, tgt := pairInPath(in.Name)
	if r.langA == "" {
		r.langA = src
	}
	if r.langB == "" {
		r.langB = tgt
	}
	r.dataset = opts.Dataset
	switch {
	case r.dataset != "":
	case pair != "":
		r.dataset = pair
	case opts.LangA != "" && opts.LangB != "":
		r.dataset = opts.LangA + "-" + opts.LangB
	default:
		r.dataset = baseName(in.Name)
	}
	r.prefix = "moses:" + r.dataset + ":"
	r.fields = make([][]byte, 0, mosesMaxFields+1)
	return r
}

// pairInPath finds a language pair in the file name or, failing that,
// in the name of its directory or the one above (Moses's layout is
// <pair>/model/phrase-table.gz); no higher, where a pair is more likely
// chance. Readers call it once, from their constructors.
func pairInPath(path string) (pair, src, tgt string) {
	pairRe := regexp.MustCompile(pairPattern)
	name := baseName(path)
	for range 3 {
		if m := pairRe.FindStringSubmatch(name); m != nil {
			return m[1] + "-" + m[2], m[1], m[2]
		}
		dir := filepath.Dir(path)
		if dir == path || dir == "." || dir == string(filepath.Separator) {
			break
		}
		path = dir
		name = filepath.Base(dir)
	}
	return "", "", ""
}

// Next returns the next phrase pair.
func (r *MosesReader) Next() (Example, error) {
	line, src, err := r.textLine(r.lines, "not UTF-8 (an ISO-8859-1 table reads with the latin1 encoding)")
	if err != nil {
		return Example{}, err
	}
	return r.parse(line, line, src)
}

func (r *MosesReader) parse(line, raw []byte, src Source) (Example, error) {
	r.fields = mosesSplitFields(line, r.fields[:0])
	f := r.fields
	if len(f) < 3 || len(f) > mosesMaxFields {
		return r.reject(src, ReasonFieldCount, fmt.Sprintf("%d fields separated by |||, want source, target, scores [, alignment, counts]", len(f)), raw)
	}
	srcPhrase, tgtPhrase := bytes.TrimSpace(f[0]), bytes.TrimSpace(f[1])
	if len(srcPhrase) == 0 {
		return r.reject(src, ReasonEmptyText, "empty source phrase", raw)
	}
	if len(tgtPhrase) == 0 {
		return r.reject(src, ReasonEmptyText, "empty target phrase", raw)
	}
	var detail string
	r.scratch, detail = mosesAppendNumbers(r.scratch[:0], f[2], ' ', "score")
	if detail != "" {
		return r.reject(src, ReasonBadNumber, detail, raw)
	}
	n := len(r.scratch)
	if n == 0 {
		return r.reject(src, ReasonMissingField, "no scores", raw)
	}
	if r.nScores != 0 && n != r.nScores {
		return r.reject(src, ReasonScoreCount, fmt.Sprintf("%d scores, but the table's first row (line %d) has %d", n, r.nScoresLine, r.nScores), raw)
	}
	hasLabel := n > mosesDirectPhrase
	var label float64
	if hasLabel {
		label = r.scratch[mosesDirectPhrase]
		if label < 0 || label > 1 {
			return r.reject(src, ReasonBadScore, fmt.Sprintf("direct phrase probability φ(e|f) (score 3) is %g, outside [0, 1]", label), raw)
		}
	}
	var align, counts, sparse, props []byte
	if len(f) > 3 {
		align = bytes.TrimSpace(f[3])
		if d := mosesCheckAlignment(align, mosesCountTokens(srcPhrase), mosesCountTokens(tgtPhrase)); d != "" {
			return r.reject(src, ReasonBadAlignment, d, raw)
		}
	}
	if len(f) > 4 {
		counts = bytes.TrimSpace(f[4])
		if d := mosesCheckCounts(counts); d != "" {
			return r.reject(src, ReasonBadNumber, d, raw)
		}
	}
	if len(f) > 5 {
		sparse = bytes.TrimSpace(f[5])
	}
	if len(f) > 6 {
		props = bytes.TrimSpace(f[6])
	}
	if r.nScores == 0 {
		r.nScores, r.nScoresLine = n, src.Line
	}

	// All the strings of the Example share one allocation.
	b := r.str[:0]
	b = append(b, r.prefix...)
	b = strconv.AppendInt(b, src.Line, 10)
	idEnd := len(b)
	b = append(b, r.prefix...)
	b = append(b, srcPhrase...)
	groupEnd := len(b)
	b = append(b, tgtPhrase...)
	tgtEnd := len(b)
	b = append(b, align...)
	alignEnd := len(b)
	b = append(b, counts...)
	countsEnd := len(b)
	b = append(b, sparse...)
	sparseEnd := len(b)
	b = append(b, props...)
	r.str = b
	s := string(b)

	e := Example{
		ID: s[:idEnd], Corpus: "moses", Dataset: r.dataset,
		A: s[idEnd+len(r.prefix) : groupEnd], B: s[groupEnd:tgtEnd],
		LangA: r.langA, LangB: r.langB,
		Label: label, HasLabel: hasLabel,
		Group:  s[idEnd:groupEnd],
		Scores: r.takeScores(),
		Source: src,
	}
	if len(f) > 3 {
		e.Meta = make(map[string]string, 2)
		e.Meta["align"] = s[tgtEnd:alignEnd]
		if len(f) > 4 {
			e.Meta["counts"] = s[alignEnd:countsEnd]
		}
		if len(sparse) > 0 {
			e.Meta["sparse"] = s[countsEnd:sparseEnd]
		}
		if len(props) > 0 {
			e.Meta["properties"] = s[sparseEnd:]
		}
	}
	return r.emit(e)
}

// takeScores copies the row's scores into the slab and returns them, capped
// so that appending to them never writes into the next row's.
func (r *MosesReader) takeScores() []float64 {
	n := len(r.scratch)
	if cap(r.slab)-len(r.slab) < n {
		r.slab = make([]float64, 0, max(4096, n))
	}
	start := len(r.slab)
	r.slab = append(r.slab, r.scratch...)
	return r.slab[start : start+n : start+n]
}

// mosesBars separates the fields of a Moses or PPDB line.
const mosesBars = "|||"

// mosesSplitFields splits a Moses or PPDB line into its fields, appending
// them to dst trimmed of spaces. A separator is "|||" standing as a token:
// at the start or after a space, and at the end or before one. So
// "x ||| ||| y" holds an empty field (Moses writes empty trailing fields
// "... ||| 1 1 1 ||| |||"), while "||||" in a phrase is text.
func mosesSplitFields(line []byte, dst [][]byte) [][]byte {
	start, i := 0, 0
	for {
		j := bytes.Index(line[i:], []byte(mosesBars))
		if j < 0 {
			break
		}
		j += i
		end := j + len(mosesBars)
		if (j == 0 || mosesIsBlank(line[j-1])) && (end == len(line) || mosesIsBlank(line[end])) {
			dst = append(dst, mosesTrimBlanks(line[start:j]))
			start = end
			i = end
		} else {
			i = j + 1
		}
	}
	return append(dst, mosesTrimBlanks(line[start:]))
}

func mosesIsBlank(c byte) bool { return c == ' ' || c == '\t' }

// mosesTrimBlanks trims ASCII spaces and tabs.
func mosesTrimBlanks(b []byte) []byte {
	for len(b) > 0 && mosesIsBlank(b[0]) {
		b = b[1:]
	}
	for len(b) > 0 && mosesIsBlank(b[len(b)-1]) {
		b = b[:len(b)-1]
	}
	return b
}

// mosesAppendNumbers parses the finite numbers of b, appending them to
// dst. sep separates them: ' ' means runs of spaces, any other byte exactly
// one separator between two numbers. A bad one gives a detail naming it,
// the what'th.
func mosesAppendNumbers(dst []float64, b []byte, sep byte, what string) ([]float64, string) {
	parse := func(tok []byte) string {
		v, ok := mosesParseFloat(tok)
		if !ok {
			return fmt.Sprintf("%s %d %q is not a finite number", what, len(dst)+1, tok)
		}
		dst = append(dst, v)
		return ""
	}
	if sep == ' ' {
		for tok := range bytes.FieldsSeq(b) {
			if d := parse(tok); d != "" {
				return dst, d
			}
		}
		return dst, ""
	}
	for {
		tok, rest, found := bytes.Cut(b, []byte{sep})
		if d := parse(bytes.TrimSpace(tok)); d != "" {
			return dst, d
		}
		if !found {
			return dst, ""
		}
		b = rest
	}
}

// mosesParseFloat parses a number as strconv.ParseFloat does, refusing
// NaN, infinities and numbers too large for a float64.
func mosesParseFloat(tok []byte) (float64, bool) {
	if len(tok) == 0 {
		return 0, false
	}
	v, err := strconv.ParseFloat(string(tok), 64)
	if err != nil || math.IsNaN(v) || math.IsInf(v, 0) {
		return 0, false
	}
	return v, true
}

// mosesCheckCounts checks the counts field: space-separated non-negative
// numbers.
func mosesCheckCounts(b []byte) string {
	for tok := range bytes.FieldsSeq(b) {
		v, ok := mosesParseFloat(tok)
		if !ok || v < 0 {
			return fmt.Sprintf("count %q is not a non-negative number", tok)
		}
	}
	return ""
}

// mosesCountTokens counts the space-separated tokens of a phrase.
func mosesCountTokens(b []byte) int {
	n := 0
	in := false
	for _, c := range b {
		if c == ' ' || c == '\t' {
			in = false
		} else if !in {
			in = true
			n++
		}
	}
	return n
}

// mosesCheckAlignment checks a word alignment "i-j i-j ...": each point two
// non-negative integers joined by '-'. Where nA or nB is positive, i must
// be below nA and j below nB. It returns what is wrong, or "".
func mosesCheckAlignment(b []byte, nA, nB int) string {
	for tok := range bytes.FieldsSeq(b) {
		dash := bytes.IndexByte(tok, '-')
		if dash < 0 {
			return fmt.Sprintf("alignment point %q is not i-j", tok)
		}
		i, okI := mosesSmallUint(tok[:dash])
		j, okJ := mosesSmallUint(tok[dash+1:])
		if !okI || !okJ {
			return fmt.Sprintf("alignment point %q is not i-j", tok)
		}
		if nA > 0 && i >= nA {
			return fmt.Sprintf("alignment point %q: source position %d past the phrase's %d words", tok, i, nA)
		}
		if nB > 0 && j >= nB {
			return fmt.Sprintf("alignment point %q: target position %d past the phrase's %d words", tok, j, nB)
		}
	}
	return ""
}

// mosesSmallUint parses 1 to 6 decimal digits.
func mosesSmallUint(b []byte) (int, bool) {
	if len(b) == 0 || len(b) > 6 {
		return 0, false
	}
	n := 0
	for _, c := range b {
		if c < '0' || c > '9' {
			return 0, false
		}
		n = n*10 + int(c-'0')
	}
	return n, true
}

// mosesFormats returns the formats this file reads; formatList lists it.
func mosesFormats() (fs []Format) {
	mapping := "A, B: source and target phrase; Label: φ(e|f), the direct phrase probability (third score); Scores: all scores; " +
		"LangA, LangB, Dataset: the pair in the path (fr-en: source fr, target en); Group: moses:<dataset>:<source phrase>; " +
		"ID: moses:<dataset>:<line>; Meta align, counts (five-field tables), sparse, properties"
	fs = append(fs, Format{
		Name: "moses", Corpus: "moses", Files: []string{"table"},
		Summary: "Moses phrase table: source ||| target ||| scores [||| alignment ||| counts], UTF-8",
		Mapping: mapping,
		New: func(in []*Input, o Options) (Reader, error) {
			return NewMosesReader(in[0], o), nil
		},
	})
	return fs
}
