package corpora_test

import (
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/parastream/parastream/corpora"
)

// Compressed copies of one Reddit file give identical Examples, rejects and
// counts; only Source.File differs.
func TestRedditCompressedCopiesAgree(t *testing.T) {
	plain := fixture("reddit/comments.jsonl")
	want, wantRejects, wantStats := mustReadAll(t, "reddit-comments", []string{plain}, corpora.Options{})
	if len(want) == 0 || len(wantRejects) == 0 {
		t.Fatalf("fixture gave %d examples and %d rejects; want some of each", len(want), len(wantRejects))
	}
	for _, name := range []string{"comments.jsonl.gz", "comments.jsonl.bz2", "comments.jsonl.xz", "comments.jsonl.zst", "comments.long31.jsonl.zst"} {
		t.Run(name, func(t *testing.T) {
			path := fixture("reddit/" + name)
			got, gotRejects, gotStats := mustReadAll(t, "reddit-comments", []string{path}, corpora.Options{})
			if len(got) != len(want) {
				t.Fatalf("%d examples, want %d", len(got), len(want))
			}
			for i := range got {
				if got[i].Source.File != path {
					t.Errorf("example %d source %q", i, got[i].Source.File)
				}
				got[i].Source.File = plain
				if !reflect.DeepEqual(got[i], want[i]) {
					t.Fatalf("example %d differs:\n got %+v\nwant %+v", i, got[i], want[i])
				}
			}
			if len(gotRejects) != len(wantRejects) {
				t.Fatalf("%d rejects, want %d", len(gotRejects), len(wantRejects))
			}
			for i := range gotRejects {
				g, w := *gotRejects[i], *wantRejects[i]
				g.Source.File = plain
				if !reflect.DeepEqual(g, w) {
					t.Errorf("reject %d differs: %v vs %v", i, g, w)
				}
			}
			if gotStats.Records != wantStats.Records || gotStats.Bytes != wantStats.Bytes || !reflect.DeepEqual(gotStats.Rejected, wantStats.Rejected) {
				t.Errorf("stats %+v, want %+v", gotStats, wantStats)
			}
		})
	}
}

// A truncated copy is an error naming the file, never a silent short read.
func TestRedditTruncatedCopyFails(t *testing.T) {
	for _, name := range []string{"comments.jsonl.gz", "comments.jsonl.bz2", "comments.jsonl.xz", "comments.jsonl.zst", "comments.long31.jsonl.zst"} {
		b, err := os.ReadFile(fixture("reddit/" + name))
		if err != nil {
			t.Fatal(err)
		}
		path := filepath.Join(t.TempDir(), name)
		os.WriteFile(path, b[:len(b)*2/3], 0o644)
		exs, _, _, err := readAll(t, "reddit-comments", []string{path}, corpora.Options{})
		if !errors.Is(err, corpora.ErrTruncated) || !strings.Contains(err.Error(), path) {
			t.Errorf("%s truncated: %d examples then err = %v; want ErrTruncated naming the file", name, len(exs), err)
		}
	}
}
