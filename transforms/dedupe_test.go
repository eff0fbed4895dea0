package transforms_test

import (
	"testing"

	"github.com/parastream/parastream/shards"
	"github.com/parastream/parastream/transforms"
)

func TestDeduper(t *testing.T) {
	d := transforms.NewDeduper(true)
	add := func(id, a, b string, ta, tb []string, ext bool) {
		d.Add(shards.Row{ID: id, A: a, B: b, TokensA: ta, TokensB: tb}, ext)
	}
	add("3", "Hello, world!", "Hi.", []string{"Hello", ",", "world", "!"}, []string{"Hi", "."}, false)
	add("1", "hello world", "hi", []string{"hello", "world"}, []string{"hi"}, false)
	add("2", "Hello, world!", "Hi.", []string{"Hello", ",", "world", "!"}, []string{"Hi", "."}, false)
	add("4", "Hi.", "Hello, world!", []string{"Hi", "."}, []string{"Hello", ",", "world", "!"}, false) // reversed: same pair
	add("5", "other", "pair", nil, nil, false)
	add("6", "blocked", "pair", nil, nil, false)
	add("x", "Blocked", "pair!", []string{"Blocked"}, []string{"pair", "!"}, true)
	var kept []string
	st := d.Each(func(r shards.Row) { kept = append(kept, r.ID) })
	if st.Kept != 2 || st.External != 1 {
		t.Fatalf("stats = %+v, kept %v", st, kept)
	}
	// Group "hello world / hi": kept ID 1 ("hello world"); 2 and 3 are
	// normalised duplicates of it, and so is the reversed 4.
	if st.Exact != 0 || st.Normalized != 3 {
		t.Errorf("stats = %+v", st)
	}
	for _, id := range kept {
		if id != "1" && id != "5" {
			t.Errorf("kept %s", id)
		}
	}

	d = transforms.NewDeduper(false)
	d.Add(shards.Row{ID: "b", A: "x", B: "y"}, false)
	d.Add(shards.Row{ID: "a", A: "x", B: "y"}, false)
	d.Add(shards.Row{ID: "c", A: "y", B: "x"}, false) // ordered: a different pair
	st = d.Each(func(shards.Row) {})
	if st.Kept != 2 || st.Exact != 1 || st.Normalized != 0 {
		t.Errorf("ordered stats = %+v", st)
	}
}
