package corpora_test

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"strconv"
	"testing"
	"time"

	"github.com/parastream/parastream/corpora"
)

// BenchmarkRedditReader reads some 32 MB of generated pushshift-like
// comments (60 keys a record, as in the 2023-2024 dumps) three ways:
//
//   - scan: bufio.Scanner splitting the same bytes into lines, the floor
//     any line-based reader pays;
//   - reader: the reddit-comments reader, bytes in, Examples out;
//   - ratio: both, one after the other in each iteration, reporting
//     reader/scan, the reader's throughput as a fraction of the scan's
//     (1 would be as fast as splitting lines);
//   - encoding_json: for comparison, the lines split as in scan and each
//     decoded by encoding/json into a struct of the needed keys alone: the
//     simple alternative to the reader's own scanner.
func BenchmarkRedditReader(b *testing.B) {
	data, records := redditBenchData(32 << 20)
	b.Logf("%d records, %.1f MB", records, float64(len(data))/1e6)

	scan := func(b *testing.B) {
		sc := bufio.NewScanner(bytes.NewReader(data))
		sc.Buffer(make([]byte, 64<<10), corpora.DefaultMaxLineBytes)
		n := 0
		for sc.Scan() {
			n++
		}
		if sc.Err() != nil || n != records {
			b.Fatalf("scanned %d lines of %d: %v", n, records, sc.Err())
		}
	}
	read := func(b *testing.B) {
		in, err := corpora.NewInput("bench.jsonl", bytes.NewReader(data), corpora.Limits{})
		if err != nil {
			b.Fatal(err)
		}
		r := corpora.NewRedditCommentsReader(in, corpora.Options{})
		if err := corpora.Drain(r, nil, nil); err != nil {
			b.Fatal(err)
		}
		if st := r.Stats(); st.Examples != int64(records) {
			b.Fatalf("read %d examples of %d: %+v", st.Examples, records, st)
		}
	}
	perSecond := func(b *testing.B, n int) {
		b.ReportMetric(float64(records)*float64(n)/b.Elapsed().Seconds(), "records/s")
	}

	b.Run("scan", func(b *testing.B) {
		b.SetBytes(int64(len(data)))
		n := 0
		for b.Loop() {
			scan(b)
			n++
		}
		perSecond(b, n)
	})
	b.Run("reader", func(b *testing.B) {
		b.SetBytes(int64(len(data)))
		b.ReportAllocs()
		n := 0
		for b.Loop() {
			read(b)
			n++
		}
		perSecond(b, n)
	})
	b.Run("encoding_json", func(b *testing.B) {
		b.SetBytes(int64(len(data)))
		n := 0
		for b.Loop() {
			sc := bufio.NewScanner(bytes.NewReader(data))
			sc.Buffer(make([]byte, 64<<10), corpora.DefaultMaxLineBytes)
			for sc.Scan() {
				var c struct {
					ID, Body, Author, ParentID, LinkID, Subreddit string
					CreatedUTC, Score                             json.RawMessage
				}
				if err := json.Unmarshal(sc.Bytes(), &c); err != nil || c.ID == "" {
					b.Fatalf("decoding %q: %v", sc.Bytes(), err)
				}
			}
			n++
		}
		perSecond(b, n)
	})
	b.Run("ratio", func(b *testing.B) {
		var scanTime, readTime time.Duration
		for b.Loop() {
			t0 := time.Now()
			scan(b)
			t1 := time.Now()
			read(b)
			scanTime += t1.Sub(t0)
			readTime += time.Since(t1)
		}
		b.ReportMetric(scanTime.Seconds()/readTime.Seconds(), "reader/scan")
	})
}

