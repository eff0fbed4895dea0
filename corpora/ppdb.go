package corpora

import (
	"bytes"
	"fmt"
	"math"
	"regexp"
	"strconv"
	"strings"
)

// ReasonBadLHS rejects a PPDB record whose left-hand side is not a
// bracketed syntactic label such as "[NP]".
const ReasonBadLHS Reason = "bad_lhs"

// ppdbTierPattern finds the version and size tier in an official PPDB file
// name.
const ppdbTierPattern = `(?:^|[^A-Za-z0-9])ppdb-([0-9]+\.[0-9]+)-(s|m|l|xl|xxl|xxxl|tldr)(?:[^A-Za-z]|$)`

// ppdbNaming is what a PPDB reader derives from the file name and Options.
type ppdbNaming struct {
	dataset, tier string
	langA, langB  string
	prefix        string // "ppdb:<dataset>:"
}

func newPPDBNaming(path string, opts Options) ppdbNaming {
	n := ppdbNaming{dataset: opts.Dataset, tier: opts.Tier, langA: opts.LangA, langB: opts.LangB}
	name := baseName(path)
	if n.dataset == "" {
		n.dataset = name
		for _, ext := range []string{".raw", ".tsv", ".txt"} {
			n.dataset = strings.TrimSuffix(n.dataset, ext)
		}
	}
	if n.tier == "" {
		if m := regexp.MustCompile(ppdbTierPattern).FindStringSubmatch(name); m != nil {
			n.tier = m[2]
		}
	}
	if n.langA == "" {
		n.langA = "en"
	}
	if n.langB == "" {
		n.langB = n.langA
	}
	n.prefix = "ppdb:" + n.dataset + ":"
	return n
}

// appendHead appends the ID ("<prefix><line>") and the Group
// ("<prefix><lo>\t<hi>", the texts in byte order) to b, and returns where
// the ID ends and where in b the texts a and t lie.
func (n *ppdbNaming) appendHead(b []byte, line int64, a, t []byte) (out []byte, idEnd int, aAt, tAt [2]int) {
	b = append(b, n.prefix...)
	b = strconv.AppendInt(b, line, 10)
	idEnd = len(b)
	b = append(b, n.prefix...)
	first, second := a, t
	if bytes.Compare(a, t) > 0 {
		first, second = t, a
	}
	s1 := len(b)
	b = append(b, first...)
	e1 := len(b)
	b = append(b, '\t')
	s2 := len(b)
	b = append(b, second...)
	e2 := len(b)
	if bytes.Compare(a, t) > 0 {
		return b, idEnd, [2]int{s2, e2}, [2]int{s1, e1}
	}
	return b, idEnd, [2]int{s1, e1}, [2]int{s2, e2}
}

// ppdbCheckLHS reports whether b is a bracketed label such as "[NP]" or
// "[NP/NN]".
func ppdbCheckLHS(b []byte) bool {
	if len(b) < 3 || b[0] != '[' || b[len(b)-1] != ']' {
		return false
	}
	return !bytes.ContainsAny(b[1:len(b)-1], "[] \t")
}

// ppdbEntailment reports the entailment classes of PPDB 2.0.
func ppdbEntailment(class []byte) bool {
	switch string(class) {
	case "Equivalence", "ForwardEntailment", "ReverseEntailment", "Independent", "OtherRelated", "Exclusion":
		return true
	}
	return false
}

