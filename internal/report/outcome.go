package report

import (
	"fmt"
	"slices"
	"strings"
)

// outcome is what a command's input came to: records read, records kept,
// and the records each reject reason or filter rule dropped.
type outcome struct {
	read, kept int64
	dropped    map[string]int64 // by reason or rule
	keptNoun   string           // "pairs", "examples"
}

// fixes says how to keep what a reason or rule drops.
var fixes = map[string]string{
	"bad_utf8":           "if the files are Latin-1 (older Moses and Europarl releases), try --encoding latin1",
	"line_too_long":      "raise --max-line-bytes",
	"record_too_large":   "raise --max-line-bytes",
	"bad_json":           "is --corpus the right format? 'parastream formats' lists them",
	"field_count":        "is --corpus the right format? 'parastream formats' lists them",
	"missing_field":      "is --corpus the right format? 'parastream formats' lists them",
	"reddit_deleted":     "the comments were deleted: pick other months",
	"reddit_bot_author":  "turn the Reddit filters off with --reddit-rules=false",
	"reddit_bad_prefix":  "turn the Reddit filters off with --reddit-rules=false",
	"reddit_too_long":    "raise --max-chars, or turn the Reddit filters off with --reddit-rules=false",
	"reddit_low_alpha":   "lower --min-alpha, or turn the Reddit filters off with --reddit-rules=false",
	"too_few_tokens":     "lower --min-tokens",
	"too_many_tokens":    "raise --max-tokens, or set it to 0",
	"moses_low_prob":     "lower --moses-min-prob",
	"ppdb_tier":          "widen --ppdb-max-tier or --ppdb-tiers",
	"ppdb_low_score":     "lower --ppdb-min-score",
	"bad_file":           "the files are truncated or unreadable: see the rejects file",
	"duplicates":         "pass --keep-duplicates to keep them",
	"score_out_of_range": "is --corpus the right format? 'parastream formats' lists them",
}

// hints are the lines a summary ends with when a rule dropped most of the
// input, when nothing was kept, and when 1% or more of the records were
// rejected as not UTF-8 (the one reject a flag fixes).
func (o outcome) hints() []string {
	if o.read == 0 {
		return []string{"warning: no records were read: are the input files empty?"}
	}
	reasons := make([]string, 0, len(o.dropped))
	for r, n := range o.dropped {
		if n > 0 {
			reasons = append(reasons, r)
		}
	}
	// Largest first, by name where equal.
	slices.SortFunc(reasons, func(a, b string) int {
		if c := int(o.dropped[b] - o.dropped[a]); c != 0 {
			return c
		}
		return strings.Compare(a, b)
	})
	var out []string
	named := "" // the reason a line names already
	share := func(n int64) string {
		return fmt.Sprintf("%d of %d records (%.0f%%)", n, o.read, 100*float64(n)/float64(o.read))
	}
	if o.kept == 0 {
		msg := fmt.Sprintf("warning: no %s were kept from %d records", o.keptNoun, o.read)
		if len(reasons) > 0 {
			top := reasons[0]
			named = top
			msg += fmt.Sprintf("; %s dropped %s", top, share(o.dropped[top]))
			if fix := fixes[top]; fix != "" {
				msg += ": " + fix
			}
		}
		out = append(out, msg)
	} else if len(reasons) > 0 && 2*o.dropped[reasons[0]] > o.read {
		top := reasons[0]
		named = top
		msg := fmt.Sprintf("hint: %s dropped most of the input, %s", top, share(o.dropped[top]))
		if fix := fixes[top]; fix != "" {
			msg += ": " + fix
		}
		out = append(out, msg)
	}
	// A few stray bytes are a dirty dump; one record in a hundred or more
	// is more likely a file in another encoding.
	if n := o.dropped["bad_utf8"]; 100*n >= o.read && named != "bad_utf8" {
		out = append(out, fmt.Sprintf("hint: %s are not UTF-8: %s", share(n), fixes["bad_utf8"]))
	}
	return out
}

// extractOutcome is an extraction's outcome, from its counters.
func extractOutcome(c map[string]int64, kept int64) outcome {
	o := outcome{read: c["read"], kept: kept, keptNoun: "pairs", dropped: map[string]int64{}}
	for k, v := range c {
		for _, p := range []string{"rejected_", "filtered_"} {
			if r, ok := strings.CutPrefix(k, p); ok {
				o.dropped[r] += v
			}
		}
	}
	o.dropped["duplicates"] = c["dedupe_exact"] + c["dedupe_normalized"] + c["dedupe_external"]
	return o
}
