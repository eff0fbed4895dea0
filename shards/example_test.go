package shards_test

import (
	"fmt"
	"log"
	"os"

	"github.com/parastream/parastream/corpora"
	"github.com/parastream/parastream/shards"
)

// Example writes a split of two examples, records it in the manifest, checks
// the manifest and reads the split back.
func Example() {
	root, err := os.MkdirTemp("", "shards-example")
	if err != nil {
		log.Fatal(err)
	}
	defer os.RemoveAll(root)

	examples := []corpora.Example{
		{ID: "sts:1", Corpus: "sts", Dataset: "2014/images", A: "A dog runs.", B: "A dog is running.",
			LangA: "en", LangB: "en", Label: 4.8, HasLabel: true},
		{ID: "sts:2", Corpus: "sts", Dataset: "2014/images", A: "A cat sleeps.", B: "A man sings.",
			LangA: "en", LangB: "en"},
	}

	w, err := shards.NewWriter(root, "sts", "test", shards.WriterOptions{})
	if err != nil {
		log.Fatal(err)
	}
	for _, e := range examples {
		if err := w.Write(shards.FromExample(e, "test")); err != nil {
			w.Abort()
			log.Fatal(err)
		}
	}
	infos, err := w.Close()
	if err != nil {
		log.Fatal(err)
	}

	m := shards.NewManifest([]string{"example"})
	m.AddSplit("sts", "test", infos...)
	if err := shards.WriteManifest(root, m); err != nil {
		log.Fatal(err)
	}
	if err := m.Verify(root); err != nil {
		log.Fatal(err)
	}
	fmt.Println(infos[0].Path, infos[0].Rows, "rows")

	r, err := shards.OpenSplit(root, "sts", "test")
	if err != nil {
		log.Fatal(err)
	}
	defer r.Close()
	for row, err := range r.All() {
		if err != nil {
			log.Fatal(err)
		}
		fmt.Println(row.Split, row.Example())
	}
	// Output:
	// sts/test/part-00000-of-00001.parquet 2 rows
	// test sts:1 [sts/2014/images] A="A dog runs." B="A dog is running." label=4.8
	// test sts:2 [sts/2014/images] A="A cat sleeps." B="A man sings."
}
