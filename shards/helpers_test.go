package shards_test

import (
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/parastream/parastream/internal/testenv"
	"github.com/parastream/parastream/shards"
)

// repoRoot is the repository root.
func repoRoot() string { return testenv.Root() }

var words = strings.Fields(`the a of to and in is that it for on was with as he be at by
this had not are but from or have an they which one you were her all she there would their
we him been has when who will more no if out so said what up its about into than them can
only other new some could time these two may then do first any my now such like our over
man me even most made after also did many before must through back years where much your
way well down should because each just those people how too little state good very make world`)

// sentence is a deterministic text of n words drawn by rng.
func sentence(rng *rand.Rand, n int) string {
	ws := make([]string, n)
	for i := range ws {
		ws[i] = words[rng.IntN(len(words))]
	}
	return strings.Join(ws, " ")
}

// testRows returns n realistic rows of one split, the same for the same
// seed: paired texts of 5 to 30 words with their tokens, vocabulary ids and
// 50-topic vectors, labels on about two rows in three, two meta fields.
func testRows(seed uint64, n int) []shards.Row {
	rng := rand.New(rand.NewPCG(seed, 7))
	datasets := []string{"2012/MSRpar", "2013/headlines", "2014/deft-forum", "2015/images"}
	rows := make([]shards.Row, n)
	var offset int64
	for i := range rows {
		a, b := sentence(rng, 5+rng.IntN(26)), sentence(rng, 5+rng.IntN(26))
		ds := datasets[rng.IntN(len(datasets))]
		r := shards.Row{
			ID:           fmt.Sprintf("%s:%d", ds, i+1),
			Corpus:       "sts",
			Dataset:      ds,
			Split:        "train",
			A:            a,
			B:            b,
			LangA:        "en",
			LangB:        "en",
			GroupKey:     fmt.Sprintf("g%d", i/3),
			SourceFile:   "STS." + ds + ".txt",
			SourceLine:   int64(i + 1),
			SourceOffset: offset,
			Meta:         map[string]string{"author": fmt.Sprintf("user%d", rng.IntN(1000)), "parent_id": fmt.Sprintf("t1_%x", rng.Uint32())},
			TokensA:      strings.Fields(a),
			TokensB:      strings.Fields(b),
		}
		offset += int64(len(a) + len(b) + 2)
		if rng.IntN(3) > 0 {
			label := float64(rng.IntN(501)) / 100
			r.Label = &label
		}
		r.Scores = []float64{rng.Float64(), rng.Float64()}
		for range r.TokensA {
			r.IDsA = append(r.IDsA, rng.Int32N(50_000))
		}
		for range r.TokensB {
			r.IDsB = append(r.IDsB, rng.Int32N(50_000))
		}
		r.TopicsA, r.TopicsB = make([]float32, 50), make([]float32, 50)
		for j := range 50 {
			r.TopicsA[j], r.TopicsB[j] = rng.Float32(), rng.Float32()
		}
		rows[i] = r
	}
	return rows
}

// writeSplit writes rows as one split under root and returns the shards.
func writeSplit(t testing.TB, root, corpus, split string, opts shards.WriterOptions, rows []shards.Row) []shards.ShardInfo {
	t.Helper()
	w, err := shards.NewWriter(root, corpus, split, opts)
	if err != nil {
		t.Fatalf("NewWriter: %v", err)
	}
	if err := w.Write(rows...); err != nil {
		t.Fatalf("Write: %v", err)
	}
	infos, err := w.Close()
	if err != nil {
		t.Fatalf("Close: %v", err)
	}
	return infos
}

// readFile reads every row of one shard.
func readFile(t testing.TB, name string) []shards.Row {
	t.Helper()
	r, err := shards.OpenFile(name)
	if err != nil {
		t.Fatalf("OpenFile: %v", err)
	}
	defer r.Close()
	return drain(t, r.Read)
}

// drain reads with read, in odd-sized batches, until io.EOF.
func drain(t testing.TB, read func([]shards.Row) (int, error)) []shards.Row {
	t.Helper()
	var rows []shards.Row
	buf := make([]shards.Row, 7)
	for {
		n, err := read(buf)
		if n > 0 && err != nil {
			t.Fatalf("Read returned %d rows with error %v", n, err)
		}
		rows = append(rows, buf[:n]...)
		if errors.Is(err, io.EOF) {
			return rows
		}
		if err != nil {
			t.Fatalf("Read: %v", err)
		}
		if n == 0 {
			t.Fatal("Read returned 0 rows and no error")
		}
	}
}

// normalize makes empty lists and maps nil, as a reader may return either.
func normalize(rows []shards.Row) []shards.Row {
	out := make([]shards.Row, len(rows))
	for i, r := range rows {
		if len(r.Context) == 0 {
			r.Context = nil
		}
		if len(r.Scores) == 0 {
			r.Scores = nil
		}
		if len(r.Meta) == 0 {
			r.Meta = nil
		}
		if len(r.TokensA) == 0 {
			r.TokensA = nil
		}
		if len(r.TokensB) == 0 {
			r.TokensB = nil
		}
		if len(r.IDsA) == 0 {
			r.IDsA = nil
		}
		if len(r.IDsB) == 0 {
			r.IDsB = nil
		}
		if len(r.TopicsA) == 0 {
			r.TopicsA = nil
		}
		if len(r.TopicsB) == 0 {
			r.TopicsB = nil
		}
		out[i] = r
	}
	return out
}

// readBytes reads a file whole.
func readBytes(t testing.TB, name string) []byte {
	t.Helper()
	b, err := os.ReadFile(name)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// glob lists the files matching pattern under dir, by base name.
func glob(t testing.TB, dir, pattern string) []string {
	t.Helper()
	names, err := filepath.Glob(filepath.Join(dir, pattern))
	if err != nil {
		t.Fatal(err)
	}
	for i, n := range names {
		names[i] = filepath.Base(n)
	}
	return names
}
