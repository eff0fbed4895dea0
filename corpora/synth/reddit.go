package synth

import (
	"bytes"
	"fmt"
	"io"
	"math"

	"github.com/parastream/parastream/corpora"
)

// Reddit writes cfg.Rows pushshift comment records (RC_* dumps), one JSON
// object a line, in created_utc order, organised in threads. See the
// package documentation for the shares of each kind of comment.
func Reddit(w io.Writer, cfg Config) (Stats, error) {
	c, _, err := RedditThreads(w, nil, cfg)
	return c, err
}

// RedditSubmissions writes the submissions (RS_* records) of the threads
// that Reddit writes for the same cfg: it runs the same generator and
// drops the comments. The Stats count submissions; Threads is their
// number.
func RedditSubmissions(w io.Writer, cfg Config) (Stats, error) {
	_, s, err := RedditThreads(io.Discard, w, cfg)
	return s, err
}

// RedditThreads writes cfg.Rows comments to comments and, where
// submissions is not nil, the submission of every thread opened on the
// way, each written at the time its thread opens (so both files are in
// created_utc order, and a thread's submission comes before its first
// comment in time). The comments are the same bytes with or without
// submissions. Malformed records are written to both at cfg.MalformedRate.
func RedditThreads(comments, submissions io.Writer, cfg Config) (cs, ss Stats, err error) {
	if err := cfg.Validate(); err != nil {
		return cs, ss, err
	}
	g := newRedditGen(cfg.withDefaults())
	g.outC = newOutput(comments)
	if submissions != nil {
		g.outS = newOutput(submissions)
	}
	err = g.run()
	return g.statsC, g.statsS, err
}

// Thread shapes.
const (
	// threadSizeAlpha shapes the comments a thread gets: P(S >= s) =
	// s^-alpha for a thread with comments, so most threads have 1 to 20
	// and about one in two hundred a hundred or more.
	threadSizeAlpha = 1.15
	maxThreadSize   = 5000
	// pEmptyThread is the share of submissions that get no comment.
	pEmptyThread = 0.35
	// A thread's comments arrive as the order statistics of exponential
	// delays after the submission; their time scale is log-normal with
	// this median (seconds) and spread, longer for bigger threads.
	threadTauMedian = 1200.0
	threadTauSigma  = 1.0
	maxThreadTau    = 86400.0
	// recentComments is how many of a thread's latest comments a reply can
	// answer.
	recentComments = 24
	// authorPool is the number of distinct authors; their activity follows
	// a Zipf law.
	authorPool = 3e6
)

// Author indexes below zero are special.
const (
	authorDeleted = -1
	authorBot     = -2 // minus the index in botNames
)

type thread struct {
	link    uint64 // the submission's id, as a number
	sub     int
	op      int64 // the submission's author
	slug    string
	lang    string
	size    int32
	done    int32
	origin  int64   // the submission's time, ms
	offset  float64 // the last comment's delay, seconds
	tau     float64
	next    int64 // the next comment's time, ms
	heapAt  int
	nrecent int
	recent  [recentComments]struct {
		id     uint64
		author int64
	}
}

type redditGen struct {
	cfg    Config
	r      *rng
	en     *english
	subs   []subreddit
	subA   *alias
	outC   *output
	outS   *output
	statsC Stats
	statsS Stats
	eraMix *alias // the eras of a "mixed" file

	// Text and names drawn from: see the functions of the same names.
	reactions, emoji                  []string
	french, german, japanese, russian []string
	bots, flairs                      []string
	malformed                         []corpora.Reason

	heap        []*thread
	free        []*thread
	nextComment uint64
	nextLink    uint64
	arrival     int64 // the next thread's time, ms
	arrivalGap  float64

	buf  []byte
	body []byte
	tmp  []byte
}

// The first ids, as in the dump RC_2024-02: comment "kod0bkd", submission
// "1afwvv8".
const (
	firstComment = 45008669952 // "kod0000" in base 36
	firstLink    = 2808131328  // "1afw000"
)

