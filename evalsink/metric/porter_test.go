package metric_test

import (
	"strings"
	"testing"

	"github.com/parastream/parastream/evalsink/metric"
)

// TestPorterStem stems the examples Porter (1980) gives for each rule,
// run through the whole algorithm (so "relational", the example of
// ATIONAL → ATE, ends as "relat" after step 4), and the cases the
// implementation decides: short words, and words with bytes outside a-z.
// NLTK 3.8's PorterStemmer in ORIGINAL_ALGORITHM mode gives the same stem
// for each word here of three letters or more (TestPorterStemAgainstNLTK
// checks 20,812 words of ../shared).
func TestPorterStem(t *testing.T) {
	const pairs = `caresses:caress ponies:poni ties:ti caress:caress cats:cat feed:feed agreed:agre plastered:plaster
bled:bled motoring:motor sing:sing conflated:conflat troubled:troubl sized:size hopping:hop tanned:tan falling:fall
hissing:hiss fizzed:fizz failing:fail filing:file happy:happi sky:sky relational:relat conditional:condit
rational:ration valenci:valenc hesitanci:hesit digitizer:digit conformabli:conform radicalli:radic
differentli:differ vileli:vile analogousli:analog vietnamization:vietnam predication:predic operator:oper
feudalism:feudal decisiveness:decis hopefulness:hope callousness:callous formaliti:formal sensitiviti:sensit
sensibiliti:sensibl triplicate:triplic formative:form formalize:formal electriciti:electr electrical:electr
hopeful:hope goodness:good revival:reviv allowance:allow inference:infer airliner:airlin gyroscopic:gyroscop
adjustable:adjust defensible:defens irritant:irrit replacement:replac adjustment:adjust dependent:depend
adoption:adopt homologou:homolog communism:commun activate:activ angulariti:angular homologous:homolog
effective:effect bowdlerize:bowdler probate:probat rate:rate cease:ceas controll:control roll:roll
generalizations:gener oscillators:oscil cement:cement
is:is as:as a:a
Cats:Cats naïve:naïve 1990s:1990s don't:don't`
	for _, p := range strings.Fields(pairs) {
		word, want, _ := strings.Cut(p, ":")
		if got := metric.PorterStem(word); got != want {
			t.Errorf("PorterStem(%q) = %q, want %q", word, got, want)
		}
	}
	if got := metric.PorterStem(""); got != "" {
		t.Errorf("PorterStem of nothing = %q", got)
	}
}
