package synth

import (
	"strconv"
)

// Bodies of Reddit comments. The shares below are of well-formed comments;
// TestRedditProportions measures them.
const (
	pDeletedBody = 0.025 // body "[deleted]", author "[deleted]"
	pRemovedBody = 0.025 // body "[removed]", author "[deleted]" four times in five
	pBot         = 0.020 // author a bot: AutoModerator, RemindMeBot, *bot
	pGoneAuthor  = 0.010 // a human comment whose author deleted the account
	pForeignHere = 0.005 // a comment in another language in an English thread
	pForeignSub  = 0.85  // a comment in the language of a non-English subreddit
	pReaction    = 0.12  // a one-line reaction ("This.", "lol")
	pQuote       = 0.03  // starts with a "&gt; " quote of the parent
	pURL         = 0.030 // a bare URL: https 65%, http 15%, www. 20%
	pMarkdown    = 0.015 // a markdown link [text](url)
	pAmp         = 0.02  // an &amp; entity (AT&amp;T, R&amp;D, "X &amp; Y")
	pSubPrefix   = 0.005 // starts with "/r/<subreddit>"
	pAtPrefix    = 0.003 // starts with "@<user>"
	pMention     = 0.01  // mentions u/<user>
	pEmoji       = 0.03  // one or more emoji
	pEdit        = 0.015 // ends with "Edit: ..."
	pLowercase   = 0.15  // written all in lower case, first letter included
	pList        = 0.01  // holds a bulleted list
	pZeroWidth   = 0.003 // holds "&#x200B;", the zero-width space of the new editor
	// sentenceAlpha shapes the number of sentences of a comment, P(n >= x)
	// = x^-alpha up to maxSentences: about one comment in ten runs past 350
	// characters. An essay (pEssay) has 40 to 200 sentences, 2 to 10 KB
	// (capped at Reddit's 10,000 characters).
	sentenceAlpha = 1.0
	maxSentences  = 40
	pEssay        = 0.003
	maxBodyBytes  = 10000
)

// botNames returns the bots: each a name ending in "bot" (any case), or
// AutoModerator.
func botNames() []string {
	return []string{
		"AutoModerator", "AutoModerator", "AutoModerator", "AutoModerator", "AutoModerator", "AutoModerator",
		"RemindMeBot", "RemindMeBot", "WikiSummarizerBot", "sneakpeekbot", "haikusbot", "converter-bot",
		"LinkifyBot", "RepostSleuthBot", "timezone_bot", "xkcd_bot", "image_linker_bot", "exclaim_bot",
	}
}

const b64url = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_"
const alnum = "abcdefghijklmnopqrstuvwxyz0123456789"

func appendRandom(b []byte, r *rng, alphabet string, n int) []byte {
	for range n {
		b = append(b, alphabet[r.intn(len(alphabet))])
	}
	return b
}

// appendURL writes a URL: https (65%), http (15%) or a bare www. host
// (20%).
func (g *redditGen) appendURL(b []byte, r *rng) []byte {
	u := r.float()
	switch {
	case u < 0.15:
		switch r.intn(3) {
		case 0:
			b = append(b, "http://imgur.com/"...)
			return appendRandom(b, r, b64url[:62], 7)
		case 1:
			b = append(b, "http://www.google.com/search?q="...)
			b = append(b, g.en.nouns[g.en.nA.sample(r)].sg...)
			b = append(b, '+')
			return append(b, g.en.nouns[g.en.nA.sample(r)].sg...)
		default:
			b = append(b, "http://www."...)
			b = append(b, g.en.nouns[g.en.nA.sample(r)].sg...)
			b = append(b, "forum.net/showthread.php?t="...)
			return strconv.AppendInt(b, int64(r.intn(900000)+1000), 10)
		}
	case u < 0.35:
		b = append(b, "www."...)
		b = append(b, g.en.nouns[g.en.nA.sample(r)].sg...)
		b = append(b, g.en.nouns[g.en.nA.sample(r)].sg...)
		return append(b, pick(r, []string{".com", ".com", ".org", ".net", ".co.uk", ".de"})...)
	}
	switch r.intn(8) {
	case 0:
		b = append(b, "https://www.youtube.com/watch?v="...)
		return appendRandom(b, r, b64url, 11)
	case 1:
		b = append(b, "https://youtu.be/"...)
		return appendRandom(b, r, b64url, 11)
	case 2:
		b = append(b, "https://en.wikipedia.org/wiki/"...)
		b = append(b, g.en.propers[g.en.pA.sample(r)]...)
		if r.chance(0.5) {
			b = append(b, '_')
			n := g.en.nouns[g.en.nA.sample(r)].sg
			b = append(b, n[0]-('a'-'A'))
			b = append(b, n[1:]...)
		}
		return b
	case 3:
		b = append(b, "https://i.imgur.com/"...)
		b = appendRandom(b, r, b64url[:62], 7)
		return append(b, ".jpg"...)
	case 4:
		b = append(b, "https://www.reddit.com/r/"...)
		b = append(b, g.subs[g.subA.sample(r)].name...)
		b = append(b, "/comments/"...)
		b = appendRandom(b, r, alnum, 6)
		return append(b, '/')
	case 5:
		b = append(b, "https://twitter.com/"...)
		b = g.appendUserName(b, zipfLarge(r, authorPool))
		b = append(b, "/status/17"...)
		return appendRandom(b, r, "0123456789", 17)
	case 6:
		b = append(b, "https://www.amazon.com/dp/B0"...)
		return appendRandom(b, r, "ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789", 8)
	}
	b = append(b, "https://github.com/"...)
	b = g.appendUserName(b, zipfLarge(r, authorPool))
	b = append(b, '/')
	return append(b, g.en.nouns[g.en.nA.sample(r)].sg...)
}

