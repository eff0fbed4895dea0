// Package transforms holds the Beam transforms and DoFns of the extraction
// pipelines, and the plain functions they wrap: normalisation, tokenisation,
// filters, Reddit thread pairing, deduplication, deterministic splits,
// token-budget sampling and token counting.
//
// The plain functions carry no Beam: Normalize and AppendNormalized clean a
// text (Unicode NFKC, whitespace, and with NormalizeOptions.Reddit the
// markdown and HTML entities of pushshift bodies); Tokenize and
// AppendTokens split it into Penn-Treebank-like tokens that keep URLs,
// numbers, e-mail addresses and Reddit references whole; and the filter
// rules (RedditRules, LengthRule, MosesRule, PPDBRule) are predicates that
// return the stable counter name of the rule that drops a record, or "" to
// keep it. They sit on the hot path of an extraction and are written to
// allocate little: the Append forms write into a caller's buffer, and text
// that needs no change is returned as it came.
//
// The extraction applies them in this order: Normalize, then the filters
// that read the text (RedditRules.Check), then Tokenize, then the filters
// that count tokens (LengthRule). Each dropped record is counted under
// exactly one rule name.
package transforms
