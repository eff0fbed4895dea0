package corpora

import (
	"fmt"
	"strings"
)

// Europarl parallel text: two files aligned by line, one sentence a line,
// such as europarl-v7.fr-en.en and europarl-v7.fr-en.fr, raw or tokenised.
//
// Mapping to Example:
//   - A: the line of the first file; B: the same line of the second file.
//   - LangA, LangB: the language codes, from Options or from the file names
//     (the last dot-separated part, "en" and "fr").
//   - Dataset: the language pair as in the file names ("fr-en"), or
//     Options.Dataset.
//   - Label: none. Group: the ID (each sentence pair stands alone).
//   - ID: "europarl:<dataset>:<line>".
//
// A pair where either side is empty (Europarl marks speaker turns with
// empty lines) is skipped and counted as "empty_pair". A difference in the
// number of lines is a *FileError wrapping ErrLengthMismatch naming both
// files.
type EuroparlReader struct {
	base
	lines        *alignedLines
	dataset      string
	langA, langB string
}

// NewEuroparlReader reads the aligned files a and b.
func NewEuroparlReader(a, b *Input, opts Options) *EuroparlReader {
	r := &EuroparlReader{base: newBase(opts.Limits, a, b), lines: newAlignedLines(a, b, opts.Limits)}
	r.langA, r.langB = opts.LangA, opts.LangB
	if r.langA == "" {
		r.langA = langSuffix(a.Name)
	}
	if r.langB == "" {
		r.langB = langSuffix(b.Name)
	}
	r.dataset = opts.Dataset
	if r.dataset == "" {
		if pair, _, _ := pairInPath(a.Name); pair != "" {
			r.dataset = pair
		} else {
			r.dataset = r.langA + "-" + r.langB
		}
	}
	return r
}

// langSuffix guesses a language code from a name such as
// europarl-v7.fr-en.en: the last dot-separated part when it is two letters.
func langSuffix(path string) string {
	name := baseName(path)
	if i := strings.LastIndexByte(name, '.'); i >= 0 && len(name)-i-1 == 2 {
		return name[i+1:]
	}
	if len(name) == 2 {
		return name
	}
	return ""
}

// Next returns the next sentence pair.
func (r *EuroparlReader) Next() (Example, error) {
	for {
		a, b, _, sa, err := r.textPair(r.lines)
		if err != nil {
			return Example{}, err
		}
		if a == "" || b == "" {
			r.skip("empty_pair")
			continue
		}
		return r.emit(Example{
			ID: fmt.Sprintf("europarl:%s:%d", r.dataset, sa.Line), Corpus: "europarl", Dataset: r.dataset,
			A: a, B: b, LangA: r.langA, LangB: r.langB,
			Group: fmt.Sprintf("europarl:%s:%d", r.dataset, sa.Line), Source: sa,
		})
	}
}

// joinTab joins two raw lines with a tab, for the rejects file.
func joinTab(a, b []byte) []byte {
	out := make([]byte, 0, len(a)+1+len(b))
	out = append(out, a...)
	out = append(out, '\t')
	return append(out, b...)
}

// europarlFormats returns the formats this file reads; formatList lists it.
func europarlFormats() (fs []Format) {
	fs = append(fs, Format{
		Name: "europarl", Corpus: "europarl", Files: []string{"a", "b"},
		Summary: "Europarl parallel text: two files aligned by line",
		Mapping: "A, B: the same line of each file; LangA, LangB: from the file names; Dataset: the language pair (fr-en); Group: the pair; no Label",
		New: func(in []*Input, o Options) (Reader, error) {
			return NewEuroparlReader(in[0], in[1], o), nil
		},
	})
	return fs
}
