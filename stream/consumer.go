package stream

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"math/rand/v2"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/segmentio/kafka-go"

	"github.com/parastream/parastream/shards"
)

// Defaults of ConsumerConfig.
const (
	DefaultSplit         = "train"
	DefaultShuffleBuffer = 10_000
)

// followWait is how long a consumer following new data (Epochs 0) waits
// for a message before handing out a row from a buffer that is not full.
const followWait = 200 * time.Millisecond

// ConsumerConfig configures a Consumer.
type ConsumerConfig struct {
	Client ClientConfig
	// Prefix starts every topic name; "" means DefaultPrefix.
	Prefix string
	// Dataset is the dataset (corpus) to read. Required.
	Dataset string
	// Split is the split to read; "" means DefaultSplit.
	Split string
	// Group is the consumer group: one per training run, so that several
	// runs read the same data independently. Required. Commit stores the
	// run's position under it.
	Group string
	// Epochs is the number of passes over the data; 0 follows new data
	// for ever (one endless epoch).
	Epochs int
	// Seed seeds the shuffle: epoch e draws from the buffer with a
	// generator seeded by (Seed, e).
	Seed uint64
	// ShuffleBuffer is how many rows the consumer holds and draws from at
	// random; 0 means DefaultShuffleBuffer, 1 hands rows out in topic
	// order (partition by partition in rotation, a message at a time).
	ShuffleBuffer int
	// Columns, when set, are the only columns decoded (their Parquet names,
	// as Columns lists them: "id", "label", "ids_a", ...); the other fields
	// of the rows handed out are left zero, and their column chunks are
	// not even decompressed. A trainer that reads a few columns asks for
	// those. Empty: every column.
	Columns []string
	// Start, when set, is where to start: a Position from Consumer.Position,
	// saved with a checkpoint. Without it the consumer starts where the
	// group last committed, or at the beginning of epoch 1.
	Start *Position
	// Manifest, when set, is the dataset's manifest as the caller read it
	// (ReadManifest): the consumer takes it instead of reading it again.
	Manifest *shards.Manifest
	// Member, when set, is this process's membership of Group (JoinGroup):
	// Commit sends its generation and member id, as a broker requires of a
	// group with members. Nil commits as a consumer outside the group.
	Member *Member
	// Logger receives warnings (bad messages, broker errors); nil discards
	// them.
	Logger *slog.Logger
}

// Validate reports a setting that cannot work, saying how to fix it.
func (c ConsumerConfig) Validate() error {
	errs := []error{c.Client.Validate()}
	if c.Dataset == "" {
		errs = append(errs, errors.New("stream: no dataset: name the corpus to read (as in the shards' manifest)"))
	}
	if c.Group == "" {
		errs = append(errs, errors.New("stream: no consumer group: give one per training run"))
	}
	if c.Epochs < 0 {
		errs = append(errs, fmt.Errorf("stream: Epochs is %d: give a count, or 0 to follow new data for ever", c.Epochs))
	}
	if c.ShuffleBuffer < 0 {
		errs = append(errs, fmt.Errorf("stream: ShuffleBuffer is %d: give a row count, 1 for none, or 0 for %d", c.ShuffleBuffer, DefaultShuffleBuffer))
	}
	if err := checkColumns(c.Columns); err != nil {
		errs = append(errs, fmt.Errorf("ConsumerConfig.Columns: %w", err))
	}
	return errors.Join(errs...)
}

// Record is one row handed out by a Consumer, with where it came from.
type Record struct {
	shards.Row
	// Shard and Index identify the row: row Index of the shard.
	Shard string
	Index int64
	// Epoch is the pass the row belongs to, from 1.
	Epoch int
	// Partition and Offset locate its message.
	Partition int
	Offset    int64
}

// Position is exactly where a consumer stands: restart a consumer with it
// (ConsumerConfig.Start) and it hands out every row of the epoch it has not
// handed out yet, and none that it has. It is plain JSON, to be saved with
// a checkpoint.
type Position struct {
	Topic string `json:"topic"`
	// Epoch is the current epoch, from 1.
	Epoch      int                 `json:"epoch"`
	Partitions []PartitionPosition `json:"partitions"`
	// Delivered lists, per shard, the rows of the epoch handed out so far.
	Delivered map[string][]Range `json:"delivered,omitempty"`
}

