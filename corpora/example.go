package corpora

import (
	"fmt"
	"sort"
	"strings"
)

// Example is one pair of texts with its provenance: the record every reader
// yields and every later stage consumes. What A, B, Label, Group and Dataset
// mean depends on the corpus; each reader's documentation says so.
type Example struct {
	// ID is stable across runs over the same input: the corpus's own id where
	// it has one (a Reddit comment, a Quora pair), otherwise the dataset and
	// the line number.
	ID string
	// Corpus names the corpus family: reddit, europarl, moses, ppdb,
	// simpwiki, turkcorpus, quora, msrp, sts, stsb, sick, snli, sst, mr,
	// semeval-cqa, trecqa, wikiqa, scws.
	Corpus string
	// Dataset names a sub-set, such as "2014/deft-forum" or "fr-en".
	Dataset string
	// A and B are the two texts. Single-text records (a Reddit comment
	// before pairing) leave B empty.
	A, B string
	// Context holds earlier turns of a conversation, oldest first (Reddit
	// pairs keep up to N ancestors of the parent comment).
	Context []string
	// LangA and LangB are ISO 639-1 codes of A and B.
	LangA, LangB string
	// Label is the gold score or paraphrase label; see HasLabel.
	Label float64
	// HasLabel reports whether Label carries a value for this record.
	HasLabel bool
	// Group keeps related records on one side of a split (a Reddit thread,
	// a Quora question).
	Group string
	// Scores holds a record's numeric scores where the format has several
	// (Moses phrase-table scores, PPDB human ratings).
	Scores []float64
	// Meta holds the format's other fields by name (Reddit author and
	// parent_id, Moses alignment, PPDB features). Keys are documented per
	// reader.
	Meta map[string]string
	// Source locates the record in its input.
	Source Source
}

// Source locates a record: the file, the 1-based line where the record
// starts (0 where the format has no lines), and the byte offset of that
// line in the decompressed stream.
type Source struct {
	File   string
	Line   int64
	Offset int64
}

// String formats the location as file:line, or file@offset without a line.
func (s Source) String() string {
	if s.Line > 0 {
		return fmt.Sprintf("%s:%d", s.File, s.Line)
	}
	return fmt.Sprintf("%s@%d", s.File, s.Offset)
}

// SetMeta sets one metadata field, allocating the map on first use.
func (e *Example) SetMeta(key, value string) {
	if e.Meta == nil {
		e.Meta = make(map[string]string)
	}
	e.Meta[key] = value
}

// String renders the example on one line for logs and the demo.
func (e Example) String() string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s [%s/%s] A=%q", e.ID, e.Corpus, e.Dataset, e.A)
	if e.B != "" {
		fmt.Fprintf(&b, " B=%q", e.B)
	}
	if e.HasLabel {
		fmt.Fprintf(&b, " label=%g", e.Label)
	}
	if len(e.Meta) > 0 {
		keys := make([]string, 0, len(e.Meta))
		for k := range e.Meta {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		if len(keys) > 4 {
			keys = keys[:4]
		}
		for _, k := range keys {
			fmt.Fprintf(&b, " %s=%q", k, e.Meta[k])
		}
	}
	return b.String()
}
