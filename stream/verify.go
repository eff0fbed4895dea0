package stream

import (
	"context"
	"errors"
	"runtime"
	"sync"

	"github.com/parastream/parastream/shards"
)

// verifyShards checks the shards against their manifest entries (size,
// sha256, row count: shards.VerifyShard) on one goroutine per core, and
// returns every mismatch in the manifest's order. Publish calls it before
// it creates a topic or produces a message, so that no byte of a dataset
// that does not match its manifest reaches the brokers.
func verifyShards(ctx context.Context, root string, files []shards.ShardInfo) error {
	errs := make([]error, len(files))
	next := make(chan int)
	var wg sync.WaitGroup
	for range max(1, runtime.GOMAXPROCS(0)) {
		wg.Go(func() {
			for i := range next {
				errs[i] = shards.VerifyShard(root, files[i])
			}
		})
	}
	for i := range files {
		if ctx.Err() != nil {
			break
		}
		next <- i
	}
	close(next)
	wg.Wait()
	if err := ctx.Err(); err != nil {
		return err
	}
	return errors.Join(errs...)
}
