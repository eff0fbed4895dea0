package text

import (
	"errors"
	"fmt"
	"math"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/parastream/parastream/corpora"
)

// The names the filter rules return for a dropped record: stable counter
// names (beam.NewCounter("filter", name)) and reasons in rejects files.
const (
	DropRedditDeleted   = "reddit_deleted"
	DropRedditBotAuthor = "reddit_bot_author"
	DropRedditBadPrefix = "reddit_bad_prefix"
	DropRedditTooLong   = "reddit_too_long"
	DropRedditLowAlpha  = "reddit_low_alpha"
	DropTooFewTokens    = "too_few_tokens"
	DropTooManyTokens   = "too_many_tokens"
	DropMosesLowProb    = "moses_low_prob"
	DropPPDBTier        = "ppdb_tier"
	DropPPDBLowScore    = "ppdb_low_score"
)

// RedditRules are the comment filters of Yang et al. (2018), "Learning
// Semantic Textual Similarity from Conversations", section 4:
//
//	A comment is removed if any of the following conditions holds: number
//	of characters ≥ 350, percentage of alphabetic characters ≤ 70%, starts
//	with "https", "/r/" or "@", author's name contains "bot".
//
// with, as a further rule, comments whose body was deleted. Check reads the
// text as given, which in the extraction is the Normalize'd body (Reddit
// rules on); the paper says no more than that its inputs are "tokenized and
// normalized". Where the paper leaves a reading open, these are the ones
// taken:
//
//   - Characters are Unicode code points (runes) of the text, so a comment
//     of 350 "é" is as long as one of 350 "e". After NFKC an accented Latin
//     letter is one code point.
//   - The alphabetic fraction is letters (unicode.IsLetter) over the
//     characters that are neither whitespace (unicode.IsSpace) nor
//     combining marks (unicode.IsMark). Whitespace is left out because the
//     rule is there to catch comments made of numbers, symbols, links and
//     emoji, and spaces are none of those: counted in, they would put
//     ordinary short sentences under the bar ("I am ok." is 5 letters of 8
//     characters, 62%, but 5 of 6, 83%, without its spaces; English prose
//     runs at about 80% letters with spaces and 95% without). Marks are
//     left out because they belong to the letter before them: Hindi
//     "नमस्ते" is four letters and two vowel signs, 67% counted as
//     characters, and all letters as written. A text with no counted
//     character at all (empty) has fraction 0.
//   - "≤ 70%" is taken literally: exactly 70% is dropped, with a tolerance
//     of 1e-9 for floating point.
//   - The prefixes are matched case-sensitively at the start of the text,
//     as written: "https" drops "https://x" but not "http://x" nor
//     "HTTPS://x". After Normalize a comment that starts with a markdown
//     link starts with the link's text, so the https rule drops bare links
//     only.
//   - "Contains bot" is read as the paper writes it, a substring in any
//     case: "AutoModerator" is kept, and "Bitty_Bot", "BOT_42" and also
//     "robot_fan" or "abbott" are dropped. The over-reach is the paper's;
//     set BotSubstring to change it.
//   - Deleted: a text that is "[deleted]" or "[removed]" (spaces around
//     ignored), as pushshift writes a deleted or removed body. An author
//     "[deleted]" alone does not drop a comment: the account is gone but
//     the text is the commenter's, as in the older dumps.
//
// Check tests the rules in this order and returns the first that drops:
// deleted, bot author, prefix, length, alphabetic fraction. A comment is so
// counted under one rule only, and the order puts the cheap, certain rules
// first: a deleted body says nothing of its length, and a bot's comment is
// a bot's whatever its text.
//
// A zero field turns its rule off: MaxChars 0, MinAlpha 0, no Prefixes,
// BotSubstring "", DropDeleted false. DefaultRedditRules are the paper's.
type RedditRules struct {
	// MaxChars drops a text of MaxChars characters or more (350).
	MaxChars int
	// MinAlpha drops a text whose alphabetic fraction is MinAlpha or less
	// (0.7).
	MinAlpha float64
	// Prefixes drops a text that starts with one of them ("https", "/r/",
	// "@").
	Prefixes []string
	// BotSubstring drops a comment whose author's name contains it, in any
	// case ("bot").
	BotSubstring string
	// DropDeleted drops "[deleted]" and "[removed]" texts.
	DropDeleted bool
}

// DefaultRedditRules returns the rules of Yang et al. (2018), with deleted
// comments dropped.
func DefaultRedditRules() RedditRules {
	return RedditRules{
		MaxChars:     350,
		MinAlpha:     0.7,
		Prefixes:     []string{"https", "/r/", "@"},
		BotSubstring: "bot",
		DropDeleted:  true,
	}
}

