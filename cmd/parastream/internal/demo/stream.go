package demo

import (
	"context"
	"errors"
	"fmt"
	"io"
	"maps"
	"slices"

	"github.com/parastream/parastream/shards"
	"github.com/parastream/parastream/stream"
)

// Stream starts the embedded broker (in memory, on a free port),
// publishes the shards under shardsDir, reads every split back with a
// consumer and prints the counts. A split read back with another row count
// than the manifest's is an error.
func Stream(ctx context.Context, w io.Writer, shardsDir string) error {
	b, err := stream.StartBroker(ctx, stream.BrokerConfig{Listen: "127.0.0.1:0"})
	if err != nil {
		return err
	}
	defer b.Close()
	fmt.Fprintf(w, "\nparastream demo: publishing %s to the embedded broker at %s and reading it back\n\n", shardsDir, b.Addr())
	cc := stream.ClientConfig{Brokers: []string{b.Addr()}}
	sums, err := stream.Publish(ctx, shardsDir, stream.PublishConfig{Client: cc})
	if err != nil {
		return err
	}
	published := map[string]stream.TopicSummary{}
	for _, s := range sums {
		published[s.Topic] = s
	}
	m, err := shards.ReadManifest(shardsDir)
	if err != nil {
		return err
	}
	var total int64
	for _, key := range slices.Sorted(maps.Keys(m.Splits)) {
		split := m.Splits[key]
		c, err := stream.NewConsumer(ctx, stream.ConsumerConfig{Client: cc, Dataset: split.Corpus, Split: split.Split,
			Group: "parastream-demo", Epochs: 1, ShuffleBuffer: 1})
		if err != nil {
			return err
		}
		var n int64
		for {
			if _, err = c.Next(ctx); err != nil {
				break
			}
			n++
		}
		s := c.Stats()
		c.Close()
		if !errors.Is(err, io.EOF) {
			return err
		}
		p := published[c.Topic()]
		fmt.Fprintf(w, "%-32s %6d rows published in %4d messages (%7.1f kB), %6d read back, %d duplicates, %d bad messages\n",
			c.Topic(), p.Published, p.Messages, float64(p.Bytes)/1e3, n, s.Duplicates, s.BadMessages)
		if n != split.Rows {
			return fmt.Errorf("%s: read back %d rows, the manifest says %d", c.Topic(), n, split.Rows)
		}
		total += n
	}
	fmt.Fprintf(w, "\n%d topics, %d rows published and read back\n", len(m.Splits), total)
	return nil
}
