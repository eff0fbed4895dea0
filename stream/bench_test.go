package stream_test

import (
	"bytes"
	"cmp"
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/segmentio/kafka-go"

	"github.com/parastream/parastream/shards"
	"github.com/parastream/parastream/stream"
)

// BenchmarkStreamVsKcat measures publishing and consuming on the embedded
// broker beside Debian's kcat (librdkafka) producing and consuming the
// same bytes on the same broker:
//
//   - publish: stream.Publish of a featurized split (200,000 rows in 16
//     shards written with the shards writer's defaults), from the shard
//     files to acknowledged messages, with BatchRows at
//     shards.DefaultRowGroupRows (the default): every row group is copied
//     into a message (no decoding), read from the shard and written;
//   - publish-reencode: the same with BatchRows 1000, below the row
//     groups' rows: every row decoded and encoded again;
//   - publish-wire: the publisher's kafka.Writer alone, writing the
//     messages Publish made (read back from its topic);
//   - kcat-produce: kcat -P sending those very keys and values (and the one
//     header whose value all messages share; kcat cannot vary headers per
//     message) to a topic of as many partitions, acks=all, with the same
//     murmur2 partitioner, so each partition gets the same messages;
//   - consume: one stream.Consumer epoch: rows decoded and handed out
//     through the default shuffle buffer;
//   - consume-train: the same with the columns the trainer asks for
//     (ConsumerConfig.Columns);
//   - consume-wire: the consumer's fetch path alone (its pumps), messages
//     not decoded;
//   - kcat-consume: kcat -C -e -o beginning with its defaults, and
//     kcat-consume-nowait with fetch.wait.max.ms=10: librdkafka's default
//     500 ms wait for more data is most of its time at the end of a topic.
//
// Rates count the message values' bytes (MB = 10^6 bytes) and the rows
// they carry; the ratios are ours over kcat's. kcat's times include
// starting the process. Each iteration uses fresh topics on the one broker.
func BenchmarkStreamVsKcat(b *testing.B) {
	kcat, err := exec.LookPath("kcat")
	if err != nil {
		b.Skip("kcat is not in PATH (apt-get install kcat): skipping the comparison with librdkafka")
	}
	const rows, shardRows = 200_000, 12_500
	root := b.TempDir()
	w, err := shards.NewWriter(root, "bench", "train", shards.WriterOptions{MaxRows: shardRows})
	if err != nil {
		b.Fatal(err)
	}
	if err := w.Write(genRows("bench", "train", splitSeed("train"), rows)...); err != nil {
		b.Fatal(err)
	}
	infos, err := w.Close()
	if err != nil {
		b.Fatal(err)
	}
	m := shards.NewManifest([]string{"stream.bench"})
	m.AddSplit("bench", "train", infos...)
	if err := shards.WriteManifest(root, m); err != nil {
		b.Fatal(err)
	}
	br := startBroker(b, "")
	ctx := context.Background()
	cc := stream.ClientConfig{Brokers: []string{br.Addr()}}

	var pub, pubRe, pubWire, kprod, cons, consTrain, consWire, kcons, kconsNoWait time.Duration
	var messages int
	var valueBytes int64
	timed := func(d *time.Duration, f func()) {
		b.StartTimer()
		start := time.Now()
		f()
		*d += time.Since(start)
		b.StopTimer()
	}
	kcatConsume := func(topic string, extra ...string) {
		out := runKcat(b, kcat, append([]string{"-C", "-b", br.Addr(), "-t", topic, "-o", "beginning", "-e", "-q", "-f", "%S\n"}, extra...)...)
		n, size, err := countSizes(out)
		if err != nil {
			b.Fatal(err)
		}
		if n != messages || size != valueBytes {
			b.Fatalf("kcat consumed %d messages of %d bytes, want %d of %d", n, size, messages, valueBytes)
		}
	}
	b.StopTimer()
	// One untimed publish first, as a warm-up of the broker's and the
	// client's connections and of the page cache (kcat starts cold each
	// time, but a process start is part of what it is measured with).
	if _, err := stream.Publish(ctx, root, stream.PublishConfig{Client: cc, Prefix: "warmup", Logger: testLogger(b)}); err != nil {
		b.Fatal(err)
	}
	runtime.GC()
	b.ResetTimer()
	for i := range b.N {
		prefix := fmt.Sprintf("bench%d", i)
		topic := stream.RowTopic(prefix, "bench", "train")

		var sums []stream.TopicSummary
		timed(&pub, func() {
			sums, err = stream.Publish(ctx, root, stream.PublishConfig{Client: cc, Prefix: prefix, Logger: testLogger(b)})
		})
		if err != nil {
			b.Fatal(err)
		}
		if len(sums) != 1 || sums[0].Published != rows {
			b.Fatalf("published %+v, want %d rows in one topic", sums, rows)
		}
		var resums []stream.TopicSummary
		timed(&pubRe, func() {
			resums, err = stream.Publish(ctx, root, stream.PublishConfig{Client: cc, Prefix: prefix + "re", BatchRows: 1000, Logger: testLogger(b)})
		})
		if err != nil {
			b.Fatal(err)
		}
		if len(resums) != 1 || resums[0].Published != rows {
			b.Fatalf("published %+v, want %d rows in one topic", resums, rows)
		}
		// A client for this iteration's topics, which Publish created
		// through its own (newClient).
		client := newClient(b, br.Addr())
		msgs, err := topicMessages(ctx, client, topic, stream.DefaultPartitions)
		if err != nil {
			b.Fatal(err)
		}
		messages, valueBytes = len(msgs), 0
		for _, m := range msgs {
			valueBytes += int64(len(m.Value))
		}
		if int64(len(msgs)) != sums[0].Messages || valueBytes != sums[0].Bytes {
			b.Fatalf("the topic holds %d messages of %d bytes, Publish wrote %d of %d", len(msgs), valueBytes, sums[0].Messages, sums[0].Bytes)
		}

		wireTopic, kcatTopic := prefix+".wire", prefix+".kcat"
		for _, t := range []string{wireTopic, kcatTopic} {
			if err := createTopic(ctx, client, t, stream.DefaultPartitions); err != nil {
				b.Fatal(err)
			}
		}
		timed(&pubWire, func() { err = stream.WriteMessages(ctx, cc, wireTopic, msgs) })
		if err != nil {
			b.Fatal(err)
		}
		input := filepath.Join(b.TempDir(), "messages")
		args, err := kcatProduceInput(input, msgs)
		if err != nil {
			b.Fatal(err)
		}
		timed(&kprod, func() {
			runKcat(b, kcat, append([]string{"-P", "-b", br.Addr(), "-t", kcatTopic, "-l", input,
				"-X", "acks=all", "-X", "partitioner=murmur2_random", "-z", "none"}, args...)...)
		})
		for _, t := range []string{wireTopic, kcatTopic} {
			if err := sameMessages(ctx, client, t, msgs); err != nil {
				b.Fatal(err)
			}
		}

		var got int
		timed(&cons, func() {
			got, err = consumeEpoch(ctx, stream.ConsumerConfig{
				Client: cc, Prefix: prefix, Dataset: "bench", Group: prefix + "-run", Epochs: 1, Seed: 1, Logger: testLogger(b),
			})
		})
		if err != nil {
			b.Fatal(err)
		}
		if got != rows {
			b.Fatalf("the consumer handed out %d rows, want %d", got, rows)
		}
		timed(&consTrain, func() {
			got, err = consumeEpoch(ctx, stream.ConsumerConfig{
				Client: cc, Prefix: prefix, Dataset: "bench", Group: prefix + "-train", Epochs: 1, Seed: 1, Logger: testLogger(b),
				Columns: []string{"id", "label", "tokens_a", "tokens_b", "ids_a", "ids_b"},
			})
		})
		if err != nil {
			b.Fatal(err)
		}
		if got != rows {
			b.Fatalf("the consumer handed out %d rows, want %d", got, rows)
		}
		var n int
		var size int64
		timed(&consWire, func() { n, size, err = stream.ReadMessages(ctx, cc, topic, stream.DefaultPartitions) })
		if err != nil || n != messages || size != valueBytes {
			b.Fatalf("the consumer's pumps read %d messages of %d bytes (%v), want %d of %d", n, size, err, messages, valueBytes)
		}
		timed(&kcons, func() { kcatConsume(topic) })
		timed(&kconsNoWait, func() { kcatConsume(topic, "-X", "fetch.wait.max.ms=10") })
	}

	rate := func(d time.Duration) (mbs, rowss float64) {
		s := d.Seconds() / float64(b.N)
		return float64(valueBytes) / 1e6 / s, rows / s
	}
	type line struct {
		name     string
		d, kcatD time.Duration
	}
	table := []line{
		{"publish", pub, kprod},
		{"publish-reencode", pubRe, kprod},
		{"publish-wire", pubWire, kprod},
		{"consume", cons, kcons},
		{"consume/nowait", cons, kconsNoWait},
		{"consume-train", consTrain, kcons},
		{"consume-train/nowait", consTrain, kconsNoWait},
		{"consume-wire", consWire, kcons},
		{"consume-wire/nowait", consWire, kconsNoWait},
	}
	b.ReportMetric(0, "ns/op")
	report := fmt.Sprintf("%d rows, %d messages, %.1f MB of values, %d iterations\n%-20s %9s %11s %10s %12s %7s\n",
		rows, messages, float64(valueBytes)/1e6, b.N, "", "MB/s", "rows/s", "kcat MB/s", "kcat rows/s", "ratio")
	for _, l := range table {
		mbs, rs := rate(l.d)
		kmbs, krs := rate(l.kcatD)
		report += fmt.Sprintf("%-20s %9.1f %11.0f %10.1f %12.0f %7.2f\n", l.name, mbs, rs, kmbs, krs, mbs/kmbs)
		if !strings.Contains(l.name, "/") {
			b.ReportMetric(mbs, l.name+"-MB/s")
		}
		b.ReportMetric(mbs/kmbs, l.name+"/kcat")
	}
	for _, l := range []line{{"kcat-produce", kprod, 0}, {"kcat-consume", kcons, 0}, {"kcat-consume-nowait", kconsNoWait, 0}} {
		mbs, _ := rate(l.d)
		b.ReportMetric(mbs, l.name+"-MB/s")
	}
	_, pubRows := rate(pub)
	_, consRows := rate(cons)
	b.ReportMetric(pubRows, "publish-rows/s")
	b.ReportMetric(consRows, "consume-rows/s")
	b.Log(report)
}