func newRedditGen(cfg Config) *redditGen {
	g := &redditGen{cfg: cfg, r: newRNG(mix(cfg.Seed) ^ 0x5eddf00d), en: newEnglish(), subs: newSubreddits()}
	g.subA = zipfAlias(len(g.subs), 1.0, 3)
	g.eraMix = newEraMix()
	g.reactions, g.emoji = reactionList(), emojiList()
	g.french, g.german, g.japanese, g.russian = frenchSentences(), germanSentences(), japaneseSentences(), russianSentences()
	g.bots, g.flairs = botNames(), flairs()
	g.malformed = redditMalformed()
	g.nextComment = firstComment + mix(cfg.Seed)%1000
	g.nextLink = firstLink + mix(cfg.Seed+1)%1000
	// Threads open as a Poisson process whose rate gives cfg.CommentRate
	// comments a second on average.
	meanSize := (1 - pEmptyThread) * meanThreadSize()
	g.arrivalGap = meanSize / cfg.CommentRate
	g.arrival = cfg.Start.UnixMilli()
	return g
}

// meanThreadSize is the mean of the size law of threads with comments.
func meanThreadSize() float64 {
	a := threadSizeAlpha
	// E[min(floor(X), cap)] for P(X > x) = x^-a, x >= 1: sum of P(X >= k).
	s := 0.0
	for k := 1; k <= maxThreadSize; k++ {
		s += math.Pow(float64(k), -a)
	}
	return s
}

func (g *redditGen) run() error {
	cfg := g.cfg
	outs := []*output{g.outC}
	if g.outS != nil {
		outs = append(outs, g.outS)
	}
	for g.statsC.Rows < cfg.Rows {
		if len(g.heap) == 0 || g.arrival <= g.heap[0].next {
			if len(g.heap) >= cfg.MaxActiveThreads {
				g.arrival = g.heap[0].next + 1
				continue
			}
			g.openThread()
			continue
		}
		g.comment(g.heap[0])
		g.statsC.Rows++
		if g.statsC.Rows%progressEvery == 0 {
			if err := g.progress(outs); err != nil {
				return err
			}
		}
	}
	errC := finish(&g.statsC, []*output{g.outC})
	if g.outS != nil {
		if err := finish(&g.statsS, []*output{g.outS}); err != nil && errC == nil {
			errC = err
		}
	}
	return errC
}

func (g *redditGen) progress(outs []*output) error {
	for _, o := range outs {
		if o.err != nil {
			return o.err
		}
	}
	g.statsC.Bytes = g.outC.n
	if g.outS != nil {
		g.statsS.Bytes = g.outS.n
	}
	if g.cfg.Progress != nil {
		return g.cfg.Progress(g.statsC)
	}
	return nil
}

// openThread opens the thread of the next arrival and schedules the one
// after.
func (g *redditGen) openThread() {
	r := g.r
	now := g.arrival
	g.arrival += int64(math.Ceil(r.exp() * g.arrivalGap * 1000))
	link := g.nextLink
	g.nextLink++
	g.statsC.Threads++
	seed := r.next()
	sub := g.subA.sample(r)
	size := 0
	if !r.chance(pEmptyThread) {
		size = min(int(r.pareto(threadSizeAlpha)), maxThreadSize)
	}
	op := zipfLarge(r, authorPool)
	// The submission's own text comes from its own generator, so that the
	// comments do not depend on whether submissions are written.
	if size == 0 && g.outS == nil {
		return
	}
	tr := newRNG(seed)
	title := g.title(tr, g.subs[sub].lang)
	slug := slugOf(title)
	if g.outS != nil {
		g.submission(tr, threadHead{link: link, sub: sub, op: op, title: title, slug: slug, now: now})
	}
	if size == 0 {
		return
	}
	th := g.newThread()
	*th = thread{link: link, sub: sub, op: op, slug: slug, lang: g.subs[sub].lang, size: int32(size), origin: now}
	th.tau = math.Min(threadTauMedian*math.Exp(threadTauSigma*r.normal())*(1+math.Log10(float64(size))), maxThreadTau)
	th.offset = 30 + th.tau*r.exp()/float64(size)
	th.next = now + int64(th.offset*1000)
	g.push(th)
}

