package synth

import (
	"bytes"
	"io"
	"strconv"
	"strings"

	"github.com/parastream/parastream/corpora"
)

// Quora writes a header and cfg.Rows question pairs in the layout of
// quora_duplicate_questions.tsv:
//
//	id	qid1	qid2	question1	question2	is_duplicate
//
// tab-separated, a field quoted the CSV way (doubled quotes inside) where
// it holds a quote, a tab or a newline, as Python's csv module writes it.
// About 37% of the pairs are duplicates: the second question asks the
// first one's question in other words. The others pair a question with
// one of the same intent about something else (a hard negative) or with
// an unrelated one. Questions come back: about a third of the question
// slots reuse an earlier question with its qid, so that a question takes
// part in several pairs; new questions take the next qid in order of
// appearance. A few questions hold quoted words ("" in the file), [math]
// markup, non-ASCII letters, typos, a missing question mark; about one in
// ten thousand a newline, and as many a tab. Malformed records
// lack the is_duplicate column, leave it empty, close a quote before
// text other than a tab, or hold a Latin-1 byte; none spans two lines.
func Quora(w io.Writer, cfg Config) (Stats, error) {
	if err := cfg.Validate(); err != nil {
		return Stats{}, err
	}
	cfg = cfg.withDefaults()
	g := newQuoraGen(cfg)
	var st Stats
	out := newOutput(w)
	out.write([]byte("id\tqid1\tqid2\tquestion1\tquestion2\tis_duplicate\n"))
	return st, rowLoop(cfg, &st, []*output{out}, g.r, func(bad bool) error {
		var reason corpora.Reason
		if bad {
			reason = pick(g.r, g.malformed)
			st.malformed(reason)
		}
		g.buf = g.pair(g.buf[:0], reason)
		out.write(g.buf)
		return nil
	})
}

func newQuoraGen(cfg Config) *quoraGen {
	g := &quoraGen{r: newRNG(mix(cfg.Seed) ^ 0x0a0a), nextQID: 1, en: newEnglish()}
	g.intents = quoraIntents()
	g.intentA = quoraIntentAlias(g.intents)
	g.slots = quoraSlots()
	g.malformed = []corpora.Reason{corpora.ReasonFieldCount, corpora.ReasonBadNumber, corpora.ReasonBadQuote, corpora.ReasonBadUTF8}
	return g
}

// Shares of Quora pairs and questions.
const (
	pQuoraDuplicate = 0.37
	pQuoraReuse1    = 0.15 // question1 is an earlier question
	pQuoraReuse2    = 0.10 // question2 of a non-duplicate is an earlier question
	pQuoraHardNeg   = 0.40 // a non-duplicate asks the same intent about something else
	pQuoraNewline   = 1e-4 // a question ends with a newline
	pQuoraTab       = 1e-4 // a question holds a tab between two words
	quoraPool       = 4096 // earlier questions kept for reuse
)

// question is a question's identity: its text is rendered from it.
type question struct {
	qid     int64
	intent  int
	seed    uint64 // draws the slot values
	surface int    // which wording of the intent
	style   uint64 // draws casing, typos and punctuation
	key     string // the text before styling: one text, one qid
}

type quoraGen struct {
	r       *rng
	nextID  int64
	nextQID int64
	pool    []question          // the latest questions, for reuse
	poolAt  int                 // the oldest entry once the pool is full
	byKey   map[string]question // the pool by text
	buf     []byte
	q1, q2  []byte

	en        *english
	intents   []quoraIntent
	intentA   *alias              // picks an intent
	slots     map[string][]string // the values of a slot, by kind
	malformed []corpora.Reason
}

