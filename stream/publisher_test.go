package stream_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/segmentio/kafka-go"

	"github.com/parastream/parastream/shards"
	"github.com/parastream/parastream/stream"
)

func publishConfig(t testing.TB, b *stream.Broker) stream.PublishConfig {
	return stream.PublishConfig{Client: stream.ClientConfig{Brokers: []string{b.Addr()}}, Logger: testLogger(t)}
}

func TestPublishTwiceSkipsWhatIsThere(t *testing.T) {
	root := t.TempDir()
	writeDataset(t, root, "sts", map[string]int{"train": 5000, "test": 700}, 2000)
	b := startBroker(t, "")
	ctx := context.Background()
	cfg := publishConfig(t, b)
	cfg.BatchRows = 1000 // cuts the shards' row groups: re-encoded messages
	sums, err := stream.Publish(ctx, root, cfg)
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]stream.TopicSummary{}
	for _, s := range sums {
		got[s.Topic] = s
		t.Logf("%+v", s)
	}
	if s := got["parastream.sts.train"]; s.Rows != 5000 || s.Published != 5000 || s.Skipped != 0 || s.Messages != 5 {
		t.Errorf("train: %+v, want 5000 rows published in 5 messages (shards of 2000, 2000 and 1000 rows, 1000 rows a message)", s)
	}
	if s := got["parastream.sts.test"]; s.Published != 700 {
		t.Errorf("test: %+v", s)
	}
	sums, err = stream.Publish(ctx, root, cfg)
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range sums {
		if s.Published != 0 || s.Skipped != s.Rows {
			t.Errorf("second run: %+v, want every row skipped", s)
		}
	}
	// A run whose look at the broker (taken while the shards were
	// checked) found no topics, which another publisher then created and
	// filled: it finds them when it creates them, reads what they hold,
	// and publishes no row twice.
	sums, err = stream.PublishAfterStaleLook(ctx, root, cfg, "sts")
	if err != nil {
		t.Fatal(err)
	}
	if len(sums) != 2 {
		t.Fatalf("%d topics published after a stale look, want 2", len(sums))
	}
	for _, s := range sums {
		if s.Published != 0 || s.Skipped != s.Rows {
			t.Errorf("run after a stale look: %+v, want every row skipped", s)
		}
	}
}

// A shard that does not match its manifest fails the run before anything
// is published: no topic of the dataset is created (checked with a
// kafka-go client), and the manifest is not on the manifests topic.
func TestPublishRefusesCorruptedShard(t *testing.T) {
	root := t.TempDir()
	m := writeDataset(t, root, "sts", map[string]int{"train": 3000, "test": 500}, 1000)
	last := m.Files[len(m.Files)-1]
	path := filepath.Join(root, filepath.FromSlash(last.Path))
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, flip(b), 0o644); err != nil { // same size, other bytes
		t.Fatal(err)
	}
	br := startBroker(t, "")
	ctx := context.Background()
	_, err = stream.Publish(ctx, root, publishConfig(t, br))
	if !errors.Is(err, shards.ErrChecksum) || !strings.Contains(err.Error(), last.Path) {
		t.Fatalf("error %v, want a checksum error naming %s", err, last.Path)
	}
	meta, err := newClient(t, br.Addr()).Metadata(ctx, &kafka.MetadataRequest{})
	if err != nil {
		t.Fatal(err)
	}
	for _, tp := range meta.Topics {
		if strings.HasPrefix(tp.Name, "parastream.") {
			t.Errorf("topic %s exists after a publish that failed its checks", tp.Name)
		}
	}
	// Mended, the shard publishes whole.
	os.WriteFile(path, flip(b), 0o644)
	sums, err := stream.Publish(ctx, root, publishConfig(t, br))
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range sums {
		if s.Skipped != 0 || s.Published != s.Rows {
			t.Errorf("second run: %+v, want every row published", s)
		}
	}
	if len(sums) != 2 {
		t.Errorf("%d topics published, want 2", len(sums))
	}
}

func flip(b []byte) []byte {
	b[len(b)/2] ^= 0xff
	return b
}