// Validate reports what is wrong with the rules.
func (r RedditRules) Validate() error {
	var errs []error
	if r.MaxChars < 0 {
		errs = append(errs, fmt.Errorf("reddit rules: MaxChars is %d; want 0 (no bound) or more, such as 350", r.MaxChars))
	}
	if !(r.MinAlpha >= 0 && r.MinAlpha < 1) {
		errs = append(errs, fmt.Errorf("reddit rules: MinAlpha is %g; want a fraction in [0, 1), such as 0.7 (0: no bound)", r.MinAlpha))
	}
	for i, p := range r.Prefixes {
		if p == "" {
			errs = append(errs, fmt.Errorf("reddit rules: Prefixes[%d] is empty, which would drop every text; remove it", i))
		}
	}
	return errors.Join(errs...)
}

// alphaTolerance absorbs floating-point error in the alphabetic fraction:
// fractions of texts of different lengths differ by far more.
const alphaTolerance = 1e-9

// Check returns the name of the rule that drops a comment with this text
// and author, or "" to keep it.
func (r RedditRules) Check(text, author string) string {
	if r.DropDeleted {
		if t := strings.TrimSpace(text); t == "[deleted]" || t == "[removed]" {
			return DropRedditDeleted
		}
	}
	if r.BotSubstring != "" && containsFold(author, r.BotSubstring) {
		return DropRedditBotAuthor
	}
	for _, p := range r.Prefixes {
		if p != "" && strings.HasPrefix(text, p) {
			return DropRedditBadPrefix
		}
	}
	if r.MaxChars > 0 && len(text) >= r.MaxChars && utf8.RuneCountInString(text) >= r.MaxChars {
		return DropRedditTooLong
	}
	if r.MinAlpha > 0 {
		letters, counted := AlphaCount(text)
		if counted == 0 || float64(letters) <= (r.MinAlpha+alphaTolerance)*float64(counted) {
			return DropRedditLowAlpha
		}
	}
	return ""
}

// AlphaCount counts the letters of a text and the characters that make the
// denominator of the alphabetic fraction: those that are neither whitespace
// nor combining marks. See RedditRules.
func AlphaCount(text string) (letters, counted int) {
	for i := 0; i < len(text); {
		c := text[i]
		if c < utf8.RuneSelf {
			i++
			switch {
			case c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z':
				letters++
				counted++
			case c == ' ' || c >= '\t' && c <= '\r':
			default:
				counted++
			}
			continue
		}
		r, n := utf8.DecodeRuneInString(text[i:])
		i += n
		switch {
		case unicode.IsLetter(r):
			letters++
			counted++
		case unicode.IsSpace(r), unicode.IsMark(r):
		default:
			counted++
		}
	}
	return letters, counted
}

// containsFold reports whether s contains sub, ASCII letters compared
// without case and other characters exactly; with a non-ASCII sub, it
// compares Unicode lower cases.
func containsFold(s, sub string) bool {
	for i := 0; i < len(sub); i++ {
		if sub[i] >= utf8.RuneSelf {
			return strings.Contains(strings.ToLower(s), strings.ToLower(sub))
		}
	}
	n := len(sub)
	for i := 0; i+n <= len(s); i++ {
		if equalFoldASCII(s[i:i+n], sub) {
			return true
		}
	}
	return false
}

func equalFoldASCII(a, b string) bool {
	for i := 0; i < len(a); i++ {
		x, y := a[i], b[i]
		if x == y {
			continue
		}
		if x|0x20 != y|0x20 || x|0x20 < 'a' || x|0x20 > 'z' {
			return false
		}
	}
	return true
}

// LengthRule bounds the number of tokens of each text of a record, for
// every corpus. A zero bound is no bound.
type LengthRule struct {
	// MinTokens drops a record with a text of fewer tokens.
	MinTokens int
	// MaxTokens drops a record with a text of more tokens.
	MaxTokens int
}

// Validate reports what is wrong with the bounds.
func (r LengthRule) Validate() error {
	switch {
	case r.MinTokens < 0 || r.MaxTokens < 0:
		return fmt.Errorf("length rule: MinTokens %d and MaxTokens %d; want 0 (no bound) or more", r.MinTokens, r.MaxTokens)
	case r.MaxTokens > 0 && r.MinTokens > r.MaxTokens:
		return fmt.Errorf("length rule: MinTokens %d is above MaxTokens %d, which drops everything; lower MinTokens or raise MaxTokens", r.MinTokens, r.MaxTokens)
	}
	return nil
}

// Check returns the name of the rule that drops a pair whose texts have
// tokensA and tokensB tokens, or "": "too_few_tokens" when either text is
// under MinTokens (tested first), "too_many_tokens" when either is over
// MaxTokens. Count the tokens without the StartEnd tags. For a record of
// one text (a Reddit comment before pairing) use CheckText.
func (r LengthRule) Check(tokensA, tokensB int) string {
	if r.MinTokens > 0 && (tokensA < r.MinTokens || tokensB < r.MinTokens) {
		return DropTooFewTokens
	}
	if r.MaxTokens > 0 && (tokensA > r.MaxTokens || tokensB > r.MaxTokens) {
		return DropTooManyTokens
	}
	return ""
}

