package synth

import (
	"io"
	"math"
	"strconv"
	"strings"

	"github.com/parastream/parastream/corpora"
)

// PPDB writes cfg.Rows paraphrase rules in the form of the PPDB release
// files: version 2.0 (the default) as
//
//	[LHS] ||| phrase ||| paraphrase ||| Name=value ... ||| alignment ||| EntailmentClass
//
// with the 2.0 feature set in its order (PPDB2.0Score, PPDB1.0Score, the
// -logp features, AGigaSim, ..., WordLogCR), and version 1.0
// (cfg.PPDBVersion 1) in five fields with the 1.0 features.
//
// Rules are lexical (one word each side: synonyms, hypernyms, antonyms and
// unrelated words), phrasal (multi-word paraphrases such as "in order to"
// and "to") and syntactic (with nonterminals such as "[NN,1]"). Most
// rules come with their reverse a few lines later, as in the release. The
// features agree with the texts: word and character counts, their
// differences and log ratios, Lexical, ContainsX, the alignment. The
// entailment class follows the kind of pair (synonyms Equivalence,
// hyponym to hypernym ForwardEntailment, antonyms Exclusion, unrelated
// words Independent or OtherRelated), and its probability features agree
// with it. Malformed rules have four fields, a left-hand side without
// brackets, an empty phrase, a feature value that is not a number or an
// alignment point that is not i-j.
func PPDB(w io.Writer, cfg Config) (Stats, error) {
	if err := cfg.Validate(); err != nil {
		return Stats{}, err
	}
	cfg = cfg.withDefaults()
	g := newPPDBGen(cfg)
	var st Stats
	out := newOutput(w)
	return st, rowLoop(cfg, &st, []*output{out}, g.r, func(bad bool) error {
		rule := g.next()
		var reason corpora.Reason
		if bad {
			reason = pick(g.r, g.malformed)
			st.malformed(reason)
		}
		g.buf = g.write(g.buf[:0], rule, reason)
		out.write(g.buf)
		return nil
	})
}

func ppdbMalformed() []corpora.Reason {
	return []corpora.Reason{corpora.ReasonFieldCount, corpora.ReasonBadLHS, corpora.ReasonEmptyText, corpora.ReasonBadFeature, corpora.ReasonBadAlignment}
}

// Kinds of paraphrase pair, which set the entailment class.
const (
	relEquivalence = iota
	relForward
	relReverse
	relExclusion
	relIndependent
	relOther
)

// relName returns the entailment class of a kind of pair.
func relName(rel int) string {
	switch rel {
	case relEquivalence:
		return "Equivalence"
	case relForward:
		return "ForwardEntailment"
	case relReverse:
		return "ReverseEntailment"
	case relExclusion:
		return "Exclusion"
	case relIndependent:
		return "Independent"
	}
	return "OtherRelated"
}

// ppdbPhrase is a multi-word paraphrase and its label.
type ppdbPhrase struct{ lhs, a, b string }

// ppdbSyntax is a rule with nonterminals and its alignment.
type ppdbSyntax struct{ lhs, a, b, align string }

type ppdbRule struct {
	lhs   string
	a, b  string
	align string
	rel   int
	score float64 // the PPDB 2.0 score
	count int     // how often the pair was seen (LogCount, RarityPenalty)
}

type ppdbGen struct {
	r       *rng
	v1      bool
	en      *english
	pending []ppdbRule // reverse rules still to write
	buf     []byte

	// The tables drawn from: see the functions of the same names.
	nounSyn, verbSyn, adjSyn, advSyn [][]string
	hypernyms, antonyms              [][2]string
	phrases                          []ppdbPhrase
	syntactic                        []ppdbSyntax
	malformed                        []corpora.Reason
}

func newPPDBGen(cfg Config) *ppdbGen {
	return &ppdbGen{
		r: newRNG(mix(cfg.Seed) ^ 0x99db), v1: cfg.PPDBVersion == 1, en: newEnglish(),
		nounSyn: ppdbNounSyn(), verbSyn: ppdbVerbSyn(), adjSyn: ppdbAdjSyn(), advSyn: ppdbAdvSyn(),
		hypernyms: ppdbHypernyms(), antonyms: ppdbAntonyms(),
		phrases: ppdbPhrases(), syntactic: ppdbSyntactic(),
		malformed: ppdbMalformed(),
	}
}