// PartitionPosition is a Position's view of one partition.
type PartitionPosition struct {
	Partition int `json:"partition"`
	// Offset is where to resume reading: every row of the messages below
	// it has been handed out (or dropped as a duplicate).
	Offset int64 `json:"offset"`
	// Fetched is the offset after the last message read; rows of messages
	// from Offset to Fetched may have been handed out (see Delivered).
	Fetched int64 `json:"fetched"`
	// End is the offset after the epoch's last message; -1 when following
	// new data for ever.
	End int64 `json:"end"`
}

// Rows is the number of rows of the epoch handed out, per Delivered.
func (p Position) Rows() int64 {
	var n int64
	for _, rs := range p.Delivered {
		n += ranges(rs).count()
	}
	return n
}

// Stats are a consumer's counters.
type Stats struct {
	// Epoch is the current epoch, from 1.
	Epoch int
	// Rows counts the rows handed out by this consumer; EpochRows those of
	// the current epoch, counting those handed out before a restart from
	// a Position.
	Rows, EpochRows int64
	// Duplicates counts rows dropped because their (shard, row) had been
	// handed out already in the epoch (a publisher that ran twice).
	Duplicates int64
	// Replayed counts rows read again after a restart from a Position and
	// dropped because they had been handed out before it.
	Replayed int64
	// BadMessages counts messages that failed to decode (logged and
	// skipped: their rows are missing from the epoch).
	BadMessages int64
	// Messages and Bytes count the messages read and their values' bytes.
	Messages, Bytes int64
	// Lag is the number of messages the topic holds beyond what was read:
	// the sum over partitions of the high watermark minus the next offset
	// to fetch.
	Lag int64
}

// Consumer reads a dataset's split for a training run: in epochs, shuffled
// through a seeded buffer, without duplicates within an epoch, with its
// exact position for checkpoints, committing the group's offsets when the
// caller says the work is durable.
//
// Each epoch reads every partition from its first offset to the end offset
// it had when the epoch began; the rows published later belong to the next
// epoch. The consumer reads all partitions itself (the group stores
// offsets, it does not split partitions among members).
//
// A Consumer is not safe for concurrent use.
type Consumer struct {
	cfg ConsumerConfig
	// arrays are the row arrays of messages handed out, for the decoders.
	arrays   rowArrays
	client   *kafka.Client
	topic    string
	nparts   int
	manifest *shards.Manifest
	expected int64 // rows of the split, per the manifest
	log      *slog.Logger

	epoch     int
	whole     bool    // the epoch was read from its start: its row count is known
	end       []int64 // per partition; -1 when following
	fetched   []int64 // next offset to fetch
	hwm       []int64 // latest high watermark seen
	replay    []int64 // rows of messages below are replays, after a Start
	delivered map[string]*rowSet
	pending   []pendingQueue // per partition, messages with rows in buf

	// buf holds the rows to draw from: each a reference to a row of a
	// message's batch, not the row, so that drawing moves 16 bytes.
	buf  []slot
	head int // in-order mode: next row of buf
	rng  *rand.Rand

	pumps  *pumps
	rr     int // next partition in the rotation
	stats  Stats
	closed bool
}

