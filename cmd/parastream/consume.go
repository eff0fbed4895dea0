package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"os"

	"github.com/parastream/parastream/cmd/parastream/internal/cli"
	"github.com/parastream/parastream/stream"
)

const consumeUsage = "parastream consume --brokers ADDR --dataset NAME [--split S] [--group G] [--n N] [--epochs E] [--seed S] [--shuffle-buffer N] [--start POSITION.json] [--commit] [--position-out FILE] [--quiet]"

func runConsume(ctx context.Context, e *env, args []string) error {
	fs := newFlags(e, "consume", consumeUsage)
	client := cli.ClientFlags(fs)
	prefix := fs.String("topic-prefix", stream.DefaultPrefix, "prefix of the topic names")
	dataset := fs.String("dataset", "", "dataset (corpus) to read (required)")
	split := fs.String("split", stream.DefaultSplit, "split to read")
	group := fs.String("group", "parastream-consume", "consumer group (one per training run)")
	n := fs.Int64("n", 10, "rows to print (0: all)")
	epochs := fs.Int("epochs", 1, "passes over the data (0: follow new data for ever)")
	seed := fs.Uint64("seed", 1, "shuffle seed")
	buffer := fs.Int("shuffle-buffer", 1, "rows to shuffle among (1: topic order)")
	start := fs.String("start", "", "start at the position saved in this JSON file (see --position-out)")
	commit := fs.Bool("commit", false, "commit the group's offsets at the end")
	posOut := fs.String("position-out", "", "write the final position to this JSON file")
	quiet := fs.Bool("quiet", false, "print only the counts, not the rows")
	cli.Describe(fs, e.stdout, consumeUsage, "parastream consume --brokers 127.0.0.1:9092 --dataset quora --n 5",
		cli.FlagGroup{Title: "data", Names: []string{"dataset", "split", "topic-prefix", "group", "start", "epochs", "seed", "shuffle-buffer"}},
		cli.FlagGroup{Title: "output", Names: []string{"n", "quiet", "commit", "position-out"}},
		cli.ConnectionGroup())
	if err := cli.Parse(fs, args); err != nil {
		return err
	}
	if *dataset == "" || fs.NArg() > 0 {
		return fmt.Errorf("%w: --brokers and --dataset are required, and nothing else", cli.ErrUsage)
	}
	cc, err := client()
	if err != nil {
		return err
	}
	cfg := stream.ConsumerConfig{Client: cc, Prefix: *prefix, Dataset: *dataset, Split: *split, Group: *group,
		Epochs: *epochs, Seed: *seed, ShuffleBuffer: *buffer,
		Logger: slog.New(slog.NewTextHandler(e.stderr, &slog.HandlerOptions{Level: slog.LevelWarn}))}
	if *start != "" {
		data, err := os.ReadFile(*start)
		if err != nil {
			return err
		}
		cfg.Start = new(stream.Position)
		if err := json.Unmarshal(data, cfg.Start); err != nil {
			return fmt.Errorf("reading position %s: %w", *start, err)
		}
	}
	c, err := stream.NewConsumer(ctx, cfg)
	if err != nil {
		return err
	}
	defer c.Close()
	var rows io.Writer = e.stdout
	if *quiet {
		rows = nil
	}
	if _, err := stream.DumpRows(ctx, c, rows, *n); err != nil {
		return err
	}
	pos := c.Position()
	if *posOut != "" {
		data, err := json.Marshal(pos)
		if err != nil {
			return err
		}
		if err := os.WriteFile(*posOut, data, 0o644); err != nil {
			return err
		}
	}
	if *commit {
		if err := c.Commit(ctx, pos); err != nil {
			return err
		}
	}
	s := c.Stats()
	fmt.Fprintf(e.stderr, "%s: %d rows (epoch %d, %d of it so far; manifest: %d a pass), %d duplicates dropped, %d replayed, %d bad messages, %d messages, %.1f MB, lag %d messages\n",
		c.Topic(), s.Rows, s.Epoch, s.EpochRows, c.Manifest().SplitRows(*dataset, *split), s.Duplicates, s.Replayed, s.BadMessages, s.Messages, float64(s.Bytes)/1e6, s.Lag)
	return nil
}