// ppdbNounSyn, ppdbVerbSyn, ppdbAdjSyn and ppdbAdvSyn return synonym sets
// by part of speech.
func ppdbNounSyn() [][]string {
	return [][]string{
		{"car", "automobile", "vehicle", "auto"}, {"house", "home", "residence", "dwelling"},
		{"job", "work", "employment", "occupation"}, {"problem", "issue", "difficulty", "trouble"},
		{"kid", "child", "youngster"}, {"doctor", "physician"}, {"money", "funds", "cash"},
		{"film", "movie", "picture"}, {"road", "street", "route"}, {"shop", "store", "boutique"},
		{"help", "assistance", "aid", "support"}, {"answer", "response", "reply"}, {"chance", "opportunity"},
		{"goal", "aim", "objective", "target"}, {"rule", "regulation"}, {"error", "mistake", "fault"},
		{"country", "nation", "state"}, {"town", "city"}, {"trip", "journey", "voyage"},
		{"talk", "conversation", "discussion"}, {"meeting", "session", "sitting"}, {"law", "legislation"},
		{"report", "account", "statement"}, {"proposal", "suggestion", "proposition"}, {"idea", "notion", "concept"},
		{"result", "outcome", "consequence"}, {"way", "method", "manner", "means"}, {"area", "region", "zone"},
		{"part", "portion", "section"}, {"fight", "struggle", "battle"}, {"start", "beginning", "outset"},
		{"end", "conclusion", "close"}, {"worker", "employee", "labourer"}, {"people", "persons", "individuals"},
		{"price", "cost"}, {"view", "opinion"}, {"amount", "quantity", "sum"}, {"kind", "sort", "type"},
	}
}

func ppdbVerbSyn() [][]string {
	return [][]string{
		{"buy", "purchase", "acquire"}, {"begin", "start", "commence"}, {"end", "finish", "conclude"},
		{"help", "assist", "aid"}, {"show", "demonstrate", "display"}, {"get", "obtain", "receive"},
		{"use", "utilize", "employ"}, {"try", "attempt"}, {"need", "require"}, {"make", "create", "produce"},
		{"tell", "inform", "notify"}, {"seem", "appear"}, {"keep", "retain", "maintain"}, {"fix", "repair", "mend"},
		{"allow", "permit", "let"}, {"choose", "select", "pick"}, {"think", "believe", "consider"},
		{"ask", "request"}, {"check", "verify", "examine"}, {"stop", "halt", "cease"}, {"go", "leave", "depart"},
		{"say", "state", "declare"}, {"support", "back", "endorse"}, {"increase", "raise", "boost"},
		{"reduce", "decrease", "lower", "cut"}, {"answer", "respond", "reply"}, {"build", "construct"},
	}
}

func ppdbAdjSyn() [][]string {
	return [][]string{
		{"big", "large", "huge", "great"}, {"small", "little", "tiny"}, {"fast", "quick", "rapid", "swift"},
		{"hard", "difficult", "tough"}, {"happy", "glad", "pleased"}, {"sad", "unhappy"},
		{"important", "significant", "crucial", "essential"}, {"correct", "right", "accurate"},
		{"strange", "odd", "weird", "unusual"}, {"rich", "wealthy"}, {"smart", "clever", "intelligent"},
		{"angry", "mad", "furious"}, {"old", "elderly", "aged"}, {"enough", "sufficient", "adequate"},
		{"main", "principal", "chief", "primary"}, {"whole", "entire", "complete"}, {"clear", "obvious", "evident"},
		{"possible", "feasible"}, {"necessary", "needed", "required"}, {"current", "present"},
	}
}

func ppdbAdvSyn() [][]string {
	return [][]string{
		{"quickly", "rapidly", "swiftly"}, {"often", "frequently"}, {"maybe", "perhaps", "possibly"},
		{"very", "really", "extremely", "highly"}, {"almost", "nearly", "practically"},
		{"about", "approximately", "roughly", "around"}, {"mainly", "mostly", "primarily", "chiefly"},
		{"now", "currently", "presently"}, {"also", "too"}, {"completely", "totally", "entirely", "fully"},
	}
}