// PPDB (the Paraphrase Database, http://paraphrase.org) comes in three
// forms, each a format: "ppdb" for the rule files (this reader),
// "ppdb-pairs" for the two-column lexical pair lists (PPDBPairsReader) and
// "ppdb-human" for PPDB 2.0's human judgements (PPDBHumanReader).
//
// The rule files (ppdb-2.0-s-all, ppdb-1.0-xxxl-lexical, ...) hold one
// paraphrase rule a line, fields separated by "|||". PPDB 2.0 writes six
// fields,
//
//	[LHS] ||| phrase ||| paraphrase ||| Name=value ... ||| alignment ||| entailment
//
// and PPDB 1.0 the first five; the form is told line by line.
//
// Mapping to Example, the first five items shared by the three PPDB
// formats:
//   - LangA, LangB: "en", or Options.LangA and Options.LangB (LangB
//     defaults to LangA: a paraphrase is in the language of its phrase).
//   - Dataset: Options.Dataset, or else the file name without directories,
//     compression suffix or .raw/.tsv/.txt: "ppdb-2.0-s-all",
//     "ppdb-2.0-tldr-sample". The whole name, not only the tier, so that the
//     IDs of the lexical, phrasal, o2m and syntax files of one tier differ.
//   - ID: "ppdb:<dataset>:<line>".
//   - Group: "ppdb:<dataset>:" and the two texts in byte order joined by a
//     tab, so that a pair and its reverse (PPDB lists both "knew → what" and
//     "what → knew") stay on one side of a split.
//   - Meta["tier"]: the size tier (s, m, l, xl, xxl, xxxl; tldr for 2.0)
//     from a file name such as ppdb-2.0-s-all or ppdb-1.0-xxxl-lexical, or
//     Options.Tier; absent when neither gives it.
//   - A: the phrase; B: the paraphrase (trimmed of spaces). They may hold
//     nonterminals such as "[NN,1]" in syntactic rules.
//   - Label: the rule's PPDB2.0Score feature (the supervised score of PPDB
//     2.0, roughly 1 to 5, higher is better) where it holds a number; else
//     its PPDB1.0Score (the heuristic score of 1.0, on another scale); else
//     none, and HasLabel is false. Compare labels within one version only.
//   - Meta: "lhs", the left-hand side as written ("[NP]"); "align", the word
//     alignment "i-j ..." (may be empty); "entailment", the entailment class
//     of a 2.0 rule (Equivalence, ForwardEntailment, ReverseEntailment,
//     Independent, OtherRelated or Exclusion); and "f:<Name>" for every
//     feature, its value as written ("f:PPDB2.0Score" = "3.27577",
//     "f:MVLSASim" = "NA").
//
// Rejects: not five or six fields, ReasonFieldCount; a left-hand side that
// is not a bracketed label, ReasonBadLHS; an empty phrase, ReasonEmptyText;
// a feature that is not Name=value, whose value is neither a finite number
// nor NA, or that is given twice, ReasonBadFeature, and so is an unknown
// entailment class; an alignment point that is not i-j, ReasonBadAlignment
// (PPDB's alignments are not checked against the phrase lengths: the
// release's own point past them); not UTF-8, ReasonBadUTF8. Blank lines are
// skipped and counted as "blank_line".
type PPDBReader struct {
	base
	lines  *lineReader
	naming ppdbNaming
	fields [][]byte
	keys   map[string]string // interned "f:<Name>" keys
	str    []byte
}

// ppdbMaxKeys bounds the interned feature keys, against hostile input.
const ppdbMaxKeys = 1024

// NewPPDBReader reads a PPDB 1.0 or 2.0 rule file.
func NewPPDBReader(in *Input, opts Options) *PPDBReader {
	return &PPDBReader{base: newBase(opts.Limits, in), lines: newLineReader(in, opts.Limits),
		naming: newPPDBNaming(in.Name, opts), fields: make([][]byte, 0, 8), keys: make(map[string]string)}
}

// Next returns the next paraphrase rule.
func (r *PPDBReader) Next() (Example, error) {
	line, src, err := r.textLine(r.lines, "")
	if err != nil {
		return Example{}, err
	}
	return r.parse(line, src)
}

