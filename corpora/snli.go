package corpora

import (
	"encoding/json"
	"fmt"
	"strings"
)

// SNLI 1.0 (Bowman et al. 2015) and MultiNLI 1.0 (Williams et al. 2018),
// in either of the releases' forms: JSON lines (snli_1.0_<split>.jsonl,
// gzipped or not: Input decompresses by the first bytes), one object a
// line with the keys gold_label, sentence1, sentence2, captionID (MultiNLI:
// promptID), pairID and, in MultiNLI, genre; or the tab-separated .txt form
// whose header names the same columns (gold_label, sentence1_binary_parse,
// ..., sentence1, sentence2, captionID, pairID, label1, ...). The form is
// told by the first line that is not blank: '{' opens JSON lines, anything
// else must be the .txt header, or the file fails with a *FileError
// wrapping ErrFormat. Fields of the .txt form are split on tabs only.
//
// Mapping to Example:
//   - A: sentence1 (the premise); B: sentence2 (the hypothesis), trimmed
//     of surrounding white space and otherwise verbatim. LangA, LangB:
//     "en", or Options.
//   - Label: 0 entailment, 1 neutral, 2 contradiction; HasLabel is true.
//     A pair whose gold_label is "-" (the annotators had no majority) is
//     skipped, counted as "no_gold_label", as every NLI evaluation does.
//   - ID: "snli:<pairID>", or "snli:<dataset>:<line>" without a pairID.
//   - Group: captionID (MultiNLI: promptID): the pairs sharing a premise.
//   - Dataset: "<prefix>/<split>" from the file name:
//     snli_1.0_dev.jsonl.gz gives "snli/dev",
//     snli_1.0_train.first1024.jsonl.gz "snli/train",
//     multinli_1.0_dev_matched.jsonl "multinli/dev_matched"; "snli" for
//     other names; or Options.Dataset. The split (its Eval.Split) is
//     the one the name holds: train, dev (dev_matched too) or test.
//   - Meta: "gold_label" (as in the file), "pair_id", "caption_id"
//     (MultiNLI: the promptID), and "genre" where the record has one.
//
// Blank lines are skipped ("blank_line"); the .txt header is counted as
// skipped ("header").
//
// Rejected records: invalid UTF-8 (ReasonBadUTF8); a JSON line that does
// not parse (ReasonBadJSON); a .txt line with a number of fields other
// than the header's (ReasonFieldCount); a gold_label other than the three
// labels and "-" (ReasonBadLabel); an empty sentence (ReasonEmptyText); a
// line over Limits.MaxLineBytes (ReasonLineTooLong).
type SNLIReader struct {
	base
	lines        *lineReader
	dataset      string
	langA, langB string
	// form is 0 before the first line, 'j' for JSON lines, 't' for .txt.
	form   byte
	fields [][]byte
	ncols  int
	col    []int
	err    error
}

// The columns of the .txt form that the reader uses, by index of col.
const (
	snGold = iota
	snS1
	snS2
	snCaption
	snPair
	snGenre
	snPrompt
)

func snliColumns() []string {
	return []string{"gold_label", "sentence1", "sentence2", "captionID", "pairID", "genre", "promptID"}
}

// snliRecord is what the reader takes of a JSON line.
type snliRecord struct {
	GoldLabel string `json:"gold_label"`
	Sentence1 string `json:"sentence1"`
	Sentence2 string `json:"sentence2"`
	CaptionID string `json:"captionID"`
	PromptID  string `json:"promptID"`
	PairID    string `json:"pairID"`
	Genre     string `json:"genre"`
}

// NewSNLIReader reads one SNLI or MultiNLI file.
func NewSNLIReader(in *Input, opts Options) *SNLIReader {
	r := &SNLIReader{base: newBase(opts.Limits, in), lines: newLineReader(in, opts.Limits)}
	r.langA, r.langB = langsOrDefault(opts, "en")
	r.dataset = opts.Dataset
	if r.dataset == "" {
		r.dataset = snliDataset(in.Name)
	}
	return r
}

// snliDataset derives "<prefix>/<split>" from a name such as
// snli_1.0_train.first1024.jsonl.gz.
func snliDataset(path string) string {
	name := strings.ToLower(baseName(path))
	prefix, rest, ok := strings.Cut(name, "_1.0_")
	if !ok || prefix == "" {
		return "snli"
	}
	if i := strings.IndexByte(rest, '.'); i >= 0 {
		rest = rest[:i]
	}
	if rest == "" {
		return prefix
	}
	return prefix + "/" + rest
}

