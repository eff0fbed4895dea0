package corpora

import (
	"bytes"
	"fmt"
	"io"
	"math"
	"path/filepath"
	"strconv"
	"strings"
)

// SemEval STS (2012 to 2017): an input file STS.input.<set>.txt, one pair a
// line as s1<TAB>s2, read in lockstep with its gold file STS.gs.<set>.txt,
// one score from 0 to 5 a line in the same order (see STSGoldPath).
//
// Mapping to Example:
//   - A: s1; B: s2 (trimmed of surrounding spaces). LangA, LangB: "en", or
//     Options.
//   - Label: the gold score, 0 (unrelated) to 5 (equivalent); HasLabel is
//     true.
//   - Dataset: "<year>/<set>", the year being the name of the directory
//     holding the file and the set the middle of the file name
//     (eval/sts/2014/STS.input.deft-forum.txt gives "2014/deft-forum",
//     eval/sts/2012-train/STS.input.MSRpar.txt "2012-train/MSRpar"); just
//     "<set>" when the path has no directory; or Options.Dataset.
//   - ID and Group: "sts:<dataset>:<line>" (each pair stands alone).
//   - Meta: "source1", "source2", ... hold the columns after s2 where a line
//     has them (2016's files name the origin of each sentence there);
//     absent otherwise.
//
// A blank gold line marks a pair the organisers did not grade (2015 leaves
// most of answers-forums and belief ungraded): the pair is skipped and
// counted as "ungraded". A score outside [0, 5] is rejected with
// ReasonBadScore, an unparsable one with ReasonBadNumber; a line with fewer
// than two columns with ReasonFieldCount; an empty sentence with
// ReasonEmptyText. Input and gold files of different lengths are a
// *FileError wrapping ErrLengthMismatch naming both files.
type STSReader struct {
	base
	lines        *alignedLines
	dataset      string
	idPrefix     string
	langA, langB string
}

// STS scores run from 0 to 5; SICK relatedness from 1 to 5.
const (
	stsMinScore  = 0
	stsMaxScore  = 5
	sickMinScore = 1
	sickMaxScore = 5
)

// stsInputName splits the name of an STS input file, STS<year>.input.<set>
// (the year may be absent), into its prefix (STS, STS2016) and its set; ok
// is false for another name.
func stsInputName(name string) (prefix, set string, ok bool) {
	if !strings.HasPrefix(name, "STS") {
		return "", "", false
	}
	i := len("STS")
	for i < len(name) && name[i] >= '0' && name[i] <= '9' {
		i++
	}
	set, found := strings.CutPrefix(name[i:], ".input.")
	if !found || set == "" || strings.Contains(set, "\n") {
		return "", "", false
	}
	return name[:i], set, true
}

// NewSTSReader reads an STS input file and its gold file in lockstep.
func NewSTSReader(input, gold *Input, opts Options) *STSReader {
	r := &STSReader{base: newBase(opts.Limits, input, gold), lines: newAlignedLines(input, gold, opts.Limits)}
	r.langA, r.langB = langsOrDefault(opts, "en")
	r.dataset = opts.Dataset
	if r.dataset == "" {
		r.dataset = stsDataset(input.Name)
	}
	r.idPrefix = "sts:" + r.dataset + ":"
	return r
}

// langsOrDefault returns Options' languages, each defaulting to lang.
func langsOrDefault(opts Options, lang string) (string, string) {
	a, b := opts.LangA, opts.LangB
	if a == "" {
		a = lang
	}
	if b == "" {
		b = lang
	}
	return a, b
}

// stsDataset derives "<year>/<set>" from an input file's path.
func stsDataset(path string) string {
	name := baseName(path)
	set := strings.TrimSuffix(name, ".txt")
	if _, s, ok := stsInputName(set); ok {
		set = s
	}
	dir := filepath.Base(filepath.Dir(path))
	if dir == "." || dir == string(filepath.Separator) || dir == "" {
		return set
	}
	return dir + "/" + set
}

// STSGoldPath returns the gold file that goes with an STS input file: the
// same directory, with STS.input.<set>.txt named STS.gs.<set>.txt (and
// STS2016.input.<set>.txt named STS2016.gs.<set>.txt). It returns "" when
// the file name does not follow that pattern.
func STSGoldPath(inputPath string) string {
	dir, name := filepath.Split(inputPath)
	prefix, set, ok := stsInputName(name)
	if !ok {
		return ""
	}
	return dir + prefix + ".gs." + set
}

