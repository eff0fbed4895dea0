package stream

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"runtime"
	"sync"
	"time"

	"github.com/segmentio/kafka-go"
)

// pumps read the partitions of a topic, each in its own goroutine, into
// channels: one per partition when reading up to end offsets (so that the
// consumer can take the partitions in a fixed rotation), one shared when
// following new data. Row pumps hand each message to a pool of decoders,
// one a core (GOMAXPROCS), and its future to the channel: decoding runs on
// every core whatever the topic's partitions, while each pump fetches on,
// and the consumer takes the messages in the order they were read.
//
// Up to end offsets a pump sends one fetch request after another and never
// asks for what lies past the end: it stops at once, where a kafka.Reader
// would have a prefetch held at the end of the log that Close waits for
// (a second, at every epoch's end). Following, it is a kafka.Reader.
type pumps struct {
	cancel  context.CancelFunc
	client  *kafka.Client
	readers []*kafka.Reader
	chans   []chan *future
	shared  chan *future
	work    chan *future // to the decoders; nil without decoding
	workers sync.WaitGroup
	done    []bool
	left    int // partitions not done
	follow  bool
	errs    chan error
	wg      sync.WaitGroup
	retry   ClientConfig // how long a fetch that fails is tried again (Retry)
}

// fetched is a message a pump read and, from row pumps, its batch or the
// error that decoding it gave.
type fetched struct {
	kafka.Message
	batch     Batch
	decodeErr error
}

// future is a fetched message that may still be decoding: f is complete
// once done is closed.
type future struct {
	f      fetched
	decode decodeFunc
	done   chan struct{}
}

// Backoff between retries of a failed fetch (a broker restarting).
const (
	fetchBackoffMin = 50 * time.Millisecond
	fetchBackoffMax = time.Second
)

// startPumps reads topic's partitions from the offsets from up to end
// (end -1 everywhere: following new data), without decoding.
func startPumps(cc ClientConfig, topic string, from, end []int64, logger *slog.Logger) (*pumps, error) {
	return startPumpsDecoding(cc, topic, from, end, nil, logger)
}

// rowDecoder is the decoding of a row topic's messages: the given
// columns (nil: every column), by DecodeColumns, into the row arrays of
// arrays where it has one.
func rowDecoder(columns []string, arrays *rowArrays) decodeFunc {
	if len(columns) == 0 {
		columns = Columns()
	}
	return func(m kafka.Message) (Batch, error) { return decodeColumnsInto(m, columns, arrays.get()) }
}

// decodeFunc decodes a row message; nil: messages are not decoded.
type decodeFunc func(kafka.Message) (Batch, error)

func startPumpsDecoding(cc ClientConfig, topic string, from, end []int64, decode decodeFunc, logger *slog.Logger) (*pumps, error) {
	ctx, cancel := context.WithCancel(context.Background())
	ps := &pumps{
		cancel: cancel,
		chans:  make([]chan *future, len(from)),
		done:   make([]bool, len(from)),
		left:   len(from),
		errs:   make(chan error, len(from)),
		retry:  cc,
	}
	// Decoded batches weigh more than messages: fewer of them wait.
	queue := 16
	if decode != nil {
		queue = 4
		ps.work = make(chan *future, runtime.GOMAXPROCS(0))
		for range runtime.GOMAXPROCS(0) {
			ps.workers.Go(func() {
				for fu := range ps.work {
					fu.f.batch, fu.f.decodeErr = fu.decode(fu.f.Message)
					close(fu.done)
				}
			})
		}
	}
	for p := range from {
		ps.follow = end[p] < 0
		if end[p] >= 0 && from[p] >= end[p] {
			ps.done[p] = true
			ps.left--
			continue
		}
		ps.chans[p] = make(chan *future, queue)
		out := ps.chans[p]
		if ps.follow {
			if ps.shared == nil {
				ps.shared = make(chan *future, 64)
			}
			out = ps.shared
			r, err := newPartitionReader(cc, topic, p, from[p], logger)
			if err != nil {
				ps.stop()
				return nil, err
			}
			ps.readers = append(ps.readers, r)
			ps.wg.Go(func() { ps.follow1(ctx, r, topic, p, decode, out) })
			continue
		}
		if ps.client == nil {
			c, err := cc.client()
			if err != nil {
				ps.stop()
				return nil, err
			}
			ps.client = c
		}
		ps.wg.Go(func() { ps.upTo(ctx, offsetRange{topic, p, from[p], end[p]}, decode, out, logger) })
	}
	return ps, nil
}

