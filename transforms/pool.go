package transforms

import (
	"context"
	"runtime"
	"sync"
)

// bundlePool runs a bundle's elements on a few goroutines. Prism hands all
// the buckets of a GroupByKey to a stage as one bundle, which would process
// them one after the other on one core; the stages that read buckets
// (pairing, dedupe, shard writing) therefore queue each bucket to the pool
// in ProcessElement and collect the results in FinishBundle, where they
// emit them on the bundle's own goroutine, as Beam requires. Each worker
// has a state of its own (its spill files), made by newState.
type bundlePool[S any] struct {
	tasks chan func(ctx context.Context, st S) error
	wg    sync.WaitGroup
	mu    sync.Mutex
	err   error
	cance context.CancelFunc // cancels the tasks' context
	state []S
}

// poolWorkers is the number of goroutines of a bundlePool: one per CPU.
func poolWorkers() int { return max(1, runtime.GOMAXPROCS(0)) }

func newBundlePool[S any](ctx context.Context, newState func() S) *bundlePool[S] {
	ctx, cancel := context.WithCancel(ctx)
	n := poolWorkers()
	p := &bundlePool[S]{tasks: make(chan func(context.Context, S) error), cance: cancel, state: make([]S, n)}
	for i := range n {
		p.state[i] = newState()
		p.wg.Add(1)
		go func(st S) {
			defer p.wg.Done()
			for task := range p.tasks {
				if ctx.Err() != nil {
					continue
				}
				if err := task(ctx, st); err != nil {
					p.fail(err)
					cancel()
				}
			}
		}(p.state[i])
	}
	return p
}

func (p *bundlePool[S]) fail(err error) {
	p.mu.Lock()
	if p.err == nil {
		p.err = err
	}
	p.mu.Unlock()
}

// submit queues a task, waiting for a free worker. It returns the first
// error of an earlier task, so that a failing bundle stops early.
func (p *bundlePool[S]) submit(task func(ctx context.Context, st S) error) error {
	p.mu.Lock()
	err := p.err
	p.mu.Unlock()
	if err != nil {
		return err
	}
	p.tasks <- task
	return nil
}

// wait waits for every task and returns the workers' states and the first
// error. The tasks' context stays valid (spill files made with it close
// with it) until release.
func (p *bundlePool[S]) wait() ([]S, error) {
	close(p.tasks)
	p.wg.Wait()
	return p.state, p.err
}

// release cancels the tasks' context, once the states are done with.
func (p *bundlePool[S]) release() { p.cance() }
