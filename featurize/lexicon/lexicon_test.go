package lexicon_test

import (
	"fmt"
	"math"
	"testing"

	"github.com/parastream/parastream/featurize/lexicon"
)

// TestBucketPinned pins the hash: the values are Python's
// zlib.crc32(tok.encode("utf-8")) % n, computed once and written here, so
// that a change of hash (which would silently remap every unseen word of
// every model) fails.
func TestBucketPinned(t *testing.T) {
	for _, c := range []struct {
		tok  string
		n    int
		want int32
	}{
		{"zyzzyva", 100_000, 51557}, // crc32 1447651557
		{"quizzaciously", 100_000, 29767},
		{"héllo", 100_000, 86}, // crc32 2654700086: the UTF-8 bytes are hashed
		{"東京", 100_000, 81039},
		{"flibbertigibbet", 100_000, 29230},
		{"<unk>", 100_000, 71641},
		{"", 100_000, 0},
		{"zyzzyva", 1000, 557},
		{"東京", 7, 4},
		{"zyzzyva", 1, 0},
		{"héllo", math.MaxInt32, int32(2654700086 % math.MaxInt32)},
	} {
		if got := lexicon.Bucket(c.tok, c.n); got != c.want {
			t.Errorf("Bucket(%q, %d) = %d, want %d", c.tok, c.n, got, c.want)
		}
	}
}

func TestBucketPanicsWithoutBuckets(t *testing.T) {
	for _, n := range []int{0, -1} {
		func() {
			defer func() {
				if recover() == nil {
					t.Errorf("Bucket(x, %d) did not panic", n)
				}
			}()
			lexicon.Bucket("x", n)
		}()
	}
}

func TestLexiconID(t *testing.T) {
	withUnk := []string{"<pad>", "<unk>", "<s>", "</s>", "the", "cat"} // V = 6
	noUnk := []string{"the", "cat", "the"}                             // V = 3, "the" repeated
	type want struct {
		id    int32
		known bool
	}
	for _, c := range []struct {
		name    string
		words   []string
		buckets int
		toks    []string
		want    []want
		rows    int
	}{
		{"buckets", withUnk, 100_000, []string{"cat", "zyzzyva", "東京", "<unk>", "<s>"},
			[]want{{5, true}, {6 + 51557, false}, {6 + 81039, false}, {1, true}, {2, true}}, 100_006},
		{"few buckets", withUnk, 7, []string{"東京", "the"}, []want{{6 + 4, false}, {4, true}}, 13},
		{"unk", withUnk, 0, []string{"cat", "zyzzyva", "東京"}, []want{{5, true}, {1, false}, {1, false}}, 6},
		{"drop", noUnk, 0, []string{"the", "cat", "zyzzyva"}, []want{{0, true}, {1, true}, {-1, false}}, 3},
		{"buckets without unk", noUnk, 1000, []string{"zyzzyva"}, []want{{3 + 557, false}}, 1003},
		{"empty", nil, 1000, []string{"zyzzyva"}, []want{{557, false}}, 1000},
	} {
		t.Run(c.name, func(t *testing.T) {
			l, err := lexicon.New(c.words, c.buckets)
			if err != nil {
				t.Fatal(err)
			}
			for i, tok := range c.toks {
				id, known := l.ID(tok)
				if id != c.want[i].id || known != c.want[i].known {
					t.Errorf("ID(%q) = %d, %v; want %d, %v", tok, id, known, c.want[i].id, c.want[i].known)
				}
			}
			if l.Rows() != c.rows || l.Words() != len(c.words) || l.Buckets() != c.buckets {
				t.Errorf("rows %d, words %d, buckets %d; want %d, %d, %d", l.Rows(), l.Words(), l.Buckets(), c.rows, len(c.words), c.buckets)
			}
		})
	}
}