// humanBody writes the body of a comment by a person in lang.
func (g *redditGen) humanBody(b []byte, r *rng, th *thread, top bool, lang string) []byte {
	start := len(b)
	if lang != "en" {
		return g.foreignBody(b, r, lang)
	}
	if r.chance(pSubPrefix) {
		b = append(b, "/r/"...)
		b = append(b, g.subs[g.subA.sample(r)].name...)
		b = append(b, pick(r, []string{" ", " would love this. ", " is that way. ", "\n\n"})...)
	} else if r.chance(pAtPrefix / (1 - pSubPrefix)) {
		b = append(b, '@')
		b = g.appendUserName(b, zipfLarge(r, authorPool))
		b = append(b, ' ')
	}
	if r.chance(pReaction) {
		return append(b, pick(r, g.reactions)...)
	}
	lower := r.chance(pLowercase)
	if r.chance(pQuote) {
		b = append(b, "&gt; "...)
		b = g.en.sentence(b, r, kindStatement, lower)
		b = append(b, "\n\n"...)
	}
	n := min(int(r.pareto(sentenceAlpha)), maxSentences)
	if r.chance(pEssay) {
		n = r.rangeIn(40, 200)
	}
	kind := kindStatement
	if top && r.chance(0.2) {
		kind = kindQuestion
	} else if !top && r.chance(0.35) {
		kind = kindAnswer
	}
	url := r.chance(pURL)
	md := r.chance(pMarkdown)
	amp := r.chance(pAmp)
	mention := r.chance(pMention)
	emoji := r.chance(pEmoji)
	list := r.chance(pList)
	zw := r.chance(pZeroWidth)
	for i := range n {
		if i > 0 {
			if i%r.rangeIn(2, 5) == 0 {
				b = append(b, "\n\n"...)
				if zw {
					b = append(b, "&#x200B;\n\n"...)
					zw = false
				}
			} else {
				b = append(b, ' ')
			}
		}
		b = g.en.sentence(b, r, kind, lower)
		if i == 0 {
			kind = kindStatement
			if r.chance(0.15) {
				kind = kindQuestion
			}
		} else if r.chance(0.1) {
			kind = kindQuestion
		} else {
			kind = kindStatement
		}
		if len(b)-start > maxBodyBytes-600 {
			break
		}
	}
	if amp {
		b = append(b, ' ')
		b = append(b, pick(r, []string{
			"Same thing happened with AT&amp;T.", "Their R&amp;D budget is tiny.", "There was a Q&amp;A about it.",
			"Salt &amp; pepper is all you need.", "Rock &amp; roll.", "Terms &amp; conditions apply, of course.",
		})...)
	}
	if list {
		b = append(b, "\n\n"...)
		for range r.rangeIn(2, 5) {
			b = append(b, pick(r, []string{"* ", "- ", "1. "})...)
			b = append(b, g.en.nouns[g.en.nA.sample(r)].sg...)
			b = append(b, ' ')
			b = append(b, g.en.adjs[g.en.aA.sample(r)]...)
			b = append(b, '\n')
		}
		b = b[:len(b)-1]
	}
	if mention {
		b = append(b, pick(r, []string{" Thanks u/", " Paging u/", " cc u/", " Agreed with u/"})...)
		b = g.appendUserName(b, zipfLarge(r, authorPool))
	}
	if url {
		b = append(b, pick(r, []string{" ", " Source: ", "\n\n", " See "})...)
		b = g.appendURL(b, r)
	}
	if md {
		b = append(b, pick(r, []string{" [Here's the link](", " [source](", " Check out [this ", " [Wikipedia]("})...)
		if b[len(b)-1] == ' ' {
			b = append(b, g.en.nouns[g.en.nA.sample(r)].sg...)
			b = append(b, "]("...)
		}
		b = g.appendURL(b, r)
		b = append(b, ')')
	}
	if emoji {
		for range 1 + r.intn(3) {
			b = append(b, ' ')
			b = append(b, pick(r, g.emoji)...)
		}
	}
	if r.chance(pEdit) {
		b = append(b, pick(r, []string{"\n\nEdit: ", "\n\nEDIT: ", "\n\nedit: ", "\n\n**Edit:** "})...)
		if r.chance(0.3) {
			b = append(b, pick(r, []string{"typo", "thanks for the gold, kind stranger!", "wow this blew up", "spelling", "a word"})...)
		} else {
			b = g.en.sentence(b, r, kindStatement, lower)
		}
	}
	return b
}

