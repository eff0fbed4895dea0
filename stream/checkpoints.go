package stream

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"path/filepath"
	"slices"
	"time"

	"github.com/segmentio/kafka-go"
)

// CheckpointTopic is the topic of checkpoint events: "<prefix>.checkpoints".
// Trainers announce each checkpoint they write on it (AnnounceCheckpoint);
// evaluation watches it (WatchCheckpoints).
func CheckpointTopic(prefix string) string { return prefix + ".checkpoints" }

// CheckpointEvent announces a checkpoint written by a training run. It
// travels as JSON, keyed by Run, so that a run's events keep their order.
type CheckpointEvent struct {
	// Run names the training run; Model its model (encoder) and Dataset
	// the data it trains on.
	Run     string `json:"run"`
	Model   string `json:"model"`
	Dataset string `json:"dataset"`
	// Step is the optimiser step and Epoch the epoch (from 1) at which the
	// checkpoint was written.
	Step  int64 `json:"step"`
	Epoch int   `json:"epoch"`
	// Dir is the checkpoint directory, an absolute path.
	Dir string `json:"dir"`
	// Final marks the run's last checkpoint.
	Final bool `json:"final"`
	// Time is when the checkpoint was written.
	Time time.Time `json:"time"`
}

// Validate reports an event that a watcher could not act on.
func (ev CheckpointEvent) Validate() error {
	var errs []error
	if ev.Run == "" {
		errs = append(errs, errors.New("stream: checkpoint event without a run name"))
	}
	if !filepath.IsAbs(ev.Dir) {
		errs = append(errs, fmt.Errorf("stream: checkpoint event of run %q: directory %q is not an absolute path", ev.Run, ev.Dir))
	}
	if ev.Step < 0 || ev.Epoch < 0 {
		errs = append(errs, fmt.Errorf("stream: checkpoint event of run %q: negative step %d or epoch %d", ev.Run, ev.Step, ev.Epoch))
	}
	return errors.Join(errs...)
}

// commitTimeout bounds the commit of an event handled as the watch stops.
const commitTimeout = 10 * time.Second

// checkpointTopicSpec is the checkpoint topic as AnnounceCheckpoint and
// WatchCheckpoints create it: one partition (one order for all runs), kept
// for ever so that a watcher started late finds every checkpoint.
func checkpointTopicSpec(prefix string) topicSpec {
	return topicSpec{
		name: CheckpointTopic(prefix), partitions: 1, replication: DefaultReplication,
		configs: map[string]string{"retention.ms": "-1"},
	}
}

// AnnounceCheckpoint publishes ev on the checkpoint topic of prefix ("":
// DefaultPrefix), creating the topic when it is missing, and returns once
// every replica has acknowledged it. The value is ev as JSON, the key its
// Run.
func AnnounceCheckpoint(ctx context.Context, cc ClientConfig, prefix string, ev CheckpointEvent) error {
	if err := ev.Validate(); err != nil {
		return err
	}
	if prefix == "" {
		prefix = DefaultPrefix
	}
	value, err := json.Marshal(ev)
	if err != nil {
		return fmt.Errorf("encoding the checkpoint event of %s: %w", ev.Run, err)
	}
	client, err := cc.client()
	if err != nil {
		return err
	}
	topic := CheckpointTopic(prefix)
	transport, err := cc.transport()
	if err != nil {
		return err
	}
	// A broker restarting fails the announcement: it is tried again
	// (ClientConfig.Retry).
	return cc.retry(ctx, nil, "announcing checkpoint "+ev.Dir, func() error {
		if _, err := ensureTopics(ctx, client, []topicSpec{checkpointTopicSpec(prefix)}, nil, slog.New(slog.DiscardHandler)); err != nil {
			return fmt.Errorf("announcing checkpoint %s: %w", ev.Dir, err)
		}
		return writeEvent(ctx, cc, transport, topic, kafka.Message{Key: []byte(ev.Run), Value: value})
	})
}

// writeEvent writes one message on topic with acks from every replica.
func writeEvent(ctx context.Context, cc ClientConfig, transport *kafka.Transport, topic string, m kafka.Message) error {
	w := &kafka.Writer{
		Addr:         kafka.TCP(cc.Brokers...),
		Topic:        topic,
		Balancer:     &kafka.Murmur2Balancer{},
		RequiredAcks: kafka.RequireAll,
		MaxAttempts:  10,
		BatchTimeout: time.Millisecond,
		Transport:    transport,
	}
	err := w.WriteMessages(ctx, m)
	if cerr := w.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return fmt.Errorf("announcing a checkpoint of run %s on %s: %w", m.Key, topic, err)
	}
	return nil
}