// ppdbHypernyms pairs a word with a more general one.
func ppdbHypernyms() [][2]string {
	return [][2]string{
		{"dog", "animal"}, {"car", "vehicle"}, {"rose", "flower"}, {"apple", "fruit"}, {"hammer", "tool"},
		{"oak", "tree"}, {"violin", "instrument"}, {"cancer", "disease"}, {"whale", "mammal"},
		{"poodle", "dog"}, {"sparrow", "bird"}, {"novel", "book"}, {"shirt", "clothing"}, {"truck", "vehicle"},
		{"salmon", "fish"}, {"teacher", "person"}, {"paris", "city"}, {"french", "language"}, {"gold", "metal"},
		{"sprint", "run"}, {"whisper", "speak"}, {"stroll", "walk"}, {"devour", "eat"}, {"scarlet", "red"},
	}
}

func ppdbAntonyms() [][2]string {
	return [][2]string{
		{"hot", "cold"}, {"big", "small"}, {"increase", "decrease"}, {"win", "lose"}, {"open", "close"},
		{"always", "never"}, {"buy", "sell"}, {"accept", "reject"}, {"early", "late"}, {"rich", "poor"},
		{"success", "failure"}, {"before", "after"}, {"friend", "enemy"}, {"full", "empty"},
	}
}

// ppdbPhrases returns multi-word paraphrases, with their label.
func ppdbPhrases() []ppdbPhrase {
	return []ppdbPhrase{
		{"[PP]", "in order to", "to"}, {"[PP]", "at the moment", "now"}, {"[SBAR]", "in the event that", "if"},
		{"[PP]", "with regard to", "regarding"}, {"[PP]", "with respect to", "concerning"},
		{"[PP]", "in spite of", "despite"}, {"[PP]", "because of", "due to"}, {"[PP]", "prior to", "before"},
		{"[ADVP]", "as well", "too"}, {"[ADVP]", "at all times", "always"}, {"[VP]", "take part in", "participate in"},
		{"[VP]", "make use of", "use"}, {"[VP]", "carry out", "perform"}, {"[VP]", "put forward", "propose"},
		{"[VP]", "give up", "abandon"}, {"[VP]", "find out", "discover"}, {"[VP]", "look into", "investigate"},
		{"[NP]", "a great deal of", "much"}, {"[NP]", "a number of", "several"}, {"[NP]", "the majority of", "most"},
		{"[WHNP]", "what exactly", "what"}, {"[WHNP]", "what kind", "what sort"}, {"[WHNP]", "just what", "what"},
		{"[SBAR]", "what 's that", "what is that"}, {"[X]", "it is", "it 's"}, {"[X]", "do not", "do n't"},
		{"[X]", "can not", "can 't"}, {"[X]", "i am", "i 'm"}, {"[S]", "that is all", "that 's it"},
		{"[ADJP]", "very important", "crucial"}, {"[ADJP]", "not possible", "impossible"},
	}
}

// ppdbSyntactic returns rules with nonterminals, with their alignments.
func ppdbSyntactic() []ppdbSyntax {
	return []ppdbSyntax{
		{"[NP]", "the [NN,1] of the [NN,2]", "the [NN,2] 's [NN,1]", "0-0 1-3 3-0 4-1"},
		{"[NP]", "[NN,1] of [NNP,2]", "[NNP,2] 's [NN,1]", "0-2 1-1 2-0"},
		{"[VP]", "[VB,1] the [NN,2]", "[VB,1] the [NN,2]", "0-0 1-1 2-2"},
		{"[S]", "[NP,1] has [VBN,2]", "[NP,1] [VBD,2]", "0-0 2-1"},
		{"[NNS]", "[NN,1] s", "[NN,1]", "0-0 1-0"},
		{"[VP]", "is [VBG,1]", "[VBZ,1]", "0-0 1-0"},
		{"[SBAR]", "that [S,1]", "[S,1]", "1-0"},
		{"[NP]", "[DT,1] [JJ,2] [NN,3]", "[DT,1] [NN,3] that is [JJ,2]", "0-0 1-4 2-1"},
		{"[X]", "[X,1] in order to [VB,2]", "[X,1] to [VB,2]", "0-0 1-1 2-1 3-1 4-2"},
		{"[VP]", "[VBD,1] up [NP,2]", "[VBD,1] [NP,2]", "0-0 2-1"},
	}
}

