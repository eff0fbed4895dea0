package trainstep

import (
	"strconv"
	"strings"
)

// A row's role in training, read from its label by its dataset's rule
// (pairRules): a paraphrase trains as a pair, a labelled non-paraphrase is
// a hard negative (RunConfig.HardNegatives) or left out, anything between
// is left out.
type pairRole int

const (
	rolePositive pairRole = iota
	roleNegative
	roleNeither
)

// pairRule says which labels of a dataset are paraphrases and which are
// not: a row is a positive when its label is at least posMin, a negative
// when at most negMax (a rule with negMax below posMin; hasNeg false: the
// dataset names no negatives). A row without a label is a positive.
type pairRule struct {
	dataset string
	posMin  float64
	negMax  float64
	hasNeg  bool
	// exact: the label is a class, positive only at posMin and negative
	// only at negMax (SNLI: 0 entailment, 2 contradiction; 1 neutral is
	// neither).
	exact bool
	doc   string
}

// pairRules is the one table of what each corpus's labels mean for
// training (docs/trainstep.md, "Positives and negatives"); a dataset not
// in it (ppdb rules and pairs, turkcorpus, simpwiki, europarl, moses,
// reddit) trains every row as a paraphrase: its labels, where it has
// any, are scores of paraphrases, not judgements of whether they are.
func pairRules() []pairRule {
	return []pairRule{
		{dataset: "quora", posMin: 1, negMax: 0, hasNeg: true, doc: "is_duplicate 1 positive, 0 negative"},
		{dataset: "msrp", posMin: 1, negMax: 0, hasNeg: true, doc: "Quality 1 positive, 0 negative"},
		{dataset: "snli", posMin: 0, negMax: 2, hasNeg: true, exact: true, doc: "entailment positive, contradiction negative (premise the anchor), neutral neither"},
		{dataset: "ppdb-human", posMin: 3, negMax: 2, hasNeg: true, doc: "mean rating at least 3 (of 1-5) positive, at most 2 negative"},
		{dataset: "sts", posMin: 4, negMax: 1, hasNeg: true, doc: "score at least 4 (of 0-5) positive, at most 1 negative"},
		{dataset: "stsb", posMin: 4, negMax: 1, hasNeg: true, doc: "score at least 4 (of 0-5) positive, at most 1 negative"},
		{dataset: "sick", posMin: 4, negMax: 2, hasNeg: true, doc: "relatedness at least 4 (of 1-5) positive, at most 2 negative"},
	}
}

// ruleFor is the rule of a published dataset: by its name, else by its
// rows' corpus; ok false: every row is a positive.
func ruleFor(dataset, corpus string) (pairRule, bool) {
	for _, key := range []string{dataset, corpus} {
		for _, r := range pairRules() {
			if r.dataset == key {
				return r, true
			}
		}
	}
	return pairRule{}, false
}

// role is what label makes a row of the rule's dataset.
func (r pairRule) role(label *float64) pairRole {
	if label == nil {
		return rolePositive
	}
	v := *label
	if r.exact {
		switch {
		case v == r.posMin:
			return rolePositive
		case r.hasNeg && v == r.negMax:
			return roleNegative
		}
		return roleNeither
	}
	switch {
	case v >= r.posMin:
		return rolePositive
	case r.hasNeg && v <= r.negMax:
		return roleNegative
	}
	return roleNeither
}

// PairRulesDoc lists the rules, a line each ("quora: is_duplicate 1
// positive, 0 negative"), for the docs and the help.
func PairRulesDoc() string {
	var b strings.Builder
	for _, r := range pairRules() {
		b.WriteString(r.dataset + ": " + r.doc + "\n")
	}
	return b.String()
}

// textKey is a text's key in the hard-negative index: its token ids.
func textKey(ids []int32) string {
	b := make([]byte, 0, 6*len(ids))
	for _, id := range ids {
		b = strconv.AppendInt(b, int64(id), 36)
		b = append(b, ' ')
	}
	return string(b)
}

// negIndex holds the hard negatives of a run: the labelled non-paraphrases
// read so far, by the texts and the group they share with the positives.
// A positive (a, b) takes as its negative the other side of a negative
// row that has a as a side, else b as a side, else its group (then the
// negative row's side that is neither of the positive's). It grows as the run reads (the first
// epoch finds only the negatives read before a positive; later epochs
// all of them) and holds token ids only.
type negIndex struct {
	byText  map[string][][]int32
	byGroup map[string][2][]int32
	added   int64
}

func newNegIndex() *negIndex {
	return &negIndex{byText: map[string][][]int32{}, byGroup: map[string][2][]int32{}}
}

// add indexes a negative row.
func (x *negIndex) add(r item) {
	if len(r.IDsA) == 0 || len(r.IDsB) == 0 {
		return
	}
	ka, kb := textKey(r.IDsA), textKey(r.IDsB)
	x.byText[ka] = appendOnce(x.byText[ka], r.IDsB)
	x.byText[kb] = appendOnce(x.byText[kb], r.IDsA)
	if r.GroupKey != "" {
		x.byGroup[r.GroupKey] = [2][]int32{r.IDsA, r.IDsB}
	}
	x.added++
}

// appendOnce appends ids unless list already ends with the same text.
func appendOnce(list [][]int32, ids []int32) [][]int32 {
	if n := len(list); n > 0 && textKey(list[n-1]) == textKey(ids) {
		return list
	}
	return append(list, ids)
}

// negative is the hard negative of the positive r, or nil; pick chooses
// among several.
func (x *negIndex) negative(r item, pick func(n int) int) []int32 {
	not := func(ids []int32) bool {
		k := textKey(ids)
		return k != textKey(r.IDsA) && k != textKey(r.IDsB)
	}
	for _, side := range [][]int32{r.IDsA, r.IDsB} {
		var ok [][]int32
		for _, c := range x.byText[textKey(side)] {
			if not(c) {
				ok = append(ok, c)
			}
		}
		if len(ok) > 0 {
			return ok[pick(len(ok))]
		}
	}
	if g, found := x.byGroup[r.GroupKey]; found && r.GroupKey != "" {
		for _, c := range [2][]int32{g[1], g[0]} {
			if not(c) {
				return c
			}
		}
	}
	return nil
}
