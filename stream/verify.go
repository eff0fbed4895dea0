package stream

import (
	"context"
	"runtime"
	"sync"

	"github.com/parastream/parastream/shards"
)

// verifier checks the shards of a manifest in the background, in the
// manifest's order (the order Publish reads them in), on one goroutine per
// core, so that hashing them overlaps with sending the ones already
// checked: the publisher reads a shard's rows only once it has passed
// (waitFor), and no byte of a shard that does not match its manifest
// reaches a topic.
type verifier struct {
	done map[string]chan struct{}
	errs map[string]error // written before done[path] is closed
	mu   sync.Mutex
	stop context.CancelFunc
}

func startVerifier(ctx context.Context, root string, files []shards.ShardInfo) *verifier {
	ctx, cancel := context.WithCancel(ctx)
	v := &verifier{done: make(map[string]chan struct{}, len(files)), errs: make(map[string]error, len(files)), stop: cancel}
	next := make(chan shards.ShardInfo)
	for _, f := range files {
		v.done[f.Path] = make(chan struct{})
	}
	for range max(1, runtime.GOMAXPROCS(0)) {
		go func() {
			for f := range next {
				err := ctx.Err()
				if err == nil {
					err = shards.VerifyShard(root, f)
				}
				v.mu.Lock()
				v.errs[f.Path] = err
				v.mu.Unlock()
				close(v.done[f.Path])
			}
		}()
	}
	go func() {
		defer close(next)
		// Every shard goes out: after a cancel the workers only record the
		// context's error, so that no waiter waits for ever.
		for _, f := range files {
			next <- f
		}
	}()
	return v
}

// waitFor waits until the shard at path (a manifest path) has been checked
// and returns what was wrong with it.
func (v *verifier) waitFor(ctx context.Context, path string) error {
	ch, ok := v.done[path]
	if !ok {
		return nil // not in the manifest: nothing to check
	}
	select {
	case <-ch:
	case <-ctx.Done():
		return ctx.Err()
	}
	v.mu.Lock()
	defer v.mu.Unlock()
	return v.errs[path]
}

// wait waits for every shard and returns the first error in the manifest's
// order.
func (v *verifier) wait(ctx context.Context, files []shards.ShardInfo) error {
	for _, f := range files {
		if err := v.waitFor(ctx, f.Path); err != nil {
			return err
		}
	}
	return nil
}
