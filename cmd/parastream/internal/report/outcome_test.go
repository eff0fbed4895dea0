package report

import (
	"strings"
	"testing"
)

func TestOutcomeHints(t *testing.T) {
	for _, tc := range []struct {
		name string
		o    outcome
		want []string
	}{
		{"all filtered", outcome{read: 10, kept: 0, keptNoun: "pairs", dropped: map[string]int64{"reddit_too_long": 7, "reddit_deleted": 3}},
			[]string{"warning: no pairs were kept from 10 records; reddit_too_long dropped 7 of 10 records (70%): raise --max-chars, or turn the Reddit filters off with --reddit-rules=false"}},
		{"mostly bad utf-8", outcome{read: 10, kept: 4, dropped: map[string]int64{"bad_utf8": 6}},
			[]string{"hint: bad_utf8 dropped most of the input, 6 of 10 records (60%): if the files are Latin-1 (older Moses and Europarl releases), try --encoding latin1"}},
		{"some bad utf-8", outcome{read: 39346, kept: 33895, dropped: map[string]int64{"bad_utf8": 5451}},
			[]string{"hint: 5451 of 39346 records (14%) are not UTF-8: if the files are Latin-1 (older Moses and Europarl releases), try --encoding latin1"}},
		{"clean", outcome{read: 10, kept: 9, dropped: map[string]int64{"too_few_tokens": 1}}, nil},
		{"stray bad utf-8", outcome{read: 100001, kept: 78698, dropped: map[string]int64{"bad_utf8": 33, "duplicates": 21189}}, nil},
	} {
		got := tc.o.hints()
		if strings.Join(got, "\n") != strings.Join(tc.want, "\n") {
			t.Errorf("%s:\ngot  %q\nwant %q", tc.name, got, tc.want)
		}
	}
}