// NewConsumer opens a consumer: it reads the dataset's manifest from the
// manifests topic (ErrNoManifest when there is none), unless given it
// (ConsumerConfig.Manifest), checks that the
// split's topic exists, and finds where to start (see ConsumerConfig.Start).
func NewConsumer(ctx context.Context, cfg ConsumerConfig) (*Consumer, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	if cfg.Prefix == "" {
		cfg.Prefix = DefaultPrefix
	}
	if cfg.Split == "" {
		cfg.Split = DefaultSplit
	}
	if cfg.ShuffleBuffer == 0 {
		cfg.ShuffleBuffer = DefaultShuffleBuffer
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.DiscardHandler)
	}
	if err := cfg.Client.check(ctx); err != nil {
		return nil, fmt.Errorf("consuming %s: %w", cfg.Dataset, err)
	}
	client, err := cfg.Client.client()
	if err != nil {
		return nil, err
	}
	c := &Consumer{cfg: cfg, client: client, topic: RowTopic(cfg.Prefix, cfg.Dataset, cfg.Split), log: cfg.Logger}
	m := cfg.Manifest
	if m == nil {
		if m, err = readManifest(ctx, client, cfg.Prefix, cfg.Dataset); err != nil {
			return nil, err
		}
	}
	if m == nil {
		return nil, fmt.Errorf("%w: %s on %s (publish it first)", ErrNoManifest, cfg.Dataset, ManifestTopic(cfg.Prefix))
	}
	split, ok := m.Splits[shards.SplitKey(cfg.Dataset, cfg.Split)]
	if !ok {
		return nil, fmt.Errorf("%w: the manifest of %s has no split %q", ErrNoManifest, cfg.Dataset, cfg.Split)
	}
	c.manifest, c.expected = m, split.Rows
	topics, err := describeTopics(ctx, client, []string{c.topic})
	if err != nil {
		return nil, err
	}
	t, ok := topics[c.topic]
	if !ok {
		return nil, fmt.Errorf("%w: the manifest of %s is on %s, but its %s rows are not: topic %s does not exist; %s",
			ErrIncomplete, cfg.Dataset, ManifestTopic(cfg.Prefix), cfg.Split, c.topic, republish(cfg.Prefix, cfg.Dataset))
	}
	c.nparts = t.partitions
	switch {
	case cfg.Start != nil:
		err = c.startAt(ctx, *cfg.Start)
	default:
		err = c.startFromGroup(ctx)
	}
	if err != nil {
		c.Close()
		return nil, err
	}
	return c, nil
}

// Manifest is the dataset's manifest, as published.
func (c *Consumer) Manifest() *shards.Manifest { return c.manifest }

// Topic is the topic the consumer reads.
func (c *Consumer) Topic() string { return c.topic }

// Stats returns the consumer's counters.
func (c *Consumer) Stats() Stats {
	s := c.stats
	s.Epoch = c.epoch
	for p := range c.nparts {
		s.Lag += max(0, c.hwm[p]-c.fetched[p])
	}
	for _, rs := range c.delivered {
		s.EpochRows += rs.count()
	}
	return s
}

// beginEpoch starts epoch e at the partitions' first offsets, ending at
// their current end offsets (or never, when following).
func (c *Consumer) beginEpoch(ctx context.Context, e int) error {
	first, end, err := c.offsets(ctx)
	if err != nil {
		return err
	}
	if c.cfg.Epochs == 0 {
		end = slices.Repeat([]int64{-1}, c.nparts)
	}
	if err := c.resume(ctx, e, first, end, first, map[string]*rowSet{}); err != nil {
		return err
	}
	c.whole = true
	return nil
}

// offsets is partitionOffsets of the consumer's topic, tried again while a
// broker restarts (ClientConfig.Retry).
func (c *Consumer) offsets(ctx context.Context) (first, end []int64, err error) {
	err = c.cfg.Client.retry(ctx, c.log, "listing offsets of "+c.topic, func() error {
		first, end, err = partitionOffsets(ctx, c.client, c.topic, c.nparts)
		return err
	})
	return first, end, err
}

// resume (re)starts the readers at the given offsets of epoch e.
func (c *Consumer) resume(ctx context.Context, e int, from, end, replay []int64, delivered map[string]*rowSet) error {
	c.pumps.stop()
	c.whole = false
	c.epoch, c.end, c.fetched, c.replay, c.delivered = e, end, from, replay, delivered
	c.hwm = slices.Clone(from)
	if _, hwm, err := partitionOffsets(ctx, c.client, c.topic, c.nparts); err == nil {
		c.hwm = hwm
	}
	c.pending = make([]pendingQueue, c.nparts)
	c.buf, c.head, c.rr = c.buf[:0], 0, 0
	c.rng = rand.New(rand.NewPCG(c.cfg.Seed, uint64(e)))
	p, err := startPumpsDecoding(c.cfg.Client, c.topic, from, end, rowDecoder(c.cfg.Columns, &c.arrays), c.log)
	if err != nil {
		return err
	}
	c.pumps = p
	return nil
}