// foreignBody writes a comment in lang ("fr", "de", "ja", "ru").
func (g *redditGen) foreignBody(b []byte, r *rng, lang string) []byte {
	list := g.foreignSentences(lang)
	n := min(int(r.pareto(1.6)), 12)
	for i := range n {
		if i > 0 && lang != "ja" {
			b = append(b, ' ')
		}
		b = append(b, pick(r, list)...)
	}
	if r.chance(pEmoji) {
		b = append(b, ' ')
		b = append(b, pick(r, g.emoji)...)
	}
	if r.chance(0.03) {
		b = append(b, ' ')
		b = g.appendURL(b, r)
	}
	return b
}

// foreignSentences returns the sentences of lang: "fr", "de", "ja" or
// "ru".
func (g *redditGen) foreignSentences(lang string) []string {
	switch lang {
	case "fr":
		return g.french
	case "de":
		return g.german
	case "ja":
		return g.japanese
	}
	return g.russian
}

// commentRef is a comment's id, its parent's id and when it was created.
type commentRef struct {
	id, parent uint64
	created    int64
}

// botBody writes the body of bot's comment c.
func (g *redditGen) botBody(b []byte, r *rng, bot string, th *thread, c commentRef) []byte {
	id, parent, created := c.id, c.parent, c.created
	sub := g.subs[th.sub].name
	switch bot {
	case "AutoModerator":
		switch r.intn(3) {
		case 0:
			b = append(b, "Thank you for posting to r/"...)
			b = append(b, sub...)
			b = append(b, "! Please make sure you have read the [rules](https://www.reddit.com/r/"...)
			b = append(b, sub...)
			b = append(b, "/wiki/rules) before commenting.\n\n"...)
		case 1:
			b = append(b, "Hello u/"...)
			b = g.appendUserName(b, th.op)
			b = append(b, ", your submission has been removed because your account does not meet the minimum age or karma requirements of r/"...)
			b = append(b, sub...)
			b = append(b, ".\n\n"...)
		default:
			b = append(b, "**Reminder:** this is a subreddit for discussion &amp; questions. Low effort comments will be removed.\n\n"...)
		}
		b = append(b, "*I am a bot, and this action was performed automatically. Please [contact the moderators of this subreddit](/message/compose/?to=/r/"...)
		b = append(b, sub...)
		return append(b, ") if you have any questions or concerns.*"...)
	case "RemindMeBot":
		days := 1 + r.intn(30)
		b = append(b, "I will be messaging you in "...)
		b = strconv.AppendInt(b, int64(days), 10)
		b = append(b, " days on [**"...)
		b = appendUTC(b, created+int64(days)*86400)
		b = append(b, " UTC**](http://www.wolframalpha.com/input/?i="...)
		b = appendUTC(b, created+int64(days)*86400)
		b = append(b, "%20UTC%20To%20Local%20Date) to remind you of [**this link**](https://www.reddit.com/r/"...)
		b = append(b, sub...)
		b = append(b, "/comments/"...)
		b = appendBase36(b, th.link)
		b = append(b, '/')
		b = append(b, th.slug...)
		b = append(b, '/')
		b = appendBase36(b, parent)
		b = append(b, "/?context=3)\n\n[**CLICK THIS LINK**](https://www.reddit.com/message/compose/?to=RemindMeBot&amp;subject=Reminder&amp;message=%5Bhttps%3A%2F%2Fwww.reddit.com%2Fr%2F"...)
		b = append(b, sub...)
		b = append(b, "%5D%0A%0ARemindMe%21%20"...)
		b = strconv.AppendInt(b, int64(days), 10)
		b = append(b, "%20days) to send a PM to also be reminded and to reduce spam.\n\n^(Parent commenter can ) [^(delete this message to hide from others.)](https://www.reddit.com/message/compose/?to=RemindMeBot&amp;subject=Delete%20Comment&amp;message=Delete%21%20"...)
		b = appendBase36(b, id)
		b = append(b, ")\n\n*****\n\n|[^(Info)](https://www.reddit.com/r/RemindMeBot/comments/e1bko7/remindmebot_info_v21/)|[^(Custom)](https://www.reddit.com/message/compose/?to=RemindMeBot&amp;subject=Reminder&amp;message=%5BLink%20or%20message%20inside%20square%20brackets%5D%0A%0ARemindMe%21%20Time%20period%20here)|[^(Your Reminders)](https://www.reddit.com/message/compose/?to=RemindMeBot&amp;subject=List%20Of%20Reminders&amp;message=MyReminders%21)|[^(Feedback)](https://www.reddit.com/message/compose/?to=Watchful1&amp;subject=RemindMeBot%20Feedback)|\n|-|-|-|-|"...)
		return b
	case "WikiSummarizerBot":
		p := g.en.propers[g.en.pA.sample(r)]
		b = append(b, "**["...)
		b = append(b, p...)
		b = append(b, "](https://en.wikipedia.org/wiki/"...)
		b = append(b, p...)
		b = append(b, ")** \n \n &gt;"...)
		for i := range 1 + r.intn(3) {
			if i > 0 {
				b = append(b, ' ')
			}
			b = g.en.sentence(b, r, kindStatement, false)
		}
		return append(b, "\n\n^([ )^(F.A.Q)^( | )[^(Opt Out)](https://old.reddit.com/message/compose?to=WikiSummarizerBot&amp;message=OptOut&amp;subject=OptOut)^( | )[^(Opt Out Of Subreddit)](https://np.reddit.com/r/"+sub+"/about/banned)^( | )[^(GitHub)](https://github.com/Sujal-7/WikiSummarizerBot)^( ] Downvote to remove | v1.5)"...)
	case "haikusbot":
		for range 3 {
			b = g.en.sentence(b, r, kindStatement, true)
			b = b[:len(b)-1]
			b = append(b, "\n\n"...)
		}
		b = append(b, "\\- "...)
		b = g.appendUserName(b, zipfLarge(r, authorPool))
		return append(b, "\n\n---\n\n^(I detect haikus. And sometimes, successfully.) ^[Learn&#32;more&#32;about&#32;me.](https://www.reddit.com/r/haikusbot/)\n\n^(Opt out of replies: \"haikusbot opt out\" | Delete my comment: \"haikusbot delete\")"...)
	case "converter-bot":
		n := 1 + r.intn(200)
		b = strconv.AppendInt(b, int64(n), 10)
		b = append(b, " miles is "...)
		b = strconv.AppendFloat(b, float64(n)*1.609, 'f', 2, 64)
		return append(b, " km"...)
	case "RepostSleuthBot":
		b = append(b, "Looks like a repost. I've seen this image "...)
		b = strconv.AppendInt(b, int64(1+r.intn(40)), 10)
		return append(b, " times.\n\n*I'm not perfect, but you can help. Report [ [False Positive](https://www.reddit.com/message/compose/?to=RepostSleuthBot&amp;subject=False%20Positive) ]*"...)
	case "sneakpeekbot":
		s := g.subs[g.subA.sample(r)].name
		return append(b, "Here's a sneak peek of /r/"+s+" using the [top posts](https://np.reddit.com/r/"+s+"/top/?sort=top&amp;t=year) of the year!\n\n^^I'm ^^a ^^bot, ^^beep ^^boop"...)
	}
	// Short utility bots.
	b = append(b, pick(r, []string{
		"Here is the link you asked for: ", "I fixed your link: ", "Relevant xkcd: ", "Image mirror: ",
	})...)
	return g.appendURL(b, r)
}