// next returns the next rule to write: a reverse waiting its turn, or a
// new pair (whose reverse then waits).
func (g *ppdbGen) next() ppdbRule {
	r := g.r
	if n := len(g.pending); n > 0 && (n >= 32 || r.chance(0.5)) {
		i := 0
		if n > 1 {
			i = r.intn(min(n, 4))
		}
		rule := g.pending[i]
		g.pending = append(g.pending[:i], g.pending[i+1:]...)
		return rule
	}
	rule := g.newRule()
	if r.chance(0.8) {
		rev := rule
		rev.a, rev.b = rule.b, rule.a
		rev.align = reverseAlignment(rule.align)
		switch rule.rel {
		case relForward:
			rev.rel = relReverse
		case relReverse:
			rev.rel = relForward
		}
		rev.score = math.Max(1, rule.score+0.3*r.normal())
		g.pending = append(g.pending, rev)
	}
	return rule
}

func (g *ppdbGen) newRule() ppdbRule {
	r := g.r
	rule := ppdbRule{count: int(r.pareto(1.2))}
	u := r.float()
	switch {
	case u < 0.45: // lexical synonyms, inflected
		lhs, a, b := g.synonyms()
		rule.lhs, rule.a, rule.b, rule.align, rule.rel = lhs, a, b, "0-0", relEquivalence
		rule.score = 3.2 + 1.2*r.float()
		if r.chance(0.35) {
			rule.rel = relOther
			rule.score -= 0.8
		}
	case u < 0.55: // hypernyms
		h := pick(r, g.hypernyms)
		rule.lhs, rule.a, rule.b, rule.align, rule.rel = posOf(h[0]), h[0], h[1], "0-0", relForward
		rule.score = 2.8 + r.float()
	case u < 0.60:
		h := pick(r, g.antonyms)
		rule.lhs, rule.a, rule.b, rule.align, rule.rel = posOf(h[0]), h[0], h[1], "0-0", relExclusion
		rule.score = 1.5 + r.float()
	case u < 0.75: // noise: unrelated words of one part of speech
		if r.chance(0.5) {
			rule.lhs = "[NN]"
			rule.a = g.en.nouns[g.en.nA.sample(r)].sg
			rule.b = g.en.nouns[g.en.nA.sample(r)].sg
		} else {
			rule.lhs = "[JJ]"
			rule.a = g.en.adjs[g.en.aA.sample(r)]
			rule.b = g.en.adjs[g.en.aA.sample(r)]
		}
		if rule.a == rule.b {
			rule.b = rule.b + "s"
		}
		rule.align, rule.rel = "0-0", relIndependent
		if r.chance(0.35) {
			rule.rel = relOther
		}
		rule.score = 1 + 2.2*r.float()
	case u < 0.90:
		p := pick(r, g.phrases)
		rule.lhs, rule.a, rule.b = p.lhs, p.a, p.b
		if r.chance(0.3) {
			rule.lhs = "[X]"
		}
		rule.align = manyToFew(strings.Count(p.a, " ")+1, strings.Count(p.b, " ")+1)
		rule.rel = relEquivalence
		if r.chance(0.4) {
			rule.rel = relForward
		}
		rule.score = 2.5 + 2*r.float()
	default:
		s := pick(r, g.syntactic)
		rule.lhs, rule.a, rule.b, rule.align = s.lhs, s.a, s.b, s.align
		rule.rel = relEquivalence
		if r.chance(0.5) {
			rule.rel = relIndependent
		}
		rule.score = 2 + 2*r.float()
	}
	return rule
}

