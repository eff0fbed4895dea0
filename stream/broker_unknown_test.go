package stream_test

import (
	"bytes"
	"context"
	"log/slog"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/segmentio/kafka-go"

	"github.com/parastream/parastream/stream"
)

// syncBuffer is a bytes.Buffer safe for the broker's goroutines.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// TestBrokerUnknownTopic: a producer writing to a topic that does not
// exist is refused and the broker logs it, naming the topic; with
// AutoCreateTopics the topic is created and the write succeeds.
func TestBrokerUnknownTopic(t *testing.T) {
	for _, auto := range []bool{false, true} {
		var log syncBuffer
		b, err := stream.StartBroker(context.Background(), stream.BrokerConfig{Listen: "127.0.0.1:0", AutoCreateTopics: auto,
			Logger: slog.New(slog.NewTextHandler(&log, &slog.HandlerOptions{Level: slog.LevelWarn}))})
		if err != nil {
			t.Fatal(err)
		}
		w := &kafka.Writer{Addr: kafka.TCP(b.Addr()), Topic: "nosuch", AllowAutoTopicCreation: true, MaxAttempts: 2, BatchTimeout: time.Millisecond}
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		err = w.WriteMessages(ctx, kafka.Message{Value: []byte("x")})
		cancel()
		w.Close()
		logged := false
		for i := 0; i < 100 && !logged; i++ { // the check runs off the broker's loop
			logged = strings.Contains(log.String(), "refused to create a topic") && strings.Contains(log.String(), "topic=nosuch")
			if !logged && !auto {
				time.Sleep(20 * time.Millisecond)
			}
		}
		b.Close()
		if auto && (err != nil || logged) {
			t.Errorf("with AutoCreateTopics: write %v, logged %v:\n%s", err, logged, log.String())
		}
		if !auto && (err == nil || !logged) {
			t.Errorf("without AutoCreateTopics: write %v, logged %v; want refused and logged:\n%s", err, logged, log.String())
		}
	}
}