// appendUTC writes a Unix time as "2024-02-03 14:05:12".
func appendUTC(b []byte, t int64) []byte {
	days := t / 86400
	secs := t % 86400
	y, m, d := civil(days)
	b = strconv.AppendInt(b, y, 10)
	b = append(b, '-', byte('0'+m/10), byte('0'+m%10), '-', byte('0'+d/10), byte('0'+d%10), ' ')
	h, mi, s := secs/3600, secs/60%60, secs%60
	return append(b, byte('0'+h/10), byte('0'+h%10), ':', byte('0'+mi/10), byte('0'+mi%10), ':', byte('0'+s/10), byte('0'+s%10))
}

// civil converts days since 1970-01-01 to a date (Howard Hinnant's
// algorithm).
func civil(z int64) (y, m, d int64) {
	z += 719468
	era := z / 146097
	doe := z - era*146097
	yoe := (doe - doe/1460 + doe/36524 - doe/146096) / 365
	y = yoe + era*400
	doy := doe - (365*yoe + yoe/4 - yoe/100)
	mp := (5*doy + 2) / 153
	d = doy - (153*mp+2)/5 + 1
	if mp < 10 {
		m = mp + 3
	} else {
		m = mp - 9
	}
	if m <= 2 {
		y++
	}
	return y, m, d
}
