package synth

import (
	"io"
	"strconv"

	"github.com/parastream/parastream/corpora"
)

// Europarl writes cfg.Rows sentence pairs of English (to wa) and French
// (to wb) proceedings, aligned by line, in the raw (cased, untokenised)
// form of europarl-v7.fr-en.en and .fr. Name the files so that the reader
// finds the pair: europarl-v7.fr-en.en and europarl-v7.fr-en.fr.
//
// The sentences come from a small synchronous grammar of parliamentary
// speech (openers, subjects with French agreement, modal verb phrases,
// objects, adverbials, the session's formulas and stage directions), so
// that the two sides are translations of each other. No line is empty (the
// reader would skip empty pairs). A malformed pair holds a Latin-1 byte on
// the French side where UTF-8 was expected ("d\xe9cembre"), which the
// reader rejects as bad_utf8.
func Europarl(wa, wb io.Writer, cfg Config) (Stats, error) {
	if err := cfg.Validate(); err != nil {
		return Stats{}, err
	}
	cfg = cfg.withDefaults()
	r := newRNG(mix(cfg.Seed) ^ 0xe0e0)
	g := newEPGen()
	var st Stats
	oa, ob := newOutput(wa), newOutput(wb)
	var en, fr []byte
	return st, rowLoop(cfg, &st, []*output{oa, ob}, r, func(bad bool) error {
		en, fr = g.pair(en[:0], fr[:0], r)
		if bad {
			st.malformed(corpora.ReasonBadUTF8)
			fr = append(fr, " (d\xe9cembre)"...)
		}
		en = append(en, '\n')
		fr = append(fr, '\n')
		oa.write(en)
		ob.write(fr)
		return nil
	})
}

// epGen writes parallel sentences from its tables: see the functions of
// the same names.
type epGen struct {
	openers, verbs, verbsDe, adverbials []enfr
	connectors, formulas                []enfr
	subjects                            []subject
	modals                              []modal
	objects                             []object
	members                             []string
}

func newEPGen() *epGen {
	return &epGen{
		openers: epOpeners(), verbs: epVerbs(), verbsDe: epVerbsDe(), adverbials: epAdverbials(),
		connectors: epConnectors(), formulas: epFormulas(),
		subjects: epSubjects(), modals: epModals(), objects: epObjects(), members: epMembers(),
	}
}

// A pair of parallel phrases.
type enfr struct{ en, fr string }

// A subject with the French verb form it takes: 0 je, 1 nous, 2 il/elle,
// 3 ils/elles.
type subject struct {
	enfr
	person int
}

// A modal verb: English, and French by person.
type modal struct {
	en string
	fr [4]string
}

// An object noun phrase, with its French form after "de".
type object struct {
	en, fr, frDe string
}

func epOpeners() []enfr {
	return []enfr{
		{"", ""}, {"", ""}, {"", ""}, {"", ""},
		{"Mr President, ", "Monsieur le Président, "}, {"Madam President, ", "Madame la Présidente, "},
		{"Ladies and gentlemen, ", "Mesdames et Messieurs, "}, {"In my opinion, ", "À mon avis, "},
		{"Firstly, ", "Premièrement, "}, {"However, ", "Cependant, "}, {"Of course, ", "Bien entendu, "},
		{"Finally, ", "Enfin, "}, {"In this respect, ", "À cet égard, "}, {"Nevertheless, ", "Néanmoins, "},
		{"Commissioner, ", "Monsieur le Commissaire, "}, {"Secondly, ", "Deuxièmement, "},
		{"For this reason, ", "C'est pourquoi "}, {"As you know, ", "Comme vous le savez, "},
	}
}

func epSubjects() []subject {
	return []subject{
		{enfr{"the Commission", "la Commission"}, 2}, {enfr{"the Council", "le Conseil"}, 2},
		{enfr{"this Parliament", "ce Parlement"}, 2}, {enfr{"the Member States", "les États membres"}, 3},
		{enfr{"we", "nous"}, 1}, {enfr{"I", "je"}, 0}, {enfr{"my group", "mon groupe"}, 2},
		{enfr{"the rapporteur", "le rapporteur"}, 2}, {enfr{"the European Union", "l'Union européenne"}, 2},
		{enfr{"the Presidency", "la présidence"}, 2}, {enfr{"the governments", "les gouvernements"}, 3},
		{enfr{"the Committee on Budgets", "la commission des budgets"}, 2},
		{enfr{"our citizens", "nos concitoyens"}, 3}, {enfr{"the candidate countries", "les pays candidats"}, 3},
	}
}

func epModals() []modal {
	return []modal{
		{"must", [4]string{"dois", "devons", "doit", "doivent"}},
		{"should", [4]string{"devrais", "devrions", "devrait", "devraient"}},
		{"cannot", [4]string{"ne peux pas", "ne pouvons pas", "ne peut pas", "ne peuvent pas"}},
		{"wants to", [4]string{"veux", "voulons", "veut", "veulent"}},
		{"would like to", [4]string{"voudrais", "voudrions", "voudrait", "voudraient"}},
		{"is going to", [4]string{"vais", "allons", "va", "vont"}},
		{"can", [4]string{"peux", "pouvons", "peut", "peuvent"}},
	}
}

