package corpora

import (
	"bytes"
	"fmt"
	"strings"
)

// Stanford Sentiment Treebank, binary (SST-2), in the two forms evaluation
// code reads it: SentEval's sentiment-train, sentiment-dev and
// sentiment-test (no header) and GLUE's SST-2 train.tsv and dev.tsv (the
// same lines under the header "sentence<TAB>label"). Each line is
// "sentence<TAB>label", label 0 (negative) or 1 (positive); the sentences
// are lowercased PTB tokens and end with a space before the tab. A first
// line whose fields are "sentence" and "label" is the header, counted as
// skipped ("header"); blank lines are skipped ("blank_line"). Fields are
// split on tabs only.
//
// Mapping to Example:
//   - A: sentence, trimmed of surrounding white space; B: "" (a single
//     text: the extraction checks A alone). LangA, LangB: "en", or Options.
//   - Label: 0 or 1; HasLabel is true.
//   - ID and Group: "sst:<split>:<line>".
//   - Dataset: "sst/<split>", the split the file name holds
//     (sentiment-dev, SST-2-dev.tsv and GLUE's dev.tsv give "sst/dev";
//     "sst/test" for a name without one); or Options.Dataset.
//
// Rejected records: invalid UTF-8 (ReasonBadUTF8); a number of fields
// other than 2 (ReasonFieldCount); a label other than 0 or 1
// (ReasonBadNumber); an empty sentence (ReasonEmptyText); a line over
// Limits.MaxLineBytes (ReasonLineTooLong).
type SSTReader struct {
	base
	lines        *lineReader
	dataset      string
	split        string
	langA, langB string
	fields       [][]byte
	first        bool // the first line has been read
}

// NewSSTReader reads one SST-2 file.
func NewSSTReader(in *Input, opts Options) *SSTReader {
	r := &SSTReader{base: newBase(opts.Limits, in), lines: newLineReader(in, opts.Limits)}
	r.langA, r.langB = langsOrDefault(opts, "en")
	r.split = splitName(baseName(in.Name), "test")
	r.dataset = opts.Dataset
	if r.dataset == "" {
		r.dataset = "sst/" + r.split
	}
	return r
}

// Next returns the next sentence.
func (r *SSTReader) Next() (Example, error) {
	for {
		line, src, err := r.textLine(r.lines, "")
		if err != nil {
			return Example{}, err
		}
		r.fields = splitTabs(r.fields[:0], line)
		if !r.first {
			r.first = true
			if len(r.fields) == 2 && string(bytes.TrimSpace(r.fields[0])) == "sentence" && string(bytes.TrimSpace(r.fields[1])) == "label" {
				r.skip("header")
				continue
			}
		}
		if len(r.fields) != 2 {
			return r.reject(src, ReasonFieldCount, fmt.Sprintf("%d field(s), want 2 (sentence, label)", len(r.fields)), line)
		}
		var label float64
		switch l := string(r.fields[1]); l {
		case "0":
		case "1":
			label = 1
		default:
			return r.reject(src, ReasonBadNumber, fmt.Sprintf("label %q is not 0 or 1", l), line)
		}
		a := strings.TrimSpace(string(r.fields[0]))
		if a == "" {
			return r.reject(src, ReasonEmptyText, "empty sentence", line)
		}
		id := fmt.Sprintf("sst:%s:%d", r.split, src.Line)
		return r.emit(Example{ID: id, Corpus: "sst", Dataset: r.dataset, A: a, LangA: r.langA, LangB: r.langB,
			Label: label, HasLabel: true, Group: id, Source: src})
	}
}

