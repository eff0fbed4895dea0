package synth

import (
	"strconv"

	"github.com/parastream/parastream/corpora"
)

// Shares of submissions.
const (
	pSelfPost          = 0.5  // a text post; the others link out
	pDeletedPost       = 0.03 // selftext "[deleted]", author "[deleted]"
	pRemovedPost       = 0.03 // selftext "[removed]"
	pOver18            = 0.04
	subscribersPerRank = 40e6
)

// threadHead is what a thread's submission is written from: its link id,
// subreddit index, author, title and slug, and when it was opened (ms).
type threadHead struct {
	link        uint64
	sub         int
	op          int64
	title, slug string
	now         int64
}

// submission writes the RS record of thread h. r is the thread's own
// generator.
func (g *redditGen) submission(r *rng, h threadHead) {
	link, sub, op, title, slug, now := h.link, h.sub, h.op, h.title, h.slug, h.now
	st := &g.statsS
	st.Threads++
	st.Rows++
	var reason corpora.Reason
	if g.cfg.MalformedRate > 0 && r.chance(g.cfg.MalformedRate) {
		reason = pick(r, g.malformed)
		st.malformed(reason)
	}
	e := g.pickEra(r)
	s := &g.subs[sub]
	created := now / 1000
	author := op
	self := r.chance(pSelfPost)
	g.tmp = g.tmp[:0]
	u := r.float()
	switch {
	case u < pDeletedPost:
		author = authorDeleted
		if self {
			g.tmp = append(g.tmp, "[deleted]"...)
		}
	case u < pDeletedPost+pRemovedPost:
		if self {
			g.tmp = append(g.tmp, "[removed]"...)
		}
	case self:
		if r.chance(0.2) {
			break // a title alone
		}
		n := min(int(r.pareto(1.1)), 60)
		for i := range n {
			if i > 0 {
				g.tmp = append(g.tmp, pick(r, []string{" ", " ", "\n\n"})...)
			}
			if s.lang == "en" {
				g.tmp = g.en.sentence(g.tmp, r, kindStatement, false)
			} else {
				g.tmp = g.foreignBody(g.tmp, r, s.lang)
			}
		}
	}
	selftext := g.tmp
	var url, domain []byte
	if self {
		domain = append(domain, "self."...)
		domain = append(domain, s.name...)
		url = append(url, "https://www.reddit.com/r/"...)
		url = append(url, s.name...)
		url = append(url, "/comments/"...)
		url = appendBase36(url, link)
		url = append(url, '/')
		url = append(url, slug...)
		url = append(url, '/')
	} else {
		switch r.intn(3) {
		case 0:
			domain = append(domain, "i.redd.it"...)
			url = append(url, "https://i.redd.it/"...)
			url = appendRandom(url, r, alnum, 13)
			url = append(url, pick(r, []string{".jpeg", ".png", ".gif"})...)
		case 1:
			domain = append(domain, "youtube.com"...)
			url = append(url, "https://www.youtube.com/watch?v="...)
			url = appendRandom(url, r, b64url, 11)
		default:
			domain = append(domain, pick(r, []string{"nytimes.com", "bbc.co.uk", "theguardian.com", "reuters.com", "lemonde.fr", "spiegel.de"})...)
			url = append(url, "https://www."...)
			url = append(url, domain...)
			url = append(url, "/2024/"...)
			url = append(url, slug...)
			url = append(url, ".html"...)
		}
	}
	score := int64(r.pareto(1.2))
	over18 := r.chance(pOver18)
	subscribers := int64(subscribersPerRank / float64(sub+1) * (0.5 + r.float()))

	b := g.buf[:0]
	o := jsonObject{b: b}
	o.open()
	id := func() {
		if reason != corpora.ReasonMissingField {
			o.key("id")
			o.b = append(o.b, '"')
			o.b = appendBase36(o.b, link)
			o.b = append(o.b, '"')
		}
	}
	name := func() {
		o.key("name")
		o.b = append(o.b, `"t3_`...)
		o.b = appendBase36(o.b, link)
		o.b = append(o.b, '"')
	}
	permalink := func() {
		o.key("permalink")
		o.b = append(o.b, `"/r/`...)
		o.b = append(o.b, s.name...)
		o.b = append(o.b, "/comments/"...)
		o.b = appendBase36(o.b, link)
		o.b = append(o.b, '/')
		o.b = append(o.b, slug...)
		o.b = append(o.b, `/"`...)
	}
	thumb := "self"
	if !self {
		thumb = "default"
	}
	if over18 {
		thumb = "nsfw"
	}
	switch e {
	case era2005, era2012:
		o.boolean("archived", true)
		g.author(&o, author)
		o.null("author_flair_css_class")
		o.null("author_flair_text")
		if e == era2012 {
			o.key("created_utc")
			o.b = append(o.b, '"')
			o.b = strconv.AppendInt(o.b, created, 10)
			o.b = append(o.b, '"')
		} else {
			o.int("created_utc", created)
		}
		o.null("distinguished")
		o.strBytes("domain", domain)
		o.int("downs", 0)
		o.boolean("edited", false)
		o.int("gilded", 0)
		o.boolean("hide_score", false)
		id()
		o.boolean("is_self", self)
		o.null("link_flair_css_class")
		o.null("link_flair_text")
		o.null("media")
		o.raw("media_embed", "{}")
		name()
		o.int("num_comments", int64(r.intn(50)))
		o.boolean("over_18", over18)
		permalink()
		o.boolean("quarantine", false)
		o.int("retrieved_on", created+retrievalDelay(r))
		o.int("score", score)
		o.null("secure_media")
		o.raw("secure_media_embed", "{}")
		o.strBytes("selftext", selftext)
		o.boolean("stickied", false)
		o.str("subreddit", s.name)
		o.str("subreddit_id", s.id)
		o.str("thumbnail", thumb)
		o.str("title", title)
		o.int("ups", score)
		o.strBytes("url", url)
	default:
		o.raw("_meta", `{"retrieved_2nd_on": 1706875209}`)
		o.raw("all_awardings", "[]")
		o.boolean("allow_live_comments", false)
		o.null("approved_at_utc")
		o.null("approved_by")
		o.boolean("archived", false)
		g.author(&o, author)
		o.null("author_flair_background_color")
		o.null("author_flair_css_class")
		o.raw("author_flair_richtext", "[]")
		o.null("author_flair_template_id")
		o.null("author_flair_text")
		o.null("author_flair_text_color")
		o.str("author_flair_type", "text")
		if author != authorDeleted {
			g.fullname(&o, author)
		}
		o.boolean("author_is_blocked", false)
		o.boolean("author_patreon_flair", false)
		o.boolean("author_premium", false)
		o.raw("awarders", "[]")
		o.null("banned_at_utc")
		o.null("banned_by")
		o.boolean("can_gild", false)
		o.boolean("can_mod_post", false)
		o.null("category")
		o.boolean("clicked", false)
		o.null("content_categories")
		o.boolean("contest_mode", false)
		if e == era2024 {
			o.float("created", float64(created))
			o.float("created_utc", float64(created))
		} else {
			o.int("created_utc", created)
		}
		o.null("discussion_type")
		o.null("distinguished")
		o.strBytes("domain", domain)
		o.int("downs", 0)
		o.boolean("edited", false)
		o.int("gilded", 0)
		o.raw("gildings", "{}")
		o.boolean("hidden", false)
		o.boolean("hide_score", false)
		id()
		o.boolean("is_created_from_ads_ui", false)
		o.boolean("is_crosspostable", true)
		o.boolean("is_meta", false)
		o.boolean("is_original_content", false)
		o.boolean("is_reddit_media_domain", string(domain) == "i.redd.it")
		o.boolean("is_robot_indexable", true)
		o.boolean("is_self", self)
		o.boolean("is_video", false)
		o.null("likes")
		o.str("link_flair_background_color", "")
		o.null("link_flair_css_class")
		o.raw("link_flair_richtext", "[]")
		o.null("link_flair_text")
		o.str("link_flair_text_color", "dark")
		o.str("link_flair_type", "text")
		o.boolean("locked", false)
		o.null("media")
		o.raw("media_embed", "{}")
		o.boolean("media_only", false)
		o.null("mod_note")
		o.null("mod_reason_by")
		o.null("mod_reason_title")
		o.raw("mod_reports", "[]")
		name()
		o.boolean("no_follow", true)
		o.int("num_comments", 0)
		o.int("num_crossposts", 0)
		o.int("num_reports", 0)
		o.boolean("over_18", over18)
		o.str("parent_whitelist_status", "all_ads")
		permalink()
		o.boolean("pinned", false)
		o.int("pwls", 6)
		o.boolean("quarantine", false)
		o.null("removal_reason")
		o.null("removed_by")
		o.null("removed_by_category")
		o.raw("report_reasons", "[]")
		o.int("retrieved_on", created+15+int64(r.intn(30)))
		o.boolean("saved", false)
		o.int("score", score)
		o.null("secure_media")
		o.raw("secure_media_embed", "{}")
		o.strBytes("selftext", selftext)
		o.boolean("send_replies", true)
		o.boolean("spoiler", false)
		o.boolean("stickied", false)
		o.str("subreddit", s.name)
		o.str("subreddit_id", s.id)
		g.prefixed(&o, s)
		o.int("subreddit_subscribers", subscribers)
		o.str("subreddit_type", "public")
		o.null("suggested_sort")
		o.str("thumbnail", thumb)
		o.null("thumbnail_height")
		o.null("thumbnail_width")
		o.str("title", title)
		o.null("top_awarded_type")
		o.int("total_awards_received", 0)
		o.raw("treatment_tags", "[]")
		o.int("updated_on", created+30+int64(r.intn(30)))
		o.int("ups", score)
		o.float("upvote_ratio", float64(50+r.intn(51))/100)
		o.strBytes("url", url)
		o.raw("user_reports", "[]")
		o.null("view_count")
		o.boolean("visited", false)
		o.null("whitelist_status")
		o.null("wls")
	}
	o.close()
	b = o.b
	if reason != "" && reason != corpora.ReasonMissingField {
		b = spoil(b, r, reason)
	}
	b = append(b, '\n')
	g.buf = b
	g.outS.write(b)
	if st.Rows%progressEvery == 0 {
		st.Bytes = g.outS.n
	}
}
