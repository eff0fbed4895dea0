package metric

// PorterStem returns the stem of an English word by Porter's (1980)
// suffix-stripping algorithm, "An algorithm for suffix stripping",
// Program 14(3), the rules as the paper publishes them (ABLI → ABLE in
// step 2; none of the later departures such as LOGI → LOG). As Porter's
// own reference implementation does, a word of one or two letters is its
// own stem. The algorithm is defined on lower-case letters: a word with
// any byte outside a-z (upper case, digits, punctuation, non-ASCII) is
// returned unchanged, so the caller lowercases first (the project's
// tokeniser does by default). METEOR's stem stage uses it.
func PorterStem(word string) string {
	if len(word) <= 2 {
		return word
	}
	for i := 0; i < len(word); i++ {
		if word[i] < 'a' || word[i] > 'z' {
			return word
		}
	}
	w := []byte(word)
	w = porterStep1a(w)
	w = porterStep1b(w)
	w = porterStep1c(w)
	w = porterStep2(w)
	w = porterStep3(w)
	w = porterStep4(w)
	w = porterStep5(w)
	return string(w)
}

// porterCons says whether w[i] is a consonant: a letter other than a, e,
// i, o, u, and other than a y preceded by a consonant.
func porterCons(w []byte, i int) bool {
	switch w[i] {
	case 'a', 'e', 'i', 'o', 'u':
		return false
	case 'y':
		return i == 0 || !porterCons(w, i-1)
	}
	return true
}

// porterMeasure is m of [C](VC)^m[V]: the number of vowel-consonant
// sequences of w.
func porterMeasure(w []byte) int {
	m := 0
	vowel := false
	for i := range w {
		if porterCons(w, i) {
			if vowel {
				m++
			}
			vowel = false
		} else {
			vowel = true
		}
	}
	return m
}

// porterHasVowel is the paper's *v*: w contains a vowel.
func porterHasVowel(w []byte) bool {
	for i := range w {
		if !porterCons(w, i) {
			return true
		}
	}
	return false
}

// porterDouble is *d: w ends with a double consonant.
func porterDouble(w []byte) bool {
	n := len(w)
	return n >= 2 && w[n-1] == w[n-2] && porterCons(w, n-1)
}

// porterCVC is *o: w ends consonant-vowel-consonant, the last not w, x
// or y.
func porterCVC(w []byte) bool {
	n := len(w)
	if n < 3 || !porterCons(w, n-3) || porterCons(w, n-2) || !porterCons(w, n-1) {
		return false
	}
	c := w[n-1]
	return c != 'w' && c != 'x' && c != 'y'
}

func porterEnds(w []byte, suffix string) bool {
	return len(w) >= len(suffix) && string(w[len(w)-len(suffix):]) == suffix
}

// porterRule replaces suffix by repl when the stem left satisfies cond.
type porterRule struct {
	suffix, repl string
	cond         func(stem []byte) bool
}

// porterApply applies the rule with the longest suffix w ends with, if
// its condition holds for the stem; a rule whose condition fails stops
// the step (the shorter suffixes are not tried), as the paper specifies.
// It reports whether a rule fired.
func porterApply(w []byte, rules []porterRule) ([]byte, bool) {
	best := -1
	for i, r := range rules {
		if porterEnds(w, r.suffix) && (best < 0 || len(r.suffix) > len(rules[best].suffix)) {
			best = i
		}
	}
	if best < 0 {
		return w, false
	}
	r := rules[best]
	stem := w[:len(w)-len(r.suffix)]
	if r.cond != nil && !r.cond(stem) {
		return w, false
	}
	return append(stem[:len(stem):len(stem)], r.repl...), true
}

func porterM0(stem []byte) bool { return porterMeasure(stem) > 0 }
func porterM1(stem []byte) bool { return porterMeasure(stem) > 1 }

func porterStep1a(w []byte) []byte {
	w, _ = porterApply(w, []porterRule{{"sses", "ss", nil}, {"ies", "i", nil}, {"ss", "ss", nil}, {"s", "", nil}})
	return w
}

func porterStep1b(w []byte) []byte {
	if porterEnds(w, "eed") {
		if porterM0(w[:len(w)-3]) {
			w = w[:len(w)-1]
		}
		return w
	}
	var fired bool
	w, fired = porterApply(w, []porterRule{{"ed", "", porterHasVowel}, {"ing", "", porterHasVowel}})
	if !fired {
		return w
	}
	switch {
	case porterEnds(w, "at"), porterEnds(w, "bl"), porterEnds(w, "iz"):
		return append(w, 'e')
	case porterDouble(w):
		if c := w[len(w)-1]; c != 'l' && c != 's' && c != 'z' {
			return w[:len(w)-1]
		}
	case porterMeasure(w) == 1 && porterCVC(w):
		return append(w, 'e')
	}
	return w
}

func porterStep1c(w []byte) []byte {
	if porterEnds(w, "y") && porterHasVowel(w[:len(w)-1]) {
		w[len(w)-1] = 'i'
	}
	return w
}

func porterStep2(w []byte) []byte {
	w, _ = porterApply(w, []porterRule{
		{"ational", "ate", porterM0}, {"tional", "tion", porterM0}, {"enci", "ence", porterM0}, {"anci", "ance", porterM0},
		{"izer", "ize", porterM0}, {"abli", "able", porterM0}, {"alli", "al", porterM0}, {"entli", "ent", porterM0},
		{"eli", "e", porterM0}, {"ousli", "ous", porterM0}, {"ization", "ize", porterM0}, {"ation", "ate", porterM0},
		{"ator", "ate", porterM0}, {"alism", "al", porterM0}, {"iveness", "ive", porterM0}, {"fulness", "ful", porterM0},
		{"ousness", "ous", porterM0}, {"aliti", "al", porterM0}, {"iviti", "ive", porterM0}, {"biliti", "ble", porterM0},
	})
	return w
}

func porterStep3(w []byte) []byte {
	w, _ = porterApply(w, []porterRule{
		{"icate", "ic", porterM0}, {"ative", "", porterM0}, {"alize", "al", porterM0}, {"iciti", "ic", porterM0},
		{"ical", "ic", porterM0}, {"ful", "", porterM0}, {"ness", "", porterM0},
	})
	return w
}

func porterStep4(w []byte) []byte {
	ion := func(stem []byte) bool {
		return porterM1(stem) && (porterEnds(stem, "s") || porterEnds(stem, "t"))
	}
	rules := []porterRule{{"ion", "", ion}}
	for _, s := range []string{"al", "ance", "ence", "er", "ic", "able", "ible", "ant", "ement", "ment", "ent",
		"ou", "ism", "ate", "iti", "ous", "ive", "ize"} {
		rules = append(rules, porterRule{s, "", porterM1})
	}
	w, _ = porterApply(w, rules)
	return w
}

// porterStep5 is steps 5a and 5b.
func porterStep5(w []byte) []byte {
	if porterEnds(w, "e") {
		stem := w[:len(w)-1]
		if m := porterMeasure(stem); m > 1 || (m == 1 && !porterCVC(stem)) {
			w = stem
		}
	}
	if porterMeasure(w) > 1 && porterDouble(w) && porterEnds(w, "l") {
		w = w[:len(w)-1]
	}
	return w
}