// startAt starts at a saved position.
func (c *Consumer) startAt(ctx context.Context, pos Position) error {
	if pos.Topic != c.topic || len(pos.Partitions) != c.nparts || pos.Epoch < 1 {
		return fmt.Errorf("%w: the position is of %s with %d partitions in epoch %d; the consumer reads %s with %d partitions",
			ErrPosition, pos.Topic, len(pos.Partitions), pos.Epoch, c.topic, c.nparts)
	}
	first, _, err := c.offsets(ctx)
	if err != nil {
		return err
	}
	from, end, replay := make([]int64, c.nparts), make([]int64, c.nparts), make([]int64, c.nparts)
	for i, pp := range pos.Partitions {
		if pp.Partition != i || pp.Offset > pp.Fetched || (pp.End >= 0 && pp.Fetched > pp.End) {
			return fmt.Errorf("%w: partition entry %d is %+v", ErrPosition, i, pp)
		}
		if pp.Offset < first[i] {
			return fmt.Errorf("%w: partition %d resumes at offset %d, the broker now starts at %d (retention removed the messages)", ErrPosition, i, pp.Offset, first[i])
		}
		from[i], end[i], replay[i] = pp.Offset, pp.End, pp.Fetched
	}
	delivered := map[string]*rowSet{}
	for shard, rs := range pos.Delivered {
		delivered[shard] = rowSetOf(rs)
	}
	if err := c.resume(ctx, pos.Epoch, from, end, replay, delivered); err != nil {
		return err
	}
	c.whole = true
	return nil
}

// groupMetadata is what Commit stores beside each offset.
func groupMetadata(epoch int, end int64) string {
	return fmt.Sprintf("parastream epoch=%d end=%d", epoch, end)
}

func parseGroupMetadata(s string) (epoch int, end int64, ok bool) {
	rest, ok := strings.CutPrefix(s, "parastream epoch=")
	if !ok {
		return 0, 0, false
	}
	e, endStr, ok := strings.Cut(rest, " end=")
	if !ok {
		return 0, 0, false
	}
	epoch, err1 := strconv.Atoi(e)
	end, err2 := strconv.ParseInt(endStr, 10, 64)
	return epoch, end, err1 == nil && err2 == nil && epoch >= 1
}

// startFromGroup starts where the group last committed, or at epoch 1.
// Rows of the messages that were partly handed out before the commit come
// again: only a Position resumes exactly.
func (c *Consumer) startFromGroup(ctx context.Context) error {
	parts := make([]int, c.nparts)
	for p := range parts {
		parts[p] = p
	}
	resp, err := c.client.OffsetFetch(ctx, &kafka.OffsetFetchRequest{GroupID: c.cfg.Group, Topics: map[string][]int{c.topic: parts}})
	if err == nil {
		err = resp.Error
	}
	if errors.Is(err, kafka.GroupIdNotFound) {
		// A group that never committed: a new run.
		return c.beginEpoch(ctx, 1)
	}
	if err != nil {
		return fmt.Errorf("reading the offsets of group %s: %w", c.cfg.Group, err)
	}
	first, hwm, err := c.offsets(ctx)
	if err != nil {
		return err
	}
	from, end := slices.Clone(first), slices.Clone(hwm)
	epoch, found := 0, 0
	for _, op := range resp.Topics[c.topic] {
		if op.Error != nil || op.CommittedOffset < 0 || op.Partition < 0 || op.Partition >= c.nparts {
			continue
		}
		e, pend, ok := parseGroupMetadata(op.Metadata)
		if !ok {
			continue
		}
		epoch = max(epoch, e)
		from[op.Partition], end[op.Partition] = max(op.CommittedOffset, first[op.Partition]), pend
		found++
	}
	if found == 0 {
		return c.beginEpoch(ctx, 1)
	}
	if c.cfg.Epochs == 0 {
		end = slices.Repeat([]int64{-1}, c.nparts)
	}
	c.log.Info("resuming from the group's committed offsets", "group", c.cfg.Group, "epoch", epoch, "offsets", from)
	return c.resume(ctx, epoch, from, end, from, map[string]*rowSet{})
}

// Position returns exactly where the consumer stands; see Position.
func (c *Consumer) Position() Position {
	pos := Position{Topic: c.topic, Epoch: c.epoch, Partitions: make([]PartitionPosition, c.nparts), Delivered: map[string][]Range{}}
	for p := range c.nparts {
		off := c.fetched[p]
		if q := &c.pending[p]; q.len() > 0 {
			off = q.front()
		}
		pos.Partitions[p] = PartitionPosition{Partition: p, Offset: off, Fetched: c.fetched[p], End: c.end[p]}
	}
	for shard, rs := range c.delivered {
		if rs.count() > 0 {
			pos.Delivered[shard] = rs.ranges()
		}
	}
	return pos
}

