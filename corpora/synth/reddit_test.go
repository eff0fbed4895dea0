package synth_test

import (
	"io"
	"strconv"
	"strings"
	"testing"
	"unicode"
	"unicode/utf8"

	"github.com/parastream/parastream/corpora"
	"github.com/parastream/parastream/corpora/synth"
)

// redditShares are the documented shares of well-formed comments, and
// the tolerance each is checked to on 100,000 comments.
var redditShares = []struct {
	name      string
	want, tol float64
	is        func(e *corpora.Example) bool
}{
	{"body [deleted] or [removed]", 0.05, 0.006, func(e *corpora.Example) bool { return e.A == "[deleted]" || e.A == "[removed]" }},
	{"author [deleted]", 0.054, 0.006, func(e *corpora.Example) bool { return e.Meta["author"] == "[deleted]" }},
	{"bot author", 0.02, 0.004, func(e *corpora.Example) bool { return isBot(e.Meta["author"]) }},
	{"over 350 characters", 0.10, 0.015, func(e *corpora.Example) bool { return utf8.RuneCountInString(e.A) > 350 }},
	{"over 2,000 characters", 0.0025, 0.0015, func(e *corpora.Example) bool { return utf8.RuneCountInString(e.A) > 2000 }},
	{"URL", 0.05, 0.01, func(e *corpora.Example) bool { return hasURL(e.A) }},
	{"markdown link", 0.025, 0.008, func(e *corpora.Example) bool { return strings.Contains(e.A, "](") }},
	{"&gt; or &amp;", 0.045, 0.01, func(e *corpora.Example) bool { return strings.Contains(e.A, "&gt;") || strings.Contains(e.A, "&amp;") }},
	{"starts with /r/ or @", 0.008, 0.003, func(e *corpora.Example) bool { return strings.HasPrefix(e.A, "/r/") || strings.HasPrefix(e.A, "@") }},
	{"non-English", 0.04, 0.015, func(e *corpora.Example) bool { return nonEnglish(e.A) }},
	{"emoji", 0.027, 0.008, func(e *corpora.Example) bool { return hasEmoji(e.A) }},
	{"digits", 0.35, 0.08, func(e *corpora.Example) bool { return strings.ContainsAny(e.A, "0123456789") }},
	{"top-level", 0.6, 0.1, func(e *corpora.Example) bool { return strings.HasPrefix(e.Meta["parent_id"], "t3_") }},
}

func hasURL(s string) bool {
	return strings.Contains(s, "http://") || strings.Contains(s, "https://") || strings.Contains(s, "www.")
}

func isBot(a string) bool {
	return a == "AutoModerator" || strings.HasSuffix(strings.ToLower(a), "bot")
}

// nonEnglish reports text with Cyrillic or Japanese letters, or the
// accented letters of French and German.
func nonEnglish(s string) bool {
	if isASCII(s) {
		return false
	}
	for _, r := range s {
		switch {
		case unicode.In(r, unicode.Cyrillic, unicode.Hiragana, unicode.Katakana, unicode.Han):
			return true
		case strings.ContainsRune("éèêàçùûôîäöüßÉÀ", r):
			return true
		}
	}
	return false
}

func isASCII(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] >= utf8.RuneSelf {
			return false
		}
	}
	return true
}

func hasEmoji(s string) bool {
	if isASCII(s) {
		return false
	}
	for _, r := range s {
		if r >= 0x1f300 && r <= 0x1faff || r == 0x2764 {
			return true
		}
	}
	return false
}

