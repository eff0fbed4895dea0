package corpora

import (
	"bytes"
	"fmt"
	"io"
	"strings"
)

// Microsoft Research Paraphrase Corpus (MSRP, Dolan and Brockett 2005):
// msr_paraphrase_train.txt and msr_paraphrase_test.txt, tab-separated with
// the header
//
//	Quality	#1 ID	#2 ID	#1 String	#2 String
//
// then one sentence pair a line. The release's files are UTF-8 with a
// byte-order mark before the header and CRLF line ends; both are removed.
// Sentences are untokenised and hold '"' freely (one may open a quote and
// never close it), so fields are split on tabs only and never CSV-unquoted.
// GLUE's MRPC files have the same header and read too.
//
// Mapping to Example:
//   - A: #1 String; B: #2 String, trimmed of surrounding white space and
//     otherwise verbatim (quotes included). LangA, LangB: "en", or Options.
//   - Label: Quality, 1 where the annotators judged the two sentences
//     paraphrases, 0 where not; HasLabel is true.
//   - ID: "msrp:<#1 ID>-<#2 ID>", the corpus's own sentence ids: the same
//     whatever the order of the rows or the file they come in (GLUE's
//     MRPC, for one, re-splits the train file into train and dev), and
//     unique, since no pair of sentences occurs twice in the release.
//   - Group: "msrp:s" + the smaller of #1 ID and #2 ID, compared as
//     numbers. A sentence takes part in up to four pairs (308 of the train
//     file's 7,817 sentences in more than one); as with Quora, grouping by
//     the smaller id keeps most of a sentence's pairs on one side of a
//     split, approximating the connected components of the sentence graph,
//     which a streaming reader cannot compute (201 sentences of the train
//     file have pairs in two groups).
//   - Dataset: "msrp/<split>", the release's split from the file name
//     (msr_paraphrase_train.txt gives "msrp/train"); "msrp" for other
//     names; or Options.Dataset. MSRP is an evaluation set: an extraction
//     keeps its official split (its Eval.Split: msrp/train is train,
//     msrp/test test) and every pair, without deduplication.
//   - Meta: "id1", "id2": #1 ID and #2 ID.
//
// A file whose first line is not the header (the columns may come in any
// order) fails with a *FileError wrapping ErrFormat. The header is counted
// as a skipped record ("header").
//
// Rejected records: invalid UTF-8 (ReasonBadUTF8); a number of fields other
// than the header's, a blank line included (ReasonFieldCount); a Quality
// other than 0 or 1, or a sentence id that is not a whole number
// (ReasonBadNumber); an empty sentence id (ReasonMissingField); an empty or
// blank sentence (ReasonEmptyText); a line over Limits.MaxLineBytes
// (ReasonLineTooLong).
type MSRPReader struct {
	base
	lines        *lineReader
	dataset      string
	langA, langB string
	fields       [][]byte
	// Column indexes, set from the header.
	header bool
	ncols  int
	col    [numMSRPCols]int
	err    error // a file-level error, returned again by every later call
}

// The columns of an MSRP file.
const (
	mcQuality = iota
	mcID1
	mcID2
	mcString1
	mcString2
	numMSRPCols
)

// msrpColumns returns the names of the columns, by index.
func msrpColumns() [numMSRPCols]string {
	return [numMSRPCols]string{"Quality", "#1 ID", "#2 ID", "#1 String", "#2 String"}
}

// NewMSRPReader reads one MSRP file.
func NewMSRPReader(in *Input, opts Options) *MSRPReader {
	r := &MSRPReader{base: newBase(opts.Limits, in), lines: newLineReader(in, opts.Limits)}
	r.langA, r.langB = langsOrDefault(opts, "en")
	r.dataset = opts.Dataset
	if r.dataset == "" {
		r.dataset = msrpDataset(in.Name)
	}
	return r
}

// msrpDataset derives "msrp/<split>" from a file name such as
// msr_paraphrase_train.txt.
func msrpDataset(path string) string {
	name := strings.ToLower(baseName(path))
	if i := strings.IndexByte(name, '.'); i >= 0 {
		name = name[:i]
	}
	split, ok := strings.CutPrefix(name, "msr_paraphrase_")
	if !ok || split == "" {
		return "msrp"
	}
	return "msrp/" + split
}