func (g *redditGen) newThread() *thread {
	if n := len(g.free); n > 0 {
		th := g.free[n-1]
		g.free = g.free[:n-1]
		return th
	}
	return new(thread)
}

// title writes a submission title.
func (g *redditGen) title(r *rng, lang string) string {
	g.tmp = g.tmp[:0]
	if lang != "en" {
		return pick(r, g.foreignSentences(lang))
	}
	kind := kindStatement
	if r.chance(0.4) {
		kind = kindQuestion
	}
	g.tmp = g.en.sentence(g.tmp, r, kind, false)
	if r.chance(0.1) {
		g.tmp = bytes.ToUpper(g.tmp)
	}
	return string(g.tmp)
}

// slugOf makes the permalink slug of a title: lower-case words of ASCII
// letters and digits joined by "_", at most 50 bytes.
func slugOf(title string) string {
	var buf [64]byte
	b := buf[:0]
	sep := false
	for i := 0; i < len(title) && len(b) < 50; i++ {
		c := title[i]
		switch {
		case c >= 'A' && c <= 'Z':
			c += 'a' - 'A'
			fallthrough
		case c >= 'a' && c <= 'z', c >= '0' && c <= '9':
			if sep && len(b) > 0 {
				b = append(b, '_')
			}
			sep = false
			b = append(b, c)
		case c == '\'':
		default:
			sep = true
		}
	}
	if len(b) == 0 {
		return "comment"
	}
	return string(b)
}

// pTopLevel is the chance that the k-th comment of a thread (from 0)
// answers the submission rather than a comment.
func pTopLevel(k int32) float64 {
	if k == 0 {
		return 1
	}
	return 0.3 + 0.6/math.Sqrt(float64(k)+1)
}

// comment writes the next comment of th and reschedules the thread.
func (g *redditGen) comment(th *thread) {
	r := g.r
	id := g.nextComment
	g.nextComment++
	created := th.next / 1000
	bad := g.cfg.MalformedRate > 0 && r.chance(g.cfg.MalformedRate)

	// Who, and in answer to what.
	top := th.nrecent == 0 || r.chance(pTopLevel(th.done))
	var parent uint64
	var parentAuthor int64 = -100
	if !top {
		n := min(th.nrecent, recentComments)
		back := min(int(r.exp()*2.5), n-1) // mostly the latest comments
		slot := (th.nrecent - 1 - back) % recentComments
		parent = th.recent[slot].id
		parentAuthor = th.recent[slot].author
	}
	var author int64
	body := g.body[:0]
	u := r.float()
	switch {
	case u < pDeletedBody:
		author = authorDeleted
		body = append(body, "[deleted]"...)
	case u < pDeletedBody+pRemovedBody:
		author = authorDeleted
		if r.chance(0.2) {
			author = g.humanAuthor(r, th, parentAuthor)
		}
		body = append(body, "[removed]"...)
	case u < pDeletedBody+pRemovedBody+pBot:
		bi := r.intn(len(g.bots))
		if g.bots[bi] == "RemindMeBot" && top {
			bi = 0 // RemindMeBot answers a comment; AutoModerator the post
		}
		if g.bots[bi] == "AutoModerator" {
			top = true
		}
		author = authorBot - int64(bi)
		body = g.botBody(body, r, g.bots[bi], th, commentRef{id: id, parent: parent, created: created})
	default:
		author = g.humanAuthor(r, th, parentAuthor)
		if r.chance(pGoneAuthor) {
			author = authorDeleted
		}
		lang := "en"
		if th.lang != "en" && r.chance(pForeignSub) {
			lang = th.lang
		} else if r.chance(pForeignHere) {
			lang = pick(r, []string{"fr", "de", "ja", "ru"})
		}
		body = g.humanBody(body, r, th, top, lang)
	}
	if top {
		parent = 0
	}
	g.body = body

	era := g.pickEra(r)
	rec := commentRec{
		id: id, parent: parent, link: th.link, sub: &g.subs[th.sub], slug: th.slug, author: author,
		created: created, body: body, top: top, submitter: author == th.op,
	}
	g.buf = g.writeComment(g.buf[:0], r, era, &rec, bad)
	g.outC.write(g.buf)

	// Malformed comments are not answered: a reader never sees them.
	if !bad {
		slot := th.nrecent % recentComments
		th.recent[slot].id = id
		th.recent[slot].author = author
		th.nrecent++
	}
	th.done++
	if th.done >= th.size {
		g.pop()
		g.free = append(g.free, th)
		return
	}
	th.offset += th.tau * r.exp() / float64(th.size-th.done)
	th.next = max(th.origin+int64(th.offset*1000), th.next)
	g.down(0)
}