// consumeEpoch reads one epoch and returns the rows handed out.
func consumeEpoch(ctx context.Context, cfg stream.ConsumerConfig) (int, error) {
	c, err := stream.NewConsumer(ctx, cfg)
	if err != nil {
		return 0, err
	}
	defer c.Close()
	n := 0
	for {
		_, err := c.Next(ctx)
		if errors.Is(err, io.EOF) {
			return n, nil
		}
		if err != nil {
			return n, err
		}
		n++
	}
}

func runKcat(b *testing.B, kcat string, args ...string) []byte {
	b.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, kcat, args...)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		b.Fatalf("kcat %s: %v\n%s", strings.Join(args, " "), err, stderr.String())
	}
	return out
}

// kcatProduceInput writes msgs to file as kcat -l reads them, key and
// value split by a key delimiter and messages ended by a message
// delimiter: random strings of 16 letters and digits, checked to occur in
// no key and no value, so that kcat sends exactly the bytes of each. It
// returns kcat's -D and -K arguments, and -H for the header every message
// has the same value of (kcat sends one set of headers for all messages).
func kcatProduceInput(file string, msgs []kafka.Message) (args []string, err error) {
	delim, keyDelim := randomDelimiter(), randomDelimiter()
	var buf bytes.Buffer
	for _, m := range msgs {
		if bytes.Contains(m.Value, []byte(delim)) || bytes.Contains(m.Key, []byte(delim)) ||
			bytes.Contains(m.Value, []byte(keyDelim)) || bytes.Contains(m.Key, []byte(keyDelim)) {
			return nil, errors.New("a random delimiter occurs in a message: run again")
		}
		buf.Write(m.Key)
		buf.WriteString(keyDelim)
		buf.Write(m.Value)
		buf.WriteString(delim)
	}
	if err := os.WriteFile(file, buf.Bytes(), 0o644); err != nil {
		return nil, err
	}
	return []string{"-D", delim, "-K", keyDelim, "-H", stream.HeaderSchemaVersion + "=" + strconv.Itoa(shards.SchemaVersion)}, nil
}

