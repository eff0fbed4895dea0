package stream

import (
	"fmt"
	"log/slog"
	"math/rand/v2"
	"testing"

	"github.com/segmentio/kafka-go"

	"github.com/parastream/parastream/shards"
)

// TestConsumerDrawAllocs guards the consumer's per-row path, taking a
// message's rows into the shuffle buffer and drawing them (accept, pop),
// against an allocation per row: what it allocates is per message (the
// held batch, the buffer growing) or per 4,096 rows of a shard (a chunk
// of the rows handed out).
func TestConsumerDrawAllocs(t *testing.T) {
	const messages, rowsPer = 16, 2000
	batches := make([]fetched, messages)
	for i := range batches {
		batches[i] = fetched{
			Message: kafka.Message{Partition: i % 4, Offset: int64(i / 4)},
			batch:   Batch{Shard: fmt.Sprintf("s/train/part-%d", i%4), First: int64(i/4) * rowsPer, Rows: make([]shards.Row, rowsPer)},
		}
	}
	epoch := func() *Consumer {
		c := &Consumer{
			cfg:       ConsumerConfig{ShuffleBuffer: 5000},
			log:       slog.New(slog.DiscardHandler),
			fetched:   make([]int64, 4),
			hwm:       make([]int64, 4),
			replay:    make([]int64, 4),
			pending:   make([]pendingQueue, 4),
			delivered: map[string]*rowSet{},
			rng:       rand.New(rand.NewPCG(1, 1)),
			epoch:     1,
		}
		for _, b := range batches {
			c.accept(b)
			for len(c.buf) > c.cfg.ShuffleBuffer {
				c.pop()
			}
		}
		for len(c.buf) > 0 {
			c.pop()
		}
		return c
	}
	if c := epoch(); c.stats.Rows != messages*rowsPer || c.Stats().EpochRows != messages*rowsPer {
		t.Fatalf("handed out %d rows (%d in the epoch), want %d", c.stats.Rows, c.Stats().EpochRows, messages*rowsPer)
	}
	perRow := testing.AllocsPerRun(5, func() { epoch() }) / (messages * rowsPer)
	t.Logf("%.4f allocations a row", perRow)
	if perRow > 0.05 {
		t.Errorf("taking in and drawing a row allocates %.4f times a row: something allocates per row", perRow)
	}
}
