package synth

import (
	"strconv"

	"github.com/parastream/parastream/corpora"
)

// era is a layout of pushshift records: the keys, their order and the
// type of created_utc changed over the years.
type era int

const (
	era2005 era = iota // 18 keys, created_utc an integer
	era2012            // 21 keys, created_utc a string
	era2019            // 38 keys, an integer
	era2020            // 47 keys, an integer
	era2024            // 66 to 71 keys, a float (and "created" too)
)

// eraByName returns the era a Config.Era names ("2005" ... "2024").
func eraByName(name string) (era, bool) {
	switch name {
	case "2005":
		return era2005, true
	case "2012":
		return era2012, true
	case "2019":
		return era2019, true
	case "2020":
		return era2020, true
	case "2024":
		return era2024, true
	}
	return 0, false
}

// newEraMix returns the sampler of eras in a "mixed" file, by their share.
func newEraMix() *alias {
	return newAlias([]float64{era2005: 0.05, era2012: 0.10, era2019: 0.10, era2020: 0.20, era2024: 0.55})
}

func (g *redditGen) pickEra(r *rng) era {
	if e, ok := eraByName(g.cfg.Era); ok {
		return e
	}
	return era(g.eraMix.sample(r))
}

// commentRec is what a comment record says, less the fields drawn as it
// is written.
type commentRec struct {
	id, parent, link uint64 // parent 0: a top-level comment
	sub              *subreddit
	slug             string
	author           int64
	created          int64
	body             []byte
	top, submitter   bool
}

// appendUserName writes the name of author a (a >= 0). Names are drawn
// from the index: Reddit's generated Adjective_Noun1234 names, words run
// together, handles with digits.
func (g *redditGen) appendUserName(b []byte, a int64) []byte {
	if a == authorDeleted {
		return append(b, "[deleted]"...)
	}
	if a <= authorBot {
		return append(b, g.bots[authorBot-a]...)
	}
	h := mix(uint64(a) + 0x7a3b9c1d)
	en := g.en
	adj := en.adjs[h%uint64(len(en.adjs))]
	h /= uint64(len(en.adjs))
	noun := en.nouns[h%uint64(len(en.nouns))].sg
	h /= uint64(len(en.nouns))
	style := h % 10
	h /= 10
	start := len(b)
	switch style {
	case 0, 1, 2, 3: // Cultural_Entrance312, Solid-Stranger1206
		b = appendCapital(b, adj)
		b = append(b, "_-"[h%2])
		h /= 2
		b = appendCapital(b, noun)
		b = strconv.AppendUint(b, h%10000, 10)
	case 4, 5: // greenpowerranger, redblueblur0613
		b = append(b, adj...)
		b = append(b, noun...)
		if h%2 == 0 {
			b = strconv.AppendUint(b, h/2%100, 10)
		}
	case 6: // frjo, tells
		const cons, vow = "bcdfghjklmnprstvwz", "aeiou"
		for i := range 2 + h%3 {
			b = append(b, cons[(h>>(i*5))%uint64(len(cons))], vow[(h>>(i*5+3))%5])
		}
	case 7: // DubsAli
		b = appendCapital(b, noun)
		b = appendCapital(b, adj)
	case 8:
		b = append(b, noun...)
		b = append(b, '_')
		b = append(b, adj...)
	default:
		b = append(b, "throwaway"...)
		b = strconv.AppendUint(b, h%100000, 10)
	}
	if len(b)-start > 20 {
		b = b[:start+20]
	}
	return b
}

func appendCapital(b []byte, w string) []byte {
	b = append(b, w...)
	if c := b[len(b)-len(w)]; c >= 'a' && c <= 'z' {
		b[len(b)-len(w)] = c - ('a' - 'A')
	}
	return b
}

// appendFullname writes "t2_" and the account id of author a.
func appendFullname(b []byte, a int64) []byte {
	b = append(b, "t2_"...)
	return appendBase36(b, 36*36*36*36+mix(uint64(a)+99)%(36*36*36*36*36*36*36))
}

// flairs returns the user flairs; the CSS class of each is "flair-" and
// its index.
func flairs() []string {
	return []string{"PS4", "PC", "Xbox", "Verified", "Moderator", "Canada", "Texas", "Expert", "Bronze", "🦀", "Top 1% Commenter"}
}