func (r *PPDBReader) parse(line []byte, src Source) (Example, error) {
	r.fields = mosesSplitFields(line, r.fields[:0])
	f := r.fields
	if len(f) != 5 && len(f) != 6 {
		return r.reject(src, ReasonFieldCount, fmt.Sprintf("%d fields separated by |||, want 5 (PPDB 1.0: lhs, phrase, paraphrase, features, alignment) or 6 (2.0: and entailment)", len(f)), line)
	}
	lhs := bytes.TrimSpace(f[0])
	if !ppdbCheckLHS(lhs) {
		return r.reject(src, ReasonBadLHS, fmt.Sprintf("left-hand side %q is not a bracketed label such as [NP]", lhs), line)
	}
	phrase, para := bytes.TrimSpace(f[1]), bytes.TrimSpace(f[2])
	if len(phrase) == 0 {
		return r.reject(src, ReasonEmptyText, "empty phrase", line)
	}
	if len(para) == 0 {
		return r.reject(src, ReasonEmptyText, "empty paraphrase", line)
	}
	feats := bytes.TrimSpace(f[3])
	label, hasLabel, detail := ppdbCheckFeatures(feats)
	if detail != "" {
		return r.reject(src, ReasonBadFeature, detail, line)
	}
	align := bytes.TrimSpace(f[4])
	if d := mosesCheckAlignment(align, 0, 0); d != "" {
		return r.reject(src, ReasonBadAlignment, d, line)
	}
	var ent []byte
	if len(f) == 6 {
		ent = bytes.TrimSpace(f[5])
		if !ppdbEntailment(ent) {
			return r.reject(src, ReasonBadFeature, fmt.Sprintf("entailment class %q is not Equivalence, ForwardEntailment, ReverseEntailment, Independent, OtherRelated or Exclusion", ent), line)
		}
	}

	// All the strings of the Example share one allocation.
	b, idEnd, aAt, bAt := r.naming.appendHead(r.str[:0], src.Line, phrase, para)
	lhsAt := len(b)
	b = append(b, lhs...)
	alignAt := len(b)
	b = append(b, align...)
	entAt := len(b)
	b = append(b, ent...)
	featsAt := len(b)
	b = append(b, feats...)
	r.str = b
	s := string(b)

	meta := make(map[string]string, bytes.Count(feats, []byte{'='})+4)
	meta["lhs"] = s[lhsAt:alignAt]
	meta["align"] = s[alignAt:entAt]
	if len(f) == 6 {
		meta["entailment"] = s[entAt:featsAt]
	}
	if r.naming.tier != "" {
		meta["tier"] = r.naming.tier
	}
	for tok := range strings.FieldsSeq(s[featsAt:]) {
		name, value, _ := strings.Cut(tok, "=")
		key := r.key(name)
		if _, dup := meta[key]; dup {
			return r.reject(src, ReasonBadFeature, fmt.Sprintf("feature %s given twice", name), line)
		}
		meta[key] = value
	}
	return r.emit(Example{
		ID: s[:idEnd], Corpus: "ppdb", Dataset: r.naming.dataset,
		A: s[aAt[0]:aAt[1]], B: s[bAt[0]:bAt[1]],
		LangA: r.naming.langA, LangB: r.naming.langB,
		Label: label, HasLabel: hasLabel,
		Group: s[idEnd:lhsAt], Meta: meta, Source: src,
	})
}

// key returns the Meta key of a feature, "f:<name>", interning the first
// few hundred names seen.
func (r *PPDBReader) key(name string) string {
	if k, ok := r.keys[name]; ok {
		return k
	}
	k := "f:" + name
	if len(r.keys) < ppdbMaxKeys {
		r.keys[k[2:]] = k
	}
	return k
}

// ppdbCheckFeatures checks a features field, "Name=value ..." with each
// value a finite number or NA, and finds the label: PPDB2.0Score, else
// PPDB1.0Score. It returns what is wrong, or "".
func ppdbCheckFeatures(b []byte) (label float64, hasLabel bool, detail string) {
	var v1 float64
	has1 := false
	for tok := range bytes.FieldsSeq(b) {
		name, value, found := bytes.Cut(tok, []byte{'='})
		if !found || len(name) == 0 {
			return 0, false, fmt.Sprintf("feature %q is not Name=value", tok)
		}
		if string(value) == "NA" {
			continue
		}
		v, ok := mosesParseFloat(value)
		if !ok {
			return 0, false, fmt.Sprintf("feature %s=%q: the value is neither a number nor NA", name, value)
		}
		switch string(name) {
		case "PPDB2.0Score":
			label, hasLabel = v, true
		case "PPDB1.0Score":
			v1, has1 = v, true
		}
	}
	if !hasLabel && has1 {
		return v1, true, ""
	}
	return label, hasLabel, ""
}

// PPDB lexical pair lists (ppdb-1.0-xxxl-lexical-synonym-pairs.tsv): one
// pair a line, word<TAB>word. The words are text, whatever they look like
// ("10/17/01", "102,70").
//
// Mapping to Example: LangA, LangB, Dataset, ID, Group and Meta["tier"] as
// for PPDBReader, and
//   - A: the first word; B: the second (trimmed of spaces).
//   - Label: none.
//
// Rejects: not two tab-separated columns, ReasonFieldCount; an empty word,
// ReasonEmptyText; not UTF-8, ReasonBadUTF8. Blank lines are skipped and
// counted as "blank_line".
type PPDBPairsReader struct {
	base
	lines  *lineReader
	naming ppdbNaming
	str    []byte
}

