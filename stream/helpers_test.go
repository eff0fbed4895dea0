package stream_test

import (
	"fmt"
	"hash/fnv"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/parastream/parastream/shards"
)

var vocabulary = strings.Fields(`paraphrase sentence model corpus stream shard broker topic
offset epoch train batch row token vector embedding similar meaning words text pair label score
kafka parquet consumer publisher message header checksum group partition replica`)

// genRows returns n rows of corpus/split, the same for the same seed:
// texts of 4 to 20 words with tokens, ids and 8-topic vectors, a label on
// about half of them. Row i has ID "<corpus>-<split>-<seed>-<i>".
func genRows(corpus, split string, seed uint64, n int) []shards.Row {
	rng := rand.New(rand.NewPCG(seed, 11))
	text := func() string {
		ws := make([]string, 4+rng.IntN(17))
		for i := range ws {
			ws[i] = vocabulary[rng.IntN(len(vocabulary))]
		}
		return strings.Join(ws, " ")
	}
	rows := make([]shards.Row, n)
	for i := range rows {
		a, b := text(), text()
		r := shards.Row{
			ID: fmt.Sprintf("%s-%s-%d-%d", corpus, split, seed, i), Corpus: corpus, Dataset: corpus, Split: split,
			A: a, B: b, LangA: "en", LangB: "en", GroupKey: fmt.Sprintf("g%d", i/4),
			SourceFile: corpus + ".txt", SourceLine: int64(i + 1),
			TokensA: strings.Fields(a), TokensB: strings.Fields(b),
			Meta: map[string]string{"n": fmt.Sprint(i)},
		}
		if rng.IntN(2) == 0 {
			label := float64(rng.IntN(6))
			r.Label = &label
		}
		for range r.TokensA {
			r.IDsA = append(r.IDsA, rng.Int32N(30))
		}
		for range r.TokensB {
			r.IDsB = append(r.IDsB, rng.Int32N(30))
		}
		r.TopicsA, r.TopicsB = make([]float32, 8), make([]float32, 8)
		for j := range 8 {
			r.TopicsA[j], r.TopicsB[j] = rng.Float32(), rng.Float32()
		}
		rows[i] = r
	}
	return rows
}

// splitSeed is the seed of a split's rows in writeDataset.
func splitSeed(split string) uint64 {
	h := fnv.New64a()
	h.Write([]byte(split))
	return h.Sum64()
}

// writeDataset writes shards of one corpus under root, rows[split] rows per
// split in shards of at most maxRows rows, and the manifest; it returns the
// manifest.
func writeDataset(t testing.TB, root, corpus string, rows map[string]int, maxRows int64) *shards.Manifest {
	t.Helper()
	m := shards.NewManifest([]string{"stream.test"})
	for split, n := range rows {
		seed := splitSeed(split)
		w, err := shards.NewWriter(root, corpus, split, shards.WriterOptions{MaxRows: maxRows, RowGroupRows: 2000})
		if err != nil {
			t.Fatal(err)
		}
		if err := w.Write(genRows(corpus, split, seed, n)...); err != nil {
			t.Fatal(err)
		}
		infos, err := w.Close()
		if err != nil {
			t.Fatal(err)
		}
		m.AddSplit(corpus, split, infos...)
	}
	if err := shards.WriteManifest(root, m); err != nil {
		t.Fatal(err)
	}
	return m
}
