package text_test

import (
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	"github.com/parastream/parastream/corpora"
	"github.com/parastream/parastream/transforms/text"
)

// alphaText is a text of n characters, letters of them: letters "a", the
// rest digits, no spaces.
func alphaText(letters, n int) string {
	return strings.Repeat("a", letters) + strings.Repeat("1", n-letters)
}

func TestRedditRulesCheck(t *testing.T) {
	rules := text.DefaultRedditRules()
	const ok = "a perfectly ordinary comment"
	for _, tc := range []struct {
		name, text, author, want string
	}{
		{"ordinary", ok, "someone", ""},

		// Length: characters are runes; >= 350 drops.
		{"349 ASCII", strings.Repeat("a", 349), "x", ""},
		{"350 ASCII", strings.Repeat("a", 350), "x", text.DropRedditTooLong},
		{"349 é (698 bytes)", strings.Repeat("é", 349), "x", ""},
		{"350 é", strings.Repeat("é", 350), "x", text.DropRedditTooLong},
		{"349 日", strings.Repeat("日", 349), "x", ""},
		{"349 with spaces", strings.Repeat("ab ", 116) + "a", "x", ""},
		{"350 with spaces", strings.Repeat("ab ", 116) + "ab", "x", text.DropRedditTooLong},

		// Alphabetic fraction: letters over non-space, non-mark characters;
		// <= 70% drops.
		{"7 of 10", alphaText(7, 10), "x", text.DropRedditLowAlpha},
		{"8 of 10", alphaText(8, 10), "x", ""},
		{"21 of 30", alphaText(21, 30), "x", text.DropRedditLowAlpha},
		{"238 of 340, exactly 70%", alphaText(238, 340), "x", text.DropRedditLowAlpha},
		{"239 of 340, 70.3%", alphaText(239, 340), "x", ""},
		{"71 of 100", alphaText(71, 100), "x", ""},
		{"70 of 100 with spaces", "aaaaaaa111 " + strings.Repeat("aaaaaaa111 ", 9), "x", text.DropRedditLowAlpha},
		{"I am ok. (83% without spaces)", "I am ok.", "x", ""},
		{"Hindi, marks not counted", "नमस्ते दुनिया", "x", ""},
		{"Japanese letters", "日本語のテキストです。", "x", ""},
		{"digits", "12345", "x", text.DropRedditLowAlpha},
		{"emoji", "👍👍👍", "x", text.DropRedditLowAlpha},
		{"empty", "", "x", text.DropRedditLowAlpha},
		{"lol!!!", "lol!!!", "x", text.DropRedditLowAlpha},

		// Prefixes: case-sensitive, at the very start.
		{"https", "https://example.com is where it is", "x", text.DropRedditBadPrefix},
		{"https bare", "https://x", "x", text.DropRedditBadPrefix},
		{"http is not https", "http://example.com is where it is", "x", ""},
		{"HTTPS upper case", "HTTPS://EXAMPLE.COM IS WHERE IT IS", "x", ""},
		{"/r/", "/r/foo is a great place", "x", text.DropRedditBadPrefix},
		{"/r/ alone", "/r/foo", "x", text.DropRedditBadPrefix},
		{"r/ without slash", "r/foo is a great place", "x", ""},
		{"/r/ inside", "see /r/foo for more of it", "x", ""},
		{"@", "@user thanks a lot", "x", text.DropRedditBadPrefix},
		{"@ alone", "@user", "x", text.DropRedditBadPrefix},
		{"@ inside", "thanks @user", "x", ""},

		// Bot authors: "bot" anywhere in the name, any case (as the paper
		// writes it, "robot" and "abbott" too).
		{"Bitty_Bot", ok, "Bitty_Bot", text.DropRedditBotAuthor},
		{"BOT", ok, "SOME_BOT", text.DropRedditBotAuthor},
		{"bot", ok, "bot", text.DropRedditBotAuthor},
		{"bOt", ok, "xbOtx", text.DropRedditBotAuthor},
		{"robot", ok, "robot_fan", text.DropRedditBotAuthor},
		{"abbott", ok, "abbott", text.DropRedditBotAuthor},
		{"AutoModerator", ok, "AutoModerator", ""},
		{"b-o-t", ok, "b_o_t", ""},
		{"deleted author", ok, "[deleted]", ""},
		{"empty author", ok, "", ""},

		// Deleted bodies.
		{"[deleted]", "[deleted]", "[deleted]", text.DropRedditDeleted},
		{"[removed]", "[removed]", "someone", text.DropRedditDeleted},
		{"[removed] spaced", " [removed] ", "someone", text.DropRedditDeleted},
		{"[deleted] and more", "[deleted] but then some words", "someone", ""},
		{"[Deleted] is not deleted", "[Deleted]", "someone", ""},

		// Order: deleted, author, prefix, length, alphabetic fraction.
		{"deleted by a bot", "[removed]", "AutoBot", text.DropRedditDeleted},
		{"bot with a link", "https://x", "Bitty_Bot", text.DropRedditBotAuthor},
		{"long link", "https://" + strings.Repeat("x", 400), "x", text.DropRedditBadPrefix},
		{"long digits", strings.Repeat("1", 400), "x", text.DropRedditTooLong},
	} {
		if got := rules.Check(tc.text, tc.author); got != tc.want {
			letters, counted := text.AlphaCount(tc.text)
			t.Errorf("%s: Check(%.40q, %q) = %q, want %q (letters %d of %d)", tc.name, tc.text, tc.author, got, tc.want, letters, counted)
		}
	}
}