// writeComment writes one comment record and its newline.
func (g *redditGen) writeComment(b []byte, r *rng, e era, c *commentRec, bad bool) []byte {
	var reason corpora.Reason
	if bad {
		reason = pick(r, g.malformed)
		g.statsC.malformed(reason)
	}
	omitID := reason == corpora.ReasonMissingField
	score := commentScore(r, c)
	controversial := score <= 1 && r.chance(0.05)
	var edited int64
	if r.chance(0.02) {
		edited = c.created + 60 + int64(r.exp()*3600)
	}
	deleted := c.author == authorDeleted
	bot := c.author <= authorBot
	mod := bot && g.bots[authorBot-c.author] == "AutoModerator"
	flair := -1
	if !deleted && r.chance(0.06) {
		flair = r.intn(len(g.flairs))
	}
	o := jsonObject{b: b}
	o.open()
	switch e {
	case era2005:
		o.int("controversiality", b2i(controversial))
		o.strBytes("body", c.body)
		o.str("subreddit_id", c.sub.id)
		g.linkID(&o, c.link)
		o.boolean("stickied", false)
		o.str("subreddit", c.sub.name)
		o.int("score", score)
		o.int("ups", score)
		o.null("author_flair_css_class")
		o.int("created_utc", c.created)
		o.null("author_flair_text")
		g.author(&o, c.author)
		if !omitID {
			g.commentID(&o, c.id)
		}
		g.editedInt(&o, edited)
		g.parentID(&o, c)
		o.int("gilded", 0)
		o.null("distinguished")
		o.int("retrieved_on", c.created+retrievalDelay(r))
	case era2012:
		g.editedInt(&o, edited)
		g.distinguished(&o, mod)
		g.flairText(&o, flair)
		o.int("controversiality", b2i(controversial))
		o.boolean("archived", true)
		o.key("created_utc")
		o.b = append(o.b, '"')
		o.b = strconv.AppendInt(o.b, c.created, 10)
		o.b = append(o.b, '"')
		o.int("retrieved_on", c.created+retrievalDelay(r))
		o.int("ups", score)
		o.strBytes("body", c.body)
		g.linkID(&o, c.link)
		if !omitID {
			g.commentID(&o, c.id)
		}
		g.flairCSS(&o, flair)
		g.parentID(&o, c)
		o.int("score", score)
		g.name(&o, c.id)
		g.author(&o, c.author)
		o.int("gilded", b2i(r.chance(0.001)))
		o.str("subreddit", c.sub.name)
		o.boolean("score_hidden", false)
		o.str("subreddit_id", c.sub.id)
		o.int("downs", 0)
	case era2019, era2020:
		if e == era2020 {
			o.raw("all_awardings", "[]")
			o.null("associated_award")
		}
		g.author(&o, c.author)
		if !deleted {
			o.int("author_created_utc", c.created-int64(3e7)-int64(mix(uint64(c.author))%3e8))
		}
		g.flairStyle(&o, flair, true)
		if !deleted {
			o.raw("author_flair_richtext", "[]")
			o.raw("author_flair_template_id", "null")
		}
		g.flairText(&o, flair)
		if !deleted {
			o.raw("author_flair_text_color", "null")
			o.str("author_flair_type", "text")
			g.fullname(&o, c.author)
			o.boolean("author_patreon_flair", false)
			if e == era2020 {
				o.boolean("author_premium", r.chance(0.05))
			}
		}
		if e == era2020 {
			o.raw("awarders", "[]")
		}
		o.strBytes("body", c.body)
		o.boolean("can_gild", !deleted)
		o.boolean("can_mod_post", false)
		o.boolean("collapsed", mod)
		if e == era2020 {
			o.null("collapsed_because_crowd_control")
		}
		o.null("collapsed_reason")
		o.int("controversiality", b2i(controversial))
		o.int("created_utc", c.created)
		g.distinguished(&o, mod)
		g.editedInt(&o, edited)
		o.int("gilded", 0)
		if e == era2019 {
			o.raw("gildings", `{"gid_1": 0, "gid_2": 0, "gid_3": 0}`)
		} else {
			o.raw("gildings", "{}")
		}
		if !omitID {
			g.commentID(&o, c.id)
		}
		o.boolean("is_submitter", c.submitter)
		g.linkID(&o, c.link)
		if e == era2020 {
			o.boolean("locked", false)
		}
		o.boolean("no_follow", score < 3)
		g.parentID(&o, c)
		g.permalink(&o, c)
		o.boolean("quarantined", false)
		o.null("removal_reason")
		o.int("retrieved_on", c.created+retrievalDelay(r))
		o.int("score", score)
		o.boolean("send_replies", true)
		o.boolean("stickied", mod && c.top)
		o.str("subreddit", c.sub.name)
		o.str("subreddit_id", c.sub.id)
		g.prefixed(&o, c.sub)
		o.str("subreddit_type", "public")
		if e == era2020 {
			o.null("top_awarded_type")
			o.int("total_awards_received", 0)
			o.raw("treatment_tags", "[]")
		}
	default: // era2024
		created := float64(c.created)
		switch {
		case deleted && r.chance(0.5):
			o.key("_meta")
			o.b = append(o.b, `{"removal_type": "deleted", "retrieved_2nd_on": `...)
			o.b = strconv.AppendInt(o.b, c.created+129600+int64(r.intn(7200)), 10)
			o.b = append(o.b, `, "was_deleted_later": true}`...)
		case r.chance(0.9):
			o.key("_meta")
			o.b = append(o.b, `{"retrieved_2nd_on": `...)
			o.b = strconv.AppendInt(o.b, c.created+129600+int64(r.intn(7200)), 10)
			o.b = append(o.b, '}')
		default:
			o.raw("_meta", `{"note": "no_2nd_retrieval"}`)
		}
		o.raw("all_awardings", "[]")
		o.null("approved_at_utc")
		o.null("approved_by")
		o.boolean("archived", false)
		o.null("associated_award")
		g.author(&o, c.author)
		g.flairStyle(&o, flair, deleted)
		if !deleted {
			o.raw("author_flair_richtext", "[]")
		}
		o.null("author_flair_template_id")
		g.flairText(&o, flair)
		if deleted {
			o.str("author_flair_text_color", "dark")
		} else {
			o.null("author_flair_text_color")
			o.str("author_flair_type", "text")
			g.fullname(&o, c.author)
		}
		o.boolean("author_is_blocked", false)
		if !deleted {
			o.boolean("author_patreon_flair", false)
			o.boolean("author_premium", r.chance(0.04))
		}
		o.raw("awarders", "[]")
		o.null("banned_at_utc")
		o.null("banned_by")
		o.strBytes("body", c.body)
		o.boolean("can_gild", false)
		o.boolean("can_mod_post", false)
		o.boolean("collapsed", deleted || mod)
		o.null("collapsed_because_crowd_control")
		o.null("collapsed_reason")
		if deleted {
			o.str("collapsed_reason_code", "DELETED")
		} else {
			o.null("collapsed_reason_code")
		}
		o.null("comment_type")
		o.int("controversiality", b2i(controversial))
		o.float("created", created)
		o.float("created_utc", created)
		g.distinguished(&o, mod)
		o.int("downs", 0)
		if edited > 0 {
			o.float("edited", float64(edited))
		} else {
			o.boolean("edited", false)
		}
		o.int("gilded", 0)
		o.raw("gildings", "{}")
		if !omitID {
			g.commentID(&o, c.id)
		}
		o.boolean("is_submitter", c.submitter)
		o.null("likes")
		g.linkID(&o, c.link)
		o.boolean("locked", false)
		o.null("mod_note")
		o.null("mod_reason_by")
		o.null("mod_reason_title")
		o.raw("mod_reports", "[]")
		g.name(&o, c.id)
		o.boolean("no_follow", score < 3)
		o.int("num_reports", 0)
		g.parentID(&o, c)
		g.permalink(&o, c)
		o.null("removal_reason")
		o.raw("replies", `""`)
		o.raw("report_reasons", "[]")
		o.int("retrieved_on", c.created+15+int64(r.intn(30)))
		o.boolean("saved", false)
		o.int("score", score)
		o.boolean("score_hidden", r.chance(0.02))
		o.boolean("send_replies", true)
		o.boolean("stickied", mod && c.top)
		o.str("subreddit", c.sub.name)
		o.str("subreddit_id", c.sub.id)
		g.prefixed(&o, c.sub)
		o.str("subreddit_type", "public")
		o.null("top_awarded_type")
		o.int("total_awards_received", 0)
		o.raw("treatment_tags", "[]")
		o.null("unrepliable_reason")
		o.int("updated_on", c.created+30+int64(r.intn(30)))
		o.int("ups", score)
		o.raw("user_reports", "[]")
	}
	o.close()
	b = o.b
	if bad && !omitID {
		b = spoil(b, r, reason)
	}
	return append(b, '\n')
}