func randomDelimiter() string {
	return rand.Text()[:16]
}

// topicMessages reads every message of a topic, partition by partition.
func topicMessages(ctx context.Context, c *kafka.Client, topic string, partitions int) ([]kafka.Message, error) {
	var reqs []kafka.OffsetRequest
	for p := range partitions {
		reqs = append(reqs, kafka.FirstOffsetOf(p), kafka.LastOffsetOf(p))
	}
	offs, err := c.ListOffsets(ctx, &kafka.ListOffsetsRequest{Topics: map[string][]kafka.OffsetRequest{topic: reqs}})
	if err != nil {
		return nil, err
	}
	var msgs []kafka.Message
	for _, po := range offs.Topics[topic] {
		if po.Error != nil {
			return nil, po.Error
		}
		for at := po.FirstOffset; at < po.LastOffset; {
			resp, err := c.Fetch(ctx, &kafka.FetchRequest{Topic: topic, Partition: po.Partition, Offset: at, MinBytes: 1, MaxBytes: 16 << 20, MaxWait: time.Second})
			if err == nil {
				err = resp.Error
			}
			if err != nil {
				return nil, err
			}
			for {
				rec, err := resp.Records.ReadRecord()
				if errors.Is(err, io.EOF) {
					break
				}
				if err != nil {
					return nil, err
				}
				if rec.Offset < at {
					continue
				}
				m := kafka.Message{Topic: topic, Partition: po.Partition, Offset: rec.Offset, Headers: rec.Headers}
				if m.Key, err = kafka.ReadAll(rec.Key); err == nil {
					m.Value, err = kafka.ReadAll(rec.Value)
				}
				if err != nil {
					return nil, err
				}
				msgs = append(msgs, m)
				at = rec.Offset + 1
			}
		}
	}
	slices.SortStableFunc(msgs, func(a, b kafka.Message) int { return cmp.Compare(a.Partition, b.Partition) })
	return msgs, nil
}