func TestRedditRulesOff(t *testing.T) {
	var none text.RedditRules
	for _, s := range []string{"", "[deleted]", "https://x", "12345", strings.Repeat("a", 1000)} {
		if got := none.Check(s, "Bitty_Bot"); got != "" {
			t.Errorf("zero RedditRules drop %q as %q", s, got)
		}
	}
	prefixOnly := text.RedditRules{Prefixes: []string{"https"}}
	for s, want := range map[string]string{"https://x": text.DropRedditBadPrefix, "http://x": "", "HTTPS://x": ""} {
		if got := prefixOnly.Check(s, ""); got != want {
			t.Errorf("prefix rule on %q: %q, want %q", s, got, want)
		}
	}
}

// TestAlphaDenominator records why whitespace is not counted: with it,
// ordinary short replies fall under the paper's 70%.
func TestAlphaDenominator(t *testing.T) {
	for _, s := range []string{"I am ok.", "Yes it is.", "So do I.", "I do."} {
		letters, counted := text.AlphaCount(s)
		withSpaces := float64(letters) / float64(len([]rune(s)))
		if withSpaces > 0.7 {
			t.Errorf("%q: %.2f letters counting spaces; the case no longer shows the point", s, withSpaces)
		}
		if got := text.DefaultRedditRules().Check(s, "x"); got != "" {
			t.Errorf("%q (%d letters of %d): dropped as %s", s, letters, counted, got)
		}
	}
}

func TestRedditRulesValidate(t *testing.T) {
	if err := text.DefaultRedditRules().Validate(); err != nil {
		t.Errorf("default rules: %v", err)
	}
	if err := (text.RedditRules{}).Validate(); err != nil {
		t.Errorf("zero rules: %v", err)
	}
	for _, r := range []text.RedditRules{
		{MaxChars: -1}, {MinAlpha: 1}, {MinAlpha: -0.1}, {Prefixes: []string{""}},
	} {
		if err := r.Validate(); err == nil {
			t.Errorf("%+v: no error", r)
		}
	}
}