// ask returns the question of an intent with the slot values seed draws,
// in a wording (surface; -1 for any): the earlier question of the same
// text where the pool holds one, else a new question with the next qid.
func (g *quoraGen) ask(intent int, seed uint64, surface int) question {
	it := &g.intents[intent]
	if len(it.slots) == 0 {
		seed = 0
	}
	if surface < 0 {
		surface = g.r.intn(len(it.surfaces))
	}
	q := question{intent: intent, seed: seed, surface: surface}
	g.q2 = g.renderQuestion(g.q2[:0], q, true, false)
	if old, ok := g.byKey[string(g.q2)]; ok {
		return old
	}
	q.key = string(g.q2)
	q.qid = g.nextQID
	q.style = g.r.next()
	g.nextQID++
	if g.byKey == nil {
		g.byKey = make(map[string]question, quoraPool)
	}
	if len(g.pool) < quoraPool {
		g.pool = append(g.pool, q)
	} else {
		delete(g.byKey, g.pool[g.poolAt].key)
		g.pool[g.poolAt] = q
		g.poolAt = (g.poolAt + 1) % quoraPool
	}
	g.byKey[q.key] = q
	return q
}

func (g *quoraGen) reuse() question { return g.pool[g.r.intn(len(g.pool))] }

// other returns a new question of another intent than q's.
func (g *quoraGen) other(q question) question {
	intent := g.intentA.sample(g.r)
	if intent == q.intent {
		intent = (intent + 1 + g.r.intn(len(g.intents)-1)) % len(g.intents)
	}
	return g.ask(intent, g.r.next(), -1)
}

func (g *quoraGen) pair(b []byte, reason corpora.Reason) []byte {
	r := g.r
	var q1, q2 question
	if len(g.pool) > 0 && r.chance(pQuoraReuse1) {
		q1 = g.reuse()
	} else {
		q1 = g.ask(g.intentA.sample(r), r.next(), -1)
	}
	dup := r.chance(pQuoraDuplicate)
	switch {
	case dup:
		n := len(g.intents[q1.intent].surfaces)
		q2 = g.ask(q1.intent, q1.seed, (q1.surface+1+r.intn(n-1))%n)
	case len(g.pool) > 1 && r.chance(pQuoraReuse2):
		q2 = g.reuse()
		if q2.intent == q1.intent {
			q2 = g.other(q1)
		}
	case r.chance(pQuoraHardNeg) && len(g.intents[q1.intent].slots) > 0:
		q2 = g.ask(q1.intent, r.next(), -1)
		if q2.seed == q1.seed || q2.qid == q1.qid || g.sameSlots(q1, q2) {
			q2 = g.other(q1)
		}
	default:
		q2 = g.other(q1)
	}
	plain := reason != ""
	g.q1 = g.renderQuestion(g.q1[:0], q1, false, plain)
	g.q2 = g.renderQuestion(g.q2[:0], q2, false, plain)

	b = strconv.AppendInt(b, g.nextID, 10)
	g.nextID++
	b = append(b, '\t')
	b = strconv.AppendInt(b, q1.qid, 10)
	b = append(b, '\t')
	b = strconv.AppendInt(b, q2.qid, 10)
	b = append(b, '\t')
	switch reason {
	case corpora.ReasonBadQuote:
		b = append(b, '"')
		b = append(b, bytes.ReplaceAll(g.q1, []byte{'"'}, []byte(`""`))...)
		b = append(b, `" (edited)`...)
	case corpora.ReasonBadUTF8:
		g.q1 = append(g.q1, " caf\xe9"...)
		b = appendTSVField(b, g.q1)
	default:
		b = appendTSVField(b, g.q1)
	}
	b = append(b, '\t')
	b = appendTSVField(b, g.q2)
	switch reason {
	case corpora.ReasonFieldCount:
		return append(b, '\n')
	case corpora.ReasonBadNumber:
		return append(b, "\t\n"...)
	}
	if dup {
		return append(b, "\t1\n"...)
	}
	return append(b, "\t0\n"...)
}

// sameSlots reports whether two questions of one intent draw the same slot
// values.
func (g *quoraGen) sameSlots(a, b question) bool {
	ra, rb := newRNG(a.seed), newRNG(b.seed)
	var va, vb [4]string
	for i, kind := range g.intents[a.intent].slots {
		va[i] = g.slotValue(ra, kind, va[:i])
		vb[i] = g.slotValue(rb, kind, vb[:i])
	}
	return va == vb
}