// snliLabel maps a gold label to Label.
func snliLabel(s string) (float64, bool) {
	switch s {
	case "entailment":
		return 0, true
	case "neutral":
		return 1, true
	case "contradiction":
		return 2, true
	}
	return 0, false
}

// Next returns the next labelled pair.
func (r *SNLIReader) Next() (Example, error) {
	if r.err != nil {
		return Example{}, r.err
	}
	for {
		line, src, err := r.textLine(r.lines, "")
		if err != nil {
			return Example{}, err
		}
		if r.form == 0 {
			if line[0] == '{' {
				r.form = 'j'
			} else if err := r.header(line); err != nil {
				r.err = err
				return Example{}, err
			} else {
				continue
			}
		}
		var rec snliRecord
		if r.form == 'j' {
			if err := json.Unmarshal(line, &rec); err != nil {
				return r.reject(src, ReasonBadJSON, err.Error(), line)
			}
		} else {
			r.fields = splitTabs(r.fields[:0], line)
			if len(r.fields) != r.ncols {
				return r.reject(src, ReasonFieldCount, fmt.Sprintf("%d field(s), the header has %d", len(r.fields), r.ncols), line)
			}
			get := func(c int) string {
				if r.col[c] < 0 {
					return ""
				}
				return string(r.fields[r.col[c]])
			}
			rec = snliRecord{GoldLabel: get(snGold), Sentence1: get(snS1), Sentence2: get(snS2), CaptionID: get(snCaption),
				PromptID: get(snPrompt), PairID: get(snPair), Genre: get(snGenre)}
		}
		if rec.GoldLabel == "-" {
			r.skip("no_gold_label")
			continue
		}
		label, ok := snliLabel(rec.GoldLabel)
		if !ok {
			return r.reject(src, ReasonBadLabel, fmt.Sprintf("gold_label %q is not entailment, neutral, contradiction or -", rec.GoldLabel), line)
		}
		a, b := strings.TrimSpace(rec.Sentence1), strings.TrimSpace(rec.Sentence2)
		if a == "" || b == "" {
			return r.reject(src, ReasonEmptyText, "empty sentence", line)
		}
		caption := rec.CaptionID
		if caption == "" {
			caption = rec.PromptID
		}
		id := "snli:" + rec.PairID
		if rec.PairID == "" {
			id = fmt.Sprintf("snli:%s:%d", r.dataset, src.Line)
		}
		group := caption
		if group == "" {
			group = id
		}
		e := Example{ID: id, Corpus: "snli", Dataset: r.dataset, A: a, B: b, LangA: r.langA, LangB: r.langB,
			Label: label, HasLabel: true, Group: group, Source: src,
			Meta: map[string]string{"gold_label": rec.GoldLabel, "pair_id": rec.PairID, "caption_id": caption}}
		if rec.Genre != "" {
			e.Meta["genre"] = rec.Genre
		}
		return r.emit(e)
	}
}

// header reads the .txt form's header.
func (r *SNLIReader) header(line []byte) error {
	r.fields = splitTabs(r.fields[:0], line)
	r.ncols = len(r.fields)
	r.col = findColumns(r.fields, snliColumns())
	if r.col[snGold] < 0 || r.col[snS1] < 0 || r.col[snS2] < 0 {
		return &FileError{File: r.inputs[0].Name, Err: fmt.Errorf("%w: the first line is neither a JSON object nor the SNLI header (gold_label, sentence1, sentence2, ...): %q",
			ErrFormat, line[:min(len(line), 200)])}
	}
	r.form = 't'
	r.skip("header")
	return nil
}

// snliFormats returns the formats this file reads; formatList lists it.
func snliFormats() (fs []Format) {
	fs = append(fs, Format{
		Name: "snli", Corpus: "snli", Files: []string{"jsonl"},
		Summary: "SNLI 1.0 / MultiNLI 1.0: the release's JSON lines (snli_1.0_<split>.jsonl[.gz]) or its tab-separated .txt with a header",
		Mapping: `A, B: sentence1, sentence2; Label: 0 entailment, 1 neutral, 2 contradiction (gold_label "-" skipped); ID: "snli:"+pairID; Group: captionID; Dataset: <snli|multinli>/<split>; Meta: gold_label, pair_id, caption_id, genre`,
		New: func(in []*Input, o Options) (Reader, error) {
			return NewSNLIReader(in[0], o), nil
		},
		Eval: Eval{Task: TaskClassification, Order: 4, Split: splitInDataset},
	})
	return fs
}
