package stream_test

import (
	"bytes"
	"context"
	"strings"
	"testing"
	"time"

	"github.com/segmentio/kafka-go"

	"github.com/parastream/parastream/stream"
)

// TestBrokerStats: a broker counts the messages produced to it, their
// bytes, the connections and fetches, and says so in one line.
func TestBrokerStats(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	b, err := stream.StartBroker(ctx, stream.BrokerConfig{Listen: "127.0.0.1:0", AutoCreateTopics: true, Logger: testLogger(t)})
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	if s := b.Stats(); s.MessagesProduced != 0 || s.Connections != 0 || len(s.Topics) != 0 {
		t.Fatalf("a new broker's stats: %+v, want none served", s)
	}
	const n, size = 250, 1000
	msgs := make([]kafka.Message, n)
	for i := range msgs {
		msgs[i] = kafka.Message{Value: bytes.Repeat([]byte{byte(i)}, size)}
	}
	w := &kafka.Writer{Addr: kafka.TCP(b.Addr()), Topic: "stats", AllowAutoTopicCreation: true, BatchSize: 100,
		BatchTimeout: time.Millisecond, RequiredAcks: kafka.RequireAll, Transport: newTransport(t)}
	if err := w.WriteMessages(ctx, msgs...); err != nil {
		t.Fatal(err)
	}
	w.Close()
	got, read, err := stream.ReadMessages(ctx, stream.ClientConfig{Brokers: []string{b.Addr()}}, "stats", stream.DefaultPartitions)
	if err != nil || got != n {
		t.Fatalf("read back %d messages (%v), want %d", got, err, n)
	}
	// The broker counts a response's bytes once its write returns, which
	// may be after the client has read them: wait for the count a moment.
	s := b.Stats()
	for deadline := time.Now().Add(5 * time.Second); s.BytesOut < read && time.Now().Before(deadline); s = b.Stats() {
		time.Sleep(time.Millisecond)
	}
	t.Log(s)
	if s.MessagesProduced != n {
		t.Errorf("messages produced %d, want %d", s.MessagesProduced, n)
	}
	if s.BytesProduced < n*size || s.BytesProduced > 2*n*size {
		t.Errorf("bytes produced %d, want about %d", s.BytesProduced, n*size)
	}
	if s.BytesOut < read || s.BytesIn < s.BytesProduced {
		t.Errorf("sent %d bytes (read %d), received %d (produced %d)", s.BytesOut, read, s.BytesIn, s.BytesProduced)
	}
	if s.Connections < 2 || s.FetchRequests < 1 || len(s.Topics) != 1 || s.Topics[0] != "stats" {
		t.Errorf("stats %+v: want 2 or more connections, fetches, topic stats", s)
	}
	if line := s.String(); !strings.Contains(line, "produced 250 messages") || !strings.Contains(line, "topics stats") {
		t.Errorf("summary %q", line)
	}
}