// appendTSVField writes a field, quoted where it holds a quote, a tab or a
// line break.
func appendTSVField(b, f []byte) []byte {
	if !bytes.ContainsAny(f, "\"\t\n\r") {
		return append(b, f...)
	}
	b = append(b, '"')
	for _, c := range f {
		if c == '"' {
			b = append(b, '"')
		}
		b = append(b, c)
	}
	return append(b, '"')
}

// renderQuestion writes a question's text; bare leaves out the style
// (casing, typos, punctuation), plain the newlines and tabs.
func (g *quoraGen) renderQuestion(b []byte, q question, bare, plain bool) []byte {
	it := &g.intents[q.intent]
	slots := newRNG(q.seed)
	st := newRNG(q.style)
	tpl := it.surfaces[q.surface]
	start := len(b)
	// Slot values are drawn in slot order from the seed, so every wording
	// of an intent says the same thing.
	var vals [4]string
	for i, kind := range it.slots {
		vals[i] = g.slotValue(slots, kind, vals[:i])
	}
	for tpl != "" {
		i := strings.IndexByte(tpl, '%')
		if i < 0 {
			b = append(b, tpl...)
			break
		}
		b = append(b, tpl[:i]...)
		b = append(b, vals[tpl[i+1]-'0']...)
		tpl = tpl[i+2:]
	}
	if bare {
		return b
	}
	text := b[start:]
	u := st.float()
	switch {
	case u < 0.04: // all lower case
		for i, c := range text {
			if c >= 'A' && c <= 'Z' {
				text[i] = c + 'a' - 'A'
			}
		}
	case u < 0.07 && len(text) > 8: // a typo: two letters swapped
		i := 1 + st.intn(len(text)-3)
		if isLetter(text[i]) && isLetter(text[i+1]) {
			text[i], text[i+1] = text[i+1], text[i]
		}
	case u < 0.10 && text[len(text)-1] == '?':
		b = b[:len(b)-1]
	case u < 0.12:
		b = append(b, ' ')
	}
	if !plain {
		if st.chance(pQuoraNewline) {
			b = append(b, '\n')
		} else if st.chance(pQuoraTab) {
			// The tab goes between two words.
			if i := bytes.IndexByte(b[start:], ' '); i > 0 {
				b[start+i] = '\t'
			}
		}
	}
	return b
}

// quoraIntent is a question asked in several wordings; %0, %1 are slots.
type quoraIntent struct {
	slots    []string
	surfaces []string
}