// NewPPDBPairsReader reads a two-column PPDB pair list.
func NewPPDBPairsReader(in *Input, opts Options) *PPDBPairsReader {
	return &PPDBPairsReader{base: newBase(opts.Limits, in), lines: newLineReader(in, opts.Limits), naming: newPPDBNaming(in.Name, opts)}
}

// Next returns the next pair.
func (r *PPDBPairsReader) Next() (Example, error) {
	line, src, err := r.textLine(r.lines, "")
	if err != nil {
		return Example{}, err
	}
	if n := bytes.Count(line, []byte{'\t'}) + 1; n != 2 {
		return r.reject(src, ReasonFieldCount, fmt.Sprintf("%d tab-separated columns, want 2", n), line)
	}
	a, t, _ := bytes.Cut(line, []byte{'\t'})
	a, t = bytes.TrimSpace(a), bytes.TrimSpace(t)
	if len(a) == 0 || len(t) == 0 {
		return r.reject(src, ReasonEmptyText, "empty word", line)
	}
	b, idEnd, aAt, tAt := r.naming.appendHead(r.str[:0], src.Line, a, t)
	r.str = b
	s := string(b)
	e := Example{
		ID: s[:idEnd], Corpus: "ppdb", Dataset: r.naming.dataset,
		A: s[aAt[0]:aAt[1]], B: s[tAt[0]:tAt[1]],
		LangA: r.naming.langA, LangB: r.naming.langB,
		Group: s[idEnd:], Source: src,
	}
	if r.naming.tier != "" {
		e.Meta = map[string]string{"tier": r.naming.tier}
	}
	return r.emit(e)
}

// PPDB 2.0 human judgements (ppdb-2.0-human-labels.tsv): one rated pair a
// line, five tab-separated columns,
//
//	average<TAB>[LHS]<TAB>phrase<TAB>paraphrase<TAB>rating,rating,...
//
// each rating on a 1 to 5 scale (5: the same meaning), the average their
// mean.
//
// Mapping to Example: LangA, LangB, Dataset, ID, Group and Meta["tier"] as
// for PPDBReader, and
//   - A: the phrase; B: the paraphrase (trimmed of spaces).
//   - Label: the average rating, 1 to 5; HasLabel is true.
//   - Scores: the ratings, in file order.
//   - Meta["lhs"]: the left-hand side as written ("[NP]").
//
// Rejects: not five columns, ReasonFieldCount; an average or rating that
// is not a finite number, ReasonBadNumber; one outside [1, 5], or an
// average that is not the mean of the ratings (to 0.01),
// ReasonBadScore; a left-hand side that is not a bracketed label,
// ReasonBadLHS; an empty phrase, ReasonEmptyText; not UTF-8,
// ReasonBadUTF8. Blank lines are skipped and counted as "blank_line".
type PPDBHumanReader struct {
	base
	lines   *lineReader
	naming  ppdbNaming
	ratings []float64
	str     []byte
}

// The scale of PPDB's human ratings.
const (
	ppdbMinRating = 1
	ppdbMaxRating = 5
)

// NewPPDBHumanReader reads PPDB 2.0's human labels.
func NewPPDBHumanReader(in *Input, opts Options) *PPDBHumanReader {
	return &PPDBHumanReader{base: newBase(opts.Limits, in), lines: newLineReader(in, opts.Limits), naming: newPPDBNaming(in.Name, opts)}
}

// Next returns the next rated pair.
func (r *PPDBHumanReader) Next() (Example, error) {
	line, src, err := r.textLine(r.lines, "")
	if err != nil {
		return Example{}, err
	}
	return r.parse(line, src)
}