// retrievalDelay is how long after a record's creation the older dumps
// fetched it: a day to four months (the 2024 layout's few seconds are
// written in place).
func retrievalDelay(r *rng) int64 { return 86400 + int64(r.intn(120*86400)) }

func b2i(v bool) int64 {
	if v {
		return 1
	}
	return 0
}

// commentScore draws a score: mostly 1, heavy-tailed above, now and then
// negative; early top-level comments score higher.
func commentScore(r *rng, c *commentRec) int64 {
	if r.chance(0.08) {
		return 1 - int64(r.pareto(1.5))
	}
	s := int64(r.pareto(1.3))
	if c.top && r.chance(0.3) {
		s *= int64(1 + r.intn(20))
	}
	return min(s, 60000)
}

func (g *redditGen) author(o *jsonObject, a int64) {
	o.key("author")
	o.b = append(o.b, '"')
	o.b = g.appendUserName(o.b, a)
	o.b = append(o.b, '"')
}

func (g *redditGen) fullname(o *jsonObject, a int64) {
	o.key("author_fullname")
	o.b = append(o.b, '"')
	o.b = appendFullname(o.b, a)
	o.b = append(o.b, '"')
}

func (g *redditGen) commentID(o *jsonObject, id uint64) {
	o.key("id")
	o.b = append(o.b, '"')
	o.b = appendBase36(o.b, id)
	o.b = append(o.b, '"')
}

