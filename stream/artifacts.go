package stream

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/segmentio/kafka-go"

	"github.com/parastream/parastream/shards"
)

// Headers of an artifact message.
const (
	// HeaderArtifactSHA256 is the sha256 of the whole file, hex.
	HeaderArtifactSHA256 = "parastream.artifact.sha256"
	// HeaderArtifactChunk is "i/n": the message holds chunk i (from 0) of
	// the n the file was cut into.
	HeaderArtifactChunk = "parastream.artifact.chunk"
)

// ArtifactTopic is the compacted topic of the datasets' model files (the
// vocabulary, the featurize record, the topic model): "<prefix>.artifacts".
// A file is keyed "<dataset>/<path>" (path as the manifest names it); a
// file larger than a message is cut into chunks, chunk i > 0 keyed
// "<dataset>/<path>#i", so that compaction keeps every chunk.
func ArtifactTopic(prefix string) string { return prefix + ".artifacts" }

func artifactKey(dataset, path string, chunk int) string {
	k := dataset + "/" + path
	if chunk > 0 {
		k += "#" + strconv.Itoa(chunk)
	}
	return k
}

// ModelArtifacts are the artifacts of m that a trainer needs and that
// travel on the artifacts topic: the vocabulary, the featurize record and
// the topic model, those m lists.
func ModelArtifacts(m *shards.Manifest) []shards.Artifact {
	var out []shards.Artifact
	for _, a := range []*shards.Artifact{m.Vocabulary, m.Featurize, m.Topics} {
		if a != nil {
			out = append(out, *a)
		}
	}
	return out
}

// artifactChunk is an artifact message as read back.
type artifactChunk struct {
	sha      string
	index, n int
	value    []byte
}

func parseArtifactChunk(m kafka.Message) (artifactChunk, error) {
	var c artifactChunk
	var chunk string
	for _, h := range m.Headers {
		switch h.Key {
		case HeaderArtifactSHA256:
			c.sha = string(h.Value)
		case HeaderArtifactChunk:
			chunk = string(h.Value)
		}
	}
	i, n, ok := strings.Cut(chunk, "/")
	var err1, err2 error
	c.index, err1 = strconv.Atoi(i)
	c.n, err2 = strconv.Atoi(n)
	if c.sha == "" || !ok || err1 != nil || err2 != nil || c.n < 1 || c.index < 0 || c.index >= c.n {
		return c, fmt.Errorf("%w: artifact message %s at offset %d: sha256 %q, chunk %q", ErrHeader, m.Key, m.Offset, c.sha, chunk)
	}
	c.value = m.Value
	return c, nil
}

// scanArtifacts returns the latest message of every key of the artifacts
// topic that keep accepts, or nil when the topic does not exist.
func scanArtifacts(ctx context.Context, c *kafka.Client, prefix string, keep func(key string) bool) (map[string]artifactChunk, error) {
	latest := map[string]artifactChunk{}
	exists, err := scanTopic(ctx, c, ArtifactTopic(prefix), func(m kafka.Message) error {
		if !keep(string(m.Key)) {
			return nil
		}
		ch, err := parseArtifactChunk(m)
		if err != nil {
			return err
		}
		latest[string(m.Key)] = ch
		return nil
	})
	if err != nil || !exists {
		return nil, err
	}
	return latest, nil
}

// assemble puts the chunks of one artifact back together from latest, or
// says what is missing.
func assemble(latest map[string]artifactChunk, dataset string, a shards.Artifact) ([]byte, error) {
	first, ok := latest[artifactKey(dataset, a.Path, 0)]
	if !ok {
		return nil, fmt.Errorf("%w: %s of %s is not on the artifacts topic (publish the dataset again with this version)", ErrArtifact, a.Path, dataset)
	}
	if first.sha != a.SHA256 {
		return nil, fmt.Errorf("%w: %s of %s was published with sha256 %s, the manifest names %s", ErrArtifact, a.Path, dataset, first.sha, a.SHA256)
	}
	data := make([]byte, 0, a.Bytes)
	for i := range first.n {
		ch, ok := latest[artifactKey(dataset, a.Path, i)]
		if !ok || ch.sha != a.SHA256 || ch.n != first.n || ch.index != i {
			return nil, fmt.Errorf("%w: chunk %d of %d of %s of %s is missing (publish the dataset again)", ErrArtifact, i, first.n, a.Path, dataset)
		}
		data = append(data, ch.value...)
	}
	sum := sha256.Sum256(data)
	if got := hex.EncodeToString(sum[:]); got != a.SHA256 || int64(len(data)) != a.Bytes {
		return nil, fmt.Errorf("%w: %s of %s read back as %d bytes with sha256 %s, the manifest says %d bytes, %s", ErrChecksum, a.Path, dataset, len(data), got, a.Bytes, a.SHA256)
	}
	return data, nil
}