func quoraIntents() []quoraIntent {
	return []quoraIntent{
		{[]string{"skill"}, []string{"What is the best way to learn %0?", "How can I learn %0 quickly?", "How do I start learning %0?", "What are the best resources to learn %0?"}},
		{[]string{"thing", "price"}, []string{"Which is the best %0 to buy under %1?", "What is the best %0 under %1?", "Which %0 should I buy for less than %1?"}},
		{nil, []string{"How can I make money online?", "What are some ways to earn money online?", "How do I earn money from home?", "What is the easiest way to make money online?"}},
		{nil, []string{"How can I lose weight fast?", "What is the fastest way to lose weight?", "How do I lose weight quickly?"}},
		{[]string{"person"}, []string{"What do you think of %0?", "What is your opinion of %0?", "How do you feel about %0?"}},
		{[]string{"concept"}, []string{"What is %0?", "How does %0 work?", "Can someone explain %0 in simple terms?"}},
		{[]string{"place"}, []string{"What is it like to live in %0?", "How is life in %0?", "Is %0 a good place to live?"}},
		{[]string{"company"}, []string{"How do I get a job at %0?", "What does it take to get hired by %0?", "How can I get a job in %0?"}},
		{[]string{"event"}, []string{"What will be the effect of %0 on the economy?", "How will %0 affect the economy?", "What are the consequences of %0?"}},
		{[]string{"field"}, []string{"Is %0 a good career choice?", "Should I study %0?", "What are the career prospects in %0?"}},
		{[]string{"skill", "skill"}, []string{"Which is better, %0 or %1?", "%0 or %1: which one should I learn?", "Should I learn %0 or %1?"}},
		{[]string{"company", "company"}, []string{"Which is better to work for, %0 or %1?", "Should I join %0 or %1?"}},
		{[]string{"person"}, []string{"Why do people hate %0?", "Why is %0 so unpopular?", "Why do so many people dislike %0?"}},
		{[]string{"phrase"}, []string{"What does \"%0\" mean?", "What is the meaning of \"%0\"?", "What do people mean when they say \"%0\"?"}},
		{[]string{"num", "num"}, []string{"What is the value of [math]%0^{%1}[/math]?", "How do I compute [math]%0^{%1}[/math]?", "Find the value of [math]%0^{%1}[/math]."}},
		{[]string{"skill"}, []string{"How can I improve my %0?", "What are some tips to get better at %0?", "How do I get better at %0?"}},
		{[]string{"year"}, []string{"Who will win the %0 US presidential election?", "Who do you think will win the election in %0?"}},
		{[]string{"food"}, []string{"How do I make %0 at home?", "What is the best recipe for %0?", "How do you cook %0?"}},
		{[]string{"concept"}, []string{"What are some good books on %0?", "Which books should I read to understand %0?", "What is the best book about %0?"}},
		{[]string{"kana", "kana"}, []string{"When do you use %0 instead of %1?", "What is the difference between %0 and %1?"}},
		{[]string{"place"}, []string{"What are the best places to visit in %0?", "Which places should I visit in %0?", "What should I see in %0?"}},
		{[]string{"thing"}, []string{"Is it worth buying a %0 in 2017?", "Should I buy a %0 now or wait?"}},
		{nil, []string{"What is the meaning of life?", "What is the purpose of life?", "Why are we here?"}},
		{[]string{"company"}, []string{"What is it like to work at %0?", "How is the work culture at %0?"}},
		{[]string{"field", "place"}, []string{"What are the best colleges for %0 in %1?", "Which are the top %0 colleges in %1?"}},
		{nil, []string{"How can I stop procrastinating?", "How do I overcome procrastination?", "What can I do to stop procrastinating?"}},
		{[]string{"event"}, []string{"What do you think about %0?", "Is %0 a good move?", "Was %0 a good decision?"}},
		{[]string{"concept"}, []string{"Is %0 real?", "Does %0 really exist?"}},
		{[]string{"ns", "v"}, []string{"Why do %0 %1?", "What is the reason %0 %1?", "How come %0 %1?"}},
		{[]string{"v", "ns", "ctx"}, []string{"How do I %0 %1%2?", "What is the best way to %0 %1%2?", "How can I %0 %1 properly%2?"}},
		{[]string{"a", "n"}, []string{"What is the most %0 %1 in the world?", "Which %1 is the most %0 in the world?", "What is the world's most %0 %1?"}},
		{[]string{"thing", "place"}, []string{"Where can I buy a good %0 in %1?", "What is the best place to buy a %0 in %1?", "Where do I find a cheap %0 in %1?"}},
		{[]string{"activity"}, []string{"Is %0 good for health?", "What are the health benefits of %0?", "Is %0 healthy?"}},
		{[]string{"ns", "ns"}, []string{"What is the difference between %0 and %1?", "How are %0 different from %1?", "What distinguishes %0 from %1?"}},
		{[]string{"thing", "ctx"}, []string{"What should I do if my %0 stops working%1?", "My %0 is not working%1. What should I do?", "How do I fix a broken %0%1?"}},
		{[]string{"a", "ns", "place"}, []string{"Why are %1 so %0 in %2?", "What makes %1 so %0 in %2?"}},
	}
}

// quoraIntentAlias returns the sampler of intents: those whose slots draw
// from the whole vocabulary (and so rarely repeat) four times as often as the others.
func quoraIntentAlias(intents []quoraIntent) *alias {
	w := make([]float64, len(intents))
	for i, it := range intents {
		w[i] = 1
		for _, s := range it.slots {
			switch s {
			case "n", "ns", "v", "ving", "a":
				w[i] = 4
			}
		}
	}
	return newAlias(w)
}