func epVerbs() []enfr {
	return []enfr{
		{"support", "soutenir"}, {"reject", "rejeter"}, {"examine", "examiner"}, {"adopt", "adopter"},
		{"strengthen", "renforcer"}, {"improve", "améliorer"}, {"accept", "accepter"},
		{"defend", "défendre"}, {"finance", "financer"}, {"simplify", "simplifier"},
		{"implement", "mettre en œuvre"}, {"protect", "protéger"}, {"reform", "réformer"},
		{"welcome", "saluer"}, {"respect", "respecter"}, {"guarantee", "garantir"},
	}
}

// epVerbsDe take their object after "de".
func epVerbsDe() []enfr {
	return []enfr{
		{"take account of", "tenir compte"}, {"talk about", "parler"}, {"take note of", "prendre acte"},
	}
}

func epObjects() []object {
	return []object{
		{"this report", "ce rapport", "de ce rapport"}, {"the proposal", "la proposition", "de la proposition"},
		{"the directive on working time", "la directive sur le temps de travail", "de la directive sur le temps de travail"},
		{"the common agricultural policy", "la politique agricole commune", "de la politique agricole commune"},
		{"the budget for 2001", "le budget pour 2001", "du budget pour 2001"},
		{"the rights of workers", "les droits des travailleurs", "des droits des travailleurs"},
		{"the internal market", "le marché intérieur", "du marché intérieur"},
		{"the protection of the environment", "la protection de l'environnement", "de la protection de l'environnement"},
		{"the enlargement of the Union", "l'élargissement de l'Union", "de l'élargissement de l'Union"},
		{"the fight against unemployment", "la lutte contre le chômage", "de la lutte contre le chômage"},
		{"the structural funds", "les Fonds structurels", "des Fonds structurels"},
		{"the Treaty of Amsterdam", "le traité d'Amsterdam", "du traité d'Amsterdam"},
		{"the safety of maritime transport", "la sécurité du transport maritime", "de la sécurité du transport maritime"},
		{"the amendments tabled", "les amendements déposés", "des amendements déposés"},
		{"the fisheries agreement with Morocco", "l'accord de pêche avec le Maroc", "de l'accord de pêche avec le Maroc"},
		{"public health", "la santé publique", "de la santé publique"},
		{"the situation in the Middle East", "la situation au Proche-Orient", "de la situation au Proche-Orient"},
		{"the principle of subsidiarity", "le principe de subsidiarité", "du principe de subsidiarité"},
		{"the rules of procedure", "le règlement", "du règlement"},
		{"the interests of consumers", "les intérêts des consommateurs", "des intérêts des consommateurs"},
	}
}

func epAdverbials() []enfr {
	return []enfr{
		{"", ""}, {"", ""}, {"", ""},
		{" as soon as possible", " dès que possible"}, {" in the coming years", " dans les années à venir"},
		{" at European level", " au niveau européen"}, {" without delay", " sans délai"},
		{" in all the Member States", " dans tous les États membres"}, {" once again", " une fois de plus"},
		{" in the interests of our citizens", " dans l'intérêt de nos concitoyens"},
		{" before the end of the year", " avant la fin de l'année"}, {" at first reading", " en première lecture"},
	}
}

func epConnectors() []enfr {
	return []enfr{{" because ", " parce que "}, {", and ", ", et "}, {", but ", ", mais "}, {" since ", " puisque "}}
}

func epMembers() []string {
	return []string{"Fischler", "Lange", "Cox", "Barnier", "Poettering", "Bolkestein", "Wallström", "Monti", "Schreyer", "Kinnock", "Evans", "Berthu", "Hautala", "Watson"}
}

func epFormulas() []enfr {
	return []enfr{
		{"The debate is closed.", "Le débat est clos."},
		{"(Applause)", "(Applaudissements)"},
		{"(Parliament approved the Minutes)", "(Le procès-verbal est adopté)"},
		{"Thank you very much, Commissioner.", "Merci beaucoup, Monsieur le Commissaire."},
		{"Resumption of the session", "Reprise de la session"},
		{"Approval of the Minutes of the previous sitting", "Approbation du procès-verbal de la séance précédente"},
		{"That concludes the vote.", "Voilà qui conclut le vote."},
		{"(Parliament adopted the resolution)", "(Le Parlement adopte la résolution)"},
		{"I have received six motions for resolutions.", "J'ai reçu six propositions de résolution."},
		{"We shall now proceed to the vote.", "Nous allons maintenant procéder au vote."},
	}
}

