package stream

import (
	"context"
	"errors"
	"log/slog"

	"github.com/segmentio/kafka-go"

	"github.com/parastream/parastream/shards"
)

// What BenchmarkStreamVsKcat measures of the Kafka legs alone.

// WriteMessages writes msgs (their keys, values and headers) to topic with
// the publisher's writer, batches bounded by the topic's message size as
// Publish bounds them, in one call.
func WriteMessages(ctx context.Context, cc ClientConfig, topic string, msgs []kafka.Message) error {
	c, err := cc.client()
	if err != nil {
		return err
	}
	topics, err := describeTopics(ctx, c, []string{topic})
	if err != nil {
		return err
	}
	tr, err := cc.transport()
	if err != nil {
		return err
	}
	w := newWriter(cc, tr, slog.New(slog.DiscardHandler))
	w.Topic = topic
	w.BatchBytes = int64(topics[topic].maxMessageBytes())
	out := make([]kafka.Message, len(msgs))
	for i, m := range msgs {
		out[i] = kafka.Message{Key: m.Key, Value: m.Value, Headers: m.Headers}
	}
	if err := w.WriteMessages(ctx, out...); err != nil {
		w.Close()
		return err
	}
	return w.Close()
}

// ReadMessages reads a topic from its first offsets to its end offsets
// through the consumer's pumps, without decoding, and returns the count
// and bytes of the values.
func ReadMessages(ctx context.Context, cc ClientConfig, topic string, partitions int) (n int, size int64, err error) {
	c, err := cc.client()
	if err != nil {
		return 0, 0, err
	}
	first, end, err := partitionOffsets(ctx, c, topic, partitions)
	if err != nil {
		return 0, 0, err
	}
	ps, err := startPumps(cc, topic, first, end, slog.New(slog.DiscardHandler))
	if err != nil {
		return 0, 0, err
	}
	defer ps.stop()
	rr := 0
	for {
		m, ok, err := ps.receive(ctx, &rr, -1)
		if err != nil || !ok {
			return n, size, err
		}
		n++
		size += int64(len(m.Value))
	}
}

// Message is a row message of shard whose rows header says rows, with the
// right checksum of value: for fuzzing the value.
func Message(shard, rows string, value []byte) kafka.Message {
	m := rowMessage(shard, 0, 1, value)
	for i, h := range m.Headers {
		if h.Key == HeaderRows {
			m.Headers[i].Value = []byte(rows)
		}
	}
	return m
}

// PublishAfterStaleLook publishes the datasets of the manifest under root
// as Publish does, but with what Publish's look at the brokers would have
// found before any of their topics existed: as if another publisher had
// created and filled the topics between that look and this run's
// creating them.
func PublishAfterStaleLook(ctx context.Context, root string, cfg PublishConfig, datasets ...string) ([]TopicSummary, error) {
	cfg = cfg.withDefaults()
	m, err := shards.ReadManifest(root)
	if err != nil {
		return nil, err
	}
	p, err := newPublisher(cfg, root)
	if err != nil {
		return nil, err
	}
	defer p.close()
	var sums []TopicSummary
	for _, ds := range datasets {
		p.found[ds] = &discovery{topics: map[string]topicInfo{}, have: map[string]map[string]*ranges{}}
		s, err := p.dataset(ctx, m, ds)
		sums = append(sums, s...)
		if err != nil {
			return sums, err
		}
	}
	return sums, errors.Join(p.w.Close(), p.one.Close())
}