func quoraSlots() map[string][]string {
	return map[string][]string{
		"skill":    {"Python", "machine learning", "guitar", "English", "data science", "cooking", "public speaking", "photography", "Java", "web development", "investing", "chess", "French", "C++", "JavaScript", "drawing", "swimming", "Spanish", "Android development", "digital marketing"},
		"thing":    {"laptop", "smartphone", "car", "camera", "bike", "mattress", "pair of headphones", "VPN", "TV", "tablet", "smartwatch", "gaming PC"},
		"price":    {"₹15,000", "₹20000", "$500", "$1000", "Rs. 30,000", "$200", "50k"},
		"person":   {"Donald Trump", "Hillary Clinton", "Narendra Modi", "Elon Musk", "Steve Jobs", "Mark Zuckerberg", "Barack Obama", "Bill Gates", "Arvind Kejriwal", "Rahul Gandhi", "Vladimir Putin", "Angela Merkel"},
		"concept":  {"black holes", "quantum computing", "the stock market", "blockchain", "inflation", "time travel", "karma", "gravity", "dark matter", "machine learning", "the Big Bang", "consciousness", "God"},
		"place":    {"India", "the US", "Canada", "Germany", "Bangalore", "Mumbai", "London", "New York", "Australia", "Delhi", "Hyderabad", "Pune", "Japan", "Dubai", "Singapore", "Chennai"},
		"company":  {"Google", "Facebook", "Amazon", "Microsoft", "Apple", "Infosys", "TCS", "Quora", "Uber", "Wipro", "Accenture", "Goldman Sachs"},
		"event":    {"the demonetization of 500 and 1000 rupee notes", "Brexit", "Donald Trump's presidency", "the ban on 500 and 1000 rupee notes", "GST", "a third world war", "the new H-1B rules"},
		"field":    {"engineering", "medicine", "law", "computer science", "economics", "psychology", "physics", "mechanical engineering", "MBA", "architecture"},
		"phrase":   {"carpe diem", "break a leg", "déjà vu", "YOLO", "woke", "TL;DR", "ROFL", "bae", "on fleek", "Namaste", "the ball is in your court"},
		"year":     {"2016", "2020", "2024"},
		"food":     {"biryani", "pizza", "paneer butter masala", "pancakes", "sushi", "chocolate cake", "dosa", "pasta"},
		"kana":     {"シ", "し", "ツ", "つ", "は", "わ", "ü", "ñ", "ç", "ß"},
		"activity": {"running", "swimming", "yoga", "meditation", "intermittent fasting", "drinking coffee", "eating eggs every day", "cycling", "drinking green tea", "sleeping six hours a night", "weightlifting", "walking 10,000 steps", "a vegan diet", "skipping breakfast"},
		"ctx":      {"", "", "", "", "", " in India", " as a beginner", " at home", " without a degree", " at the age of 30", " in 2017", " on a budget", " as a student", " for free", " in the US", " after a breakup", " in a small town", " without money"},
	}
}

// slotValue draws a value of a kind, unlike the values drawn before
// it.
func (g *quoraGen) slotValue(r *rng, kind string, before []string) string {
	en := g.en
	switch kind {
	case "num":
		return strconv.Itoa(2 + r.intn(30))
	case "n":
		return en.nouns[en.nA.sample(r)].sg
	case "ns":
		return en.nouns[en.nA.sample(r)].pl
	case "v":
		return en.verbs[en.vA.sample(r)].base
	case "ving":
		return en.verbs[en.vA.sample(r)].ing
	case "a":
		return en.adjs[en.aA.sample(r)]
	}
	vals := g.slots[kind]
	v := vals[r.intn(len(vals))]
	for _, p := range before {
		if p == v {
			return vals[(r.intn(len(vals)-1)+1+indexOf(vals, v))%len(vals)]
		}
	}
	return v
}

func indexOf(s []string, v string) int {
	for i, x := range s {
		if x == v {
			return i
		}
	}
	return 0
}

func isLetter(c byte) bool { return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' }
