package demo

import (
	"cmp"
	"context"
	"fmt"
	"time"

	"github.com/parastream/parastream/stream"
	"github.com/parastream/parastream/trainstep"
)

// trainFor bounds the demo's training.
const trainFor = 5 * time.Second

// TrainStream starts the embedded broker, publishes the featurized
// demo dataset with the most training rows, and trains on it (Train).
func (cfg Config) TrainStream(ctx context.Context, featurized, out string) error {
	b, dataset, err := publishLargest(ctx, featurized)
	if err != nil {
		return err
	}
	defer b.Close()
	return cfg.Train(ctx, b.Addr(), dataset, out)
}

// publishLargest starts the embedded broker (in memory, on a free port)
// and publishes to it the featurized dataset with the most training rows;
// the caller closes the broker.
func publishLargest(ctx context.Context, featurized string) (*stream.Broker, string, error) {
	dataset, err := largestTrainSplit(featurized)
	if err != nil {
		return nil, "", err
	}
	b, err := stream.StartBroker(ctx, stream.BrokerConfig{Listen: "127.0.0.1:0"})
	if err != nil {
		return nil, "", err
	}
	cc := stream.ClientConfig{Brokers: []string{b.Addr()}}
	if _, err := stream.Publish(ctx, featurized, stream.PublishConfig{Client: cc, Datasets: []string{dataset}}); err != nil {
		b.Close()
		return nil, "", err
	}
	return b, dataset, nil
}

// Train trains a small avg model for a few seconds on a published
// dataset, given only the broker's address (the vocabulary comes from the
// artifacts topic), and writes its checkpoints under out.
func (cfg Config) Train(ctx context.Context, brokerAddr, dataset string, out string) error {
	fmt.Fprintf(cfg.Stdout, "\nparastream demo: training a small avg model on %s from the broker at %s for up to %s, checkpoints in %s\n\n",
		dataset, brokerAddr, trainFor, out)
	last, err := cfg.trainModel(ctx, trainJob{cc: stream.ClientConfig{Brokers: []string{brokerAddr}}, dataset: dataset,
		demo: modelDemo{model: trainstep.Config{Encoder: "avg", Dim: 50, LR: 0.01}}, duration: trainFor, out: out})
	if err != nil {
		return err
	}
	fmt.Fprintf(cfg.Stdout, "embed sentences with it: echo 'how do i learn go' | %s embed --checkpoint %s\n", cmp.Or(cfg.Self, "parastream"), last)
	return nil
}
