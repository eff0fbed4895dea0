package synth

import (
	"strconv"
	"strings"
)

// english writes English sentences from templates whose slots draw words
// of a part of speech with Zipf weights.
type english struct {
	nouns   []nounForm
	verbs   []verbForm
	adjs    []string
	advs    []string
	propers []string
	names   []string
	dets    []string // determiners
	prons   []string // subject pronouns that take the base verb
	nA, vA  *alias
	aA, rA  *alias
	pA      *alias
	// templates by kind, and their weights.
	statements, questions, answers []template
	stA, qA, anA                   *alias
}

type nounForm struct{ sg, pl string }

type verbForm struct{ base, s, past, pp, ing string }

// A template is a sentence with slots, parsed once.
type template []tplPart

type tplPart struct {
	lit  string // literal text, or
	slot slot   // a slot when lit is ""
}

type slot uint8

const (
	slotNone  slot = iota
	slotN          // noun
	slotNs         // plural noun
	slotV          // verb
	slotVs         // verb, 3rd person
	slotVed        // past
	slotVen        // past participle
	slotVing       // -ing
	slotA          // adjective
	slotR          // adverb
	slotP          // proper name (company, place, game)
	slotName       // first name
	slotNum        // a small number
	slotBig        // a larger number, maybe with a thousands separator
	slotYear       // a year
	slotMoney      // an amount of dollars
	slotPct        // a percentage
	slotDet        // a determiner
	slotPron       // a subject pronoun that takes the base verb
)

// slotByName returns the slot a template names in braces.
func slotByName(name string) (slot, bool) {
	switch name {
	case "n":
		return slotN, true
	case "ns":
		return slotNs, true
	case "v":
		return slotV, true
	case "vs":
		return slotVs, true
	case "ved":
		return slotVed, true
	case "ven":
		return slotVen, true
	case "ving":
		return slotVing, true
	case "a":
		return slotA, true
	case "r":
		return slotR, true
	case "p":
		return slotP, true
	case "name":
		return slotName, true
	case "num":
		return slotNum, true
	case "big":
		return slotBig, true
	case "year":
		return slotYear, true
	case "money":
		return slotMoney, true
	case "pct":
		return slotPct, true
	case "det":
		return slotDet, true
	case "pron":
		return slotPron, true
	}
	return slotNone, false
}

// statementTemplates, questionTemplates and answerTemplates return the
// sentence templates by kind; newEnglish parses them once.
func statementTemplates() []string {
	return []string{
		"I {r} think the {n} is {a}.",
		"The {n} is {r} {a}, but the {n} is {a}.",
		"{pron} {v} the {n} every {n}.",
		"This is the {a} {n} I have ever {ven}.",
		"I {ved} a {n} like this {num} years ago and it {ved} for {num} months.",
		"Honestly the {a} part is the {n}.",
		"My {n} {ved} the same thing last {n}.",
		"{p} {r} {vs} {det} {a} {ns}.",
		"It {r} depends on your {n} and how much you {v} the {n}.",
		"I would {v} the {n} before you {v} anything else.",
		"That {n} is {a} and you know it.",
		"The {a} {ns} are always the {a} ones.",
		"We {ved} {det} {n} for {money} and it was {r} worth it.",
		"People {r} {v} how {a} {det} {n} can be.",
		"{det} {n} {ved} my {n} in {year}.",
		"You can {v} it with a {a} {n} and some {ns}.",
		"I have been {ving} {ns} for {num} years now.",
		"The {n} was {a}, the {n} was {a}, and the {n} was {r} {a}.",
		"Not gonna lie, I {ved} the {n} way more than the {n}.",
		"There are {big} {ns} in {p} alone.",
		"It costs about {money} a month where I live.",
		"Only {pct} of {ns} {v} that, so it's not {a}.",
		"If you {v} the {n}, the {n} will {v} too.",
		"{name} {ved} me that the {n} is {a}.",
		"My {n} says the {n} is {a} but I don't buy it.",
		"I used to {v} {ns} at {p} and it was {a}.",
		"The {a} thing about {ns} is that they {v} {r}.",
		"This {n} {r} {vs} the {n} of the {n}.",
		"We {r} need more {a} {ns} like this.",
		"I'm {r} {ving} the {n} right now.",
		"After {num} hours of {ving} I finally {ved} the {n}.",
		"{p} {ved} the {n} back in {year}.",
		"They {ved} the {n} and now everything is {a}.",
		"As a {n} myself, I can say the {n} is {a}.",
		"Yeah the {n} is {a} but the {n} {r} makes up for it.",
		"The {n} on the {n} looks {r} {a}.",
		"Just {v} the {n} and {v} it.",
		"It took me {num} tries to {v} the {n}.",
		"There's nothing {a} about {ving} {ns}.",
		"I got {det} {n} for {money} at {p}.",
		"That's {r} what the {n} is for.",
		"Every {n} I know {vs} {ns}.",
		"The {n} has {r} {ved} since {year}.",
		"Can't {v} the {n} without a {a} {n}.",
		"Imagine {ving} a {n} in {year}.",
	}
}