// synonyms picks two members of a synonym set, inflected alike, and their
// label.
func (g *ppdbGen) synonyms() (lhs, a, b string) {
	r := g.r
	var set []string
	pos := r.intn(4)
	switch pos {
	case 0:
		set = pick(r, g.nounSyn)
	case 1:
		set = pick(r, g.verbSyn)
	case 2:
		set = pick(r, g.adjSyn)
	default:
		set = pick(r, g.advSyn)
	}
	i := r.intn(len(set))
	j := (i + 1 + r.intn(len(set)-1)) % len(set)
	a, b = set[i], set[j]
	switch pos {
	case 0:
		if r.chance(0.35) {
			return "[NNS]", plural(a), plural(b)
		}
		return "[NN]", a, b
	case 1:
		form := r.intn(5)
		sa, pa, ppa, ia := verbForms(a)
		sb, pb, ppb, ib := verbForms(b)
		switch form {
		case 1:
			return "[VBZ]", sa, sb
		case 2:
			return "[VBD]", pa, pb
		case 3:
			return "[VBN]", ppa, ppb
		case 4:
			return "[VBG]", ia, ib
		}
		return "[VB]", a, b
	case 2:
		return "[JJ]", a, b
	}
	return "[RB]", a, b
}

// posOf guesses the label of a word of the hypernym and antonym lists.
func posOf(w string) string {
	switch w {
	case "hot", "big", "early", "rich", "full", "scarlet", "french":
		return "[JJ]"
	case "increase", "win", "open", "buy", "accept", "sprint", "whisper", "stroll", "devour":
		return "[VB]"
	case "always":
		return "[RB]"
	case "before":
		return "[IN]"
	}
	return "[NN]"
}

// manyToFew aligns a phrase of na words with one of nb: word i to word
// i*nb/na, as the release does for multi-word rules.
func manyToFew(na, nb int) string {
	var b []byte
	n := max(na, nb)
	for k := range n {
		i, j := k*na/n, k*nb/n
		if len(b) > 0 {
			b = append(b, ' ')
		}
		b = strconv.AppendInt(b, int64(i), 10)
		b = append(b, '-')
		b = strconv.AppendInt(b, int64(j), 10)
	}
	return string(b)
}

func reverseAlignment(a string) string {
	var b []byte
	for _, p := range strings.Fields(a) {
		i, j, _ := strings.Cut(p, "-")
		if len(b) > 0 {
			b = append(b, ' ')
		}
		b = append(b, j...)
		b = append(b, '-')
		b = append(b, i...)
	}
	return string(b)
}

// write appends the line of a rule, spoiled for reason when set.
func (g *ppdbGen) write(b []byte, rule ppdbRule, reason corpora.Reason) []byte {
	if reason == corpora.ReasonBadLHS {
		b = append(b, rule.lhs[1:len(rule.lhs)-1]...)
	} else {
		b = append(b, rule.lhs...)
	}
	b = append(b, " ||| "...)
	if reason != corpora.ReasonEmptyText {
		b = append(b, rule.a...)
	}
	b = append(b, " ||| "...)
	b = append(b, rule.b...)
	b = append(b, " ||| "...)
	if g.v1 {
		b = g.features1(b, rule)
	} else {
		b = g.features2(b, rule)
	}
	if reason == corpora.ReasonBadFeature {
		b = append(b, " AGigaSim2=n/a"...)
	}
	if reason == corpora.ReasonFieldCount {
		return append(b, '\n')
	}
	b = append(b, " ||| "...)
	b = append(b, rule.align...)
	if reason == corpora.ReasonBadAlignment {
		b = append(b, " 1-x"...)
	}
	if !g.v1 {
		b = append(b, " ||| "...)
		b = append(b, relName(rule.rel)...)
	}
	return append(b, '\n')
}

// textStats are the counts the features derive from.
type textStats struct {
	words, chars, terminals int
	nonterminal             bool
}

func statsOf(s string) textStats {
	t := textStats{chars: len(s)}
	for w := range strings.FieldsSeq(s) {
		t.words++
		if strings.HasPrefix(w, "[") && strings.HasSuffix(w, "]") {
			t.nonterminal = true
		} else {
			t.terminals++
		}
	}
	return t
}

// appendF writes Name=value as the release does: prec 0 an integer, prec
// 5 five decimals but a bare 0 for zero, prec 6 six decimals always.
func appendF(b []byte, name string, v float64, prec int) []byte {
	b = append(b, name...)
	b = append(b, '=')
	if prec == 0 || prec == 5 && v == 0 {
		return strconv.AppendInt(b, int64(v), 10)
	}
	return strconv.AppendFloat(b, v, 'f', prec, 64)
}

