package main

import (
	"context"
	"fmt"
	"log/slog"
	"strings"

	"github.com/parastream/parastream/cmd/parastream/internal/cli"
	"github.com/parastream/parastream/cmd/parastream/internal/report"
	"github.com/parastream/parastream/shards"
	"github.com/parastream/parastream/stream"
)

const publishUsage = "parastream publish --shards DIR --brokers ADDR [--topic-prefix P] [--dataset NAME,...] [--partitions N] [--replication N] [--retention D] [--batch-rows N] [TLS and SASL flags]"

func runPublish(ctx context.Context, e *env, args []string) error {
	fs := newFlags(e, "publish", publishUsage)
	shardsDir := fs.String("shards", "", "directory of the shards and their manifest.json, or s3://bucket/prefix (required)")
	client := cli.ClientFlags(fs)
	prefix := fs.String("topic-prefix", stream.DefaultPrefix, "prefix of the topic names: <prefix>.<dataset>.<split>, <prefix>.manifests")
	datasets := fs.String("dataset", "", "datasets (corpora) to publish, comma-separated (default: all in the manifest)")
	partitions := fs.Int("partitions", stream.DefaultPartitions, "partitions of the row topics created")
	replication := fs.Int("replication", stream.DefaultReplication, "replication factor of the topics created, and the least an existing one must have")
	retention := fs.Duration("retention", 0, "retention of the row topics created (0: for ever)")
	batchRows := fs.Int("batch-rows", stream.DefaultBatchRows, "most rows in one message")
	maxBytes := fs.Int("max-message-bytes", 0, "bound messages below the topic's max.message.bytes")
	quiet := fs.Bool("quiet", false, "no progress lines")
	cli.Describe(fs, e.stdout, publishUsage, "parastream publish --shards out/shards --brokers 127.0.0.1:9092 --dataset quora",
		cli.FlagGroup{Title: "input", Names: []string{"shards", "dataset"}},
		cli.FlagGroup{Title: "topics", Names: []string{"topic-prefix", "partitions", "replication", "retention", "batch-rows", "max-message-bytes"}},
		cli.ConnectionGroup(),
		cli.FlagGroup{Title: "run", Names: []string{"quiet"}})
	if err := cli.Parse(fs, args); err != nil {
		return err
	}
	if *shardsDir == "" || fs.NArg() > 0 {
		return fmt.Errorf("%w: --shards and --brokers are required, and nothing else", cli.ErrUsage)
	}
	cc, err := client()
	if err != nil {
		return err
	}
	cfg := stream.PublishConfig{
		Client: cc, Prefix: *prefix, Partitions: *partitions, Replication: *replication, Retention: *retention,
		BatchRows: *batchRows, MaxMessageBytes: *maxBytes,
		Logger: slog.New(slog.NewTextHandler(e.stderr, &slog.HandlerOptions{Level: slog.LevelWarn})),
	}
	if *datasets != "" {
		cfg.Datasets = strings.Split(*datasets, ",")
	}
	if !*quiet {
		cfg.Progress = report.PublishProgress(e.stderr)
	}
	if err := cfg.Validate(); err != nil {
		return fmt.Errorf("%w: %v", cli.ErrUsage, err)
	}
	dir, done, err := shards.LocalCopy(ctx, *shardsDir)
	if err != nil {
		return fmt.Errorf("--shards: %w", err)
	}
	defer done()
	sums, err := stream.Publish(ctx, dir, cfg)
	for _, s := range sums {
		rate := float64(s.Published) / max(s.Elapsed.Seconds(), 1e-9)
		fmt.Fprintf(e.stdout, "%s: %d rows, %d published, %d already there; %d messages, %.1f MB (largest %d bytes); %.0f rows/s\n",
			s.Topic, s.Rows, s.Published, s.Skipped, s.Messages, float64(s.Bytes)/1e6, s.LargestMessage, rate)
	}
	return err
}
