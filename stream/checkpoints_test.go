package stream_test

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/segmentio/kafka-go"

	"github.com/parastream/parastream/stream"
)

func checkpointEvent(run string, step int64) stream.CheckpointEvent {
	return stream.CheckpointEvent{
		Run: run, Model: "wordavg", Dataset: "sts", Step: step, Epoch: 1,
		Dir: fmt.Sprintf("/ckpt/%s/step-%d", run, step), Time: time.Unix(1700000000+step, 0).UTC(),
	}
}

// watchUntil watches with group until it has seen n events (then stops it)
// and returns them; fail, when set, is called with each event and its
// error returned to the watcher.
func watchUntil(t *testing.T, cc stream.ClientConfig, group string, n int, fail func(stream.CheckpointEvent) error) ([]stream.CheckpointEvent, error) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	var got []stream.CheckpointEvent
	err := stream.WatchCheckpoints(ctx, cc, "t", group, testLogger(t), func(_ context.Context, ev stream.CheckpointEvent) error {
		if fail != nil {
			if err := fail(ev); err != nil {
				return err
			}
		}
		got = append(got, ev)
		if len(got) == n {
			cancel()
		}
		return nil
	})
	if ctx.Err() == context.DeadlineExceeded {
		t.Fatalf("watching: timed out with %d of %d events", len(got), n)
	}
	return got, err
}

func TestCheckpointTopic(t *testing.T) {
	if got := stream.CheckpointTopic("p"); got != "p.checkpoints" {
		t.Fatalf("CheckpointTopic(p) = %q", got)
	}
}

func TestCheckpointEventValidate(t *testing.T) {
	if err := checkpointEvent("r", 1).Validate(); err != nil {
		t.Fatal(err)
	}
	for _, ev := range []stream.CheckpointEvent{
		{Dir: "/a"},
		{Run: "r", Dir: "relative/dir"},
		{Run: "r", Dir: "/a", Step: -1},
	} {
		if ev.Validate() == nil {
			t.Errorf("%+v: no error", ev)
		}
	}
}

// TestWatchCheckpoints announces events before and while a watcher runs,
// stops it, announces more, and checks that a second watcher of the group
// gets exactly the events the first had not finished; an event whose
// handler failed comes again.
func TestWatchCheckpoints(t *testing.T) {
	b := startBroker(t, "")
	cc := stream.ClientConfig{Brokers: []string{b.Addr()}}
	ctx := context.Background()
	if err := stream.AnnounceCheckpoint(ctx, cc, "t", stream.CheckpointEvent{Run: "r", Dir: "not/absolute"}); err == nil {
		t.Fatal("announced an event with a relative directory")
	}
	for step := int64(1); step <= 2; step++ {
		if err := stream.AnnounceCheckpoint(ctx, cc, "t", checkpointEvent("a", step)); err != nil {
			t.Fatal(err)
		}
	}
	// Events announced while the watcher runs: announce from inside the
	// handler of the first event, so that they come after it started.
	var got []stream.CheckpointEvent
	wctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	err := stream.WatchCheckpoints(wctx, cc, "t", "eval", testLogger(t), func(ctx context.Context, ev stream.CheckpointEvent) error {
		got = append(got, ev)
		if len(got) == 1 {
			if err := stream.AnnounceCheckpoint(ctx, cc, "t", checkpointEvent("b", 10)); err != nil {
				return err
			}
		}
		if len(got) == 3 {
			cancel()
		}
		return nil
	})
	if wctx.Err() == context.DeadlineExceeded {
		t.Fatalf("timed out with %d events", len(got))
	}
	cancel()
	if err != nil {
		t.Fatal(err)
	}
	want := []stream.CheckpointEvent{checkpointEvent("a", 1), checkpointEvent("a", 2), checkpointEvent("b", 10)}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Fatalf("first watch got %v, want %v", got, want)
	}

	// Down: two more, and a message that is not an event.
	for _, ev := range []stream.CheckpointEvent{checkpointEvent("a", 3), checkpointEvent("b", 20)} {
		if err := stream.AnnounceCheckpoint(ctx, cc, "t", ev); err != nil {
			t.Fatal(err)
		}
	}
	w := &kafka.Writer{Addr: kafka.TCP(b.Addr()), Topic: stream.CheckpointTopic("t"), RequiredAcks: kafka.RequireAll, Transport: newTransport(t)}
	if err := w.WriteMessages(ctx, kafka.Message{Key: []byte("x"), Value: []byte("not json")}); err != nil {
		t.Fatal(err)
	}
	w.Close()
	if err := stream.AnnounceCheckpoint(ctx, cc, "t", checkpointEvent("a", 4)); err != nil {
		t.Fatal(err)
	}

	// A handler failing on step 20: the watch stops with the error, and
	// step 20 comes again next time; step 3 was committed.
	boom := errors.New("boom")
	got, err = watchUntil(t, cc, "eval", 99, func(ev stream.CheckpointEvent) error {
		if ev.Step == 20 {
			return boom
		}
		return nil
	})
	if !errors.Is(err, boom) {
		t.Fatalf("watch with a failing handler: err %v", err)
	}
	if fmt.Sprint(got) != fmt.Sprint([]stream.CheckpointEvent{checkpointEvent("a", 3)}) {
		t.Fatalf("watch with a failing handler got %v", got)
	}
	got, err = watchUntil(t, cc, "eval", 2, nil)
	if err != nil {
		t.Fatal(err)
	}
	if want := []stream.CheckpointEvent{checkpointEvent("b", 20), checkpointEvent("a", 4)}; fmt.Sprint(got) != fmt.Sprint(want) {
		t.Fatalf("catching up got %v, want %v", got, want)
	}

	// Another group sees everything.
	got, err = watchUntil(t, cc, "other", 6, nil)
	if err != nil || len(got) != 6 {
		t.Fatalf("another group: %d events, err %v", len(got), err)
	}
}