// pair appends one English sentence to en and its French
// translation to fr.
func (g *epGen) pair(en, fr []byte, r *rng) ([]byte, []byte) {
	u := r.float()
	switch {
	case u < 0.08:
		f := pick(r, g.formulas)
		return append(en, f.en...), append(fr, f.fr...)
	case u < 0.13:
		h, m := 9+r.intn(15), 5*r.intn(12)
		en = append(en, "(The sitting was closed at "...)
		en = appendClock(en, h, m, true)
		en = append(en, ')')
		fr = append(fr, "(La séance est levée à "...)
		fr = appendClock(fr, h, m, false)
		return en, append(fr, ')')
	case u < 0.2:
		name := pick(r, g.members)
		en = append(en, "I should like to thank the rapporteur, Mr "...)
		en = append(en, name...)
		en = append(en, ", for his excellent work."...)
		fr = append(fr, "Je voudrais remercier le rapporteur, M. "...)
		fr = append(fr, name...)
		return en, append(fr, ", pour son excellent travail."...)
	case u < 0.26:
		n := 1 + r.intn(60)
		o := pick(r, g.objects)
		en = append(en, "Amendment No "...)
		en = strconv.AppendInt(en, int64(n), 10)
		en = append(en, " concerns "...)
		en = append(en, o.en...)
		en = append(en, '.')
		fr = append(fr, "L'amendement n° "...)
		fr = strconv.AppendInt(fr, int64(n), 10)
		fr = append(fr, " concerne "...)
		fr = append(fr, o.fr...)
		return en, append(fr, '.')
	case u < 0.32:
		s := pick(r, g.subjects)
		o := pick(r, g.objects)
		en = append(en, "Can "...)
		en = append(en, s.en...)
		en = append(en, " tell us what will happen to "...)
		en = append(en, o.en...)
		en = append(en, '?')
		fr = append(fr, "Pouvez-vous nous dire ce qu'il adviendra "...)
		fr = append(fr, o.frDe...)
		return en, append(fr, " ?"...)
	}
	op := pick(r, g.openers)
	enStart, frStart := len(en), len(fr)
	en = append(en, op.en...)
	fr = append(fr, op.fr...)
	en, fr = g.clause(en, fr, r)
	if r.chance(0.3) {
		c := pick(r, g.connectors)
		en = append(en, c.en...)
		fr = append(fr, c.fr...)
		en, fr = g.clause(en, fr, r)
	}
	capitalise(en[enStart:])
	capitaliseUTF8(fr[frStart:])
	return append(en, '.'), append(fr, '.')
}

func (g *epGen) clause(en, fr []byte, r *rng) ([]byte, []byte) {
	s := pick(r, g.subjects)
	m := pick(r, g.modals)
	en = append(en, s.en...)
	en = append(en, ' ')
	enModal := m.en
	if s.person != 2 { // "we must", "they want to"
		switch m.en {
		case "wants to":
			enModal = "want to"
		case "is going to":
			enModal = "are going to"
			if s.person == 0 {
				enModal = "am going to"
			}
		}
	}
	en = append(en, enModal...)
	en = append(en, ' ')
	fr = append(fr, s.fr...)
	fr = append(fr, ' ')
	fr = append(fr, m.fr[s.person]...) // "ne peut pas" comes before the infinitive too
	fr = append(fr, ' ')
	o := pick(r, g.objects)
	if r.chance(0.15) {
		v := pick(r, g.verbsDe)
		en = append(en, v.en...)
		fr = append(fr, v.fr...)
		en = append(en, ' ')
		en = append(en, o.en...)
		fr = append(fr, ' ')
		fr = append(fr, o.frDe...)
	} else {
		v := pick(r, g.verbs)
		en = append(en, v.en...)
		fr = append(fr, v.fr...)
		en = append(en, ' ')
		en = append(en, o.en...)
		fr = append(fr, ' ')
		fr = append(fr, o.fr...)
	}
	a := pick(r, g.adverbials)
	en = append(en, a.en...)
	fr = append(fr, a.fr...)
	return en, fr
}

// appendClock writes a time of day: "11.45 p.m." in English, "23h45" in
// French.
func appendClock(b []byte, h, m int, english bool) []byte {
	if english {
		h12 := h % 12
		if h12 == 0 {
			h12 = 12
		}
		b = strconv.AppendInt(b, int64(h12), 10)
		b = append(b, '.', byte('0'+m/10), byte('0'+m%10))
		if h < 12 {
			return append(b, " a.m."...)
		}
		return append(b, " p.m."...)
	}
	b = strconv.AppendInt(b, int64(h), 10)
	return append(b, 'h', byte('0'+m/10), byte('0'+m%10))
}

// capitalise upper-cases the first byte of an ASCII text.
func capitalise(b []byte) {
	if len(b) > 0 && b[0] >= 'a' && b[0] <= 'z' {
		b[0] -= 'a' - 'A'
	}
}

// capitaliseUTF8 upper-cases the first letter, ASCII or "é"/"à".
func capitaliseUTF8(b []byte) {
	if len(b) >= 2 && b[0] == 0xc3 && (b[1] == 0xa9 || b[1] == 0xa0) { // é à → É À
		b[1] -= 0x20
		return
	}
	capitalise(b)
}
