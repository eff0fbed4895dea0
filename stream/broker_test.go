package stream_test

import (
	"context"
	"log/slog"
	"os"
	"testing"
	"time"

	"github.com/segmentio/kafka-go"

	"github.com/parastream/parastream/stream"
)

// testLogger logs warnings and errors to the test's output.
func testLogger(t testing.TB) *slog.Logger {
	return slog.New(slog.NewTextHandler(tWriter{t}, &slog.HandlerOptions{Level: slog.LevelWarn}))
}

type tWriter struct{ t testing.TB }

func (w tWriter) Write(p []byte) (int, error) {
	w.t.Helper()
	w.t.Log(string(p))
	return len(p), nil
}

// startBroker starts an embedded broker on a free port, closed at the end
// of the test.
func startBroker(t testing.TB, dataDir string) *stream.Broker {
	t.Helper()
	b, err := stream.StartBroker(context.Background(), stream.BrokerConfig{Listen: "127.0.0.1:0", DataDir: dataDir, Logger: testLogger(t)})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { b.Close() })
	return b
}

// newClient is a kafka.Client with a transport of its own, closed when the
// test ends. kafka-go's shared DefaultTransport caches the topics it has
// seen, refreshing them on its first use, after its own CreateTopics or on
// a 0-6 s timer, so a client on it may not see a topic that another client
// (stream.Publish's) created: "topic not found" on a later iteration.
func newClient(t testing.TB, addr string) *kafka.Client {
	return &kafka.Client{Addr: kafka.TCP(addr), Timeout: time.Minute, Transport: newTransport(t)}
}

// newTransport is a kafka.Transport of the test's own, closed when it
// ends, for a kafka.Writer that writes to a topic another client created
// (the shared DefaultTransport would serve the writer's metadata request
// from a cache that may not have the topic yet).
func newTransport(t testing.TB) *kafka.Transport {
	tr := &kafka.Transport{}
	t.Cleanup(tr.CloseIdleConnections)
	return tr
}

func TestBrokerConfigValidate(t *testing.T) {
	for _, c := range []stream.BrokerConfig{
		{Listen: "9092"},
		{Listen: "localhost:http"},
		{Partitions: -1},
	} {
		if err := c.Validate(); err == nil {
			t.Errorf("%+v: no error", c)
		}
	}
	if err := (stream.BrokerConfig{}).Validate(); err != nil {
		t.Errorf("zero value: %v", err)
	}
}

func TestBrokerListenInUse(t *testing.T) {
	b := startBroker(t, "")
	_, err := stream.StartBroker(context.Background(), stream.BrokerConfig{Listen: b.Addr()})
	if err == nil {
		t.Fatal("a second broker started on the same address")
	}
	t.Log(err)
}

func TestBrokerDataDirIsAFile(t *testing.T) {
	f := t.TempDir() + "/file"
	if err := os.WriteFile(f, []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := stream.StartBroker(context.Background(), stream.BrokerConfig{Listen: "127.0.0.1:0", DataDir: f}); err == nil {
		t.Fatal("a broker started with a file as its data directory")
	}
}