// redditBenchData generates about size bytes of comment lines, the same
// bytes on every run.
func redditBenchData(size int) ([]byte, int) {
	rng := rand.New(rand.NewPCG(2005, 12))
	words := []string{"the", "a", "I", "you", "this", "that", "is", "was", "not", "it's", "really", "just",
		"people", "think", "game", "thread", "post", "comment", "upvote", "why", "because", "lol",
		"actually", "source", "wiki", "year", "time", "work", "never", "always", "café", "naïve",
		"über", "日本", "🙂", "—", "\"quoted\"", "don't", "&amp;", "<3", "r/AskReddit", "u/spez"}
	subs := []string{"AskReddit", "politics", "worldnews", "gaming", "funny", "news", "de", "france", "woodworking", "MMA"}
	var buf bytes.Buffer
	buf.Grow(size + 8<<10)
	var body []byte
	n := 0
	for buf.Len() < size {
		n++
		id := strconv.FormatInt(int64(1_000_000_000+n), 36)
		link := "t3_" + strconv.FormatInt(int64(50_000_000+n/40), 36)
		parent := link
		if rng.IntN(3) > 0 {
			parent = "t1_" + strconv.FormatInt(int64(1_000_000_000+n-1-rng.IntN(min(n, 30))), 36)
		}
		author := fmt.Sprintf("user_%d", rng.IntN(50000))
		sub := subs[rng.IntN(len(subs))]
		body = body[:0]
		for nw := 3 + int(rng.ExpFloat64()*40); nw > 0; nw-- {
			body = append(body, words[rng.IntN(len(words))]...)
			switch rng.IntN(12) {
			case 0:
				body = append(body, ".\n\n"...)
			case 1:
				body = append(body, ", "...)
			default:
				body = append(body, ' ')
			}
		}
		quoted, _ := json.Marshal(string(body))
		ts := 1706745600 + n/50
		var created string
		switch n % 3 {
		case 0:
			created = strconv.Itoa(ts) + ".0"
		case 1:
			created = `"` + strconv.Itoa(ts) + `"`
		default:
			created = strconv.Itoa(ts)
		}
		score := rng.IntN(200) - 5
		fmt.Fprintf(&buf, `{"_meta": {"retrieved_2nd_on": %d}, "all_awardings": [], "approved_at_utc": null, "approved_by": null, "archived": false, `+
			`"associated_award": null, "author": %q, "author_flair_background_color": null, "author_flair_css_class": null, `+
			`"author_flair_richtext": [], "author_flair_template_id": null, "author_flair_text": null, "author_flair_text_color": null, `+
			`"author_flair_type": "text", "author_fullname": "t2_%s", "author_is_blocked": false, "author_patreon_flair": false, `+
			`"author_premium": false, "awarders": [], "banned_at_utc": null, "banned_by": null, "body": %s, "can_gild": true, `+
			`"can_mod_post": false, "collapsed": false, "collapsed_because_crowd_control": null, "collapsed_reason": null, `+
			`"collapsed_reason_code": null, "comment_type": null, "controversiality": %d, "created": %s, "created_utc": %s, `+
			`"distinguished": null, "downs": 0, "edited": false, "gilded": 0, "gildings": {}, "id": %q, "is_submitter": %t, `+
			`"likes": null, "link_id": %q, "locked": false, "mod_note": null, "mod_reason_by": null, "mod_reason_title": null, `+
			`"mod_reports": [], "name": "t1_%s", "no_follow": true, "num_reports": 0, "parent_id": %q, `+
			`"permalink": "/r/%s/comments/%s/some_title/%s/", "removal_reason": null, "replies": "", "report_reasons": [], `+
			`"retrieved_on": %d, "saved": false, "score": %d, "score_hidden": false, "send_replies": true, "stickied": false, `+
			`"subreddit": %q, "subreddit_id": "t5_2qh1i", "subreddit_name_prefixed": "r/%s", "subreddit_type": "public", `+
			`"total_awards_received": 0, "ups": %d}`+"\n",
			ts+130000, author, strconv.FormatInt(int64(rng.IntN(1<<30)), 36), quoted, rng.IntN(2), created, created, id, rng.IntN(5) == 0,
			link, id, parent, sub, link[3:], id, ts+15, score, sub, sub, score)
	}
	return buf.Bytes(), n
}