// Commit commits pos (from Position) as the group's offsets: call it once
// the work covering the rows handed out up to pos is durable (the
// checkpoint that holds pos is written). The group's offsets are what
// another consumer of the group starts from when it is given no Position,
// and what Kafka tools show as the group's lag.
func (c *Consumer) Commit(ctx context.Context, pos Position) error {
	if c.closed {
		return ErrClosed
	}
	if pos.Topic != c.topic {
		return fmt.Errorf("%w: committing a position of %s to a consumer of %s", ErrPosition, pos.Topic, c.topic)
	}
	commits := make([]kafka.OffsetCommit, len(pos.Partitions))
	for i, pp := range pos.Partitions {
		commits[i] = kafka.OffsetCommit{Partition: pp.Partition, Offset: pp.Offset, Metadata: groupMetadata(pos.Epoch, pp.End)}
	}
	// A broker restarting fails the request, or answers it with errors
	// per partition: both are tried again (ClientConfig.Retry).
	return c.cfg.Client.retry(ctx, c.log, "committing offsets of group "+c.cfg.Group, func() error {
		gen, member := -1, ""
		if c.cfg.Member != nil {
			var err error
			if gen, member, err = c.cfg.Member.Generation(); err != nil {
				return err
			}
		}
		resp, err := c.client.OffsetCommit(ctx, &kafka.OffsetCommitRequest{
			GroupID: c.cfg.Group, GenerationID: gen, MemberID: member, Topics: map[string][]kafka.OffsetCommit{c.topic: commits},
		})
		if err != nil {
			return fmt.Errorf("committing offsets of group %s: %w", c.cfg.Group, err)
		}
		for _, p := range resp.Topics[c.topic] {
			if c.cfg.Member != nil && rejoinable(p.Error) {
				// A rebalance, or a broker restarted: the member joins
				// again, and the commit is tried with its new generation.
				if err := c.cfg.Member.rejoin(ctx, gen, p.Error); err != nil {
					return err
				}
				return fmt.Errorf("committing offset of group %s on %s partition %d: %v", c.cfg.Group, c.topic, p.Partition, p.Error)
			}
			if p.Error != nil {
				return fmt.Errorf("committing offset of group %s on %s partition %d: %w", c.cfg.Group, c.topic, p.Partition, p.Error)
			}
		}
		return nil
	})
}

// Next returns the next row. After the last row of the last epoch it
// returns io.EOF; with Epochs 0 it waits for new data until ctx is done.
func (c *Consumer) Next(ctx context.Context) (Record, error) {
	for {
		if c.closed {
			return Record{}, ErrClosed
		}
		buffered := len(c.buf) - c.head
		done := c.pumps.allDone()
		if buffered > 0 && (buffered >= c.cfg.ShuffleBuffer || done) {
			if r, ok := c.pop(); ok {
				return r, nil
			}
			continue
		}
		if done {
			if got := c.Stats().EpochRows; c.whole && got < c.expected {
				return Record{}, fmt.Errorf("%w: epoch %d of %s ended with %d of the %d rows the manifest of %s lists (%d bad messages skipped); %s",
					ErrIncomplete, c.epoch, c.topic, got, c.expected, c.cfg.Dataset, c.stats.BadMessages, republish(c.cfg.Prefix, c.cfg.Dataset))
			} else if c.whole && got > c.expected {
				c.log.Warn("epoch ended with more rows than the manifest's", "topic", c.topic, "epoch", c.epoch, "rows", got, "manifest", c.expected)
			}
			if c.cfg.Epochs > 0 && c.epoch >= c.cfg.Epochs {
				return Record{}, io.EOF
			}
			if err := c.beginEpoch(ctx, c.epoch+1); err != nil {
				return Record{}, err
			}
			continue
		}
		wait := time.Duration(-1)
		if c.cfg.Epochs == 0 && buffered > 0 {
			wait = followWait
		}
		m, ok, err := c.pumps.receive(ctx, &c.rr, wait)
		if err != nil {
			return Record{}, err
		}
		if !ok {
			// Nothing came in time (following), or every partition is
			// done: hand out what the buffer holds.
			if len(c.buf) > c.head {
				if r, ok := c.pop(); ok {
					return r, nil
				}
			}
			continue
		}
		c.accept(m)
	}
}

