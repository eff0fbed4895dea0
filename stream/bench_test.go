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

	"github.com/parastream/parastream/internal/sysmem"
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
//   - b3sum-kcat-produce (where Debian's b3sum is installed): the same
//     work as a script would do it with the fastest tools here: b3sum
//     --check of every shard's BLAKE3 (BLAKE3's Rust code, memory-mapped
//     files on every core), then kcat -P as above. Publish checks the
//     shards the same way before its first message, and does more besides
//     (the row counts, the topics, the manifest, reading the row groups
//     back from the shards), so this pair says what its check costs beside
//     the peers' and kcat-produce what the sending costs;
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
//
// A run of a stage lasts tens of milliseconds (40 MB of values), so each
// stage is repeated until its repetitions have taken half a second, and
// at least three times unless they have taken two seconds (measure), each after a GC of the garbage of what ran before, outside
// the timer, and its rate is that of the median repetition; the consumer
// and its fetch path are warmed up first, outside the timer, as publish
// is. Repeated publishes write to topics of their own, checked and then
// deleted. Each stage also reports its allocations a row
// (<stage>-allocs/row: runtime.MemStats.Mallocs over its repetitions, over
// their rows), the in-process broker's included: consume-wire's is what
// the broker and the fetch path allocate; and its CPU time a repetition
// (<stage>-cpu-ms/rep, this process's, the broker's included; for kcat's
// stages the broker's and kcat's own, -broker-cpu-ms/rep and
// -kcat-cpu-ms/rep), which says where the time went on a box whose cores
// are all busy.
func BenchmarkStreamVsKcat(b *testing.B) {
	kcat, err := exec.LookPath("kcat")
	if err != nil {
		b.Skip("kcat is not in PATH (apt-get install kcat): skipping the comparison with librdkafka")
	}
	// b3sum is optional: without it the b3sum-kcat-produce stage is left
	// out (and make bench's report says so).
	b3sum, _ := exec.LookPath("b3sum")
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
	// The shards' sums as b3sum --check reads them (the manifest's BLAKE3,
	// two spaces, the path from root).
	var sums strings.Builder
	for _, f := range infos {
		if f.BLAKE3 == "" {
			b.Fatalf("shard %s has no BLAKE3 in the manifest", f.Path)
		}
		fmt.Fprintf(&sums, "%s  %s\n", f.BLAKE3, f.Path)
	}
	sumsFile := filepath.Join(b.TempDir(), "b3sums")
	if err := os.WriteFile(sumsFile, []byte(sums.String()), 0o644); err != nil {
		b.Fatal(err)
	}
	br := startBroker(b, "")
	ctx := context.Background()
	cc := stream.ClientConfig{Brokers: []string{br.Addr()}}
	// The columns a training run decodes (trainstep's mixer asks for
	// these; a model with a topic context adds topics_a and topics_b).
	trainColumns := []string{"id", "label", "ids_a", "ids_b"}

	var pub, pubRe, pubWire, kprod, kprodChecked, cons, consTrain, consWire, kcons, kconsNoWait stage
	var messages int
	var valueBytes int64
	// kcat reads from offset 0 (every partition's first: the topics are
	// new), not from the logical offset "beginning", which takes an offset
	// query that librdkafka 2.0 sometimes defers by 500 ms when it comes
	// before the partition has joined its broker thread (kcat -d fetch:
	// "no current leader for partition: (re)starting offset query timer"):
	// in the first run of two of eight make bench reports of 2026-11-28,
	// kcat -C's median repetition waited so, and its figure fell to 75 MB/s.
	kcatConsume := func(topic string, extra ...string) func() {
		return func() {
			out := runKcat(b, kcat, append([]string{"-C", "-b", br.Addr(), "-t", topic, "-o", "0", "-e", "-q", "-f", "%S\n"}, extra...)...)
			n, size, err := countSizes(out)
			if err != nil {
				b.Fatal(err)
			}
			if n != messages || size != valueBytes {
				b.Fatalf("kcat consumed %d messages of %d bytes, want %d of %d", n, size, messages, valueBytes)
			}
		}
	}
	publish := func(prefix string, batchRows int) func() {
		return func() {
			sums, err := stream.Publish(ctx, root, stream.PublishConfig{Client: cc, Prefix: prefix, BatchRows: batchRows, Logger: testLogger(b)})
			if err != nil {
				b.Fatal(err)
			}
			if len(sums) != 1 || sums[0].Published != rows {
				b.Fatalf("published %+v, want %d rows in one topic", sums, rows)
			}
		}
	}
	consume := func(prefix, group string, columns []string) func() {
		return func() {
			got, err := consumeEpoch(ctx, stream.ConsumerConfig{
				Client: cc, Prefix: prefix, Dataset: "bench", Group: group, Epochs: 1, Seed: 1, Logger: testLogger(b), Columns: columns,
			})
			if err != nil {
				b.Fatal(err)
			}
			if got != rows {
				b.Fatalf("the consumer handed out %d rows, want %d", got, rows)
			}
		}
	}
	b.StopTimer()
	// One untimed publish first, as a warm-up of the broker's and the
	// client's connections and of the page cache (kcat starts cold each
	// time, but a process start is part of what it is measured with).
	publish("warmup", 0)()
	b.ResetTimer()
	for i := range b.N {
		prefix := fmt.Sprintf("bench%d", i)
		topic := stream.RowTopic(prefix, "bench", "train")
		// A client for this iteration's topics, which Publish creates
		// through its own (newClient).
		client := newClient(b, br.Addr())
		// The repetitions after the first publish under prefixes of their
		// own, checked and deleted: the first one's topic is read below.
		again := func(rep int, name string) string { return fmt.Sprintf("%s.%s%d", prefix, name, rep) }
		drop := func(topics ...string) {
			if err := deleteTopics(ctx, client, topics...); err != nil {
				b.Fatal(err)
			}
		}

		measure(b, &pub, func(rep int, timed func(func())) {
			if rep == 0 {
				timed(publish(prefix, 0))
				return
			}
			timed(publish(again(rep, "pub"), 0))
			drop(stream.RowTopic(again(rep, "pub"), "bench", "train"))
		})
		measure(b, &pubRe, func(rep int, timed func(func())) {
			timed(publish(again(rep, "re"), 1000))
			drop(stream.RowTopic(again(rep, "re"), "bench", "train"))
		})
		msgs, err := topicMessages(ctx, client, topic, stream.DefaultPartitions)
		if err != nil {
			b.Fatal(err)
		}
		messages, valueBytes = len(msgs), 0
		for _, m := range msgs {
			valueBytes += int64(len(m.Value))
		}
		// The same messages to topics of their own, by the publisher's
		// writer and by kcat; each topic checked to hold them.
		to := func(name string, rep int, write func(topic string)) {
			t := again(rep, name)
			if err := createTopic(ctx, client, t, stream.DefaultPartitions); err != nil {
				b.Fatal(err)
			}
			write(t)
			if err := sameMessages(ctx, client, t, msgs); err != nil {
				b.Fatal(err)
			}
			drop(t)
		}
		measure(b, &pubWire, func(rep int, timed func(func())) {
			to("wire", rep, func(t string) {
				timed(func() {
					if err := stream.WriteMessages(ctx, cc, t, msgs); err != nil {
						b.Fatal(err)
					}
				})
			})
		})
		input := filepath.Join(b.TempDir(), "messages")
		args, err := kcatProduceInput(input, msgs)
		if err != nil {
			b.Fatal(err)
		}
		kcatProduce := func(t string) {
			runKcat(b, kcat, append([]string{"-P", "-b", br.Addr(), "-t", t, "-l", input,
				"-X", "acks=all", "-X", "partitioner=murmur2_random", "-z", "none"}, args...)...)
		}
		measure(b, &kprod, func(rep int, timed func(func())) {
			to("kcat", rep, func(t string) { timed(func() { kcatProduce(t) }) })
		})
		if b3sum != "" {
			measure(b, &kprodChecked, func(rep int, timed func(func())) {
				to("checked", rep, func(t string) {
					timed(func() {
						runTool(b, root, b3sum, "--check", "--quiet", sumsFile)
						kcatProduce(t)
					})
				})
			})
		}

		readWire := func() {
			n, size, err := stream.ReadMessages(ctx, cc, topic, stream.DefaultPartitions)
			if err != nil || n != messages || size != valueBytes {
				b.Fatalf("the consumer's pumps read %d messages of %d bytes (%v), want %d of %d", n, size, err, messages, valueBytes)
			}
		}
		// Untimed warm-ups of the fetch path and of the decoder.
		readWire()
		consume(prefix, prefix+"-warmup", trainColumns)()
		measure(b, &cons, func(rep int, timed func(func())) {
			timed(consume(prefix, fmt.Sprintf("%s-run%d", prefix, rep), nil))
		})
		measure(b, &consTrain, func(rep int, timed func(func())) {
			timed(consume(prefix, fmt.Sprintf("%s-train%d", prefix, rep), trainColumns))
		})
		measure(b, &consWire, func(_ int, timed func(func())) { timed(readWire) })
		measure(b, &kcons, func(_ int, timed func(func())) { timed(kcatConsume(topic)) })
		measure(b, &kconsNoWait, func(_ int, timed func(func())) { timed(kcatConsume(topic, "-X", "fetch.wait.max.ms=10")) })
	}

	rate := func(st stage) (mbs, rowss float64) {
		s := st.median().Seconds()
		return float64(valueBytes) / 1e6 / s, rows / s
	}
	type line struct {
		name       string
		st, kcatSt stage
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
	report := fmt.Sprintf("%d rows, %d messages, %.1f MB of values, %d iterations; each figure from the median of a stage's repetitions; CPU: ms a repetition, this process's (the broker's included)\n%-20s %9s %11s %10s %12s %7s %10s %5s %6s\n",
		rows, messages, float64(valueBytes)/1e6, b.N, "", "MB/s", "rows/s", "kcat MB/s", "kcat rows/s", "ratio", "allocs/row", "reps", "CPU")
	for _, l := range table {
		mbs, rs := rate(l.st)
		kmbs, krs := rate(l.kcatSt)
		perRow := float64(l.st.mallocs) / float64(len(l.st.times)*rows)
		report += fmt.Sprintf("%-20s %9.1f %11.0f %10.1f %12.0f %7.2f %10.2f %5d %6.1f\n", l.name, mbs, rs, kmbs, krs, mbs/kmbs, perRow, len(l.st.times), l.st.cpuMs())
		if !strings.Contains(l.name, "/") {
			b.ReportMetric(mbs, l.name+"-MB/s")
			b.ReportMetric(perRow, l.name+"-allocs/row")
			if l.st.peakRSS > 0 {
				b.ReportMetric(float64(l.st.peakRSS)/(1<<20), l.name+"-peak-RSS-MiB")
			}
			b.ReportMetric(l.st.cpuMs(), l.name+"-cpu-ms/rep")
		}
		b.ReportMetric(mbs/kmbs, l.name+"/kcat")
	}
	peers := []line{{"kcat-produce", kprod, stage{}}, {"kcat-consume", kcons, stage{}}, {"kcat-consume-nowait", kconsNoWait, stage{}}}
	if b3sum != "" {
		peers = append(peers, line{"b3sum-kcat-produce", kprodChecked, stage{}})
		mbs, _ := rate(pub)
		cmbs, crs := rate(kprodChecked)
		b.ReportMetric(mbs/cmbs, "publish/b3sum-kcat")
		report += fmt.Sprintf("%-20s %9s %11s %10.1f %12.0f %7.2f   (beside b3sum --check, then kcat -P)\n", "publish", "", "", cmbs, crs, mbs/cmbs)
	}
	for _, l := range peers {
		mbs, _ := rate(l.st)
		b.ReportMetric(mbs, l.name+"-MB/s")
		// The broker's CPU time (this process's) and kcat's own (and
		// b3sum's).
		b.ReportMetric(l.st.cpuMs(), l.name+"-broker-cpu-ms/rep")
		b.ReportMetric(l.st.childMs(), l.name+"-kcat-cpu-ms/rep")
		report += fmt.Sprintf("%-20s %9.1f MB/s; CPU ms a repetition: the broker %.1f, the peer's processes %.1f\n", l.name, mbs, l.st.cpuMs(), l.st.childMs())
	}
	_, pubRows := rate(pub)
	_, consRows := rate(cons)
	b.ReportMetric(pubRows, "publish-rows/s")
	b.ReportMetric(consRows, "consume-rows/s")
	b.Log(report)
}

// stage is what BenchmarkStreamVsKcat measured of one stage: the time of
// each repetition and the allocations (runtime.MemStats.Mallocs, the
// in-process broker's included) of all of them.
type stage struct {
	times   []time.Duration
	mallocs uint64
	// cpu is this process's CPU time (the in-process broker's included)
	// over the repetitions, child that of the processes it ran (kcat).
	cpu, child time.Duration
	// peakRSS is the most resident memory during a repetition (bytes; 0
	// where it cannot be measured): the process's peak, reset before each.
	peakRSS int64
}

// cpuMs is this process's CPU time a repetition, childMs its children's,
// in milliseconds.
func (s stage) cpuMs() float64   { return perRep(s.cpu, len(s.times)) }
func (s stage) childMs() float64 { return perRep(s.child, len(s.times)) }

func perRep(d time.Duration, reps int) float64 {
	return float64(d.Microseconds()) / 1e3 / float64(reps)
}

// median is the median repetition's time.
func (s stage) median() time.Duration {
	t := slices.Sorted(slices.Values(s.times))
	return t[len(t)/2]
}

// Each stage runs again until its repetitions have taken stageTime, and
// at least stageMinReps times unless they have taken stageLong (at most
// stageReps times): a single run of a fast stage lasts tens of
// milliseconds, within reach of a GC cycle or another process's slice,
// and the median of three is not one run's luck (kcat -C sometimes waits
// half a second at the end of the topic).
const (
	stageTime    = 500 * time.Millisecond
	stageLong    = 2 * time.Second
	stageMinReps = 3
	stageReps    = 40
)

// measure runs rep 0, 1, ... of a stage as long as stageTime and its
// companions say. Each repetition times what it passes to timed, after a
// GC of what came before, and counts its allocations.
func measure(b *testing.B, st *stage, rep func(rep int, timed func(func()))) {
	var total time.Duration
	more := func(r int) bool {
		return r < stageReps && total < stageLong && (total < stageTime || r < stageMinReps)
	}
	for r := 0; r == 0 || more(r); r++ {
		rep(r, func(f func()) {
			runtime.GC()
			var before, after runtime.MemStats
			runtime.ReadMemStats(&before)
			peakRSS := sysmem.TrackPeakRSS()
			cpu0, child0, _ := sysmem.CPUTime()
			b.StartTimer()
			start := time.Now()
			f()
			d := time.Since(start)
			b.StopTimer()
			cpu1, child1, _ := sysmem.CPUTime()
			st.cpu += cpu1 - cpu0
			st.child += child1 - child0
			runtime.ReadMemStats(&after)
			if peak, ok := peakRSS(); ok {
				st.peakRSS = max(st.peakRSS, peak)
			}
			st.times = append(st.times, d)
			st.mallocs += after.Mallocs - before.Mallocs
			total += d
		})
	}
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
	return runTool(b, "", kcat, args...)
}

// runTool runs the program at path in dir ("": this process's) and
// returns its standard output; a failure (a nonzero exit: b3sum --check
// exits 1 when a file does not match) fails the benchmark with its
// standard error.
func runTool(b *testing.B, dir, path string, args ...string) []byte {
	b.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, path, args...)
	cmd.Dir = dir
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		b.Fatalf("%s %s: %v\n%s", filepath.Base(path), strings.Join(args, " "), err, stderr.String())
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

func deleteTopics(ctx context.Context, c *kafka.Client, topics ...string) error {
	resp, err := c.DeleteTopics(ctx, &kafka.DeleteTopicsRequest{Topics: topics})
	if err != nil {
		return err
	}
	for t, err := range resp.Errors {
		if err != nil {
			return fmt.Errorf("deleting %s: %w", t, err)
		}
	}
	return nil
}
