package transforms_test

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/apache/beam/sdks/v2/go/pkg/beam"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/testing/passert"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/testing/ptest"

	"github.com/parastream/parastream/shards"
	"github.com/parastream/parastream/transforms"
	"github.com/parastream/parastream/transforms/internal/spill"
	"github.com/parastream/parastream/transforms/text"
)

func TestReadEveryCompressionOfOneFile(t *testing.T) {
	p, s := beam.NewPipelineWithRoot()
	rows, rejects := transforms.Read(s, transforms.ReadConfig{Format: "reddit-comments", Input: fixture("reddit/comments.jsonl*")})
	// comments.jsonl and its .gz, .bz2, .xz and .zst copies: 5 files of 20
	// comments and 4 malformed lines each.
	passert.Count(s, rows, "rows", 5*20)
	passert.Count(s, rejects, "rejects", 5*4)
	ptest.RunAndValidate(t, p)
}

func TestReadTwoFileFormats(t *testing.T) {
	p, s := beam.NewPipelineWithRoot()
	rows, _ := transforms.Read(s, transforms.ReadConfig{Format: "europarl", Input: fixture("europarl/*.en"), InputB: fixture("europarl/*.fr")})
	passert.Count(s, rows, "europarl", 3)
	sts, stsRejects := transforms.Read(s, transforms.ReadConfig{Format: "sts", Input: fixture("sts/*/STS.input.*.txt")})
	passert.Count(s, sts, "sts", 3)
	passert.Count(s, stsRejects, "sts rejects", 3)
	ptest.RunAndValidate(t, p)
}

// ReadAndSpill writes the records Read followed by Spill writes, to the
// same buckets; a spill it cannot write fails the run, even with
// SkipBadFiles (the work directory is at fault, not the input).
func TestReadAndSpillIsReadThenSpill(t *testing.T) {
	dir := t.TempDir()
	prep := transforms.PrepareConfig{Reddit: true, Tokenize: text.TokenizeOptions{Lower: true}}
	read := transforms.ReadConfig{Format: "reddit-comments", Input: fixture("reddit/comments.jsonl*"), Prepare: &prep}
	spillTo := func(name string) transforms.SpillConfig {
		return transforms.SpillConfig{Dir: dir, Name: name, Key: transforms.ByDedupeKey, Buckets: 3}
	}
	p, s := beam.NewPipelineWithRoot()
	rows, _ := transforms.Read(s, read)
	transforms.Spill(s, rows, spillTo("two"))
	_, rejects := transforms.ReadAndSpill(s, read, spillTo("one"))
	passert.Count(s, rejects, "rejects", 5*4)
	ptest.RunAndValidate(t, p)

	one, two := spilled(t, filepath.Join(dir, "one")), spilled(t, filepath.Join(dir, "two"))
	if len(one) == 0 || !slices.Equal(one, two) {
		t.Errorf("ReadAndSpill spilled %d records, Read then Spill %d: %q\n%q", len(one), len(two), one, two)
	}

	file := filepath.Join(dir, "file")
	if err := os.WriteFile(file, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	read.SkipBadFiles = true
	p, s = beam.NewPipelineWithRoot()
	transforms.ReadAndSpill(s, read, transforms.SpillConfig{Dir: file, Name: "x", Key: transforms.ByGroup, Buckets: 2})
	if err := ptest.Run(p); err == nil {
		t.Error("spilling under a regular file: no error")
	}
}

// spilled lists the records of the spill files under dir, each as its
// bucket directory and encoding, sorted.
func spilled(t *testing.T, dir string) []string {
	t.Helper()
	paths, err := filepath.Glob(filepath.Join(dir, "b*.spill"))
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, p := range paths {
		bucket, _, _ := strings.Cut(filepath.Base(p), "-")
		err := spill.ReadFiles(context.Background(), []string{p}, func(r *shards.Row) error {
			out = append(out, bucket+" "+string(spill.AppendRow(nil, r)))
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	slices.Sort(out)
	return out
}