func createTopic(ctx context.Context, c *kafka.Client, topic string, partitions int) error {
	resp, err := c.CreateTopics(ctx, &kafka.CreateTopicsRequest{Topics: []kafka.TopicConfig{{Topic: topic, NumPartitions: partitions, ReplicationFactor: 1}}})
	if err != nil {
		return err
	}
	return resp.Errors[topic]
}

// sameMessages checks that topic holds the keys and values of want, in
// the same order within each partition.
func sameMessages(ctx context.Context, c *kafka.Client, topic string, want []kafka.Message) error {
	got, err := topicMessages(ctx, c, topic, stream.DefaultPartitions)
	if err != nil {
		return err
	}
	if len(got) != len(want) {
		return fmt.Errorf("%s holds %d messages, want %d", topic, len(got), len(want))
	}
	for i := range got {
		g, w := got[i], want[i]
		if g.Partition != w.Partition || !bytes.Equal(g.Key, w.Key) || !bytes.Equal(g.Value, w.Value) {
			return fmt.Errorf("%s message %d (partition %d offset %d, key %q, %d bytes) differs from the one published (partition %d offset %d, key %q, %d bytes)",
				topic, i, g.Partition, g.Offset, g.Key, len(g.Value), w.Partition, w.Offset, w.Key, len(w.Value))
		}
	}
	return nil
}

// countSizes parses kcat's -f '%S\n' output: the messages and their bytes.
func countSizes(out []byte) (n int, size int64, err error) {
	for line := range strings.Lines(string(out)) {
		s, err := strconv.ParseInt(strings.TrimSpace(line), 10, 64)
		if err != nil {
			return 0, 0, fmt.Errorf("kcat output line %q: %w", line, err)
		}
		n++
		size += s
	}
	return n, size, nil
}