// publishArtifacts publishes the model artifacts of a dataset's manifest
// (ModelArtifacts) from the publisher's root to the artifacts topic, in
// chunks under its max.message.bytes, skipping those the topic already
// holds whole.
func (p *publisher) publishArtifacts(ctx context.Context, dataset string, m *shards.Manifest) error {
	c, w, prefix, replication, root, log := p.client, p.one, p.cfg.Prefix, p.cfg.Replication, p.root, p.log
	arts := ModelArtifacts(m)
	if len(arts) == 0 {
		return nil
	}
	topic := ArtifactTopic(prefix)
	topics, err := ensureTopics(ctx, c, []topicSpec{{name: topic, partitions: 1, replication: replication,
		configs: map[string]string{"cleanup.policy": "compact", "retention.ms": "-1"}}}, nil, log)
	if err != nil {
		return err
	}
	latest, err := scanArtifacts(ctx, c, prefix, func(key string) bool { return strings.HasPrefix(key, dataset+"/") })
	if err != nil {
		return err
	}
	limit := topics[topic].maxMessageBytes()
	w.BatchBytes = int64(limit)
	for _, a := range arts {
		if _, err := assemble(latest, dataset, a); err == nil {
			log.Info("artifact already published", "topic", topic, "dataset", dataset, "path", a.Path)
			continue
		}
		data, err := os.ReadFile(filepath.Join(root, filepath.FromSlash(a.Path)))
		if err != nil {
			return fmt.Errorf("publishing artifact %s: %w", a.Path, err)
		}
		sum := sha256.Sum256(data)
		if got := hex.EncodeToString(sum[:]); got != a.SHA256 {
			return fmt.Errorf("publishing artifact %s: %w: sha256 %s, the manifest names %s", a.Path, ErrChecksum, got, a.SHA256)
		}
		// Room for the value: the limit less the record's overhead, the
		// key (with a chunk suffix) and the header values.
		size := limit - messageOverhead - len(artifactKey(dataset, a.Path, 0)) - 16 - len(a.SHA256) - 32
		if size < 1024 {
			return fmt.Errorf("%w: %s's max.message.bytes %d leaves no room for artifact chunks", ErrTopic, topic, limit)
		}
		n := max(1, (len(data)+size-1)/size)
		msgs := make([]kafka.Message, n)
		for i := range n {
			msgs[i] = kafka.Message{
				Topic: topic,
				Key:   []byte(artifactKey(dataset, a.Path, i)),
				Value: data[i*size : min(len(data), (i+1)*size)],
				Headers: []kafka.Header{
					{Key: HeaderArtifactSHA256, Value: []byte(a.SHA256)},
					{Key: HeaderArtifactChunk, Value: []byte(fmt.Sprintf("%d/%d", i, n))},
				},
			}
		}
		if err := w.WriteMessages(ctx, msgs...); err != nil {
			return describeWriteError(topic, msgs, err)
		}
		log.Info("published artifact", "topic", topic, "dataset", dataset, "path", a.Path, "bytes", len(data), "chunks", n)
	}
	return nil
}

// ReadManifest returns the manifest of a dataset as published on the
// manifests topic, checked (ErrNoManifest when there is none).
func ReadManifest(ctx context.Context, cc ClientConfig, prefix, dataset string) (*shards.Manifest, error) {
	c, err := cc.client()
	if err != nil {
		return nil, err
	}
	if prefix == "" {
		prefix = DefaultPrefix
	}
	m, err := readManifest(ctx, c, prefix, dataset)
	if err != nil {
		return nil, err
	}
	if m == nil {
		return nil, fmt.Errorf("%w: %s on %s (publish it first)", ErrNoManifest, dataset, ManifestTopic(prefix))
	}
	return m, nil
}

// ReadArtifact returns the file at path (as the dataset's manifest names
// it: "featurize/vocab.tsv") from the artifacts topic, checked against the
// size and sha256 the published manifest gives. A trainer needs nothing
// but the brokers to get the vocabulary. Errors wrap ErrNoManifest,
// ErrArtifact (not published, or published for another manifest) or
// ErrChecksum.
func ReadArtifact(ctx context.Context, cc ClientConfig, prefix, dataset, path string) ([]byte, error) {
	m, err := ReadManifest(ctx, cc, prefix, dataset)
	if err != nil {
		return nil, err
	}
	return ManifestArtifact(ctx, cc, prefix, dataset, m, path)
}

// ManifestArtifact is ReadArtifact with the dataset's manifest m as the
// caller read it (ReadManifest): the file is checked against m.
func ManifestArtifact(ctx context.Context, cc ClientConfig, prefix, dataset string, m *shards.Manifest, path string) ([]byte, error) {
	if prefix == "" {
		prefix = DefaultPrefix
	}
	var art *shards.Artifact
	var names []string
	for _, a := range ModelArtifacts(m) {
		names = append(names, a.Path)
		if a.Path == path {
			art = &a
		}
	}
	if art == nil {
		return nil, fmt.Errorf("%w: the manifest of %s lists no artifact %q (it lists %q; was the dataset featurized?)", ErrArtifact, dataset, path, names)
	}
	c, err := cc.client()
	if err != nil {
		return nil, err
	}
	key := artifactKey(dataset, path, 0)
	latest, err := scanArtifacts(ctx, c, prefix, func(k string) bool {
		return k == key || strings.HasPrefix(k, key+"#")
	})
	if err != nil {
		return nil, err
	}
	data, err := assemble(latest, dataset, *art)
	if err != nil {
		return nil, fmt.Errorf("reading %s from %s: %w", path, ArtifactTopic(prefix), err)
	}
	return data, nil
}
