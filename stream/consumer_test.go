package stream_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/segmentio/kafka-go"

	"github.com/parastream/parastream/stream"
)

// published starts a broker and publishes a dataset "sts" with the given
// rows per split; it returns the broker.
func published(t testing.TB, rows map[string]int, maxRows int64) *stream.Broker {
	t.Helper()
	root := t.TempDir()
	writeDataset(t, root, "sts", rows, maxRows)
	b := startBroker(t, "")
	if _, err := stream.Publish(context.Background(), root, publishConfig(t, b)); err != nil {
		t.Fatal(err)
	}
	return b
}

func consumerConfig(t testing.TB, b *stream.Broker, group string, epochs int) stream.ConsumerConfig {
	return stream.ConsumerConfig{
		Client: stream.ClientConfig{Brokers: []string{b.Addr()}}, Dataset: "sts", Group: group,
		Epochs: epochs, Seed: 1, Logger: testLogger(t),
	}
}

// rowKey identifies a row: its shard and index.
type rowKey struct {
	shard string
	index int64
}

// drain reads a consumer to io.EOF and returns, per epoch, how many times
// each row came.
func drain(ctx context.Context, c *stream.Consumer) (map[int]map[rowKey]int, error) {
	seen := map[int]map[rowKey]int{}
	for {
		r, err := c.Next(ctx)
		if errors.Is(err, io.EOF) {
			return seen, nil
		}
		if err != nil {
			return seen, err
		}
		if seen[r.Epoch] == nil {
			seen[r.Epoch] = map[rowKey]int{}
		}
		seen[r.Epoch][rowKey{r.Shard, r.Index}]++
	}
}

// checkEpochs checks that every one of want rows came exactly once in each
// of epochs epochs.
func checkEpochs(t *testing.T, name string, seen map[int]map[rowKey]int, epochs, want int) {
	t.Helper()
	if len(seen) != epochs {
		t.Errorf("%s: %d epochs, want %d", name, len(seen), epochs)
	}
	for e, rows := range seen {
		if len(rows) != want {
			t.Errorf("%s: epoch %d saw %d distinct rows, want %d", name, e, len(rows), want)
		}
		for k, n := range rows {
			if n != 1 {
				t.Errorf("%s: epoch %d: row %v came %d times", name, e, k, n)
				break
			}
		}
	}
}

// TestTwoGroupsThreeEpochs is the acceptance test: 100,000 rows read by two
// consumer groups at once, each seeing every row exactly once per epoch,
// three epochs giving three passes.
func TestTwoGroupsThreeEpochs(t *testing.T) {
	const rows = 100_000
	b := published(t, map[string]int{"train": rows}, 25_000)
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	var wg sync.WaitGroup
	results := make([]map[int]map[rowKey]int, 2)
	stats := make([]stream.Stats, 2)
	errs := make([]error, 2)
	for i, group := range []string{"run-a", "run-b"} {
		wg.Go(func() {
			c, err := stream.NewConsumer(ctx, consumerConfig(t, b, group, 3))
			if err != nil {
				errs[i] = err
				return
			}
			defer c.Close()
			results[i], errs[i] = drain(ctx, c)
			stats[i] = c.Stats()
			if errs[i] == nil {
				errs[i] = c.Commit(ctx, c.Position())
			}
		})
	}
	wg.Wait()
	for i, group := range []string{"run-a", "run-b"} {
		if errs[i] != nil {
			t.Fatalf("%s: %v", group, errs[i])
		}
		checkEpochs(t, group, results[i], 3, rows)
		if s := stats[i]; s.Rows != 3*rows || s.Duplicates != 0 || s.BadMessages != 0 || s.Lag != 0 {
			t.Errorf("%s: stats %+v", group, s)
		}
		t.Logf("%s: %+v", group, stats[i])
	}
	// A run whose group committed the end of epoch 3 of 3 has nothing left.
	c, err := stream.NewConsumer(ctx, consumerConfig(t, b, "run-a", 3))
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if r, err := c.Next(ctx); !errors.Is(err, io.EOF) {
		t.Errorf("after the committed end: %v %v, want io.EOF", r.Shard, err)
	}
}

