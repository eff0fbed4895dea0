package stream

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"strconv"
	"strings"
	"time"

	"github.com/segmentio/kafka-go"

	"github.com/parastream/parastream/shards"
)

// DefaultPrefix is the topic prefix when none is given.
const DefaultPrefix = "parastream"

// RowTopic is the topic of a dataset's split: "<prefix>.<dataset>.<split>".
func RowTopic(prefix, dataset, split string) string {
	return prefix + "." + dataset + "." + split
}

// ManifestTopic is the compacted topic of the manifests, one per dataset
// (keyed by the dataset): "<prefix>.manifests".
func ManifestTopic(prefix string) string { return prefix + ".manifests" }

// checkTopicName refuses a name Kafka refuses: empty, over 249 characters,
// or with characters other than ASCII letters, digits, '.', '_' and '-'.
func checkTopicName(name string) error {
	if name == "" || len(name) > 249 || name == "." || name == ".." {
		return fmt.Errorf("%w: topic name %q: Kafka takes 1 to 249 characters", ErrTopic, name)
	}
	for _, r := range name {
		if !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '.' || r == '_' || r == '-') {
			return fmt.Errorf("%w: topic name %q: Kafka takes only ASCII letters, digits, '.', '_' and '-' (rename the dataset or the prefix)", ErrTopic, name)
		}
	}
	return nil
}

// topicInfo is what the publisher and the consumer need of a topic.
type topicInfo struct {
	name       string
	partitions int
	replicas   int
	// configs holds the topic's max.message.bytes and cleanup.policy.
	configs map[string]string
	// created is set by ensureTopics on a topic it created.
	created bool
}

// describeTopics returns the topics that exist among names, with their
// partition count, replication and configs.
func describeTopics(ctx context.Context, c *kafka.Client, names []string) (map[string]topicInfo, error) {
	md, err := c.Metadata(ctx, &kafka.MetadataRequest{Topics: names})
	if err != nil {
		return nil, fmt.Errorf("reading topic metadata: %w", err)
	}
	out := map[string]topicInfo{}
	var res []kafka.DescribeConfigRequestResource
	for _, t := range md.Topics {
		if errors.Is(t.Error, kafka.UnknownTopicOrPartition) || (t.Error == nil && len(t.Partitions) == 0) {
			continue
		}
		if t.Error != nil {
			return nil, fmt.Errorf("reading metadata of topic %s: %w", t.Name, t.Error)
		}
		out[t.Name] = topicInfo{name: t.Name, partitions: len(t.Partitions), replicas: len(t.Partitions[0].Replicas), configs: map[string]string{}}
		res = append(res, kafka.DescribeConfigRequestResource{
			ResourceType: kafka.ResourceTypeTopic, ResourceName: t.Name,
			ConfigNames: []string{"max.message.bytes", "cleanup.policy"},
		})
	}
	if len(res) == 0 {
		return out, nil
	}
	dc, err := c.DescribeConfigs(ctx, &kafka.DescribeConfigsRequest{Resources: res})
	if err != nil {
		return nil, fmt.Errorf("reading topic configs: %w", err)
	}
	for _, r := range dc.Resources {
		if r.Error != nil {
			return nil, fmt.Errorf("reading configs of topic %s: %w", r.ResourceName, r.Error)
		}
		for _, e := range r.ConfigEntries {
			out[r.ResourceName].configs[e.ConfigName] = e.ConfigValue
		}
	}
	return out, nil
}

// topicSpec is a topic to create, or to check that it fits.
type topicSpec struct {
	name        string
	partitions  int
	replication int
	configs     map[string]string
}

// specNames are the names of specs, each checked (checkTopicName).
func specNames(specs []topicSpec) ([]string, error) {
	names := make([]string, len(specs))
	for i, s := range specs {
		if err := checkTopicName(s.name); err != nil {
			return nil, err
		}
		names[i] = s.name
	}
	return names, nil
}

