package synth

import (
	"io"
	"math/bits"
	"strconv"
	"strings"

	"github.com/parastream/parastream/corpora"
)

// SimpWiki writes cfg.Rows aligned sentence pairs in the layout of Coster
// and Kauchak's normal.aligned (to wn) and simple.aligned (to ws): each
// line "article title<TAB>paragraph number<TAB>sentence", the two files
// aligned by line. Articles (cities, rivers, people, species, films) run
// over several paragraphs of a few aligned sentences each; paragraph
// numbers start at 0 and may skip, and the simple article's may differ
// from the normal one's. A simple sentence is the normal one with its
// subordinate clause dropped and hard words swapped for plain ones
// ("approximately" for "about"), or, one time in five, the same sentence.
// Malformed pairs have titles that differ between the two files (the
// reader's title_mismatch), a line with two columns (field_count) or a
// paragraph number that is not a number (bad_number).
func SimpWiki(wn, ws io.Writer, cfg Config) (Stats, error) {
	if err := cfg.Validate(); err != nil {
		return Stats{}, err
	}
	cfg = cfg.withDefaults()
	g := newSimpGen(cfg)
	var st Stats
	on, os := newOutput(wn), newOutput(ws)
	return st, rowLoop(cfg, &st, []*output{on, os}, g.r, func(bad bool) error {
		var reason corpora.Reason
		if bad {
			reason = pick(g.r, g.malformed)
			st.malformed(reason)
		}
		g.next(reason)
		on.write(g.normal)
		os.write(g.simple)
		return nil
	})
}

func simpMalformed() []corpora.Reason {
	return []corpora.Reason{corpora.ReasonTitleMismatch, corpora.ReasonFieldCount, corpora.ReasonBadNumber}
}

const pSimpIdentical = 0.2

type simpGen struct {
	r              *rng
	title          string
	category       int
	left           int    // sentences left in the article
	used           uint64 // the templates the article has used
	paraLeft       int    // sentences left in the paragraph
	para, paraS    int
	normal, simple []byte
	vals           [4]string

	// The tables drawn from: see the functions and constants of the same
	// names.
	categories              []simpCategory
	slots                   map[string][]string
	replacer                *strings.Replacer
	names, surnames, genera []string
	placeStarts, placeEnds  []string
	filmWords, filmWords2   []string
	malformed               []corpora.Reason
}

func newSimpGen(cfg Config) *simpGen {
	return &simpGen{
		r:          newRNG(mix(cfg.Seed) ^ 0x5177),
		categories: simpCategories(), slots: simpSlots(), replacer: newSimpReplacer(),
		names: fields(nameWords), surnames: fields(simpSurnames), genera: fields(simpGenera),
		placeStarts: fields(simpPlaceStarts), placeEnds: fields(simpPlaceEnds),
		filmWords: fields(simpFilmWords), filmWords2: fields(simpFilmWords2),
		malformed: simpMalformed(),
	}
}

// next writes the next line pair into g.normal and g.simple.
func (g *simpGen) next(reason corpora.Reason) {
	r := g.r
	if g.left == 0 {
		g.category = r.intn(len(g.categories))
		g.title = g.newTitle(r, g.category)
		g.left = min(int(r.pareto(1.3)), len(g.categories[g.category].templates))
		g.used = 0
		g.para, g.paraS, g.paraLeft = 0, 0, 1+r.intn(3)
	} else if g.paraLeft == 0 {
		step := 1
		if r.chance(0.3) {
			step += r.intn(3)
		}
		g.para += step
		g.paraS += 1
		if r.chance(0.2) {
			g.paraS--
		}
		g.paraLeft = 1 + r.intn(4)
	}
	g.left--
	g.paraLeft--
	// An article says each thing once: its sentences come from its
	// category's templates without replacement.
	c := &g.categories[g.category]
	k := r.intn(len(c.templates) - bits.OnesCount64(g.used))
	i := 0
	for ; ; i++ {
		if g.used&(1<<i) == 0 {
			if k == 0 {
				break
			}
			k--
		}
	}
	g.used |= 1 << i
	tpl := c.templates[i]
	for i, kind := range c.slots {
		g.vals[i] = pick(r, g.slots[kind])
	}
	g.normal = g.line(g.normal[:0], g.title, g.para, reason, true)
	sentStart := len(g.normal)
	g.normal = g.renderSimp(g.normal, tpl, g.title, g.vals[:], false)
	capitalise(g.normal[sentStart:])
	g.normal = append(g.normal, '\n')
	identical := r.chance(pSimpIdentical)
	g.simple = g.line(g.simple[:0], g.title, g.paraS, reason, false)
	if identical {
		g.simple = append(g.simple, g.normal[sentStart:]...)
	} else {
		at := len(g.simple)
		g.simple = g.renderSimp(g.simple, tpl, g.title, g.vals[:], true)
		capitalise(g.simple[at:])
		g.simple = append(g.simple, '\n')
	}
}

