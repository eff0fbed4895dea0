package main

import (
	"context"
	"fmt"
	"log/slog"

	"github.com/parastream/parastream/stream"
)

const brokerUsage = "parastream broker [--listen 127.0.0.1:9092] [--data-dir DIR] [--partitions N] [--sync]"

// runBroker runs the embedded broker until SIGINT or SIGTERM.
func runBroker(ctx context.Context, e *env, args []string) error {
	fs := newFlags(e, "broker", brokerUsage)
	listen := fs.String("listen", stream.DefaultListen, "address to listen on (port 0 picks a free one)")
	dataDir := fs.String("data-dir", "", "directory for the broker's log and state, reloaded on start (empty: in memory)")
	partitions := fs.Int("partitions", stream.DefaultPartitions, "partitions of topics created without a count")
	sync := fs.Bool("sync", false, "fsync every produced batch before acknowledging it")
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return fmt.Errorf("%w: unexpected argument %q", errUsage, fs.Arg(0))
	}
	cfg := stream.BrokerConfig{Listen: *listen, DataDir: *dataDir, Partitions: *partitions, SyncWrites: *sync,
		Logger: slog.New(slog.NewTextHandler(e.stderr, &slog.HandlerOptions{Level: slog.LevelWarn}))}
	if err := cfg.Validate(); err != nil {
		return fmt.Errorf("%w: %v", errUsage, err)
	}
	b, err := stream.StartBroker(ctx, cfg)
	if err != nil {
		return err
	}
	where := "in memory"
	if *dataDir != "" {
		where = "data directory " + *dataDir
	}
	fmt.Fprintf(e.stdout, "broker listening on %s (%s)\n", b.Addr(), where)
	<-ctx.Done()
	err = b.Close()
	fmt.Fprintln(e.stdout, "broker stopped")
	return err
}