// Next returns the next graded pair.
func (r *STSReader) Next() (Example, error) {
	for {
		li, lg, si, _, err := r.lines.next()
		if err != nil {
			return r.rejected(err)
		}
		r.record()
		gold := bytes.TrimSpace(lg)
		if len(gold) == 0 {
			r.skip("ungraded")
			continue
		}
		if !checkUTF8(li) || !checkUTF8(lg) {
			return r.reject(si, ReasonBadUTF8, "", joinTab(li, lg))
		}
		cols := strings.Split(string(li), "\t")
		if len(cols) < 2 {
			return r.reject(si, ReasonFieldCount, fmt.Sprintf("%d column(s), want s1<TAB>s2", len(cols)), joinTab(li, lg))
		}
		score, reason, detail := stsParseScore(string(gold), stsMinScore, stsMaxScore)
		if reason != "" {
			return r.reject(si, reason, "gold "+detail, joinTab(li, lg))
		}
		a, b := strings.TrimSpace(cols[0]), strings.TrimSpace(cols[1])
		if a == "" || b == "" {
			return r.reject(si, ReasonEmptyText, "empty sentence", joinTab(li, lg))
		}
		id := r.idPrefix + strconv.FormatInt(si.Line, 10)
		e := Example{
			ID: id, Corpus: "sts", Dataset: r.dataset, A: a, B: b, LangA: r.langA, LangB: r.langB,
			Label: score, HasLabel: true, Group: id, Source: si,
		}
		for i, c := range cols[2:] {
			e.SetMeta("source"+strconv.Itoa(i+1), strings.TrimSpace(c))
		}
		return r.emit(e)
	}
}

// stsParseScore parses a gold score and checks it lies in [lo, hi]. On failure
// it returns the reason and a detail for the reject.
func stsParseScore(s string, lo, hi float64) (float64, Reason, string) {
	s = strings.TrimSpace(s)
	v, err := strconv.ParseFloat(s, 64)
	if err != nil || math.IsInf(v, 0) || math.IsNaN(v) {
		return 0, ReasonBadNumber, fmt.Sprintf("score %q is not a number", s)
	}
	if v < lo || v > hi {
		return 0, ReasonBadScore, fmt.Sprintf("score %g outside [%g, %g]", v, lo, hi)
	}
	return v, "", ""
}

// STS Benchmark (Cer et al. 2017): sts-train.csv, sts-dev.csv and
// sts-test.csv, tab-separated with no header, one pair a line as
// genre<TAB>filename<TAB>year<TAB>id<TAB>score<TAB>s1<TAB>s2, some lines
// followed by two more columns naming the sentences' sources. Despite the
// .csv name, fields are split on tabs only and never CSV-unquoted: sentences
// hold '"' freely (one may start with a quote and never close it).
//
// Mapping to Example:
//   - A: s1; B: s2 (trimmed). LangA, LangB: "en", or Options.
//   - Label: the score, 0 to 5; HasLabel is true.
//   - Dataset: "stsb/<split>", the split from the file name (sts-train.csv
//     gives "stsb/train"), or Options.Dataset.
//   - ID and Group: "stsb:<split>:<line>", the split being the dataset
//     without its "stsb/" prefix.
//   - Meta: "genre" (main-news, main-captions, main-forum), "filename" (the
//     original STS set, such as MSRvid), "year" (such as 2012test), "sid"
//     (the pair's id within that set), and "source1", "source2", ... for
//     the columns after s2 where a line has them.
//
// A line with fewer than seven columns is rejected with ReasonFieldCount; a
// score that is not a number with ReasonBadNumber, one outside [0, 5] with
// ReasonBadScore; an empty sentence with ReasonEmptyText.
type STSBReader struct {
	base
	lines        *lineReader
	dataset      string
	idPrefix     string
	langA, langB string
}

// NewSTSBReader reads one STS Benchmark file.
func NewSTSBReader(in *Input, opts Options) *STSBReader {
	r := &STSBReader{base: newBase(opts.Limits, in), lines: newLineReader(in, opts.Limits)}
	r.langA, r.langB = langsOrDefault(opts, "en")
	r.dataset = opts.Dataset
	if r.dataset == "" {
		r.dataset = "stsb/" + stsbSplit(in.Name)
	}
	r.idPrefix = "stsb:" + strings.TrimPrefix(r.dataset, "stsb/") + ":"
	return r
}

// stsbSplit derives the split from a file name: sts-train.csv gives train.
func stsbSplit(path string) string {
	name := baseName(path)
	name = strings.TrimSuffix(strings.TrimSuffix(name, ".csv"), ".tsv")
	return strings.TrimPrefix(name, "sts-")
}