// line writes the title and paragraph columns, spoiled for reason on the
// side that shows it.
func (g *simpGen) line(b []byte, title string, para int, reason corpora.Reason, normal bool) []byte {
	switch {
	case reason == corpora.ReasonTitleMismatch && !normal:
		b = append(b, title...)
		b = append(b, " (disambiguation)"...)
	case reason == corpora.ReasonFieldCount && !normal:
		b = append(b, title...)
		return append(b, '\t') // no paragraph column: "title<TAB>sentence"
	default:
		b = append(b, title...)
	}
	b = append(b, '\t')
	if reason == corpora.ReasonBadNumber && normal {
		return append(b, "§\t"...)
	}
	b = strconv.AppendInt(b, int64(para), 10)
	return append(b, '\t')
}

// renderSimp writes a sentence: [..] marks a clause the simple version
// drops, {w} a slot, and the simple version swaps hard words.
func (g *simpGen) renderSimp(b []byte, tpl, title string, vals []string, simple bool) []byte {
	start := len(b)
	for tpl != "" {
		c := tpl[0]
		switch c {
		case '[':
			end := strings.IndexByte(tpl, ']')
			if !simple {
				b = g.renderSimp(b, tpl[1:end], title, vals, false)
			}
			tpl = tpl[end+1:]
			continue
		case '%':
			if tpl[1] == 'T' {
				b = append(b, title...)
			} else {
				b = append(b, vals[tpl[1]-'0']...)
			}
			tpl = tpl[2:]
			continue
		}
		i := strings.IndexAny(tpl, "[%")
		if i < 0 {
			i = len(tpl)
		}
		b = append(b, tpl[:i]...)
		tpl = tpl[i:]
	}
	if simple {
		b = g.simplifyWords(b, start)
	}
	return b
}

// simplifyWords swaps the hard words of b[start:] for plain ones.
func (g *simpGen) simplifyWords(b []byte, start int) []byte {
	s := string(b[start:])
	s = g.replacer.Replace(s)
	return append(b[:start], s...)
}

// newSimpReplacer returns the replacer of hard words by plain ones.
func newSimpReplacer() *strings.Replacer {
	return strings.NewReplacer(
		"approximately", "about", "located", "found", "commenced", "started", "utilized", "used",
		"subsequently", "later", "numerous", "many", "Additionally, ", "", "inhabitants", "people",
		"residence", "home", "purchased", "bought", "obtained", "got", "demonstrated", "showed",
		"constructed", "built", "significant", "important", "primarily", "mostly", "individuals", "people",
		"currently", "now", "prior to", "before", "in order to", "to", "established", "started",
		"municipality", "town", "principal", "main", "renowned", "famous", "acclaimed", "praised",
		"deceased", "dead", "however", "but", "However, ", "But ", "commonly", "often", "possesses", "has",
		"situated", "found", "originates", "starts", "received", "got",
		"predominantly", "mostly", "consists of", "has", "regarded as", "seen as", "referred to as", "called",
	)
}

// newTitle names an article of a category. Names are made of syllables,
// so that titles seldom repeat.
func (g *simpGen) newTitle(r *rng, category int) string {
	switch category {
	case 1:
		if r.chance(0.5) {
			return "River " + syllableName(r, 2)
		}
		return syllableName(r, 2+r.intn(2)) + " River"
	case 2:
		if r.chance(0.3) {
			return pick(r, g.names) + " " + pick(r, g.surnames)
		}
		return pick(r, g.names) + " " + syllableName(r, 2+r.intn(2))
	case 3:
		return pick(r, g.genera) + " " + strings.ToLower(syllableName(r, 2+r.intn(2))) + pick(r, []string{"a", "is", "um", "ensis"})
	case 4:
		t := pick(r, g.filmWords) + " " + pick(r, g.filmWords2)
		if r.chance(0.5) {
			t += " of " + syllableName(r, 2)
		}
		if r.chance(0.3) {
			t += " (film)"
		}
		return t
	}
	if r.chance(0.5) {
		return syllableName(r, 1+r.intn(2)) + pick(r, g.placeEnds)
	}
	return pick(r, g.placeStarts) + strings.ToLower(syllableName(r, 1)) + pick(r, g.placeEnds)
}

// syllableName makes a capitalised name of n syllables.
func syllableName(r *rng, n int) string {
	const onsets = "b d g k l m n p r s t v z br dr kr st tr sch h f w"
	const nuclei = "a e i o u a e o au ei"
	on, nu := fields(onsets), fields(nuclei)
	var b []byte
	for range n {
		b = append(b, pick(r, on)...)
		b = append(b, pick(r, nu)...)
	}
	if r.chance(0.5) {
		b = append(b, pick(r, []string{"n", "r", "l", "s", "nd", "rg", "k"})...)
	}
	capitalise(b)
	return string(b)
}