// TestRedditStructure reads 100,000 generated comments with the reader
// and checks the threads: every reply answers an earlier comment of its
// own thread, top-level comments answer their thread's submission,
// created_utc never goes back, threads interleave and their sizes are
// heavy-tailed; and the shares of the kinds of comment the filters care
// about are near the documented ones.
func TestRedditStructure(t *testing.T) {
	t.Parallel()
	const rows = 100000
	pr, pw := io.Pipe()
	var st synth.Stats
	done := make(chan error, 1)
	go func() {
		var err error
		// The 2012 layout has the fewest bytes a comment: the shares and
		// the threads do not depend on the layout.
		st, err = synth.Reddit(pw, synth.Config{Rows: rows, Seed: 2024, Era: "2012"})
		pw.CloseWithError(err)
		done <- err
	}()
	in, err := corpora.NewInput("RC_2024-02", pr, corpora.Limits{})
	if err != nil {
		t.Fatal(err)
	}
	r := corpora.NewRedditCommentsReader(in, corpora.Options{})
	thread := make(map[string]string, rows) // comment fullname → thread
	size := make(map[string]int)            // thread → comments
	first := make(map[string]int)           // thread → line of its first comment
	last := make(map[string]int)
	counts := make([]int, len(redditShares))
	var prev int64
	n := 0
	err = corpora.Drain(r, func(e corpora.Example) error {
		n++
		link, parent := e.Meta["link_id"], e.Meta["parent_id"]
		switch {
		case strings.HasPrefix(parent, "t3_"):
			if parent != link {
				t.Errorf("%s: top-level comment answers %s, its thread is %s", e.ID, parent, link)
			}
		case strings.HasPrefix(parent, "t1_"):
			if th, ok := thread[parent]; !ok {
				t.Errorf("%s: answers %s, which is not an earlier comment", e.ID, parent)
			} else if th != link {
				t.Errorf("%s: answers %s of thread %s, its thread is %s", e.ID, parent, th, link)
			}
		default:
			t.Errorf("%s: parent_id %q", e.ID, parent)
		}
		thread[e.ID] = link
		size[link]++
		if _, ok := first[link]; !ok {
			first[link] = n
		}
		last[link] = n
		ts, _ := strconv.ParseInt(e.Meta["created_utc"], 10, 64)
		if ts < prev {
			t.Errorf("%s: created_utc %d after %d", e.ID, ts, prev)
		}
		prev = ts
		for i, s := range redditShares {
			if s.is(&e) {
				counts[i]++
			}
		}
		return nil
	}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	if int64(n) != rows-st.Malformed {
		t.Errorf("%d comments read, want %d", n, rows-st.Malformed)
	}

	// Thread sizes: most small, a heavy tail.
	small, big, biggest := 0, 0, 0
	interleaved, multi := 0, 0
	for link, s := range size {
		if s <= 20 {
			small++
		}
		if s >= 100 {
			big++
		}
		biggest = max(biggest, s)
		if s >= 5 {
			multi++
			if last[link]-first[link]+1 > 2*s {
				interleaved++
			}
		}
	}
	threads := len(size)
	t.Logf("%d threads: %.1f%% with at most 20 comments, %d with 100 or more, the biggest %d; %d of %d threads of 5 or more interleaved",
		threads, 100*float64(small)/float64(threads), big, biggest, interleaved, multi)
	if float64(small) < 0.9*float64(threads) || big < 10 || biggest < 300 {
		t.Errorf("thread sizes not heavy-tailed: %d of %d threads small, %d big, biggest %d", small, threads, big, biggest)
	}
	if float64(interleaved) < 0.9*float64(multi) {
		t.Errorf("only %d of %d threads interleave with others", interleaved, multi)
	}

	for i, s := range redditShares {
		got := float64(counts[i]) / float64(n)
		t.Logf("%-28s %6.2f%% (documented %.1f%%)", s.name, 100*got, 100*s.want)
		if got < s.want-s.tol || got > s.want+s.tol {
			t.Errorf("%s: %.2f%% of comments, documented %.1f%% ± %.1f", s.name, 100*got, 100*s.want, 100*s.tol)
		}
	}
}

// TestRedditSubmissionsOpenThreads: every comment's thread has its
// submission, written before the thread's first comment in time, and the
// submissions are in time order.
func TestRedditSubmissionsOpenThreads(t *testing.T) {
	g := generators[0]
	var cw, sw strings.Builder
	if _, _, err := synth.RedditThreads(&cw, &sw, synth.Config{Rows: 5000, Seed: 5, MalformedRate: synth.NoMalformed}); err != nil {
		t.Fatal(err)
	}
	subs, _ := readBack(t, generators[1], [][]byte{[]byte(sw.String())})
	opened := make(map[string]int64, len(subs))
	var prev int64
	for _, s := range subs {
		ts, _ := strconv.ParseInt(s.Meta["created_utc"], 10, 64)
		if ts < prev {
			t.Fatalf("submission %s at %d after %d", s.ID, ts, prev)
		}
		prev = ts
		opened[s.ID] = ts
		if s.A == "" {
			t.Errorf("submission %s without a title", s.ID)
		}
	}
	comments, _ := readBack(t, g, [][]byte{[]byte(cw.String())})
	for _, c := range comments {
		ts, _ := strconv.ParseInt(c.Meta["created_utc"], 10, 64)
		open, ok := opened[c.Group]
		if !ok {
			t.Fatalf("comment %s: no submission %s", c.ID, c.Group)
		}
		if open > ts {
			t.Fatalf("comment %s at %d, its submission at %d", c.ID, ts, open)
		}
	}
}

// TestRedditFewActiveThreads: with room for three open threads, new
// threads wait their turn: no more than three threads are ever between
// their first and last comment, and the stream keeps its order and
// structure.
func TestRedditFewActiveThreads(t *testing.T) {
	var w strings.Builder
	st, err := synth.Reddit(&w, synth.Config{Rows: 3000, Seed: 11, MaxActiveThreads: 3, MalformedRate: synth.NoMalformed})
	if err != nil {
		t.Fatal(err)
	}
	exs, _ := readBack(t, generators[0], [][]byte{[]byte(w.String())})
	seen := map[string]string{}
	first, last := map[string]int{}, map[string]int{}
	var prev int64
	for i, e := range exs {
		ts, _ := strconv.ParseInt(e.Meta["created_utc"], 10, 64)
		if ts < prev {
			t.Fatalf("%s: time goes back", e.ID)
		}
		prev = ts
		if p := e.Meta["parent_id"]; strings.HasPrefix(p, "t1_") && seen[p] != e.Group {
			t.Fatalf("%s: parent %s not an earlier comment of %s", e.ID, p, e.Group)
		}
		seen[e.ID] = e.Group
		if _, ok := first[e.Group]; !ok {
			first[e.Group] = i
		}
		last[e.Group] = i
	}
	delta := make([]int, len(exs)+1)
	for g, f := range first {
		delta[f]++
		delta[last[g]+1]--
	}
	active, most := 0, 0
	for _, d := range delta {
		active += d
		most = max(most, active)
	}
	if most > 3 {
		t.Errorf("%d threads open at once, bound 3", most)
	}
	if len(exs) != 3000 || st.Threads < 100 {
		t.Errorf("%d comments in %d threads", len(exs), st.Threads)
	}
}
