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

// fix says how to keep what a reason or rule drops, or "".
func fix(reason string) string {
	switch reason {
	case "bad_utf8":
		return "if the files are Latin-1 (older Moses and Europarl releases), try --encoding latin1"
	case "line_too_long", "record_too_large":
		return "raise --max-line-bytes"
	case "bad_json", "field_count", "missing_field", "score_out_of_range":
		return "is --corpus the right format? 'parastream formats' lists them"
	case "reddit_deleted":
		return "the comments were deleted: pick other months"
	case "reddit_bot_author", "reddit_bad_prefix":
		return "turn the Reddit filters off with --reddit-rules=false"
	case "reddit_too_long":
		return "raise --max-chars, or turn the Reddit filters off with --reddit-rules=false"
	case "reddit_low_alpha":
		return "lower --min-alpha, or turn the Reddit filters off with --reddit-rules=false"
	case "too_few_tokens":
		return "lower --min-tokens"
	case "too_many_tokens":
		return "raise --max-tokens, or set it to 0"
	case "moses_low_prob":
		return "lower --moses-min-prob"
	case "ppdb_tier":
		return "widen --ppdb-max-tier or --ppdb-tiers"
	case "ppdb_low_score":
		return "lower --ppdb-min-score"
	case "bad_file":
		return "the files are truncated or unreadable: see the rejects file"
	case "duplicates":
		return "pass --keep-duplicates to keep them"
	}
	return ""
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
			if fix := fix(top); fix != "" {
				msg += ": " + fix
			}
		}
		out = append(out, msg)
	} else if len(reasons) > 0 && 2*o.dropped[reasons[0]] > o.read {
		top := reasons[0]
		named = top
		msg := fmt.Sprintf("hint: %s dropped most of the input, %s", top, share(o.dropped[top]))
		if fix := fix(top); fix != "" {
			msg += ": " + fix
		}
		out = append(out, msg)
	}
	// A few stray bytes are a dirty dump; one record in a hundred or more
	// is more likely a file in another encoding.
	if n := o.dropped["bad_utf8"]; 100*n >= o.read && named != "bad_utf8" {
		out = append(out, fmt.Sprintf("hint: %s are not UTF-8: %s", share(n), fix("bad_utf8")))
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