// TestResumeFromPosition stops a consumer in the middle of an epoch, saves
// its position as JSON, and starts another from it: together they see every
// row of the epoch once.
func TestResumeFromPosition(t *testing.T) {
	const rows = 6000
	b := published(t, map[string]int{"train": rows}, 2500)
	ctx := context.Background()
	cfg := consumerConfig(t, b, "resume", 2)
	cfg.ShuffleBuffer = 1500
	c, err := stream.NewConsumer(ctx, cfg)
	if err != nil {
		t.Fatal(err)
	}
	seen := map[rowKey]int{}
	for range 2345 {
		r, err := c.Next(ctx)
		if err != nil {
			t.Fatal(err)
		}
		seen[rowKey{r.Shard, r.Index}]++
	}
	pos := c.Position()
	if err := c.Commit(ctx, pos); err != nil {
		t.Fatal(err)
	}
	c.Close()
	if pos.Rows() != 2345 || pos.Epoch != 1 {
		t.Fatalf("position says %d rows in epoch %d, want 2345 in 1", pos.Rows(), pos.Epoch)
	}
	data, err := json.Marshal(pos)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("position: %d bytes of JSON", len(data))
	var saved stream.Position
	if err := json.Unmarshal(data, &saved); err != nil {
		t.Fatal(err)
	}
	cfg.Start = &saved
	c2, err := stream.NewConsumer(ctx, cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer c2.Close()
	epoch2 := 0
	for {
		r, err := c2.Next(ctx)
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		if r.Epoch == 2 {
			epoch2++
			continue
		}
		seen[rowKey{r.Shard, r.Index}]++
	}
	checkEpochs(t, "resumed", map[int]map[rowKey]int{1: seen}, 1, rows)
	if epoch2 != rows {
		t.Errorf("epoch 2 after the resume: %d rows, want %d", epoch2, rows)
	}
	s := c2.Stats()
	if s.Duplicates != 0 || s.Replayed == 0 {
		t.Errorf("stats %+v: want rows replayed past the position's offsets, no duplicates", s)
	}

	// Without the position, the group's committed offsets resume at
	// message granularity: no row is lost, and what repeats is bounded by
	// the messages that were in the buffer.
	cfg.Start = nil
	cfg.Epochs = 1
	c3, err := stream.NewConsumer(ctx, cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer c3.Close()
	again, err := drain(ctx, c3)
	if err != nil {
		t.Fatal(err)
	}
	for k := range seen {
		if seen[k] == 1 && again[1][k] == 0 && !delivered(pos, k) {
			t.Fatalf("row %v lost after resuming from the group", k)
		}
	}
	if n := len(again[1]); n < rows-2345 || n > rows {
		t.Errorf("from the group: %d rows, want between %d and %d", n, rows-2345, rows)
	}
}

// delivered reports whether the position lists the row as handed out.
func delivered(pos stream.Position, k rowKey) bool {
	for _, r := range pos.Delivered[k.shard] {
		if r.First <= k.index && k.index < r.End {
			return true
		}
	}
	return false
}

// TestShuffleSeeded checks that the order is a function of the seed.
func TestShuffleSeeded(t *testing.T) {
	b := published(t, map[string]int{"train": 3000}, 1000)
	ctx := context.Background()
	order := func(seed uint64, buffer int) []rowKey {
		cfg := consumerConfig(t, b, fmt.Sprint("seed-", seed, "-", buffer), 1)
		cfg.Seed, cfg.ShuffleBuffer = seed, buffer
		c, err := stream.NewConsumer(ctx, cfg)
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
		var out []rowKey
		for {
			r, err := c.Next(ctx)
			if errors.Is(err, io.EOF) {
				return out
			}
			if err != nil {
				t.Fatal(err)
			}
			out = append(out, rowKey{r.Shard, r.Index})
		}
	}
	a, a2, other, plain := order(7, 0), order(7, 0), order(8, 0), order(1, 1)
	if !slices.Equal(a, a2) {
		t.Error("the same seed gave two orders")
	}
	if slices.Equal(a, other) {
		t.Error("seeds 7 and 8 gave the same order")
	}
	// In topic order each shard's rows come in sequence.
	last := map[string]int64{}
	for _, k := range plain {
		if prev, ok := last[k.shard]; ok && k.index != prev+1 {
			t.Fatalf("unshuffled: row %v after %d", k, prev)
		}
		last[k.shard] = k.index
	}
	if slices.Equal(a, plain) {
		t.Error("the shuffled order is the topic order")
	}
}

// TestDuplicatesDropped writes some messages a second time, as a publisher
// that crashed after writing and before learning it would: each epoch
// hands the rows out once and counts the duplicates.
func TestDuplicatesDropped(t *testing.T) {
	const rows = 3000
	root := t.TempDir()
	writeDataset(t, root, "sts", map[string]int{"train": rows}, 3000)
	b := startBroker(t, "")
	ctx := context.Background()
	if _, err := stream.Publish(ctx, root, publishConfig(t, b)); err != nil {
		t.Fatal(err)
	}
	// Rows 500 to 1499 of the shard once more, cut differently.
	all := genRows("sts", "train", 1, rows)
	shard := "sts/train/part-00000-of-00001.parquet"
	// acks=all: kafka-go's writer defaults to none, and returns before the
	// broker has appended, so that the consumer could start with the junk
	// message past its first epoch's end (one bad message, not two).
	w := &kafka.Writer{Addr: kafka.TCP(b.Addr()), Topic: "parastream.sts.train", Balancer: &kafka.Murmur2Balancer{},
		RequiredAcks: kafka.RequireAll, Transport: newTransport(t)}
	defer w.Close()
	for _, r := range []stream.Range{{First: 500, End: 900}, {First: 900, End: 1500}} {
		m, err := stream.Encode(stream.Batch{Shard: shard, First: r.First, Rows: all[r.First:r.End]})
		if err != nil {
			t.Fatal(err)
		}
		if err := w.WriteMessages(ctx, m); err != nil {
			t.Fatal(err)
		}
	}
	// And a message that is not ours.
	if err := w.WriteMessages(ctx, kafka.Message{Key: []byte(shard), Value: []byte("junk")}); err != nil {
		t.Fatal(err)
	}
	c, err := stream.NewConsumer(ctx, consumerConfig(t, b, "dups", 2))
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	seen, err := drain(ctx, c)
	if err != nil {
		t.Fatal(err)
	}
	checkEpochs(t, "dups", seen, 2, rows)
	if s := c.Stats(); s.Duplicates != 2*1000 || s.BadMessages != 2 {
		t.Errorf("stats %+v: want 2000 duplicates and 2 bad messages over two epochs", s)
	}
}

// TestConsumerTakesTheManifestGiven: a consumer given the dataset's
// manifest (read once by its caller) takes it instead of reading it again.
func TestConsumerTakesTheManifestGiven(t *testing.T) {
	b := published(t, map[string]int{"train": 10}, 5)
	cfg := consumerConfig(t, b, "given", 1)
	m, err := stream.ReadManifest(context.Background(), cfg.Client, "", "sts")
	if err != nil {
		t.Fatal(err)
	}
	cfg.Manifest = m
	c, err := stream.NewConsumer(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if c.Manifest() != m {
		t.Errorf("the consumer read the manifest again instead of taking the one given")
	}
}
