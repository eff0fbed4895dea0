package transforms

import (
	"context"
	"fmt"
	"github.com/parastream/parastream/internal/beamfn"

	"github.com/apache/beam/sdks/v2/go/pkg/beam"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/io/fileio"

	"github.com/parastream/parastream/shards"
)

// ReadExternal reads the shards of earlier extractions under dir
// (dir/<corpus>/<split>/part-*.parquet) as blockers for deduplication: a
// record of this run whose normalised pair equals one of theirs is dropped
// and counted as "dedupe_external". Typical use: keep the evaluation sets'
// pairs out of the training data. It returns PCollection<shards.Row>
// holding only the texts and tokens.
func ReadExternal(s beam.Scope, dir string) beam.PCollection {
	s = s.Scope("transforms.ReadExternal")
	files := fileio.MatchFiles(s, dir+"/*/*/part-*.parquet", fileio.MatchEmptyDisallow())
	return beam.ParDo(s, &readExternalFn{}, beam.Reshuffle(s, files))
}

type readExternalFn struct {
	c counters
}

func (fn *readExternalFn) ProcessElement(ctx context.Context, f fileio.FileMetadata, emit func(shards.Row)) error {
	r, err := shards.OpenFile(f.Path)
	if err != nil {
		return fmt.Errorf("reading --dedupe-against shard: %w", err)
	}
	defer r.Close()
	var n int64
	for row, err := range r.All() {
		if err != nil {
			return err
		}
		emit(shards.Row{ID: row.ID, A: row.A, B: row.B, TokensA: row.TokensA, TokensB: row.TokensB, Split: externalSplit})
		n++
	}
	fn.c.add("external_read", n)
	fn.c.flush(ctx)
	return nil
}

func init() {
	beamfn.DoFn3x1[context.Context, fileio.FileMetadata, func(shards.Row), error](&readExternalFn{})
}
