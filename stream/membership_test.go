package stream_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/parastream/parastream/stream"
)

// TestJoinGroup holds a group's membership on the embedded broker: a
// second member fails at once naming the holder, another group is
// independent, a holder that has ended is removed when Gone says so, and
// a member that closed leaves the group to the next at once. (Two
// joining at the same instant are not tested: see docs/trainstep.md.)
func TestJoinGroup(t *testing.T) {
	b, err := stream.StartBroker(context.Background(), stream.BrokerConfig{Listen: "127.0.0.1:0", Logger: testLogger(t)})
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	ctx := context.Background()
	cfg := func(group, holder string) stream.MemberConfig {
		return stream.MemberConfig{Client: stream.ClientConfig{Brokers: []string{b.Addr()}}, Group: group, Topics: []string{"t"},
			Holder: holder, Session: 6 * time.Second, Logger: testLogger(t)}
	}
	one, err := stream.JoinGroup(ctx, cfg("run", "trainer one"))
	if err != nil {
		t.Fatal(err)
	}
	_, err = stream.JoinGroup(ctx, cfg("run", "trainer two"))
	if !errors.Is(err, stream.ErrGroupHeld) || !strings.Contains(err.Error(), "(trainer one)") || !strings.Contains(err.Error(), "6s") {
		t.Errorf("a second member: %v; want ErrGroupHeld naming trainer one and the session", err)
	}
	other, err := stream.JoinGroup(ctx, cfg("other", "trainer three"))
	if err != nil {
		t.Fatalf("another group: %v", err)
	}
	other.Close()
	// A holder known to have ended is removed.
	gone := cfg("run", "trainer four")
	gone.Gone = func(holder string) bool { return holder == "trainer one" }
	four, err := stream.JoinGroup(ctx, gone)
	if err != nil {
		t.Fatalf("taking over from a holder that has ended: %v", err)
	}
	one.Close()
	four.Close()
	// Joined at once after the holder closed.
	five, err := stream.JoinGroup(ctx, cfg("run", "trainer five"))
	if err != nil {
		t.Fatalf("joining after the holder closed: %v", err)
	}
	five.Close()
}
