package stream_test

import (
	"context"
	"testing"

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
	sums, err := stream.Publish(ctx, root, publishConfig(t, b))
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
	sums, err = stream.Publish(ctx, root, publishConfig(t, b))
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range sums {
		if s.Published != 0 || s.Skipped != s.Rows {
			t.Errorf("second run: %+v, want every row skipped", s)
		}
	}
}
