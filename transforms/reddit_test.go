package transforms_test

import (
	"reflect"
	"testing"

	"github.com/parastream/parastream/shards"
	"github.com/parastream/parastream/transforms"
)

func comment(id, parent, text string) shards.Row {
	return shards.Row{ID: id, Corpus: "reddit", Dataset: "AskReddit", A: text, TokensA: []string{text}, GroupKey: "t3_t",
		Meta: map[string]string{"parent_id": parent, "author": "u_" + id, "created_utc": "100"}}
}

func TestPairThread(t *testing.T) {
	// t3_t: title
	//   t1_a: top-level
	//     t1_b: reply to a
	//       t1_c: reply to b
	//         t1_d: reply to c
	//   t1_x: reply to a missing comment
	rows := []shards.Row{
		comment("t1_d", "t1_c", "d"),
		comment("t1_b", "t1_a", "b"),
		comment("t1_x", "t1_gone", "x"),
		comment("t1_a", "t3_t", "a"),
		comment("t1_c", "t1_b", "c"),
		{ID: "t3_t", A: "title", GroupKey: "t3_t", Meta: map[string]string{"author": "op"}},
	}
	var got []shards.Row
	st := transforms.PairThread(rows, transforms.PairOptions{Context: 2, Titles: true}, func(r shards.Row) { got = append(got, r) })
	if st != (transforms.PairStats{Pairs: 4, Titles: 1, Orphans: 1}) {
		t.Fatalf("stats = %+v", st)
	}
	want := []struct {
		id, a, b string
		context  []string
		kind     string
	}{
		{"reddit:t1_a", "title", "a", nil, "title"},
		{"reddit:t1_b", "a", "b", []string{"title"}, "comment"},
		{"reddit:t1_c", "b", "c", []string{"title", "a"}, "comment"},
		{"reddit:t1_d", "c", "d", []string{"a", "b"}, "comment"},
	}
	for i, w := range want {
		g := got[i]
		if g.ID != w.id || g.A != w.a || g.B != w.b || !reflect.DeepEqual(g.Context, w.context) || g.Meta["kind"] != w.kind || g.GroupKey != "t3_t" {
			t.Errorf("pair %d = %+v, want %+v", i, g, w)
		}
	}
	if got[2].Meta["parent_author"] != "u_t1_b" || got[2].Meta["reply_author"] != "u_t1_c" || got[2].TokensB[0] != "c" {
		t.Errorf("pair meta/tokens = %+v", got[2])
	}

	// Without titles, the top-level comment pairs with nothing.
	got = nil
	st = transforms.PairThread(rows, transforms.PairOptions{}, func(r shards.Row) { got = append(got, r) })
	if st.Pairs != 3 || st.Titles != 0 || len(got[0].Context) != 0 {
		t.Fatalf("without titles: %+v, first %+v", st, got[0])
	}
}

// A comment the dump repeats pairs from its later record, whatever order
// the thread's rows come in (the read stage's goroutines spill them in no
// fixed order).
func TestPairThreadRepeatedComment(t *testing.T) {
	early, late := comment("t1_a", "t3_t", "early"), comment("t1_a", "t3_t", "late")
	early.SourceOffset, late.SourceOffset = 10, 20
	reply := comment("t1_b", "t1_a", "b")
	var first []shards.Row
	for _, rows := range [][]shards.Row{{early, late, reply}, {reply, late, early}, {late, reply, early}} {
		var got []shards.Row
		transforms.PairThread(rows, transforms.PairOptions{}, func(r shards.Row) { got = append(got, r) })
		if len(got) != 1 || got[0].A != "late" {
			t.Fatalf("pairs %+v, want one with parent text %q", got, "late")
		}
		if first == nil {
			first = got
		} else if !reflect.DeepEqual(got, first) {
			t.Errorf("pairs depend on the rows' order: %+v, then %+v", first, got)
		}
	}
}