// ensureTopics creates the topics that do not exist and checks those that
// do: enough replicas, and the cleanup policy asked for. It returns every
// topic as it now is, those it created marked created. known, when not
// nil, is what describeTopics returned for specs' names a moment ago: the
// topics it lacks are created without asking again.
func ensureTopics(ctx context.Context, c *kafka.Client, specs []topicSpec, known map[string]topicInfo, logger *slog.Logger) (map[string]topicInfo, error) {
	names, err := specNames(specs)
	if err != nil {
		return nil, err
	}
	have := known
	if have == nil {
		if have, err = describeTopics(ctx, c, names); err != nil {
			return nil, err
		}
	}
	created := map[string]bool{}
	var create []kafka.TopicConfig
	for _, s := range specs {
		if _, ok := have[s.name]; ok {
			continue
		}
		tc := kafka.TopicConfig{Topic: s.name, NumPartitions: s.partitions, ReplicationFactor: s.replication}
		for k, v := range s.configs {
			tc.ConfigEntries = append(tc.ConfigEntries, kafka.ConfigEntry{ConfigName: k, ConfigValue: v})
		}
		create = append(create, tc)
	}
	if len(create) > 0 {
		resp, err := c.CreateTopics(ctx, &kafka.CreateTopicsRequest{Topics: create})
		if err != nil {
			return nil, fmt.Errorf("creating topics: %w", err)
		}
		for _, tc := range create {
			switch err := resp.Errors[tc.Topic]; {
			case err == nil:
				created[tc.Topic] = true
				logger.Info("created topic", "topic", tc.Topic, "partitions", tc.NumPartitions, "replication", tc.ReplicationFactor)
			case errors.Is(err, kafka.TopicAlreadyExists):
				// Another publisher created it meanwhile: checked below.
			default:
				return nil, fmt.Errorf("creating topic %s: %w", tc.Topic, err)
			}
		}
		if have, err = describeTopics(ctx, c, names); err != nil {
			return nil, err
		}
		for name := range created {
			if t, ok := have[name]; ok {
				t.created = true
				have[name] = t
			}
		}
	}
	for _, s := range specs {
		t, ok := have[s.name]
		switch {
		case !ok:
			return nil, fmt.Errorf("%w: topic %s is still missing after creating it", ErrTopic, s.name)
		case t.replicas < s.replication:
			return nil, fmt.Errorf("%w: topic %s has %d replicas, %d asked for", ErrTopic, s.name, t.replicas, s.replication)
		}
		if want := s.configs["cleanup.policy"]; want != "" && !strings.Contains(t.configs["cleanup.policy"], want) {
			return nil, fmt.Errorf("%w: topic %s has cleanup.policy %q, want %q", ErrTopic, s.name, t.configs["cleanup.policy"], want)
		}
	}
	return have, nil
}

// maxMessageBytes is a topic's max.message.bytes, or Kafka's default.
func (t topicInfo) maxMessageBytes() int {
	if n, err := strconv.Atoi(t.configs["max.message.bytes"]); err == nil && n > 0 {
		return n
	}
	return 1048588
}

// partitionOffsets returns the first offset and the end offset (the high
// watermark: one past the last message) of each partition of a topic.
func partitionOffsets(ctx context.Context, c *kafka.Client, topic string, partitions int) (first, end []int64, err error) {
	reqs := make([]kafka.OffsetRequest, 0, 2*partitions)
	for p := range partitions {
		reqs = append(reqs, kafka.FirstOffsetOf(p), kafka.LastOffsetOf(p))
	}
	resp, err := c.ListOffsets(ctx, &kafka.ListOffsetsRequest{Topics: map[string][]kafka.OffsetRequest{topic: reqs}})
	if err != nil {
		return nil, nil, fmt.Errorf("listing offsets of %s: %w", topic, err)
	}
	first, end = make([]int64, partitions), make([]int64, partitions)
	seen := make([]bool, partitions)
	for _, po := range resp.Topics[topic] {
		if po.Error != nil {
			return nil, nil, fmt.Errorf("listing offsets of %s partition %d: %w", topic, po.Partition, po.Error)
		}
		if po.Partition < 0 || po.Partition >= partitions {
			continue
		}
		first[po.Partition], end[po.Partition], seen[po.Partition] = po.FirstOffset, po.LastOffset, true
	}
	for p, ok := range seen {
		if !ok {
			return nil, nil, fmt.Errorf("listing offsets of %s: no answer for partition %d", topic, p)
		}
	}
	return first, end, nil
}

// newPartitionReader reads one partition from offset on, with no group.
func newPartitionReader(cc ClientConfig, topic string, partition int, offset int64, logger *slog.Logger) (*kafka.Reader, error) {
	d, err := cc.dialer()
	if err != nil {
		return nil, err
	}
	r := kafka.NewReader(kafka.ReaderConfig{
		Brokers:   cc.Brokers,
		Topic:     topic,
		Partition: partition,
		Dialer:    d,
		MinBytes:  1,
		MaxBytes:  16 << 20,
		// kafka-go asks the broker to hold a fetch at the end of the log
		// for MaxWait less a second, and gives up reading at MaxWait: a
		// short MaxWait makes idle fetches end in i/o timeouts, a long one
		// makes Close wait for the held fetch.
		MaxWait:         2 * time.Second,
		QueueCapacity:   256,
		ReadLagInterval: -1,
		ReadBackoffMin:  50 * time.Millisecond,
		ReadBackoffMax:  time.Second,
		ErrorLogger: kafka.LoggerFunc(func(format string, args ...any) {
			logger.Warn(fmt.Sprintf(format, args...), "topic", topic, "partition", partition)
		}),
	})
	if err := r.SetOffset(offset); err != nil {
		r.Close()
		return nil, fmt.Errorf("reading %s partition %d from offset %d: %w", topic, partition, offset, err)
	}
	return r, nil
}