func appendSep(b []byte) []byte { return append(b, ' ') }

// features2 writes the PPDB 2.0 feature set.
func (g *ppdbGen) features2(b []byte, rule ppdbRule) []byte {
	r := g.r
	sa, sb := statsOf(rule.a), statsOf(rule.b)
	b = appendF(b, "PPDB2.0Score", round5(rule.score), 5)
	b = appendSep(b)
	b = appendF(b, "PPDB1.0Score", 5+30*r.float(), 6)
	for _, name := range [...]string{"-logp(LHS|e1)", "-logp(LHS|e2)", "-logp(e1|LHS)", "-logp(e1|e2)", "-logp(e1|e2,LHS)", "-logp(e2|LHS)", "-logp(e2|e1)", "-logp(e2|e1,LHS)"} {
		b = appendSep(b)
		b = appendF(b, name, round5(15*r.float()), 5)
	}
	b = appendSep(b)
	b = appendF(b, "AGigaSim", round5(r.float()), 5)
	b = g.shared(b, rule, sa, sb, true)
	return b
}

// shared writes the features that 1.0 and 2.0 share, from Abstract to
// WordLogCR, in 2.0's order (1.0's, less the 2.0-only ones).
func (g *ppdbGen) shared(b []byte, rule ppdbRule, sa, sb textStats, v2 bool) []byte {
	r := g.r
	probs := entailmentProbs(r, rule.rel)
	lexical := sa.words == 1 && sb.words == 1 && !sa.nonterminal && !sb.nonterminal
	abstract := sa.terminals == 0 && sb.terminals == 0
	b = appendSep(b)
	b = appendF(b, "Abstract", b2f(abstract), 0)
	b = appendSep(b)
	b = appendF(b, "Adjacent", 0, 0)
	b = appendSep(b)
	b = appendF(b, "CharCountDiff", float64(sb.chars-sa.chars), 0)
	if v2 {
		b = appendSep(b)
		b = appendF(b, "CharLogCR", round5(math.Log(float64(sb.chars)/float64(sa.chars))), 5)
	}
	b = appendSep(b)
	b = appendF(b, "ContainsX", b2f(sa.nonterminal || sb.nonterminal), 0)
	if v2 {
		b = appendSep(b)
		b = appendF(b, "Equivalence", probs[relEquivalence], 6)
		b = appendSep(b)
		b = appendF(b, "Exclusion", probs[relExclusion], 6)
	}
	b = appendSep(b)
	b = appendF(b, "GlueRule", 0, 0)
	if v2 {
		b = appendSep(b)
		b = appendF(b, "GoogleNgramSim", round5(r.float()*r.float()), 5)
	}
	b = appendSep(b)
	b = appendF(b, "Identity", 0, 0)
	if v2 {
		b = appendSep(b)
		b = appendF(b, "Independent", probs[relIndependent], 6)
	}
	lex := 62.90141
	if !lexical {
		lex = round5(20 + 40*r.float())
	}
	name1, name2 := "Lex(e1|e2)", "Lex(e2|e1)"
	if !v2 {
		name1, name2 = "Lex(e|f)", "Lex(f|e)"
	}
	b = appendSep(b)
	b = appendF(b, name1, lex, 5)
	b = appendSep(b)
	b = appendF(b, name2, lex, 5)
	b = appendSep(b)
	b = appendF(b, "Lexical", b2f(lexical), 0)
	b = appendSep(b)
	b = appendF(b, "LogCount", round5(math.Log(float64(rule.count))), 5)
	if v2 {
		b = appendSep(b)
		if r.chance(0.7) {
			b = append(b, "MVLSASim=NA"...)
		} else {
			b = appendF(b, "MVLSASim", round5(r.float()), 5)
		}
	}
	b = appendSep(b)
	b = appendF(b, "Monotonic", b2f(monotonic(rule.align)), 0)
	if v2 {
		b = appendSep(b)
		b = appendF(b, "OtherRelated", probs[relOther], 6)
	}
	b = appendSep(b)
	b = appendF(b, "PhrasePenalty", 1, 0)
	b = appendSep(b)
	b = appendF(b, "RarityPenalty", round5(math.Exp(-float64(rule.count))), 5)
	if v2 {
		b = appendSep(b)
		if rule.rel == relReverse {
			b = appendF(b, "ReverseEntailment", probs[relReverse], 6)
		} else {
			b = appendF(b, "ForwardEntailment", probs[relForward], 6)
		}
	}
	b = appendSep(b)
	b = appendF(b, "SourceTerminalsButNoTarget", b2f(sa.terminals > 0 && sb.terminals == 0), 0)
	b = appendSep(b)
	b = appendF(b, "SourceWords", float64(sa.words), 0)
	if v2 {
		b = appendSep(b)
		b = appendF(b, "TargetComplexity", round5(0.9+0.1*r.float()), 5)
		b = appendSep(b)
		b = appendF(b, "TargetFormality", round5(0.8+0.2*r.float()), 5)
	}
	b = appendSep(b)
	b = appendF(b, "TargetTerminalsButNoSource", b2f(sb.terminals > 0 && sa.terminals == 0), 0)
	b = appendSep(b)
	b = appendF(b, "TargetWords", float64(sb.words), 0)
	ua, ub := unaligned(rule.align, sa.words, sb.words)
	b = appendSep(b)
	b = appendF(b, "UnalignedSource", float64(ua), 0)
	b = appendSep(b)
	b = appendF(b, "UnalignedTarget", float64(ub), 0)
	b = appendSep(b)
	b = appendF(b, "WordCountDiff", float64(sb.words-sa.words), 0)
	b = appendSep(b)
	b = appendF(b, "WordLenDiff", round5(float64(sb.chars)/float64(sb.words)-float64(sa.chars)/float64(sa.words)), 5)
	b = appendSep(b)
	b = appendF(b, "WordLogCR", round5(math.Log(float64(sb.words)/float64(sa.words))), 5)
	return b
}