// Words of titles, each list split by fields.
const (
	simpPlaceStarts = `Mar Kessel Ober Alten Nord Sankt Brück Hohen Wald Villa Porto San Monte Bad Neu Frei Roth Lind Ash Brad Chester Wor Dun`
	simpPlaceEnds   = `burg berg dorf stadt heim feld ville mouth ford ton field bury wick stead haven nova grad bridge`
	simpSurnames    = `Smith Müller Dubois Rossi Kowalski Andersson Novak Silva Jensen Nakamura Fischer Moreau Bianchi Horvat`
	simpGenera      = `Acer Quercus Felis Canis Rosa Salix Ursus Panthera Passer Turdus Lilium Pinus Betula Vulpes`
	simpFilmWords   = `The A Last Silent Broken Golden Dark Little Lost Final Hidden Red`
	simpFilmWords2  = `Garden Road Winter Kingdom Promise Harbor Letter Storm Machine Frontier Hour Crown`
)

type simpCategory struct {
	slots     []string
	templates []string
}

// simpCategories returns sentence templates: %T the title, %0.. the slots,
// [..] a clause that the simple version drops.
func simpCategories() []simpCategory {
	return []simpCategory{
		{[]string{"region", "country", "num", "num2"}, []string{
			"%T is a municipality in the district of %0 in %1[, located approximately %2 kilometres north of the regional capital].",
			"%T has approximately %3 inhabitants[, the majority of whom are employed in agriculture and tourism].",
			"The town was first mentioned in documents dating from %2 00[, when it was referred to as a small settlement].",
			"[Additionally, ]%T possesses a railway station on the line between %0 and the capital.",
			"The principal economic activities of %T are agriculture, forestry and tourism.",
			"%T is situated on the banks of a river[, which originates in the mountains to the south].",
			"The municipality consists of %2 villages[, the largest of which is the administrative centre].",
		}},
		{[]string{"country", "num", "region", "num2"}, []string{
			"The %T is a river in %0[, approximately %1 kilometres in length].",
			"It originates in the mountains of %2 and flows predominantly northward.",
			"The %T is regarded as one of the principal rivers of %0[, and numerous towns are situated along its banks].",
			"[However, ]the river was utilized for transport prior to the construction of the railway.",
			"Its drainage basin covers approximately %3 square kilometres.",
			"The %T subsequently joins a larger river near the town of %2.",
		}},
		{[]string{"country", "year", "profession", "year2"}, []string{
			"%T (born %1) is a %0 %2[, renowned for numerous contributions to the field].",
			"%T was born in %1 in a small town in %0[, where the family had a residence near the harbour].",
			"%T commenced a career as a %2 in %3[, after completing studies at a university in the capital].",
			"In %3, %T received significant international recognition[, which subsequently led to many invitations abroad].",
			"%T is currently living in %0 with the family.",
			"%T died in %3[, after a long illness,] at the age of 78.",
		}},
		{[]string{"habitat", "num", "region", "country"}, []string{
			"%T is a species of plant or animal that is commonly found in %0[ throughout %2].",
			"It primarily inhabits %0 at altitudes of up to %1 metres.",
			"%T was first described by a naturalist in the nineteenth century[, who obtained specimens from %3].",
			"The species possesses distinctive markings[, which are utilized in order to attract a mate].",
			"%T is regarded as endangered in %3[ due to the destruction of its habitat].",
		}},
		{[]string{"year", "country", "genre", "num"}, []string{
			"%T is a %1 %2 film released in %0[, directed by a renowned filmmaker].",
			"The film received acclaimed reviews[, and it was subsequently nominated for numerous awards].",
			"%T was filmed primarily in %1[ during the summer of %0].",
			"The film earned approximately %3 million dollars at the box office.",
			"[However, ]a sequel was commenced in %0 but never completed.",
		}},
	}
}

func simpSlots() map[string][]string {
	return map[string][]string{
		"region":     fields(`Bavaria Piedmont Yorkshire Bohemia Silesia Provence Tyrol Carinthia Galicia Wales Saxony Tuscany`),
		"country":    fields(`Germany Italy England Austria Poland France Spain Sweden Slovenia Japan Brazil Canada`),
		"num":        fields(`12 14 20 27 35 48 52 75 120 160 340 510`),
		"num2":       fields(`850 1,200 2,431 3,900 7,518 12,044 25,310 61,000`),
		"year":       fields(`1912 1934 1947 1953 1961 1968 1975 1982 1990 1999 2004 2011`),
		"year2":      fields(`1930 1958 1966 1971 1979 1985 1994 2002 2008 2015`),
		"profession": fields(`painter writer physicist footballer politician composer architect actor chemist cyclist`),
		"habitat":    fields(`forests grasslands wetlands rivers mountains deserts coasts meadows`),
		"genre":      fields(`drama comedy thriller documentary animated horror science-fiction romance`),
	}
}