// Next returns the next pair.
func (r *STSBReader) Next() (Example, error) {
	line, src, err := r.lines.next()
	if err != nil {
		return r.rejected(err)
	}
	r.record()
	if !checkUTF8(line) {
		return r.reject(src, ReasonBadUTF8, "", line)
	}
	cols := strings.Split(string(line), "\t")
	if len(cols) < 7 {
		return r.reject(src, ReasonFieldCount, fmt.Sprintf("%d column(s), want genre, filename, year, id, score, s1, s2", len(cols)), line)
	}
	score, reason, detail := stsParseScore(cols[4], stsMinScore, stsMaxScore)
	if reason != "" {
		return r.reject(src, reason, detail, line)
	}
	a, b := strings.TrimSpace(cols[5]), strings.TrimSpace(cols[6])
	if a == "" || b == "" {
		return r.reject(src, ReasonEmptyText, "empty sentence", line)
	}
	id := r.idPrefix + strconv.FormatInt(src.Line, 10)
	e := Example{
		ID: id, Corpus: "stsb", Dataset: r.dataset, A: a, B: b, LangA: r.langA, LangB: r.langB,
		Label: score, HasLabel: true, Group: id, Source: src,
		Meta: map[string]string{
			"genre": strings.TrimSpace(cols[0]), "filename": strings.TrimSpace(cols[1]),
			"year": strings.TrimSpace(cols[2]), "sid": strings.TrimSpace(cols[3]),
		},
	}
	for i, c := range cols[7:] {
		e.SetMeta("source"+strconv.Itoa(i+1), strings.TrimSpace(c))
	}
	return r.emit(e)
}

// SICK (Marelli et al. 2014, SemEval 2014 task 1): SICK_train.txt,
// SICK_trial.txt, SICK_test_annotated.txt, tab-separated with the header
// pair_ID<TAB>sentence_A<TAB>sentence_B<TAB>relatedness_score<TAB>entailment_judgment.
// Columns are found by their names in the header, so the full SICK.txt
// release (whose entailment column is entailment_label) reads too. A
// missing header (or one without pair_ID, sentence_A, sentence_B and
// relatedness_score) is a *FileError wrapping ErrFormat.
//
// Mapping to Example:
//   - A: sentence_A; B: sentence_B (trimmed). LangA, LangB: "en", or
//     Options.
//   - Label: relatedness_score, 1 (unrelated) to 5 (very related);
//     HasLabel is true.
//   - Dataset: "sick/<split>", the split from the file name
//     (SICK_train.txt gives "sick/train", SICK_test_annotated.txt
//     "sick/test"; "sick" for other names), or Options.Dataset.
//   - ID and Group: "sick:<pair_ID>" (pair ids are unique across SICK's
//     splits).
//   - Meta: "entailment": ENTAILMENT, NEUTRAL or CONTRADICTION, where the
//     file has the column.
//
// The header line is counted as skipped "header". A line whose number of
// columns differs from the header's is rejected with ReasonFieldCount; an
// empty pair_ID with ReasonMissingField; a score that is not a number with
// ReasonBadNumber, one outside [1, 5] with ReasonBadScore; an empty
// sentence with ReasonEmptyText.
type SICKReader struct {
	base
	lines        *lineReader
	dataset      string
	langA, langB string
	// Column indexes, set from the header; ent is -1 without one.
	header                 bool
	ncols                  int
	id, sa, sb, score, ent int
	err                    error
}

// NewSICKReader reads one SICK file.
func NewSICKReader(in *Input, opts Options) *SICKReader {
	r := &SICKReader{base: newBase(opts.Limits, in), lines: newLineReader(in, opts.Limits)}
	r.langA, r.langB = langsOrDefault(opts, "en")
	r.dataset = opts.Dataset
	if r.dataset == "" {
		r.dataset = sickDataset(in.Name)
	}
	return r
}

// sickDataset derives "sick/<split>" from a file name such as SICK_train.txt.
func sickDataset(path string) string {
	name := strings.ToLower(baseName(path))
	if i := strings.IndexByte(name, '.'); i >= 0 {
		name = name[:i]
	}
	split, ok := strings.CutPrefix(name, "sick_")
	if !ok || split == "" {
		return "sick"
	}
	if i := strings.IndexByte(split, '_'); i > 0 {
		split = split[:i]
	}
	return "sick/" + split
}