// WatchCheckpoints calls fn with each checkpoint event on the checkpoint
// topic of prefix ("": DefaultPrefix) that the consumer group has not
// committed yet, in the order of the topic, then with each new one as it
// comes, until ctx is done (it then returns nil). It creates the topic
// when it is missing, so that it can watch before the first announcement.
//
// The group's offset of an event is committed only after fn returns nil:
// a watcher stopped at any moment, started again with the same group,
// catches up on every event it had not finished, and on those announced
// while it was down. An error from fn stops the watch and is returned
// (the event comes again on the next start); fn decides which failures
// are worth that, and logs and returns nil for the others. A message that
// is not a valid event is logged, committed and skipped.
func WatchCheckpoints(ctx context.Context, cc ClientConfig, prefix, group string, logger *slog.Logger, fn func(context.Context, CheckpointEvent) error) error {
	if group == "" {
		return errors.New("stream: watching checkpoints needs a consumer group (one per evaluating service)")
	}
	if prefix == "" {
		prefix = DefaultPrefix
	}
	if logger == nil {
		logger = slog.New(slog.DiscardHandler)
	}
	client, err := cc.client()
	if err != nil {
		return err
	}
	topics, err := ensureTopics(ctx, client, []topicSpec{checkpointTopicSpec(prefix)}, nil, logger)
	if err != nil {
		return fmt.Errorf("watching checkpoints: %w", err)
	}
	topic := CheckpointTopic(prefix)
	from, err := committedOffsets(ctx, client, group, topic, topics[topic].partitions)
	if err != nil {
		return err
	}
	logger.Info("watching checkpoints", "topic", topic, "group", group, "offsets", from)
	ps, err := startPumps(cc, topic, from, slices.Repeat([]int64{-1}, len(from)), logger)
	if err != nil {
		return err
	}
	defer ps.stop()
	rr := 0
	for {
		m, ok, err := ps.receive(ctx, &rr, -1)
		if ctx.Err() != nil {
			return nil
		}
		if err != nil {
			return fmt.Errorf("watching checkpoints: %w", err)
		}
		if !ok {
			continue
		}
		var ev CheckpointEvent
		if err = json.Unmarshal(m.Value, &ev); err == nil {
			err = ev.Validate()
		}
		if err != nil {
			logger.Warn("skipping a message that is not a checkpoint event", "topic", topic, "partition", m.Partition, "offset", m.Offset, "err", err)
		} else if err := fn(ctx, ev); err != nil {
			if ctx.Err() != nil {
				return nil
			}
			return fmt.Errorf("handling checkpoint %s (step %d of run %s, %s offset %d): %w", ev.Dir, ev.Step, ev.Run, topic, m.Offset, err)
		}
		// The work is done: commit it even when ctx ended meanwhile (a
		// watcher stopped right after an evaluation does not redo it).
		cctx, ccancel := context.WithTimeout(context.WithoutCancel(ctx), commitTimeout)
		err = commitOffset(cctx, client, group, topic, m.Partition, m.Offset+1)
		ccancel()
		if err != nil {
			return err
		}
	}
}

// committedOffsets returns where group stands on each partition of topic:
// its committed offset, or the partition's first offset where it has none
// (or where retention removed what it pointed to).
func committedOffsets(ctx context.Context, c *kafka.Client, group, topic string, partitions int) ([]int64, error) {
	first, _, err := partitionOffsets(ctx, c, topic, partitions)
	if err != nil {
		return nil, err
	}
	parts := make([]int, partitions)
	for p := range parts {
		parts[p] = p
	}
	resp, err := c.OffsetFetch(ctx, &kafka.OffsetFetchRequest{GroupID: group, Topics: map[string][]int{topic: parts}})
	if err == nil {
		err = resp.Error
	}
	if errors.Is(err, kafka.GroupIdNotFound) {
		return first, nil
	}
	if err != nil {
		return nil, fmt.Errorf("reading the offsets of group %s on %s: %w", group, topic, err)
	}
	from := slices.Clone(first)
	for _, op := range resp.Topics[topic] {
		if op.Error != nil || op.CommittedOffset < 0 || op.Partition < 0 || op.Partition >= partitions {
			continue
		}
		from[op.Partition] = max(op.CommittedOffset, first[op.Partition])
	}
	return from, nil
}

// commitOffset stores offset (the next message to read) as group's
// position on one partition of topic.
func commitOffset(ctx context.Context, c *kafka.Client, group, topic string, partition int, offset int64) error {
	resp, err := c.OffsetCommit(ctx, &kafka.OffsetCommitRequest{
		GroupID: group, GenerationID: -1,
		Topics: map[string][]kafka.OffsetCommit{topic: {{Partition: partition, Offset: offset}}},
	})
	if err != nil {
		return fmt.Errorf("committing offset %d of group %s on %s partition %d: %w", offset, group, topic, partition, err)
	}
	for _, p := range resp.Topics[topic] {
		if p.Error != nil {
			return fmt.Errorf("committing offset %d of group %s on %s partition %d: %w", offset, group, topic, partition, p.Error)
		}
	}
	return nil
}