// CheckText is Check for a record of one text.
func (r LengthRule) CheckText(tokens int) string { return r.Check(tokens, tokens) }

// MosesRule filters Moses phrase-table pairs on their direct phrase
// translation probability φ(e|f), which the Moses reader puts in
// Example.Label.
type MosesRule struct {
	// MinProb drops a pair with φ(e|f) below it, and a pair without the
	// score (a table of fewer than three scores). 0 is no bound.
	MinProb float64
}

// Validate reports what is wrong with the bound.
func (r MosesRule) Validate() error {
	if !(r.MinProb >= 0 && r.MinProb <= 1) {
		return fmt.Errorf("moses rule: MinProb is %g; want a probability in [0, 1] (0: no bound)", r.MinProb)
	}
	return nil
}

// Check returns "moses_low_prob" for a pair to drop, or "".
func (r MosesRule) Check(e corpora.Example) string {
	if r.MinProb > 0 && (!e.HasLabel || e.Label < r.MinProb) {
		return DropMosesLowProb
	}
	return ""
}

// ppdbTiers are PPDB's size tiers, smallest first. The releases nest: every
// rule of the s package is also in m, m's in l, and so on to xxxl, each
// larger package adding rules of lower confidence. A rule read from a file
// has the tier of that file (Meta["tier"], which the PPDB readers take
// from the file name). "tldr", a package of PPDB 2.0 outside this order,
// is matched only by name, through PPDBRule.Tiers.
const ppdbTiers = "s,m,l,xl,xxl,xxxl"

// PPDBTiers returns PPDB's size tiers, smallest first (see ppdbTiers).
func PPDBTiers() []string { return strings.Split(ppdbTiers, ",") }

// ppdbTierRank is a tier's place in PPDBTiers, from 1; 0 where it has none.
func ppdbTierRank(tier string) int {
	rest := ppdbTiers
	for i := 1; rest != ""; i++ {
		var t string
		t, rest, _ = strings.Cut(rest, ",")
		if t == tier {
			return i
		}
	}
	return 0
}

// PPDBRule filters PPDB records on their file's size tier and their score.
type PPDBRule struct {
	// MaxTier keeps records of this tier and the smaller ones: "l" keeps
	// the files of tiers s, m and l and drops xl, xxl and xxxl. "" is no
	// bound.
	MaxTier string
	// Tiers keeps records of these tiers, whatever MaxTier says; the way to
	// keep "tldr". A record is kept when either MaxTier or Tiers admits it.
	// With both empty the tier is not checked.
	Tiers []string
	// MinScore drops a record whose Label (PPDB2.0Score, or PPDB1.0Score
	// for 1.0 files, or the average human rating) is below it, and a record
	// without a label (the lexical pair lists). 0 is no bound.
	MinScore float64
}

// Validate reports what is wrong with the rule.
func (r PPDBRule) Validate() error {
	var errs []error
	if r.MaxTier != "" && ppdbTierRank(r.MaxTier) == 0 {
		errs = append(errs, fmt.Errorf("ppdb rule: MaxTier %q is not one of %s", r.MaxTier, strings.Join(PPDBTiers(), ", ")))
	}
	for _, t := range r.Tiers {
		if ppdbTierRank(t) == 0 && t != "tldr" {
			errs = append(errs, fmt.Errorf("ppdb rule: tier %q is not one of %s, tldr", t, strings.Join(PPDBTiers(), ", ")))
		}
	}
	if math.IsNaN(r.MinScore) || math.IsInf(r.MinScore, 0) {
		errs = append(errs, fmt.Errorf("ppdb rule: MinScore is %g; want a finite score (0: no bound)", r.MinScore))
	}
	return errors.Join(errs...)
}

// Check returns the name of the rule that drops a PPDB record, or "":
// "ppdb_tier" when the tier rule is on and the record's tier is neither
// within MaxTier nor in Tiers, a record without a tier included (tested
// first); "ppdb_low_score" when MinScore is set and the record's label is
// below it or absent.
func (r PPDBRule) Check(e corpora.Example) string {
	if r.MaxTier != "" || len(r.Tiers) > 0 {
		tier := e.Meta["tier"]
		keep := false
		if r.MaxTier != "" {
			if rank := ppdbTierRank(tier); rank > 0 && rank <= ppdbTierRank(r.MaxTier) {
				keep = true
			}
		}
		for _, t := range r.Tiers {
			if tier != "" && t == tier {
				keep = true
			}
		}
		if !keep {
			return DropPPDBTier
		}
	}
	if r.MinScore != 0 && (!e.HasLabel || e.Label < r.MinScore) {
		return DropPPDBLowScore
	}
	return ""
}
