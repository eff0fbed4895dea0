// Package text holds the plain text functions of the extraction
// pipelines, with no Beam: normalisation, tokenisation, the filter rules,
// and the seeded hash and deterministic splits. Package transforms wraps
// them in Beam stages; a program that only cleans or tokenises text
// imports this package alone.
//
// Normalize and AppendNormalized clean a text (Unicode NFKC, whitespace,
// and with NormalizeOptions.Reddit the markdown and HTML entities of
// pushshift bodies); Tokenize and AppendTokens split it into
// Penn-Treebank-like tokens that keep URLs, numbers, e-mail addresses and
// Reddit references whole; and the filter rules (RedditRules, LengthRule,
// MosesRule, PPDBRule) are predicates that return the stable counter name
// of the rule that drops a record, or "" to keep it. They sit on the hot
// path of an extraction and are written to allocate little: the Append
// forms write into a caller's buffer, and text that needs no change is
// returned as it came.
//
// The extraction applies them in this order: Normalize, then the filters
// that read the text (RedditRules.Check), then Tokenize, then the filters
// that count tokens (LengthRule). Each dropped record is counted under
// exactly one rule name.
//
// AssignSplit chooses a record's split from Hash64 of its group, so that a
// group's records share a split in every run for a seed (an evaluation
// set's official split is corpora.Eval's).
package text