func questionTemplates() []string {
	return []string{
		"Does anyone know how to {v} the {n}?",
		"Why would you {v} a {n} like that?",
		"What {n} do you {v}?",
		"Is it {a} to {v} the {n} before the {n}?",
		"How much did the {n} cost you?",
		"Has anyone tried {ving} {ns} with a {a} {n}?",
		"Where did you {v} that {n}?",
		"What's the {a} way to {v} {ns}?",
		"Am I the only one who {vs} {ns}?",
		"Which {n} should I {v}, the {a} one or the {a} one?",
		"Is this {n} {a} or is it just me?",
		"How long did it take you to {v} the {n}?",
		"Can someone explain why the {n} {vs} the {n}?",
		"Is {p} still {ving} {ns}?",
		"What happened to the {n}?",
		"Would you {v} it again?",
		"Any tips for {ving} a {a} {n}?",
		"Did you {v} the {n} yourself?",
		"Why is the {n} so {a}?",
		"How do you {v} {ns} without {ving} the {n}?",
	}
}

func answerTemplates() []string {
	return []string{
		"Yes, you can {v} the {n} with {det} {n}.",
		"No, the {n} {r} {vs} that.",
		"You need to {v} the {n} first.",
		"I {ved} mine at {p} for {money}.",
		"It took me about {num} hours.",
		"Try {ving} the {n} instead.",
		"Because the {n} is {a}.",
		"Probably the {a} one.",
		"Just {v} it, that's what I did.",
		"It depends on the {n}, honestly.",
		"Check the {n} on the {n}.",
		"From what I remember it was {year}.",
		"Mine {ved} after {num} weeks.",
		"The {n} is {a}, so I'd {v} it.",
		"Pretty sure it's the {n}.",
	}
}

func parseTemplates(srcs []string) []template {
	out := make([]template, len(srcs))
	for i, s := range srcs {
		var t template
		for s != "" {
			j := strings.IndexByte(s, '{')
			if j < 0 {
				t = append(t, tplPart{lit: s})
				break
			}
			if j > 0 {
				t = append(t, tplPart{lit: s[:j]})
			}
			k := strings.IndexByte(s[j:], '}')
			name := s[j+1 : j+k]
			sl, ok := slotByName(name)
			if !ok {
				panic("synth: unknown slot {" + name + "} in " + srcs[i])
			}
			t = append(t, tplPart{slot: sl})
			s = s[j+k+1:]
		}
		out[i] = t
	}
	return out
}

func uniq(words []string) []string {
	seen := make(map[string]bool, len(words))
	out := words[:0:0]
	for _, w := range words {
		if !seen[w] {
			seen[w] = true
			out = append(out, w)
		}
	}
	return out
}

func newEnglish() *english {
	e := &english{}
	for _, n := range uniq(fields(nounWords)) {
		e.nouns = append(e.nouns, nounForm{n, plural(n)})
	}
	for _, v := range uniq(fields(verbWords)) {
		s, past, pp, ing := verbForms(v)
		e.verbs = append(e.verbs, verbForm{v, s, past, pp, ing})
	}
	e.adjs = uniq(fields(adjWords))
	e.advs = uniq(fields(advWords))
	e.propers = uniq(fields(properWords))
	e.names = uniq(fields(nameWords))
	e.nA = zipfAlias(len(e.nouns), 1.0, 2)
	e.vA = zipfAlias(len(e.verbs), 1.0, 2)
	e.aA = zipfAlias(len(e.adjs), 1.0, 2)
	e.rA = zipfAlias(len(e.advs), 1.0, 1)
	e.pA = zipfAlias(len(e.propers), 0.8, 1)
	e.statements = parseTemplates(statementTemplates())
	e.questions = parseTemplates(questionTemplates())
	e.answers = parseTemplates(answerTemplates())
	e.dets = []string{"the", "the", "the", "a", "a", "this", "that", "my", "your", "our", "some"}
	e.prons = []string{"I", "We", "They", "You", "I", "I"}
	e.stA = zipfAlias(len(e.statements), 0.5, 3)
	e.qA = zipfAlias(len(e.questions), 0.5, 3)
	e.anA = zipfAlias(len(e.answers), 0.5, 3)
	return e
}

