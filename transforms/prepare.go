package transforms

import (
	"errors"

	"github.com/parastream/parastream/corpora"
	"github.com/parastream/parastream/shards"
	"github.com/parastream/parastream/transforms/text"
)

// PrepareConfig configures the preparation of records as they are read
// (ReadConfig.Prepare): normalisation, tokenisation and the filters. Each
// filter has its own counter, "filtered_<rule>".
type PrepareConfig struct {
	// Reddit normalises as Reddit text (entities, markdown) and, with
	// RedditRules, applies the conversational research's comment filters
	// to every comment and submission title (so to both sides of every
	// pair). A submission's selftext is dropped: pairs use the title.
	Reddit      bool
	RedditRules *text.RedditRules
	// Tokenize sets the tokeniser's options.
	Tokenize text.TokenizeOptions
	// Length bounds the tokens of each side (both sides of a pair; the one
	// text of a Reddit record).
	Length text.LengthRule
	// SingleText: the records are single texts with B empty (SST, MR), so
	// the length rule checks A alone.
	SingleText bool
	// Moses and PPDB filter those corpora; nil is off.
	Moses *text.MosesRule
	PPDB  *text.PPDBRule
}

// Validate reports what is wrong with the configuration.
func (c PrepareConfig) Validate() error {
	var errs []error
	if c.RedditRules != nil {
		errs = append(errs, c.RedditRules.Validate())
	}
	errs = append(errs, c.Length.Validate())
	if c.Moses != nil {
		errs = append(errs, c.Moses.Validate())
	}
	if c.PPDB != nil {
		errs = append(errs, c.PPDB.Validate())
	}
	return errors.Join(errs...)
}

// Apply normalises and tokenises r in place and returns the name of the
// filter rule that drops it, or "" to keep it.
func (c *PrepareConfig) Apply(r *shards.Row) string {
	cfg := c
	norm := text.NormalizeOptions{Reddit: cfg.Reddit}
	if cfg.Reddit {
		r.B = "" // a submission's selftext: pairs use the title
		r.A = text.Normalize(r.A, norm)
		if cfg.RedditRules != nil {
			if rule := cfg.RedditRules.Check(r.A, r.Meta["author"]); rule != "" {
				return rule
			}
		}
		r.TokensA = text.AppendTokens(r.TokensA[:0], r.A, cfg.Tokenize)
		return cfg.Length.CheckText(len(r.TokensA))
	}
	r.A = text.Normalize(r.A, norm)
	r.B = text.Normalize(r.B, norm)
	r.TokensA = text.AppendTokens(r.TokensA[:0], r.A, cfg.Tokenize)
	r.TokensB = text.AppendTokens(r.TokensB[:0], r.B, cfg.Tokenize)
	if cfg.SingleText && r.B == "" {
		return cfg.Length.CheckText(len(r.TokensA))
	}
	if rule := cfg.Length.Check(len(r.TokensA), len(r.TokensB)); rule != "" {
		return rule
	}
	if cfg.Moses != nil || cfg.PPDB != nil {
		e := corpora.Example{Meta: r.Meta}
		if r.Label != nil {
			e.Label, e.HasLabel = *r.Label, true
		}
		if cfg.Moses != nil && r.Corpus == "moses" {
			if rule := cfg.Moses.Check(e); rule != "" {
				return rule
			}
		}
		if cfg.PPDB != nil && r.Corpus == "ppdb" {
			if rule := cfg.PPDB.Check(e); rule != "" {
				return rule
			}
		}
	}
	return ""
}