// humanAuthor picks the author of a person's comment: the submitter now
// and then, someone already in the thread, or anyone.
func (g *redditGen) humanAuthor(r *rng, th *thread, parentAuthor int64) int64 {
	u := r.float()
	switch {
	case u < 0.08 && parentAuthor != th.op:
		return th.op
	case u < 0.2 && th.nrecent > 1:
		a := th.recent[r.intn(min(th.nrecent, recentComments))].author
		if a >= 0 && a != parentAuthor {
			return a
		}
	}
	return zipfLarge(r, authorPool)
}

// The heap of open threads, by the time of their next comment.

func (g *redditGen) less(i, j int) bool {
	a, b := g.heap[i], g.heap[j]
	return a.next < b.next || a.next == b.next && a.link < b.link
}

func (g *redditGen) swap(i, j int) {
	g.heap[i], g.heap[j] = g.heap[j], g.heap[i]
	g.heap[i].heapAt = i
	g.heap[j].heapAt = j
}

func (g *redditGen) push(th *thread) {
	th.heapAt = len(g.heap)
	g.heap = append(g.heap, th)
	for i := th.heapAt; i > 0; {
		p := (i - 1) / 2
		if !g.less(i, p) {
			break
		}
		g.swap(i, p)
		i = p
	}
}

func (g *redditGen) pop() {
	n := len(g.heap) - 1
	g.swap(0, n)
	g.heap[n] = nil
	g.heap = g.heap[:n]
	if n > 0 {
		g.down(0)
	}
}

func (g *redditGen) down(i int) {
	n := len(g.heap)
	for {
		l := 2*i + 1
		if l >= n {
			return
		}
		j := l
		if r := l + 1; r < n && g.less(r, l) {
			j = r
		}
		if !g.less(j, i) {
			return
		}
		g.swap(i, j)
		i = j
	}
}

// redditMalformed returns the kinds of malformed record, one reason each.
func redditMalformed() []corpora.Reason {
	return []corpora.Reason{corpora.ReasonBadJSON, corpora.ReasonBadUTF8, corpora.ReasonMissingField, corpora.ReasonBadNumber}
}

// spoil turns the record in b into a malformed one: truncated JSON, an
// invalid UTF-8 byte, or created_utc "abc" (a missing id is written by the
// record writers themselves, told by omitID). It returns the reason a
// reader gives.
func spoil(b []byte, r *rng, reason corpora.Reason) []byte {
	switch reason {
	case corpora.ReasonBadJSON:
		cut := 10 + r.intn(len(b)-12)
		return b[:cut]
	case corpora.ReasonBadUTF8:
		// A Latin-1 é where UTF-8 was expected, inside the text.
		at := bytes.Index(b, []byte(`"body": "`))
		if at < 0 {
			at = bytes.Index(b, []byte(`"title": "`))
		}
		at = bytes.IndexByte(b[at+7:], '"') + at + 8
		b = append(b, "caf\xe9 "...)
		copy(b[at+5:], b[at:len(b)-5])
		copy(b[at:], "caf\xe9 ")
		return b
	case corpora.ReasonBadNumber:
		at := bytes.Index(b, []byte(`"created_utc": `))
		if at < 0 {
			panic("synth: record without created_utc")
		}
		at += len(`"created_utc": `)
		end := at
		for end < len(b) && b[end] != ',' && b[end] != '}' {
			end++
		}
		tail := append([]byte(`"abc"`), b[end:]...)
		return append(b[:at], tail...)
	}
	panic(fmt.Sprintf("synth: no way to spoil a record with %s", reason))
}
