package transforms_test

import (
	"testing"

	"github.com/parastream/parastream/shards"
	"github.com/parastream/parastream/transforms"
	"github.com/parastream/parastream/transforms/text"
)

// A single-text record (SST, MR: B empty) passes the length rule on A
// alone; a pair with an empty side is still dropped elsewhere.
func TestPrepareSingleText(t *testing.T) {
	rule := text.LengthRule{MinTokens: 1}
	for _, c := range []struct {
		single bool
		a, b   string
		want   string
	}{
		{true, "a fine film .", "", ""},
		{true, "", "", text.DropTooFewTokens},
		{true, "good", "bad", ""},
		{false, "a fine film .", "", text.DropTooFewTokens},
		{false, "a", "b", ""},
	} {
		cfg := transforms.PrepareConfig{Length: rule, SingleText: c.single, Tokenize: text.TokenizeOptions{Lower: true}}
		r := shards.Row{Corpus: "sst", A: c.a, B: c.b}
		if got := cfg.Apply(&r); got != c.want {
			t.Errorf("single %v, %q / %q: %q, want %q", c.single, c.a, c.b, got, c.want)
		}
		if c.want == "" && len(r.TokensA) == 0 {
			t.Errorf("%q not tokenised", c.a)
		}
	}
}