func (r *PPDBHumanReader) parse(line []byte, src Source) (Example, error) {
	var col [5][]byte
	rest := line
	for i := range col {
		var found bool
		col[i], rest, found = bytes.Cut(rest, []byte{'\t'})
		if found != (i < len(col)-1) {
			n := bytes.Count(line, []byte{'\t'}) + 1
			return r.reject(src, ReasonFieldCount, fmt.Sprintf("%d tab-separated columns, want 5: average, lhs, phrase, paraphrase, ratings", n), line)
		}
	}
	avgText := bytes.TrimSpace(col[0])
	avg, ok := mosesParseFloat(avgText)
	if !ok {
		return r.reject(src, ReasonBadNumber, fmt.Sprintf("average %q is not a finite number", avgText), line)
	}
	if avg < ppdbMinRating || avg > ppdbMaxRating {
		return r.reject(src, ReasonBadScore, fmt.Sprintf("average %g outside [%d, %d]", avg, ppdbMinRating, ppdbMaxRating), line)
	}
	lhs := bytes.TrimSpace(col[1])
	if !ppdbCheckLHS(lhs) {
		return r.reject(src, ReasonBadLHS, fmt.Sprintf("left-hand side %q is not a bracketed label such as [NP]", lhs), line)
	}
	phrase, para := bytes.TrimSpace(col[2]), bytes.TrimSpace(col[3])
	if len(phrase) == 0 {
		return r.reject(src, ReasonEmptyText, "empty phrase", line)
	}
	if len(para) == 0 {
		return r.reject(src, ReasonEmptyText, "empty paraphrase", line)
	}
	var detail string
	r.ratings, detail = mosesAppendNumbers(r.ratings[:0], col[4], ',', "rating")
	if detail != "" {
		return r.reject(src, ReasonBadNumber, detail, line)
	}
	sum := 0.0
	for i, v := range r.ratings {
		if v < ppdbMinRating || v > ppdbMaxRating {
			return r.reject(src, ReasonBadScore, fmt.Sprintf("rating %d is %g, outside [%d, %d]", i+1, v, ppdbMinRating, ppdbMaxRating), line)
		}
		sum += v
	}
	if mean := sum / float64(len(r.ratings)); math.Abs(mean-avg) > 0.01 {
		return r.reject(src, ReasonBadScore, fmt.Sprintf("average %g is not the mean of the ratings, %.4g", avg, mean), line)
	}

	b, idEnd, aAt, tAt := r.naming.appendHead(r.str[:0], src.Line, phrase, para)
	lhsAt := len(b)
	b = append(b, lhs...)
	r.str = b
	s := string(b)
	e := Example{
		ID: s[:idEnd], Corpus: "ppdb", Dataset: r.naming.dataset,
		A: s[aAt[0]:aAt[1]], B: s[tAt[0]:tAt[1]],
		LangA: r.naming.langA, LangB: r.naming.langB,
		Label: avg, HasLabel: true,
		Scores: append([]float64(nil), r.ratings...),
		Group:  s[idEnd:lhsAt], Source: src,
		Meta: map[string]string{"lhs": s[lhsAt:]},
	}
	if r.naming.tier != "" {
		e.Meta["tier"] = r.naming.tier
	}
	return r.emit(e)
}

// ppdbFormats returns the formats this file reads; formatList lists it.
func ppdbFormats() (fs []Format) {
	shared := "LangA, LangB: en; Dataset: the file name (ppdb-2.0-s-all); ID: ppdb:<dataset>:<line>; " +
		"Group: the two texts in byte order (a pair and its reverse together); Meta tier"
	fs = append(fs, Format{
		Name: "ppdb", Corpus: "ppdb", Files: []string{"rules"},
		Summary: "PPDB 1.0 and 2.0 rules: [LHS] ||| phrase ||| paraphrase ||| features ||| alignment [||| entailment]",
		Mapping: "A, B: phrase, paraphrase; Label: PPDB2.0Score, else PPDB1.0Score, else none; " +
			"Meta lhs, align, entailment (2.0), f:<Name> for each feature; " + shared,
		New: func(in []*Input, o Options) (Reader, error) {
			return NewPPDBReader(in[0], o), nil
		},
	})
	fs = append(fs, Format{
		Name: "ppdb-pairs", Corpus: "ppdb", Files: []string{"pairs"},
		Summary: "PPDB lexical pair list: word<TAB>word",
		Mapping: "A, B: the two words; no Label; " + shared,
		New: func(in []*Input, o Options) (Reader, error) {
			return NewPPDBPairsReader(in[0], o), nil
		},
	})
	fs = append(fs, Format{
		Name: "ppdb-human", Corpus: "ppdb", Files: []string{"labels"},
		Summary: "PPDB 2.0 human labels: average<TAB>[LHS]<TAB>phrase<TAB>paraphrase<TAB>ratings",
		Mapping: "A, B: phrase, paraphrase; Label: the average rating 1-5; Scores: the ratings; Meta lhs; " + shared,
		New: func(in []*Input, o Options) (Reader, error) {
			return NewPPDBHumanReader(in[0], o), nil
		},
	})
	return fs
}
