package transforms_test

import (
	"testing"

	"github.com/apache/beam/sdks/v2/go/pkg/beam"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/testing/passert"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/testing/ptest"

	"github.com/parastream/parastream/transforms"
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
