package trainstep

import (
	"slices"
	"strings"
	"testing"

	"github.com/parastream/parastream/shards"
	"github.com/parastream/parastream/stream"
	"github.com/parastream/parastream/trainstep/compute"
)

func label(v float64) *float64 { return &v }

// TestPairRoles: each corpus's labels make the roles its rule says, and a
// corpus without a rule trains every row.
func TestPairRoles(t *testing.T) {
	for _, c := range []struct {
		dataset, corpus string
		label           *float64
		want            pairRole
	}{
		{"quora", "quora", label(1), rolePositive},
		{"quora", "quora", label(0), roleNegative},
		{"msrp", "msrp", label(0), roleNegative},
		{"quora-sample", "quora", label(0), roleNegative}, // by the rows' corpus
		{"snli", "snli", label(0), rolePositive},
		{"snli", "snli", label(1), roleNeither},
		{"snli", "snli", label(2), roleNegative},
		{"ppdb-human", "ppdb", label(3.4), rolePositive},
		{"ppdb-human", "ppdb", label(2.5), roleNeither},
		{"ppdb-human", "ppdb", label(1.8), roleNegative},
		{"stsb", "stsb", label(4.2), rolePositive},
		{"ppdb", "ppdb", label(-3), rolePositive}, // a PPDB score, not a judgement
		{"turkcorpus", "turkcorpus", nil, rolePositive},
		{"quora", "quora", nil, rolePositive},
	} {
		r, ok := ruleFor(c.dataset, c.corpus)
		got := rolePositive
		if ok {
			got = r.role(c.label)
		}
		if got != c.want {
			t.Errorf("%s (%s) label %v: role %d, want %d", c.dataset, c.corpus, c.label, got, c.want)
		}
	}
}

// TestNegIndex: a positive takes the other side of a negative that shares
// its anchor's text, else its partner's, else its group; never a text of
// its own pair.
func row(id, group string, a, b []int32) item {
	return item{Record: stream.Record{Row: rowOf(id, group, a, b)}}
}

func TestNegIndex(t *testing.T) {
	x := newNegIndex()
	x.add(row("n1", "g1", []int32{1, 2}, []int32{3})) // anchor text 1 2
	x.add(row("n2", "g2", []int32{7}, []int32{8, 9})) // partner text 7
	x.add(row("n3", "g3", []int32{20}, []int32{21}))  // group only
	x.add(row("n4", "g4", []int32{30}, []int32{31}))  // its own pair
	first := func(int) int { return 0 }
	for _, c := range []struct {
		pos  item
		want []int32
	}{
		{row("p1", "x", []int32{1, 2}, []int32{4}), []int32{3}},
		{row("p2", "x", []int32{5}, []int32{7}), []int32{8, 9}},
		{row("p3", "g3", []int32{22}, []int32{23}), []int32{21}},
		{row("p4", "g4", []int32{30}, []int32{31}), nil},
		{row("p5", "", []int32{40}, []int32{41}), nil},
	} {
		if got := x.negative(c.pos, first); !slices.Equal(got, c.want) {
			t.Errorf("%s: negative %v, want %v", c.pos.ID, got, c.want)
		}
	}
}

func rowOf(id, group string, a, b []int32) (r shards.Row) {
	r.ID, r.GroupKey, r.IDsA, r.IDsB = id, group, a, b
	return r
}

// TestFeedHardNegatives: the feed's rule leaves Quora's non-duplicates out
// as pairs and indexes them; a positive sharing a question takes the
// other one as its negative, and its batch carries it to the mnrl loss.
func TestFeedHardNegatives(t *testing.T) {
	cfg := RunConfig{HardNegatives: true}
	cfg.Model = Config{Loss: compute.LossMNRL, Vocab: 50, BatchSize: 2}.Defaults()
	f := &feed{c: &mixer{names: []string{"quora"}, nli: []bool{false}}, cfg: cfg, negs: newNegIndex()}
	rec := func(id string, lab float64, a, b []int32) item {
		r := row(id, "", a, b)
		r.Corpus, r.Label = "quora", label(lab)
		return r
	}
	neg := rec("n", 0, []int32{1, 2}, []int32{9})
	if f.role(neg) != roleNegative {
		t.Fatal("a non-duplicate is not a negative")
	}
	f.negs.add(neg)
	without, with := f.withNegatives([]item{rec("p1", 1, []int32{1, 2}, []int32{3}), rec("p2", 1, []int32{4}, []int32{5}), rec("p3", 1, []int32{9}, []int32{6})})
	if len(without) != 1 || len(with) != 2 || !slices.Equal(with[0].neg, []int32{9}) || !slices.Equal(with[1].neg, []int32{1, 2}) {
		t.Fatalf("with %v, without %v", with, without)
	}
	p := f.pairs(with)
	if len(p.Neg) != 2 {
		t.Fatalf("pairs carry %d negatives, want 2", len(p.Neg))
	}
	if _, err := compute.NewContextBatch(cfg.Model, p, nil); err != nil {
		t.Fatal(err)
	}
	f.cfg.AllPairs, f.cfg.HardNegatives = true, false
	if f.role(neg) != rolePositive {
		t.Error("--all-pairs: a non-duplicate is not trained")
	}
}

// TestRunConfigLabelFlags: the label flags that contradict each other, or
// hard negatives for a loss without a place for them, are refused with
// what to give instead.
func TestRunConfigLabelFlags(t *testing.T) {
	one := 1.0
	for _, c := range []struct {
		cfg  RunConfig
		want string
	}{
		{RunConfig{AllPairs: true, MinLabel: &one}, "all-pairs trains every row and min-label"},
		{RunConfig{AllPairs: true, HardNegatives: true}, "give one of them"},
		{RunConfig{HardNegatives: true, Model: Config{Loss: compute.LossMargin}}, "--loss mnrl"},
	} {
		c.cfg.Dataset = "quora"
		if err := c.cfg.Validate(); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%+v: %v, want an error saying %q", c.cfg, err, c.want)
		}
	}
	ok := RunConfig{Dataset: "quora", HardNegatives: true, Model: Config{Loss: compute.LossMNRL}}
	if err := ok.Validate(); err != nil && strings.Contains(err.Error(), "negatives") {
		t.Errorf("mnrl with hard negatives: %v", err)
	}
}