// offsetRange is the messages of one partition of a topic from offset
// from up to (not including) offset to.
type offsetRange struct {
	topic     string
	partition int
	from, to  int64
}

// scanPartition calls fn with each message of r, with one fetch request
// after another (no reader prefetching past the end). fn gets Key, Value,
// Headers, Offset, Topic and Partition.
func scanPartition(ctx context.Context, c *kafka.Client, r offsetRange, fn func(kafka.Message) error) error {
	topic, partition, to := r.topic, r.partition, r.to
	for at := r.from; at < to; {
		resp, err := c.Fetch(ctx, &kafka.FetchRequest{Topic: topic, Partition: partition, Offset: at, MinBytes: 1, MaxBytes: 16 << 20, MaxWait: time.Second})
		if err == nil {
			err = resp.Error
		}
		if err != nil {
			return fmt.Errorf("reading %s partition %d at offset %d: %w", topic, partition, at, err)
		}
		next := at
		for {
			rec, err := resp.Records.ReadRecord()
			if errors.Is(err, io.EOF) {
				break
			}
			if err != nil {
				resp.Records = nil
				return fmt.Errorf("reading %s partition %d at offset %d: %w", topic, partition, next, err)
			}
			if rec.Offset < at || rec.Offset >= to {
				continue // a record batch starts before what was asked for
			}
			m := kafka.Message{Topic: topic, Partition: partition, Offset: rec.Offset, Headers: rec.Headers, HighWaterMark: resp.HighWatermark}
			if m.Key, err = kafka.ReadAll(rec.Key); err == nil {
				m.Value, err = kafka.ReadAll(rec.Value)
			}
			if err != nil {
				return fmt.Errorf("reading %s partition %d at offset %d: %w", topic, partition, rec.Offset, err)
			}
			if err := fn(m); err != nil {
				return err
			}
			next = rec.Offset + 1
		}
		if next == at {
			return fmt.Errorf("reading %s partition %d: nothing at offset %d, the partition ends at %d", topic, partition, at, to)
		}
		at = next
	}
	return nil
}

// manifestMessage is the manifest message of a dataset: key the dataset,
// value the manifest (JSON, as manifest.json) restricted to its splits.
func manifestMessage(dataset string, m *shards.Manifest) (kafka.Message, error) {
	value, err := json.Marshal(m)
	if err != nil {
		return kafka.Message{}, fmt.Errorf("encoding the manifest of %s: %w", dataset, err)
	}
	return kafka.Message{
		Key:   []byte(dataset),
		Value: value,
		Headers: []kafka.Header{
			{Key: HeaderSchemaVersion, Value: []byte(strconv.Itoa(m.SchemaVersion))},
		},
	}, nil
}

// datasetManifest is the part of m that concerns one dataset (corpus).
func datasetManifest(m *shards.Manifest, dataset string) *shards.Manifest {
	d := *m
	d.Files = nil
	d.Splits = map[string]shards.SplitInfo{}
	for _, f := range m.Files {
		if f.Corpus == dataset {
			d.Files = append(d.Files, f)
		}
	}
	for k, s := range m.Splits {
		if s.Corpus == dataset {
			d.Splits[k] = s
		}
	}
	// Artifacts (vocabulary, topic model) are shared by the datasets.
	d.Rejects = nil
	return &d
}

// readManifest returns the latest manifest of a dataset on the manifests
// topic, or nil when none was published. It checks it (see
// Manifest.Validate).
func readManifest(ctx context.Context, c *kafka.Client, prefix, dataset string) (*shards.Manifest, error) {
	topic := ManifestTopic(prefix)
	var latest []byte
	_, err := scanTopic(ctx, c, topic, func(m kafka.Message) error {
		if string(m.Key) == dataset {
			latest = m.Value
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	if latest == nil {
		return nil, nil
	}
	var m shards.Manifest
	if err := json.Unmarshal(latest, &m); err != nil {
		return nil, fmt.Errorf("reading the manifest of %s from %s: %w", dataset, topic, err)
	}
	if err := m.Validate(); err != nil {
		return nil, fmt.Errorf("reading the manifest of %s from %s: %w", dataset, topic, err)
	}
	return &m, nil
}

// scanTopic calls fn with every message a topic holds now, partition by
// partition; exists is false when there is no such topic.
func scanTopic(ctx context.Context, c *kafka.Client, topic string, fn func(kafka.Message) error) (exists bool, err error) {
	have, err := describeTopics(ctx, c, []string{topic})
	if err != nil {
		return false, err
	}
	t, ok := have[topic]
	if !ok {
		return false, nil
	}
	first, end, err := partitionOffsets(ctx, c, topic, t.partitions)
	if err != nil {
		return true, err
	}
	for p := range t.partitions {
		if err := scanPartition(ctx, c, offsetRange{topic, p, first[p], end[p]}, fn); err != nil {
			return true, err
		}
	}
	return true, nil
}