// msrpHeader reads the header line and finds the columns.
func (r *MSRPReader) msrpHeader() error {
	name := r.inputs[0].Name
	cols := msrpColumns()
	want := strings.Join(cols[:], "\t")
	line, _, err := r.lines.next()
	switch {
	case err == io.EOF:
		return &FileError{File: name, Err: fmt.Errorf("%w: empty file, want the MSRP header %q", ErrFormat, want)}
	case IsParseError(err):
		return &FileError{File: name, Err: fmt.Errorf("%w: first line is not the MSRP header %q: %v", ErrFormat, want, err)}
	case err != nil:
		return err
	}
	r.fields = splitTabs(r.fields[:0], line)
	r.ncols = len(r.fields)
	for i := range r.col {
		r.col[i] = -1
	}
	for i, f := range r.fields {
		for c, name := range cols {
			if string(bytes.TrimSpace(f)) == name && r.col[c] < 0 {
				r.col[c] = i
			}
		}
	}
	for _, c := range r.col {
		if c < 0 {
			return &FileError{File: name, Err: fmt.Errorf("%w: first line is not the MSRP header %q: %q", ErrFormat, want, line[:min(len(line), 200)])}
		}
	}
	r.record()
	r.skip("header")
	r.header = true
	return nil
}

// Next returns the next sentence pair.
func (r *MSRPReader) Next() (Example, error) {
	if r.err != nil {
		return Example{}, r.err
	}
	if !r.header {
		if err := r.msrpHeader(); err != nil {
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
	r.fields = splitTabs(r.fields[:0], line)
	if len(r.fields) != r.ncols {
		return r.reject(src, ReasonFieldCount, fmt.Sprintf("%d field(s), the header has %d", len(r.fields), r.ncols), line)
	}
	var label float64
	switch q := r.fields[r.col[mcQuality]]; string(q) {
	case "0":
	case "1":
		label = 1
	default:
		return r.reject(src, ReasonBadNumber, fmt.Sprintf("Quality %q is not 0 or 1", q), line)
	}
	id1, id2 := r.fields[r.col[mcID1]], r.fields[r.col[mcID2]]
	for i, id := range [...][]byte{id1, id2} {
		if len(id) == 0 {
			return r.reject(src, ReasonMissingField, "empty "+msrpColumns()[mcID1+i], line)
		}
		if !isDigits(id) {
			return r.reject(src, ReasonBadNumber, fmt.Sprintf("%s %q is not a whole number", msrpColumns()[mcID1+i], id), line)
		}
	}
	a, b := bytes.TrimSpace(r.fields[r.col[mcString1]]), bytes.TrimSpace(r.fields[r.col[mcString2]])
	if len(a) == 0 || len(b) == 0 {
		return r.reject(src, ReasonEmptyText, "empty sentence", line)
	}
	group := id1
	if lessDigits(id2, id1) {
		group = id2
	}
	s1, s2 := string(id1), string(id2)
	return r.emit(Example{
		ID: "msrp:" + s1 + "-" + s2, Corpus: "msrp", Dataset: r.dataset,
		A: string(a), B: string(b), LangA: r.langA, LangB: r.langB,
		Label: label, HasLabel: true, Group: "msrp:s" + string(group),
		Meta:   map[string]string{"id1": s1, "id2": s2},
		Source: src,
	})
}

// splitTabs appends the tab-separated fields of line to dst. The fields
// alias line.
func splitTabs(dst [][]byte, line []byte) [][]byte {
	for {
		i := bytes.IndexByte(line, '\t')
		if i < 0 {
			return append(dst, line)
		}
		dst = append(dst, line[:i])
		line = line[i+1:]
	}
}

// msrpFormats returns the formats this file reads; formatList lists it.
func msrpFormats() (fs []Format) {
	fs = append(fs, Format{
		Name: "msrp", Corpus: "msrp", Files: []string{"tsv"},
		Summary: "Microsoft Research Paraphrase Corpus: msr_paraphrase_<split>.txt, tab-separated with a header Quality, #1 ID, #2 ID, #1 String, #2 String",
		Mapping: `A, B: #1 String, #2 String; Label: Quality (1 paraphrase, 0 not); ID: "msrp:"+#1 ID+"-"+#2 ID; Group: "msrp:s"+min(#1 ID, #2 ID); Dataset: msrp/<split>; LangA, LangB: en; Meta: id1, id2`,
		New: func(in []*Input, o Options) (Reader, error) {
			return NewMSRPReader(in[0], o), nil
		},
		Eval: Eval{Task: TaskClassification, Order: 3, Split: splitInDataset},
	})
	return fs
}