// MRReader reads Pang and Lee's sentence polarity data v1.0 (MR):
// rt-polarity.pos and rt-polarity.neg, one snippet a line, the file's
// extension giving the label. The release is not UTF-8: unless
// Options.Encoding says otherwise the reader decodes Latin-1, as SentEval
// does (each byte 0x80-0xFF is the code point U+0080-U+00FF, so 0x85
// becomes U+0085 inside the text), and lines are split on '\n' bytes only,
// so U+0085 (NEL) is never a line break. Blank lines are skipped
// ("blank_line"). MR has no split (SentEval uses 10-fold cross-validation):
// it is one test set.
//
// Mapping to Example:
//   - A: the snippet, trimmed of surrounding white space as Python's
//     str.strip does (U+0085 at either end included); B: "" (a single
//     text). LangA, LangB: "en", or Options.
//   - Label: 1 for rt-polarity.pos, 0 for .neg; HasLabel is true. A file
//     whose name ends in neither fails with a *FileError wrapping
//     ErrFormat.
//   - ID and Group: "mr:<pos|neg>:<line>".
//   - Dataset: "mr", or Options.Dataset.
//
// Rejected records: invalid UTF-8 (ReasonBadUTF8, only with
// Options.Encoding "utf-8"); a line over Limits.MaxLineBytes
// (ReasonLineTooLong).
type MRReader struct {
	base
	lines        *lineReader
	dataset      string
	polarity     string
	label        float64
	langA, langB string
	err          error
}

// NewMRReader reads one MR file. in must already be set to its encoding
// (the format's New sets Latin-1 by default).
func NewMRReader(in *Input, opts Options) *MRReader {
	r := &MRReader{base: newBase(opts.Limits, in), lines: newLineReader(in, opts.Limits)}
	r.langA, r.langB = langsOrDefault(opts, "en")
	r.dataset = opts.Dataset
	if r.dataset == "" {
		r.dataset = "mr"
	}
	switch name := strings.ToLower(baseName(in.Name)); {
	case strings.HasSuffix(name, ".pos"):
		r.polarity, r.label = "pos", 1
	case strings.HasSuffix(name, ".neg"):
		r.polarity = "neg"
	default:
		r.err = &FileError{File: in.Name, Err: fmt.Errorf("%w: an MR file is named *.pos or *.neg (rt-polarity.pos), which gives its label", ErrFormat)}
	}
	return r
}

// Next returns the next snippet.
func (r *MRReader) Next() (Example, error) {
	if r.err != nil {
		return Example{}, r.err
	}
	line, src, err := r.textLine(r.lines, "")
	if err != nil {
		return Example{}, err
	}
	id := fmt.Sprintf("mr:%s:%d", r.polarity, src.Line)
	return r.emit(Example{ID: id, Corpus: "mr", Dataset: r.dataset, A: strings.TrimSpace(string(line)), LangA: r.langA, LangB: r.langB,
		Label: r.label, HasLabel: true, Group: id, Source: src})
}

// mrSSTFormats returns the formats this file reads; formatList lists it.
func mrSSTFormats() (fs []Format) {
	fs = append(fs, Format{
		Name: "sst", Corpus: "sst", Files: []string{"tsv"},
		Summary: "SST-2 binary sentiment: SentEval's sentiment-<split> or GLUE's <split>.tsv (header sentence, label)",
		Mapping: `A: sentence; B: empty; Label: 0 negative, 1 positive; ID, Group: "sst:<split>:<line>"; Dataset: sst/<split>`,
		New: func(in []*Input, o Options) (Reader, error) {
			return NewSSTReader(in[0], o), nil
		},
		Eval: Eval{Task: TaskClassification, Order: 1, Split: splitInDataset, SingleText: true},
	}, Format{
		Name: "mr", Corpus: "mr", Files: []string{"pos|neg"},
		Summary: "MR sentence polarity v1.0: rt-polarity.pos / rt-polarity.neg, one snippet a line, Latin-1 by default",
		Mapping: `A: snippet; B: empty; Label: 1 for .pos, 0 for .neg; ID, Group: "mr:<pos|neg>:<line>"; Dataset: mr`,
		New: func(in []*Input, o Options) (Reader, error) {
			if o.Encoding == "" {
				if err := in[0].SetEncoding(EncodingLatin1); err != nil {
					return nil, err
				}
			}
			return NewMRReader(in[0], o), nil
		},
		Eval: Eval{Task: TaskClassification, Order: 2, Split: wholeSet, SingleText: true},
	})
	return fs
}