// features1 writes the PPDB 1.0 feature set.
func (g *ppdbGen) features1(b []byte, rule ppdbRule) []byte {
	r := g.r
	sa, sb := statsOf(rule.a), statsOf(rule.b)
	start := len(b)
	b = g.shared(b, rule, sa, sb, false)
	b = append(b[:start], b[start+1:]...) // shared starts with a separator
	for _, name := range [...]string{"p(LHS|e)", "p(LHS|f)", "p(e|LHS)", "p(e|f)", "p(e|f,LHS)", "p(f|LHS)", "p(f|e)", "p(f|e,LHS)"} {
		b = appendSep(b)
		b = appendF(b, name, round5(12*r.float()), 5)
	}
	return b
}

// entailmentProbs draws the class probabilities of PPDB 2.0, the rule's
// class the likeliest.
func entailmentProbs(r *rng, rel int) [6]float64 {
	var p [6]float64
	sum := 0.0
	for i := range p {
		p[i] = r.float() * 0.3
		if i == relReverse || i == relForward {
			p[i] *= 0.5
		}
		sum += p[i]
	}
	p[rel] = sum + 0.1 + r.float()
	total := 0.0
	for i := range p {
		total += p[i]
	}
	for i := range p {
		p[i] = math.Round(p[i]/total*1e6) / 1e6
	}
	return p
}

func monotonic(align string) bool {
	last := -1
	for p := range strings.FieldsSeq(align) {
		i, _, _ := strings.Cut(p, "-")
		n, _ := strconv.Atoi(i)
		if n < last {
			return false
		}
		last = n
	}
	return true
}

// unaligned counts the terminal words of each side that no alignment
// point touches.
func unaligned(align string, na, nb int) (int, int) {
	var sa, sb uint64
	for p := range strings.FieldsSeq(align) {
		i, j, _ := strings.Cut(p, "-")
		x, _ := strconv.Atoi(i)
		y, _ := strconv.Atoi(j)
		sa |= 1 << uint(x%64)
		sb |= 1 << uint(y%64)
	}
	ua, ub := 0, 0
	for i := range min(na, 64) {
		if sa&(1<<uint(i)) == 0 {
			ua++
		}
	}
	for j := range min(nb, 64) {
		if sb&(1<<uint(j)) == 0 {
			ub++
		}
	}
	return ua, ub
}

func round5(v float64) float64 { return math.Round(v*1e5) / 1e5 }

func b2f(v bool) float64 {
	if v {
		return 1
	}
	return 0
}