// Kinds of sentence.
const (
	kindStatement = iota
	kindQuestion
	kindAnswer
)

// sentence appends one sentence of the given kind, its first letter
// capitalised unless lower is set.
func (e *english) sentence(b []byte, r *rng, kind int, lower bool) []byte {
	var t template
	switch kind {
	case kindQuestion:
		t = e.questions[e.qA.sample(r)]
	case kindAnswer:
		t = e.answers[e.anA.sample(r)]
	default:
		t = e.statements[e.stA.sample(r)]
	}
	start := len(b)
	for _, p := range t {
		if p.lit != "" {
			b = append(b, p.lit...)
			continue
		}
		at := len(b)
		b = e.fill(b, r, p.slot)
		b = fixArticle(b, start, at)
	}
	if !lower && b[start] >= 'a' && b[start] <= 'z' {
		b[start] -= 'a' - 'A'
	}
	if lower && b[start] >= 'A' && b[start] <= 'Z' && (len(b) == start+1 || b[start+1] == ' ' || b[start+1] >= 'a') {
		b[start] += 'a' - 'A'
	}
	return b
}

func (e *english) fill(b []byte, r *rng, s slot) []byte {
	switch s {
	case slotN:
		return append(b, e.nouns[e.nA.sample(r)].sg...)
	case slotNs:
		return append(b, e.nouns[e.nA.sample(r)].pl...)
	case slotV:
		return append(b, e.verbs[e.vA.sample(r)].base...)
	case slotVs:
		return append(b, e.verbs[e.vA.sample(r)].s...)
	case slotVed:
		return append(b, e.verbs[e.vA.sample(r)].past...)
	case slotVen:
		return append(b, e.verbs[e.vA.sample(r)].pp...)
	case slotVing:
		return append(b, e.verbs[e.vA.sample(r)].ing...)
	case slotA:
		return append(b, e.adjs[e.aA.sample(r)]...)
	case slotR:
		return append(b, e.advs[e.rA.sample(r)]...)
	case slotP:
		return append(b, e.propers[e.pA.sample(r)]...)
	case slotName:
		return append(b, pick(r, e.names)...)
	case slotNum:
		return strconv.AppendInt(b, int64(2+r.intn(10)), 10)
	case slotBig:
		n := int64(r.pareto(0.6) * 100)
		if n >= 1000 && r.chance(0.6) {
			return appendThousands(b, n)
		}
		return strconv.AppendInt(b, n, 10)
	case slotYear:
		return strconv.AppendInt(b, int64(1990+r.intn(35)), 10)
	case slotMoney:
		b = append(b, '$')
		n := int64(r.pareto(0.8) * 10)
		if n >= 1000 {
			return appendThousands(b, n)
		}
		b = strconv.AppendInt(b, n, 10)
		if r.chance(0.2) {
			b = append(b, '.', byte('0'+r.intn(10)), '9')
		}
		return b
	case slotPct:
		b = strconv.AppendInt(b, int64(1+r.intn(99)), 10)
		return append(b, '%')
	case slotDet:
		return append(b, pick(r, e.dets)...)
	case slotPron:
		return append(b, pick(r, e.prons)...)
	}
	return b
}

// appendThousands writes n with commas between groups of three digits.
func appendThousands(b []byte, n int64) []byte {
	var tmp [24]byte
	d := strconv.AppendInt(tmp[:0], n, 10)
	for i, c := range d {
		if i > 0 && (len(d)-i)%3 == 0 {
			b = append(b, ',')
		}
		b = append(b, c)
	}
	return b
}

// fixArticle turns "a" before the word just written at b[p:] into "an"
// where the word starts with a vowel sound (by its letter: "an apple", "a
// useful").
func fixArticle(b []byte, start, p int) []byte {
	if p-start < 2 || p >= len(b) || b[p-1] != ' ' || (b[p-2] != 'a' && b[p-2] != 'A') || (p-3 >= start && b[p-3] != ' ') {
		return b
	}
	c := b[p] | 0x20
	if !isVowel(c) || (c == 'u' && p+1 < len(b) && b[p+1] == 's') {
		return b
	}
	b = append(b, 0)
	copy(b[p:], b[p-1:len(b)-1])
	b[p-1] = 'n'
	return b
}