// accept takes a message's rows (decoded by the pumps) into the buffer,
// dropping the rows already handed out in the epoch.
func (c *Consumer) accept(m fetched) {
	p := m.Partition
	c.fetched[p] = m.Offset + 1
	c.hwm[p] = max(c.hwm[p], m.HighWaterMark)
	c.stats.Messages++
	c.stats.Bytes += int64(len(m.Value))
	b, err := m.batch, m.decodeErr
	if err != nil {
		c.stats.BadMessages++
		c.log.Warn("skipping a bad message", "topic", c.topic, "partition", p, "offset", m.Offset, "err", err)
		return
	}
	seen := c.delivered[b.Shard]
	if seen == nil {
		// Empty until a row is handed out: Position leaves it out.
		seen = new(rowSet)
		c.delivered[b.Shard] = seen
	}
	h := &heldBatch{rows: b.Rows, shard: b.Shard, first: b.First, epoch: c.epoch, partition: p, offset: m.Offset, delivered: seen}
	for i := range b.Rows {
		if seen.contains(b.First + int64(i)) {
			if m.Offset < c.replay[p] {
				c.stats.Replayed++
			} else {
				c.stats.Duplicates++
			}
			continue
		}
		c.buf = append(c.buf, slot{h, i})
		h.left++
	}
	if h.left > 0 {
		c.pending[p].push(h)
	} else {
		c.arrays.put(b.Rows) // every row a duplicate: none is held
	}
}

// pop takes a row from the buffer: at random, or the oldest when not
// shuffling. ok is false when the row was a duplicate, dropped.
func (c *Consumer) pop() (Record, bool) {
	var s slot
	if c.cfg.ShuffleBuffer == 1 {
		s, c.buf[c.head] = c.buf[c.head], slot{}
		c.head++
		if c.head == len(c.buf) {
			c.buf, c.head = c.buf[:0], 0
		}
	} else {
		i := c.rng.IntN(len(c.buf))
		last := len(c.buf) - 1
		s, c.buf[i] = c.buf[i], c.buf[last]
		c.buf[last] = slot{}
		c.buf = c.buf[:last]
	}
	h, index := s.held, s.held.first+int64(s.row)
	rec := Record{Row: h.rows[s.row], Shard: h.shard, Index: index, Epoch: h.epoch, Partition: h.partition, Offset: h.offset}
	if c.pending[h.partition].done(h) {
		c.arrays.put(h.rows) // its last row is copied out
		h.rows = nil
	}
	if !h.delivered.add(index) {
		c.stats.Duplicates++
		return Record{}, false
	}
	c.stats.Rows++
	return rec, true
}

// heldBatch is a message's rows while the buffer holds some of them:
// left of them, to be handed out into delivered, the set of its shard's
// rows handed out in the epoch.
type heldBatch struct {
	rows      []shards.Row
	shard     string
	first     int64
	epoch     int
	partition int
	offset    int64
	left      int
	delivered *rowSet
}

// slot is a row in the buffer: row row of a held batch.
type slot struct {
	held *heldBatch
	row  int
}

// Close stops the readers. Close after Close is a no-op.
func (c *Consumer) Close() error {
	if c.closed {
		return nil
	}
	c.closed = true
	return c.pumps.stop()
}

// pendingQueue tracks, for one partition, the messages whose rows are
// still in the buffer, in offset order.
type pendingQueue struct {
	held []*heldBatch
	head int
}

func (q *pendingQueue) push(h *heldBatch) { q.held = append(q.held, h) }

// done counts a row of h out of the buffer, and reports whether it was
// h's last.
func (q *pendingQueue) done(h *heldBatch) bool {
	h.left--
	for q.head < len(q.held) && q.held[q.head].left == 0 {
		q.held[q.head] = nil
		q.head++
	}
	if q.head == len(q.held) {
		q.held, q.head = q.held[:0], 0
	}
	return h.left == 0
}

func (q *pendingQueue) len() int     { return len(q.held) - q.head }
func (q *pendingQueue) front() int64 { return q.held[q.head].offset }

// republish says how to complete a dataset's topics.
func republish(prefix, dataset string) string {
	return fmt.Sprintf("publish the dataset again to complete it: parastream publish --shards DIR --dataset %s --topic-prefix %s (DIR: the directory of its manifest.json; rows already there are not sent twice)", dataset, prefix)
}