func TestAppendIDs(t *testing.T) {
	words := []string{"<pad>", "<unk>", "the", "cat"}
	toks := []string{"the", "zyzzyva", "cat", "東京"}
	for _, c := range []struct {
		name    string
		words   []string
		buckets int
		want    []int32
	}{
		{"buckets", words, 1000, []int32{2, 4 + 557, 3, 4 + 39}},
		{"unk", words, 0, []int32{2, 1, 3, 1}},
		{"drop", []string{"the", "cat"}, 0, []int32{0, 1}},
	} {
		t.Run(c.name, func(t *testing.T) {
			l, err := lexicon.New(c.words, c.buckets)
			if err != nil {
				t.Fatal(err)
			}
			ids, unknown := l.AppendIDs([]int32{9}, toks)
			if fmt.Sprint(ids) != fmt.Sprint(append([]int32{9}, c.want...)) || unknown != 2 {
				t.Errorf("AppendIDs = %v, %d unknown; want [9] + %v, 2", ids, unknown, c.want)
			}
		})
	}
}

func TestWithBuckets(t *testing.T) {
	l, err := lexicon.New([]string{"<pad>", "<unk>", "the"}, 0)
	if err != nil {
		t.Fatal(err)
	}
	b, err := l.WithBuckets(1000)
	if err != nil {
		t.Fatal(err)
	}
	if id, _ := b.ID("zyzzyva"); id != 3+557 {
		t.Errorf("with buckets: zyzzyva = %d, want %d", id, 3+557)
	}
	if id, _ := l.ID("zyzzyva"); id != 1 {
		t.Errorf("the original changed: zyzzyva = %d, want 1 (<unk>)", id)
	}
	if _, err := l.WithBuckets(-1); err == nil {
		t.Error("WithBuckets(-1) did not fail")
	}
}

func TestNewErrors(t *testing.T) {
	if _, err := lexicon.New([]string{"a"}, -1); err == nil {
		t.Error("negative buckets accepted")
	}
	if _, err := lexicon.New([]string{"a"}, math.MaxInt32); err == nil {
		t.Error("ids beyond int32 accepted")
	}
}

func TestCheckHash(t *testing.T) {
	for _, c := range []struct {
		hash    string
		buckets int
		ok      bool
	}{
		{"", 0, true},
		{"anything", 0, true},
		{lexicon.Hash, 100_000, true},
		{"", 100_000, false},
		{"fnv1a", 10, false},
		{lexicon.Hash, -1, false},
	} {
		if err := lexicon.CheckHash(c.hash, c.buckets); (err == nil) != c.ok {
			t.Errorf("CheckHash(%q, %d) = %v, want ok %v", c.hash, c.buckets, err, c.ok)
		}
	}
}

// A model of 6 words and 100,000 buckets: an unseen word gets a bucket row
// after the words, the same in every process and in Python.
func ExampleLexicon_ID() {
	l, _ := lexicon.New([]string{"<pad>", "<unk>", "<s>", "</s>", "the", "cat"}, 100_000)
	for _, tok := range []string{"cat", "zyzzyva"} {
		id, known := l.ID(tok)
		fmt.Println(tok, id, known)
	}
	fmt.Println(l.Rows())
	// Output:
	// cat 5 true
	// zyzzyva 51563 false
	// 100006
}

// FuzzLexiconID: any token gets an id in [0, V+N) with buckets, its
// word's index when it is a word, and the same id every time.
func FuzzLexiconID(f *testing.F) {
	for _, s := range []string{"", "the", "zyzzyva", "東京", "<unk>", "\xff\xfe", "a b"} {
		f.Add(s, 1000)
	}
	words := []string{"<pad>", "<unk>", "<s>", "</s>", "the", "cat"}
	f.Fuzz(func(t *testing.T, tok string, n int) {
		n = 1 + int(uint(n)%1_000_000)
		l, err := lexicon.New(words, n)
		if err != nil {
			t.Fatal(err)
		}
		id, known := l.ID(tok)
		again, _ := l.ID(tok)
		if id != again || id < 0 || int(id) >= l.Rows() {
			t.Fatalf("ID(%q) = %d then %d, rows %d", tok, id, again, l.Rows())
		}
		if known != (int(id) < len(words)) || (known && words[id] != tok) || (!known && id != int32(len(words))+lexicon.Bucket(tok, n)) {
			t.Fatalf("ID(%q) = %d, known %v", tok, id, known)
		}
	})
}
