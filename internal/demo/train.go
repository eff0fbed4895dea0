package demo

import (
	"cmp"
	"context"
	"fmt"
	"log/slog"
	"maps"
	"os"
	"slices"
	"time"

	"github.com/parastream/parastream/shards"
	"github.com/parastream/parastream/stream"
	"github.com/parastream/parastream/trainstep"
)

// trainFor bounds the demo's training.
const trainFor = 5 * time.Second

// TrainStream starts the embedded broker, publishes the featurized
// demo dataset with the most training rows, and trains on it (Train).
func (cfg Config) TrainStream(ctx context.Context, featurized, out string) error {
	m, err := shards.ReadManifest(featurized)
	if err != nil {
		return err
	}
	dataset, most := "", int64(-1)
	for _, key := range slices.Sorted(maps.Keys(m.Splits)) {
		if s := m.Splits[key]; s.Split == stream.DefaultSplit && s.Rows > most {
			dataset, most = s.Corpus, s.Rows
		}
	}
	if dataset == "" {
		return fmt.Errorf("the demo shards in %s have no training split", featurized)
	}
	b, err := stream.StartBroker(ctx, stream.BrokerConfig{Listen: "127.0.0.1:0"})
	if err != nil {
		return err
	}
	defer b.Close()
	cc := stream.ClientConfig{Brokers: []string{b.Addr()}}
	if _, err := stream.Publish(ctx, featurized, stream.PublishConfig{Client: cc, Datasets: []string{dataset}}); err != nil {
		return err
	}
	return cfg.Train(ctx, b.Addr(), dataset, out)
}

// Train trains a small avg model for a few seconds on a published
// dataset, given only the broker's address (the vocabulary comes from the
// artifacts topic), and writes its checkpoints under out.
func (cfg Config) Train(ctx context.Context, brokerAddr, dataset string, out string) error {
	fmt.Fprintf(cfg.Stdout, "\nparastream demo: training a small avg model on %s from the broker at %s for up to %s, checkpoints in %s\n\n",
		dataset, brokerAddr, trainFor, out)
	cc := stream.ClientConfig{Brokers: []string{brokerAddr}}
	v, err := stream.FetchVocabulary(ctx, cc, "", dataset, false)
	if err != nil {
		return err
	}
	// The checkpoints of an earlier demo would be mistaken for this one's.
	if err := os.RemoveAll(out); err != nil {
		return err
	}
	sum, err := trainstep.Run(ctx, trainstep.RunConfig{
		Client: cc, Dataset: dataset, Run: "demo-" + dataset, Vocab: v.Words,
		Model:  trainstep.Config{Encoder: "avg", Dim: 50, BatchSize: 10, LR: 0.01, OOVBuckets: v.OOVBuckets, OOVHash: v.OOVHash},
		Epochs: 300, Duration: trainFor, CheckpointDir: out, CheckpointEvery: 200, ShuffleBuffer: 1000,
		Progress: cfg.Stdout, ProgressEvery: time.Second,
		Logger: slog.New(slog.NewTextHandler(cfg.Stderr, &slog.HandlerOptions{Level: slog.LevelWarn})),
	})
	if err != nil {
		return fmt.Errorf("training on the demo stream: %w", err)
	}
	fmt.Fprintf(cfg.Stdout, "\ntrained %d steps (%d examples, %.0f/s) in %d epochs, loss %.4f; last checkpoint %s\n",
		sum.Steps, sum.Examples, float64(sum.Examples)/sum.Elapsed.Seconds(), sum.Epoch, sum.Loss, sum.Checkpoint)
	fmt.Fprintf(cfg.Stdout, "embed sentences with it: echo 'how do i learn go' | %s embed --checkpoint %s\n", cmp.Or(cfg.Self, "parastream"), sum.Checkpoint)
	return nil
}