// follow1 reads partition p with r for ever.
func (ps *pumps) follow1(ctx context.Context, r *kafka.Reader, topic string, p int, decode decodeFunc, out chan *future) {
	for {
		m, err := r.FetchMessage(ctx)
		if err != nil {
			if ctx.Err() == nil {
				ps.errs <- fmt.Errorf("reading %s partition %d: %w", topic, p, err)
			}
			return
		}
		if !ps.send(ctx, m, decode, out) {
			return
		}
	}
}

// upTo reads the messages of r, then closes out. A failed fetch (a broker
// restarting) is logged and tried again, with backoff, from the first
// message not yet sent, for at most the client's Retry without a message
// (then the pump ends with ErrUnreachable); an error the broker gives as
// not retriable ends the pump.
func (ps *pumps) upTo(ctx context.Context, r offsetRange, decode decodeFunc, out chan *future, logger *slog.Logger) {
	at, backoff := r.from, fetchBackoffMin
	var failing time.Time // since when fetching fails without a message
	for {
		rest := r
		rest.from = at
		err := scanPartition(ctx, ps.client, rest, func(m kafka.Message) error {
			if !ps.send(ctx, m, decode, out) {
				return ctx.Err()
			}
			at, backoff, failing = m.Offset+1, fetchBackoffMin, time.Time{}
			return nil
		})
		if err == nil {
			close(out)
			return
		}
		if ctx.Err() != nil {
			return
		}
		if !retriable(err) {
			ps.errs <- err
			return
		}
		if failing.IsZero() {
			failing = time.Now()
		}
		if tried := time.Since(failing); tried >= ps.retry.retryFor() {
			ps.errs <- ps.retry.unreachable(fmt.Sprintf("fetching %s partition %d at offset %d", r.topic, r.partition, at), tried, err)
			return
		}
		logger.Warn("fetching failed, trying again", "topic", r.topic, "partition", r.partition, "offset", at, "in", backoff, "err", err)
		t := time.NewTimer(backoff)
		select {
		case <-t.C:
		case <-ctx.Done():
			t.Stop()
			return
		}
		backoff = min(2*backoff, fetchBackoffMax)
	}
}

// send hands m to out, and to the decoders when asked; false when ctx
// ended first.
func (ps *pumps) send(ctx context.Context, m kafka.Message, decode decodeFunc, out chan *future) bool {
	fu := &future{f: fetched{Message: m}, decode: decode, done: make(chan struct{})}
	if decode == nil {
		close(fu.done)
	} else {
		select {
		case ps.work <- fu:
		case <-ctx.Done():
			return false
		}
	}
	select {
	case out <- fu:
		return true
	case <-ctx.Done():
		return false
	}
}

// allDone reports whether every partition has been read to its end.
// Consumer.Next asks before every row: a count, not a loop over the
// partitions.
func (ps *pumps) allDone() bool {
	return ps != nil && !ps.follow && ps.left == 0
}

// receive returns the next message: from the partition *rr names, or the
// next one in the rotation that is not done, when reading up to end
// offsets; from any partition when following, waiting at most wait
// (wait < 0: until ctx is done). ok is false when nothing came in time,
// or when every partition is done.
func (ps *pumps) receive(ctx context.Context, rr *int, wait time.Duration) (m fetched, ok bool, err error) {
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
			ps.left--
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
func (ps *pumps) take(ctx context.Context, ch <-chan *future, timeout <-chan time.Time) (m fetched, ok, closed bool, err error) {
	select {
	case fu, ok := <-ch:
		if !ok {
			return m, false, true, nil
		}
		select {
		case <-fu.done:
			return fu.f, true, false, nil
		case <-ctx.Done():
			return m, false, false, ctx.Err()
		}
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
	if ps.work != nil {
		// The pumps have ended: nothing sends work any more.
		close(ps.work)
		ps.workers.Wait()
		ps.work = nil
	}
	ps.readers = nil
	if ps.client != nil {
		if t, ok := ps.client.Transport.(*kafka.Transport); ok {
			t.CloseIdleConnections()
		}
	}
	return errors.Join(errs...)
}