func (g *redditGen) name(o *jsonObject, id uint64) {
	o.key("name")
	o.b = append(o.b, `"t1_`...)
	o.b = appendBase36(o.b, id)
	o.b = append(o.b, '"')
}

func (g *redditGen) linkID(o *jsonObject, link uint64) {
	o.key("link_id")
	o.b = append(o.b, `"t3_`...)
	o.b = appendBase36(o.b, link)
	o.b = append(o.b, '"')
}

func (g *redditGen) parentID(o *jsonObject, c *commentRec) {
	o.key("parent_id")
	if c.parent == 0 {
		o.b = append(o.b, `"t3_`...)
		o.b = appendBase36(o.b, c.link)
	} else {
		o.b = append(o.b, `"t1_`...)
		o.b = appendBase36(o.b, c.parent)
	}
	o.b = append(o.b, '"')
}

func (g *redditGen) permalink(o *jsonObject, c *commentRec) {
	o.key("permalink")
	o.b = append(o.b, `"/r/`...)
	o.b = append(o.b, c.sub.name...)
	o.b = append(o.b, "/comments/"...)
	o.b = appendBase36(o.b, c.link)
	o.b = append(o.b, '/')
	o.b = append(o.b, c.slug...)
	o.b = append(o.b, '/')
	o.b = appendBase36(o.b, c.id)
	o.b = append(o.b, `/"`...)
}

func (g *redditGen) prefixed(o *jsonObject, s *subreddit) {
	o.key("subreddit_name_prefixed")
	o.b = append(o.b, `"r/`...)
	o.b = append(o.b, s.name...)
	o.b = append(o.b, '"')
}

func (g *redditGen) editedInt(o *jsonObject, edited int64) {
	if edited > 0 {
		o.int("edited", edited)
	} else {
		o.boolean("edited", false)
	}
}

func (g *redditGen) distinguished(o *jsonObject, mod bool) {
	if mod {
		o.str("distinguished", "moderator")
	} else {
		o.null("distinguished")
	}
}

func (g *redditGen) flairText(o *jsonObject, flair int) {
	if flair < 0 {
		o.null("author_flair_text")
	} else {
		o.str("author_flair_text", g.flairs[flair])
	}
}

func (g *redditGen) flairCSS(o *jsonObject, flair int) {
	if flair < 0 {
		o.null("author_flair_css_class")
	} else {
		o.key("author_flair_css_class")
		o.b = append(o.b, `"flair-`...)
		o.b = strconv.AppendInt(o.b, int64(flair), 10)
		o.b = append(o.b, '"')
	}
}

// flairStyle writes author_flair_background_color and
// author_flair_css_class.
func (g *redditGen) flairStyle(o *jsonObject, flair int, deleted bool) {
	if deleted || flair >= 0 {
		o.str("author_flair_background_color", "")
	} else {
		o.null("author_flair_background_color")
	}
	g.flairCSS(o, flair)
}
