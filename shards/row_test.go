package shards_test

import (
	"errors"
	"reflect"
	"testing"

	"github.com/parastream/parastream/corpora"
	"github.com/parastream/parastream/shards"
)

func TestRowExampleRoundTrip(t *testing.T) {
	tests := []struct {
		name string
		e    corpora.Example
	}{
		{"empty", corpora.Example{}},
		{"sts pair", corpora.Example{
			ID: "2014/deft-forum:12", Corpus: "sts", Dataset: "2014/deft-forum",
			A: "A man is playing a guitar.", B: "A person plays guitar.",
			LangA: "en", LangB: "en", Label: 4.2, HasLabel: true,
			Source: corpora.Source{File: "STS.input.deft-forum.txt", Line: 12, Offset: 1830},
		}},
		{"zero label", corpora.Example{ID: "q1", Corpus: "quora", Label: 0, HasLabel: true, Group: "q:17"}},
		{"moses", corpora.Example{
			ID: "fr-en:3", Corpus: "moses", Dataset: "fr-en", A: "maison", B: "house", LangA: "fr", LangB: "en",
			Scores: []float64{0.25, 0.5, -1e-300, 3},
			Meta:   map[string]string{"alignment": "0-0", "counts": "4 4 4"},
			Source: corpora.Source{File: "phrase-table.gz", Offset: 1 << 40},
		}},
		{"unicode", corpora.Example{ID: "r:1", Corpus: "reddit", A: "naïve café ☕ \t\n\"quoted\"", Group: "t3_abc"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := shards.FromExample(tt.e, "train")
			if r.Split != "train" {
				t.Errorf("Split = %q, want train", r.Split)
			}
			if got := r.Example(); !reflect.DeepEqual(got, tt.e) {
				t.Errorf("round trip:\n got %#v\nwant %#v", got, tt.e)
			}
		})
	}
}

func TestFromExampleLabel(t *testing.T) {
	r := shards.FromExample(corpora.Example{Label: 3, HasLabel: false}, "dev")
	if r.Label != nil {
		t.Errorf("Label = %v for an Example without a label, want nil (NULL)", *r.Label)
	}
	r = shards.FromExample(corpora.Example{Label: 3, HasLabel: true}, "dev")
	if r.Label == nil || *r.Label != 3 {
		t.Errorf("Label = %v, want 3", r.Label)
	}
}

func TestFromExampleCopies(t *testing.T) {
	e := corpora.Example{Scores: []float64{1}, Meta: map[string]string{"k": "v"}}
	r := shards.FromExample(e, "train")
	e.Scores[0] = 2
	e.Meta["k"] = "changed"
	if r.Scores[0] != 1 || r.Meta["k"] != "v" {
		t.Errorf("the row shares memory with the Example: %v %v", r.Scores, r.Meta)
	}
	back := r.Example()
	back.Scores[0] = 3
	back.Meta["k"] = "changed"
	if r.Scores[0] != 1 || r.Meta["k"] != "v" {
		t.Errorf("the Example shares memory with the row: %v %v", r.Scores, r.Meta)
	}
}

func TestRowExampleEmptyListsComeBackNil(t *testing.T) {
	r := shards.Row{Scores: []float64{}, Meta: map[string]string{}}
	e := r.Example()
	if e.Scores != nil || e.Meta != nil {
		t.Errorf("Example() = Scores %#v Meta %#v, want nil", e.Scores, e.Meta)
	}
}

// TestRowThroughShard checks the round trip Example → Row → Parquet → Row →
// Example.
func TestRowThroughShard(t *testing.T) {
	label := 0.0
	examples := []corpora.Example{
		{ID: "a", Corpus: "sick", Dataset: "SICK", A: "x", B: "y", Label: 3.6, HasLabel: true, Source: corpora.Source{File: "SICK.txt", Line: 2}},
		{ID: "b", Corpus: "sick", Dataset: "SICK", A: "x", B: "y", Label: label, HasLabel: true},
		{ID: "c", Corpus: "sick", Meta: map[string]string{"entailment": "NEUTRAL"}, Scores: []float64{1, 2}},
		{ID: "d", Corpus: "sick"},
	}
	rows := make([]shards.Row, len(examples))
	for i, e := range examples {
		rows[i] = shards.FromExample(e, "test")
	}
	root := t.TempDir()
	infos := writeSplit(t, root, "sick", "test", shards.WriterOptions{}, rows)
	got := readFile(t, root+"/"+infos[0].Path)
	if len(got) != len(examples) {
		t.Fatalf("read %d rows, want %d", len(got), len(examples))
	}
	for i, r := range got {
		if r.Split != "test" {
			t.Errorf("row %d: Split = %q", i, r.Split)
		}
		if e := r.Example(); !reflect.DeepEqual(e, examples[i]) {
			t.Errorf("row %d:\n got %#v\nwant %#v", i, e, examples[i])
		}
	}
}

// TestValidateTokens: the token lists' ASCII fast path accepts exactly what
// a check of each token accepts; a rune split across two tokens is invalid.
func TestValidateTokens(t *testing.T) {
	for _, tt := range []struct {
		name   string
		tokens []string
		valid  bool
	}{
		{"none", nil, true},
		{"ascii", []string{"hello", "", "world"}, true},
		{"utf8", []string{"héllo", "世界", "x"}, true},
		{"invalid byte", []string{"ok", "a\xffb"}, false},
		{"split rune", []string{"\xe4\xb8", "\x96"}, false},
		{"late invalid", []string{"ä", "ok", "\xc3"}, false},
	} {
		for _, col := range []string{"context", "tokens_a", "tokens_b"} {
			r := shards.Row{ID: "x", A: "a", B: "b"}
			switch col {
			case "context":
				r.Context = tt.tokens
			case "tokens_a":
				r.TokensA = tt.tokens
			default:
				r.TokensB = tt.tokens
			}
			err := r.Validate()
			var rowErr *shards.RowError
			switch {
			case tt.valid && err != nil:
				t.Errorf("%s in %s: Validate = %v, want nil", tt.name, col, err)
			case !tt.valid && (!errors.As(err, &rowErr) || rowErr.Column != col || !errors.Is(err, shards.ErrInvalidUTF8)):
				t.Errorf("%s in %s: Validate = %v, want ErrInvalidUTF8 in column %s", tt.name, col, err, col)
			}
		}
	}
}