// sickHeader reads the header line and finds the columns.
func (r *SICKReader) sickHeader() error {
	line, _, err := r.lines.next()
	switch {
	case err == io.EOF:
		return &FileError{File: r.inputs[0].Name, Err: fmt.Errorf("%w: empty file, want the SICK header (pair_ID, sentence_A, sentence_B, relatedness_score)", ErrFormat)}
	case IsParseError(err):
		return &FileError{File: r.inputs[0].Name, Err: fmt.Errorf("%w: first line is not a SICK header: %v", ErrFormat, err)}
	case err != nil:
		return err
	}
	r.record()
	r.skip("header")
	cols := strings.Split(string(line), "\t")
	r.ncols = len(cols)
	r.id, r.sa, r.sb, r.score, r.ent = -1, -1, -1, -1, -1
	for i, c := range cols {
		switch strings.TrimSpace(c) {
		case "pair_ID":
			r.id = i
		case "sentence_A":
			r.sa = i
		case "sentence_B":
			r.sb = i
		case "relatedness_score":
			r.score = i
		case "entailment_judgment", "entailment_label":
			r.ent = i
		}
	}
	if r.id < 0 || r.sa < 0 || r.sb < 0 || r.score < 0 {
		first := line
		if len(first) > 80 {
			first = first[:80]
		}
		return &FileError{File: r.inputs[0].Name, Err: fmt.Errorf("%w: first line %q is not a SICK header (pair_ID, sentence_A, sentence_B, relatedness_score)", ErrFormat, first)}
	}
	r.header = true
	return nil
}

// Next returns the next pair.
func (r *SICKReader) Next() (Example, error) {
	if r.err != nil {
		return Example{}, r.err
	}
	if !r.header {
		if err := r.sickHeader(); err != nil {
			r.err = err
			return Example{}, err
		}
	}
	line, src, err := r.lines.next()
	if err != nil {
		return r.rejected(err)
	}
	r.record()
	if !checkUTF8(line) {
		return r.reject(src, ReasonBadUTF8, "", line)
	}
	cols := strings.Split(string(line), "\t")
	if len(cols) != r.ncols {
		return r.reject(src, ReasonFieldCount, fmt.Sprintf("%d column(s), the header has %d", len(cols), r.ncols), line)
	}
	pid := strings.TrimSpace(cols[r.id])
	if pid == "" {
		return r.reject(src, ReasonMissingField, "empty pair_ID", line)
	}
	score, reason, detail := stsParseScore(cols[r.score], sickMinScore, sickMaxScore)
	if reason != "" {
		return r.reject(src, reason, "relatedness "+detail, line)
	}
	a, b := strings.TrimSpace(cols[r.sa]), strings.TrimSpace(cols[r.sb])
	if a == "" || b == "" {
		return r.reject(src, ReasonEmptyText, "empty sentence", line)
	}
	id := "sick:" + pid
	e := Example{
		ID: id, Corpus: "sick", Dataset: r.dataset, A: a, B: b, LangA: r.langA, LangB: r.langB,
		Label: score, HasLabel: true, Group: id, Source: src,
	}
	if r.ent >= 0 {
		e.SetMeta("entailment", strings.TrimSpace(cols[r.ent]))
	}
	return r.emit(e)
}

// stsFormats returns the formats this file reads; formatList lists it.
func stsFormats() (fs []Format) {
	fs = append(fs, Format{
		Name: "sts", Corpus: "sts", Files: []string{"input", "gold"},
		Summary: "SemEval STS 2012-2017: STS.input.<set>.txt (s1<TAB>s2) with STS.gs.<set>.txt (gold 0-5)",
		Mapping: "A, B: s1, s2; Label: the gold score 0-5 (blank gold: skipped as ungraded); Dataset: <year dir>/<set> (2014/deft-forum); Group = ID = sts:<dataset>:<line>; Meta source1, source2: extra columns (2016)",
		New: func(in []*Input, o Options) (Reader, error) {
			return NewSTSReader(in[0], in[1], o), nil
		},
		Eval: Eval{Task: TaskSimilarity, Order: 1, Split: stsSplit},
	})
	fs = append(fs, Format{
		Name: "stsb", Corpus: "stsb", Files: []string{"tsv"},
		Summary: "STS Benchmark: sts-<split>.csv, tab-separated genre, filename, year, id, score, s1, s2 [, sources]",
		Mapping: "A, B: s1, s2; Label: the score 0-5; Dataset: stsb/<split>; Group = ID = stsb:<split>:<line>; Meta genre, filename, year, sid, source1, source2",
		New: func(in []*Input, o Options) (Reader, error) {
			return NewSTSBReader(in[0], o), nil
		},
		Eval: Eval{Task: TaskSimilarity, Order: 2, Split: namedSplit},
	})
	fs = append(fs, Format{
		Name: "sick", Corpus: "sick", Files: []string{"tsv"},
		Summary: "SICK 2014: SICK_<split>.txt, tab-separated with a header pair_ID, sentence_A, sentence_B, relatedness_score, entailment_judgment",
		Mapping: "A, B: sentence_A, sentence_B; Label: relatedness 1-5; Dataset: sick/<split>; Group = ID = sick:<pair_ID>; Meta entailment",
		New: func(in []*Input, o Options) (Reader, error) {
			return NewSICKReader(in[0], o), nil
		},
		Eval: Eval{Task: TaskSimilarity, Order: 3, Split: namedSplit},
	})
	return fs
}