// TestRedditRulesSample runs Normalize and the rules over the real
// pushshift sample.
func TestRedditRulesSample(t *testing.T) {
	path := sharedData(t, "corpora/reddit/RC_sample.jsonl")
	r, err := corpora.OpenFormat("reddit-comments", []string{path}, corpora.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	want := map[string]string{
		"t1_kod0bkd": "",                       // "Absolutely stunning. ..."
		"t1_kod0bke": text.DropRedditBotAuthor, // Bitty_Bot
		"t1_kod0bkj": text.DropRedditDeleted,   // [removed]
		"t1_c0cmuon": text.DropRedditDeleted,   // [deleted]
		"t1_c0cmuom": text.DropRedditTooLong,   // 401 characters
		"t1_c14":     text.DropRedditTooLong,   // 537 characters
		"t1_c15":     "",                       // author [deleted], text kept
		"t1_fp0943b": "",                       // "Nice"
		"t1_c0cmuol": "",                       // www.cmu.edu, *original* stripped
		"t1_c0cmuop": "",                       // a quote, &gt; decoded
		"t1_kod0bkh": "",                       // "…do you need me ..."
		"t1_c63fp23": "",                       // two paragraphs
		"t1_efhgeqn": "",                       // trailing space
		"t1_fp0943a": "",                       // "Eunuch"
		"t1_kod0bkm": "",                       // lower case, punctuation
		"t1_c16":     text.DropRedditDeleted,   // [deleted]
		"t1_kod0bkl": text.DropRedditDeleted,   // [removed]
		"t1_c0cmuoo": text.DropRedditTooLong,   // 393 characters after decoding
		"t1_kod0bkf": "",                       // "Isn’t ..."
		"t1_fp09438": "",                       // digits and letters
		"t1_fp09439": "",                       // questions
		"t1_fp0943c": "",                       // "Good lord"
		"t1_c13":     "",                       // 2005's first comments
		"t1_c17":     "",                       //
		"t1_kod0bkg": "",                       //
		"t1_kod0bki": "",                       //
		"t1_kod0bkk": "",                       //
	}
	rules := text.DefaultRedditRules()
	counts := map[string]int{}
	seen := 0
	err = corpora.Drain(r, func(e corpora.Example) error {
		seen++
		text := text.Normalize(e.A, text.NormalizeOptions{Reddit: true})
		got := rules.Check(text, e.Meta["author"])
		counts[got]++
		if w, ok := want[e.ID]; !ok {
			t.Errorf("%s: unexpected comment %q", e.ID, text)
		} else if got != w {
			t.Errorf("%s (%s): Check(%.60q) = %q, want %q", e.ID, e.Meta["author"], text, got, w)
		}
		return nil
	}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if seen != len(want) {
		t.Errorf("read %d comments, want %d", seen, len(want))
	}
	t.Logf("drops by rule: %v", counts)
}

func TestLengthRule(t *testing.T) {
	r := text.LengthRule{MinTokens: 2, MaxTokens: 5}
	for _, tc := range []struct {
		a, b int
		want string
	}{
		{2, 2, ""}, {5, 5, ""}, {2, 5, ""},
		{1, 3, text.DropTooFewTokens}, {3, 1, text.DropTooFewTokens}, {0, 0, text.DropTooFewTokens},
		{6, 3, text.DropTooManyTokens}, {3, 6, text.DropTooManyTokens},
		{1, 9, text.DropTooFewTokens}, // too few is tested first
	} {
		if got := r.Check(tc.a, tc.b); got != tc.want {
			t.Errorf("%+v.Check(%d, %d) = %q, want %q", r, tc.a, tc.b, got, tc.want)
		}
	}
	if got := r.CheckText(1); got != text.DropTooFewTokens {
		t.Errorf("CheckText(1) = %q", got)
	}
	if got := r.CheckText(3); got != "" {
		t.Errorf("CheckText(3) = %q", got)
	}
	var none text.LengthRule
	if got := none.Check(0, 1_000_000); got != "" {
		t.Errorf("zero LengthRule drops as %q", got)
	}
	if got := (text.LengthRule{MaxTokens: 3}).Check(0, 3); got != "" {
		t.Errorf("MaxTokens only: %q", got)
	}
	for _, bad := range []text.LengthRule{{MinTokens: -1}, {MaxTokens: -1}, {MinTokens: 5, MaxTokens: 4}} {
		if bad.Validate() == nil {
			t.Errorf("%+v: no error", bad)
		}
	}
	if err := r.Validate(); err != nil {
		t.Error(err)
	}
}

func TestMosesRule(t *testing.T) {
	r := text.MosesRule{MinProb: 0.1}
	for _, tc := range []struct {
		e    corpora.Example
		want string
	}{
		{corpora.Example{Label: 0.1, HasLabel: true}, ""},
		{corpora.Example{Label: 0.5, HasLabel: true}, ""},
		{corpora.Example{Label: 0.0999, HasLabel: true}, text.DropMosesLowProb},
		{corpora.Example{}, text.DropMosesLowProb}, // no φ(e|f)
	} {
		if got := r.Check(tc.e); got != tc.want {
			t.Errorf("Check(label %g, has %v) = %q, want %q", tc.e.Label, tc.e.HasLabel, got, tc.want)
		}
	}
	if got := (text.MosesRule{}).Check(corpora.Example{}); got != "" {
		t.Errorf("zero MosesRule drops as %q", got)
	}
	if (text.MosesRule{MinProb: 1.5}).Validate() == nil {
		t.Error("MinProb 1.5: no error")
	}
}

func ppdbExample(tier string, label float64, has bool) corpora.Example {
	e := corpora.Example{Corpus: "ppdb", Label: label, HasLabel: has}
	if tier != "" {
		e.SetMeta("tier", tier)
	}
	return e
}

func TestPPDBRule(t *testing.T) {
	for _, tc := range []struct {
		r    text.PPDBRule
		e    corpora.Example
		want string
	}{
		{text.PPDBRule{MaxTier: "l"}, ppdbExample("s", 3, true), ""},
		{text.PPDBRule{MaxTier: "l"}, ppdbExample("m", 3, true), ""},
		{text.PPDBRule{MaxTier: "l"}, ppdbExample("l", 3, true), ""},
		{text.PPDBRule{MaxTier: "l"}, ppdbExample("xl", 3, true), text.DropPPDBTier},
		{text.PPDBRule{MaxTier: "l"}, ppdbExample("xxl", 3, true), text.DropPPDBTier},
		{text.PPDBRule{MaxTier: "l"}, ppdbExample("xxxl", 3, true), text.DropPPDBTier},
		{text.PPDBRule{MaxTier: "l"}, ppdbExample("tldr", 3, true), text.DropPPDBTier},
		{text.PPDBRule{MaxTier: "l"}, ppdbExample("", 3, true), text.DropPPDBTier},
		{text.PPDBRule{MaxTier: "xxxl"}, ppdbExample("xxxl", 3, true), ""},
		{text.PPDBRule{MaxTier: "s"}, ppdbExample("m", 3, true), text.DropPPDBTier},
		{text.PPDBRule{MaxTier: "m", Tiers: []string{"tldr"}}, ppdbExample("tldr", 3, true), ""},
		{text.PPDBRule{MaxTier: "m", Tiers: []string{"tldr"}}, ppdbExample("s", 3, true), ""},
		{text.PPDBRule{MaxTier: "m", Tiers: []string{"tldr"}}, ppdbExample("l", 3, true), text.DropPPDBTier},
		{text.PPDBRule{Tiers: []string{"xl"}}, ppdbExample("xl", 3, true), ""},
		{text.PPDBRule{Tiers: []string{"xl"}}, ppdbExample("s", 3, true), text.DropPPDBTier},
		{text.PPDBRule{}, ppdbExample("", 0, false), ""},
		{text.PPDBRule{MinScore: 3}, ppdbExample("s", 3, true), ""},
		{text.PPDBRule{MinScore: 3}, ppdbExample("s", 3.27577, true), ""},
		{text.PPDBRule{MinScore: 3}, ppdbExample("s", 2.99, true), text.DropPPDBLowScore},
		{text.PPDBRule{MinScore: 3}, ppdbExample("s", 0, false), text.DropPPDBLowScore},
		{text.PPDBRule{MaxTier: "s", MinScore: 3}, ppdbExample("xl", 1, true), text.DropPPDBTier}, // tier first
	} {
		if got := tc.r.Check(tc.e); got != tc.want {
			t.Errorf("%+v.Check(tier %q, label %g) = %q, want %q", tc.r, tc.e.Meta["tier"], tc.e.Label, got, tc.want)
		}
	}
	for _, bad := range []text.PPDBRule{{MaxTier: "xxxxl"}, {MaxTier: "tldr"}, {Tiers: []string{"big"}}} {
		if bad.Validate() == nil {
			t.Errorf("%+v: no error", bad)
		}
	}
	if err := (text.PPDBRule{MaxTier: "l", Tiers: []string{"tldr"}, MinScore: 3}).Validate(); err != nil {
		t.Error(err)
	}
}

// TestPPDBRuleSample applies the rule to the real PPDB 2.0 sample, whose
// tier, tldr, the reader takes from the file name.
func TestPPDBRuleSample(t *testing.T) {
	path := sharedData(t, filepath.Join("corpora", "ppdb", "ppdb-2.0-tldr-sample.raw"))
	r, err := corpora.OpenFormat("ppdb", []string{path}, corpora.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	rules := []text.PPDBRule{{MaxTier: "xxxl"}, {Tiers: []string{"tldr"}}, {Tiers: []string{"tldr"}, MinScore: 3}}
	counts := make([]map[string]int, len(rules))
	for i := range counts {
		counts[i] = map[string]int{}
	}
	n := 0
	err = corpora.Drain(r, func(e corpora.Example) error {
		n++
		for i, rule := range rules {
			counts[i][rule.Check(e)]++
		}
		return nil
	}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if counts[0][text.DropPPDBTier] != n {
		t.Errorf("MaxTier xxxl kept tldr rules: %v", counts[0])
	}
	if counts[1][""] != n {
		t.Errorf("Tiers tldr dropped rules: %v", counts[1])
	}
	if c := counts[2]; c[""] == 0 || c[text.DropPPDBLowScore] == 0 || c[""]+c[text.DropPPDBLowScore] != n {
		t.Errorf("MinScore 3 over %d rules: %v, want some of each", n, c)
	}
	t.Logf("%d rules; MinScore 3: %v", n, counts[2])
}

func ExampleRedditRules_Check() {
	rules := text.DefaultRedditRules()
	for _, c := range []struct{ text, author string }{
		{"I am ok.", "someone"},
		{"[removed]", "[deleted]"},
		{"Unfortunately your prediction was wrong.", "Bitty_Bot"},
		{"https://example.com/some/long/path", "someone"},
		{"http://example.com is fine", "someone"},
		{strings.Repeat("é", 350), "someone"},
		{"lol 1234 :) :) :)", "someone"},
	} {
		fmt.Printf("%q\n", rules.Check(c.text, c.author))
	}
	// Output:
	// ""
	// "reddit_deleted"
	// "reddit_bot_author"
	// "reddit_bad_prefix"
	// ""
	// "reddit_too_long"
	// "reddit_low_alpha"
}

func BenchmarkRedditRulesCheck(b *testing.B) {
	rules := text.DefaultRedditRules()
	texts := make([]string, len(benchComments))
	n := 0
	for i, s := range benchComments {
		texts[i] = text.Normalize(s, text.NormalizeOptions{Reddit: true})
		n += len(texts[i])
	}
	b.SetBytes(int64(n))
	b.ReportAllocs()
	for b.Loop() {
		for _, s := range texts {
			rules.Check(s, "Some_Reddit_User_123")
		}
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*len(texts)), "ns/text")
}
