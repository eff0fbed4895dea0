package stream

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"time"

	"github.com/segmentio/kafka-go"
)

// pumps read the partitions of a topic, each from its own reader, into
// channels: one per partition when reading up to end offsets (so that the
// consumer can take the partitions in a fixed rotation), one shared when
// following new data.
type pumps struct {
	cancel  context.CancelFunc
	readers []*kafka.Reader
	chans   []chan kafka.Message
	shared  chan kafka.Message
	done    []bool
	follow  bool
	errs    chan error
	wg      sync.WaitGroup
}

func startPumps(cc ClientConfig, topic string, from, end []int64, logger *slog.Logger) (*pumps, error) {
	ctx, cancel := context.WithCancel(context.Background())
	ps := &pumps{
		cancel: cancel,
		chans:  make([]chan kafka.Message, len(from)),
		done:   make([]bool, len(from)),
		errs:   make(chan error, len(from)),
	}
	for p := range from {
		ps.follow = end[p] < 0
		if end[p] >= 0 && from[p] >= end[p] {
			ps.done[p] = true
			continue
		}
		r, err := newPartitionReader(cc, topic, p, from[p], logger)
		if err != nil {
			ps.stop()
			return nil, err
		}
		ps.readers = append(ps.readers, r)
		ps.chans[p] = make(chan kafka.Message, 16)
		out := ps.chans[p]
		if ps.follow {
			if ps.shared == nil {
				ps.shared = make(chan kafka.Message, 64)
			}
			out = ps.shared
		}
		ps.wg.Go(func() { ps.pump(ctx, r, topic, p, end[p], out) })
	}
	return ps, nil
}

func (ps *pumps) pump(ctx context.Context, r *kafka.Reader, topic string, p int, end int64, out chan kafka.Message) {
	for {
		m, err := r.FetchMessage(ctx)
		if err != nil {
			if ctx.Err() == nil {
				ps.errs <- fmt.Errorf("reading %s partition %d: %w", topic, p, err)
			}
			return
		}
		select {
		case out <- m:
		case <-ctx.Done():
			return
		}
		if end >= 0 && m.Offset+1 >= end {
			close(out)
			// Stop fetching now rather than at the end of the epoch.
			r.Close()
			return
		}
	}
}

// allDone reports whether every partition has been read to its end.
func (ps *pumps) allDone() bool {
	if ps == nil || ps.follow {
		return false
	}
	for _, d := range ps.done {
		if !d {
			return false
		}
	}
	return true
}

// receive returns the next message: from the partition *rr names, or the
// next one in the rotation that is not done, when reading up to end
// offsets; from any partition when following, waiting at most wait
// (wait < 0: until ctx is done). ok is false when nothing came in time,
// or when every partition is done.
func (ps *pumps) receive(ctx context.Context, rr *int, wait time.Duration) (m kafka.Message, ok bool, err error) {
	var timeout <-chan time.Time
	if wait >= 0 {
		t := time.NewTimer(wait)
		defer t.Stop()
		timeout = t.C
	}
	if ps.follow {
		m, ok, _, err = ps.take(ctx, ps.shared, timeout)
		return m, ok, err
	}
	n := len(ps.chans)
	for range n {
		p := *rr % n
		*rr = p + 1
		if ps.done[p] {
			continue
		}
		var closed bool
		if m, ok, closed, err = ps.take(ctx, ps.chans[p], timeout); closed {
			ps.done[p] = true
			continue
		}
		if !ok {
			*rr = p // come back to this partition
		}
		return m, ok, err
	}
	return m, false, nil
}

// take receives from ch: ok when a message came, closed when ch is
// closed; err when a reader failed or ctx is done; neither when the
// timeout fired.
func (ps *pumps) take(ctx context.Context, ch <-chan kafka.Message, timeout <-chan time.Time) (m kafka.Message, ok, closed bool, err error) {
	select {
	case m, ok = <-ch:
		return m, ok, !ok, nil
	case err = <-ps.errs:
		return m, false, false, err
	case <-ctx.Done():
		return m, false, false, ctx.Err()
	case <-timeout:
		return m, false, false, nil
	}
}

// stop stops the readers and waits for their goroutines. Nil-safe.
func (ps *pumps) stop() error {
	if ps == nil {
		return nil
	}
	ps.cancel()
	errs := make([]error, len(ps.readers))
	var wg sync.WaitGroup
	for i, r := range ps.readers {
		wg.Go(func() { errs[i] = r.Close() })
	}
	wg.Wait()
	ps.wg.Wait()
	ps.readers = nil
	return errors.Join(errs...)
}
