package stream

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"maps"
	"runtime"
	"slices"
	"strconv"
	"sync"
	"time"

	"github.com/segmentio/kafka-go"

	"github.com/parastream/parastream/shards"
)

// Defaults of PublishConfig.
const (
	// DefaultBatchRows is the most rows a message holds by default: the
	// shard writer's row group bound, so that every row group that fits
	// under the topic's message limit is copied into a message as it is,
	// without decoding (see publisher_copy.go). Row groups of more rows, or too
	// large for a message, are decoded and encoded again in smaller
	// batches.
	DefaultBatchRows   = shards.DefaultRowGroupRows
	DefaultReplication = 1
)

// A write call of the publisher carries the messages made so far, up to
// flushBytes of values or flushMessages messages: enough that each
// partition's batch fills (small messages) or that a call's requests
// outweigh its wait for the last one (large messages).
const (
	flushBytes    = 4 << 20
	flushMessages = 1024
)

// messageOverhead is what a message adds to its value in a record batch:
// the batch header, the record's varints, the key and the header names. A
// message's value stays under the topic's max.message.bytes minus this
// and the key and header values.
const messageOverhead = 512

// PublishConfig configures Publish. The zero value of each field but Client
// gives its documented default.
type PublishConfig struct {
	Client ClientConfig
	// Prefix starts every topic name; "" means DefaultPrefix.
	Prefix string
	// Datasets are the corpora of the manifest to publish; empty means all.
	Datasets []string
	// Partitions is the partition count of the row topics the publisher
	// creates; 0 means DefaultPartitions. Existing topics keep theirs.
	Partitions int
	// Replication is the replication factor of the topics it creates, and
	// the least an existing topic must have; 0 means DefaultReplication.
	Replication int
	// Retention is retention.ms of the row topics it creates; 0 keeps
	// messages for ever (retention.ms=-1).
	Retention time.Duration
	// BatchRows is the most rows in one message; 0 means DefaultBatchRows.
	// A shard's row group of at most BatchRows rows whose message fits
	// under the topic's max.message.bytes is copied into one message as
	// it is (no decoding); the rows of other row groups are decoded and
	// encoded again in batches of at most BatchRows rows, fewer when the
	// row group's compressed size says that BatchRows rows would not fit,
	// and a batch whose message would still pass the limit is cut in two
	// until it fits.
	BatchRows int
	// MaxMessageBytes, when set, bounds messages below the topic's own
	// max.message.bytes.
	MaxMessageBytes int
	// Progress, when set, is called after every acknowledged write (at
	// most once a second) and once at the end of each topic.
	Progress func(Progress)
	// Logger receives what the publisher does; nil discards it.
	Logger *slog.Logger
}

// Validate reports a setting that cannot work, saying how to fix it.
func (c PublishConfig) Validate() error {
	errs := []error{c.Client.Validate()}
	for _, f := range []struct {
		name string
		v    int
	}{{"Partitions", c.Partitions}, {"Replication", c.Replication}, {"BatchRows", c.BatchRows}, {"MaxMessageBytes", c.MaxMessageBytes}} {
		if f.v < 0 {
			errs = append(errs, fmt.Errorf("stream: PublishConfig.%s is %d: give a positive value, or 0 for the default", f.name, f.v))
		}
	}
	if c.BatchRows > MaxBatchRows {
		errs = append(errs, fmt.Errorf("stream: PublishConfig.BatchRows is %d: at most %d", c.BatchRows, MaxBatchRows))
	}
	if c.MaxMessageBytes > 0 && c.MaxMessageBytes < 4*messageOverhead {
		errs = append(errs, fmt.Errorf("stream: PublishConfig.MaxMessageBytes is %d: give at least %d", c.MaxMessageBytes, 4*messageOverhead))
	}
	if c.Retention < 0 {
		errs = append(errs, errors.New("stream: PublishConfig.Retention is negative: give 0 to keep messages for ever"))
	}
	return errors.Join(errs...)
}

// Progress is where publishing one topic stands.
type Progress struct {
	Topic string
	// Rows is the split's row count; Present counts the rows the topic
	// holds so far (Skipped of them were there before this run).
	Rows, Present, Skipped int64
	// Messages and Bytes count what this run wrote (values only).
	Messages, Bytes int64
	Elapsed         time.Duration
	Done            bool
}

// TopicSummary is what publishing did to one topic.
type TopicSummary struct {
	Topic string
	// Rows is the split's row count, Published the rows this run wrote,
	// Skipped those the topic already held.
	Rows, Published, Skipped int64
	Messages, Bytes          int64
	// LargestMessage is the largest value written, in bytes.
	LargestMessage int
	Elapsed        time.Duration
}

// Publish publishes the shards under root (as their manifest lists them)
// to Kafka. It first checks every shard of the datasets it publishes
// (size, BLAKE3, or sha256 where the manifest has no BLAKE3, and row
// count) and every artifact (size, sha256) against the manifest: a file
// that does not match fails it, naming the file, before any topic is
// created or message produced. While it checks them, it asks the brokers
// what they already hold (which topics exist, the rows each existing row
// topic holds), so that those round trips take no time of their own.
// Then, for each dataset (corpus), it creates or checks the topics,
// publishes the dataset's manifest on the manifests topic, then the rows
// of each split on the split's topic, in messages of at most BatchRows
// rows keyed by shard, waiting for every replica's acknowledgement.
//
// Publishing is resumable: Publish reads what each row topic already
// holds (the headers of its messages) and publishes only the row ranges
// that are missing, so that after a crash a second run completes the topic
// with no gap. It refuses to publish a dataset whose manifest on the topic
// names other shard contents (the dataset was extracted again: publish it
// under another prefix).
func Publish(ctx context.Context, root string, cfg PublishConfig) ([]TopicSummary, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	cfg = cfg.withDefaults()
	m, err := shards.ReadManifest(root)
	if err != nil {
		return nil, err
	}
	datasets := cfg.Datasets
	if len(datasets) == 0 {
		for _, s := range m.Splits {
			datasets = append(datasets, s.Corpus)
		}
		slices.Sort(datasets)
		datasets = slices.Compact(datasets)
	}
	// Every file is checked before the first topic is created or message
	// produced: a mismatch publishes nothing.
	var files []shards.ShardInfo
	for _, ds := range datasets {
		dm := datasetManifest(m, ds)
		if len(dm.Splits) == 0 {
			return nil, fmt.Errorf("publishing %s: the manifest has no dataset %q", root, ds)
		}
		files = append(files, dm.Files...)
	}
	p, err := newPublisher(cfg, root)
	if err != nil {
		return nil, err
	}
	defer p.close()
	// While the files are checked, the broker is asked what it already
	// holds (read only: nothing is created or produced before every file
	// matches), so that the round trips cost no time of their own.
	dctx, cancel := context.WithCancel(ctx)
	defer cancel()
	found := make(chan error, 1)
	go func() { found <- p.discover(dctx, m, datasets) }()
	if err := errors.Join(m.VerifyArtifacts(root), verifyShards(ctx, root, files)); err != nil {
		cancel()
		<-found
		return nil, fmt.Errorf("publishing %s: nothing was published: %w", root, err)
	}
	if err := <-found; err != nil {
		return nil, fmt.Errorf("publishing %s: %w", root, err)
	}
	var sums []TopicSummary
	for _, ds := range datasets {
		s, err := p.dataset(ctx, m, ds)
		sums = append(sums, s...)
		if err != nil {
			return sums, err
		}
	}
	if err := errors.Join(p.w.Close(), p.one.Close()); err != nil {
		return sums, fmt.Errorf("closing the writer: %w", err)
	}
	return sums, nil
}

// newPublisher makes the client and the writers of a publish, on one
// transport (so the writers find the connections and the metadata the
// client's requests opened).
func newPublisher(cfg PublishConfig, root string) (*publisher, error) {
	client, err := cfg.Client.client()
	if err != nil {
		return nil, err
	}
	tr := client.Transport.(*kafka.Transport)
	p := &publisher{cfg: cfg, root: root, client: client, enc: NewEncoder(), log: cfg.Logger, found: map[string]*discovery{}}
	p.w = newWriter(cfg.Client, tr, p.log)
	// The manifest and the artifacts go out as soon as they are handed
	// over: a batch of one message is full, so no write waits for the
	// batch timeout.
	p.one = newWriter(cfg.Client, tr, p.log)
	p.one.BatchSize = 1
	return p, nil
}

// close closes the writers (once Publish has closed them, again: a no-op)
// and the transport's idle connections.
func (p *publisher) close() {
	p.w.Close()
	p.one.Close()
	p.client.Transport.(*kafka.Transport).CloseIdleConnections()
}

// discovery is what a dataset's topics held when Publish looked, before
// creating any.
type discovery struct {
	// topics are those of the dataset's topics that existed.
	topics map[string]topicInfo
	// have holds, for each row topic that existed, the rows it held.
	have map[string]map[string]*ranges
}

// discover checks that the brokers answer and reads, for each dataset,
// which of its topics exist and the rows its row topics hold. It creates
// and writes nothing.
func (p *publisher) discover(ctx context.Context, m *shards.Manifest, datasets []string) error {
	if err := p.cfg.Client.check(ctx); err != nil {
		return err
	}
	for _, ds := range datasets {
		specs := p.topicSpecs(ds, datasetManifest(m, ds))
		names, err := specNames(specs)
		if err != nil {
			return err
		}
		topics, err := describeTopics(ctx, p.client, names)
		if err != nil {
			return err
		}
		d := &discovery{topics: topics, have: map[string]map[string]*ranges{}}
		for _, s := range specs[1:] {
			if t, ok := topics[s.name]; ok {
				if d.have[s.name], err = p.present(ctx, t); err != nil {
					return err
				}
			}
		}
		p.found[ds] = d
	}
	return nil
}

// newWriter is the publisher's writer: acknowledged by all replicas,
// messages placed by the key's murmur2 hash (as Java clients and
// librdkafka's murmur2 partitioner place them). Publish sets BatchBytes to
// the topic's message size limit.
func newWriter(cc ClientConfig, transport *kafka.Transport, logger *slog.Logger) *kafka.Writer {
	return &kafka.Writer{
		Addr:         kafka.TCP(cc.Brokers...),
		Balancer:     &kafka.Murmur2Balancer{},
		RequiredAcks: kafka.RequireAll,
		MaxAttempts:  10,
		BatchSize:    64,
		// A WriteMessages call puts its messages into each partition's
		// batch under the partition's lock, so batches are as full as the
		// call makes them; the timeout only holds back the last,
		// incomplete batch of each partition, which the call then waits
		// for: 5 ms a call (and a single message, such as the manifest,
		// waited 5 ms). Publish hands the writer several MiB a call.
		BatchTimeout: time.Millisecond,
		Transport:    transport,
		// Publish creates each dataset's topics as it comes to them, after
		// the writer may have cached the cluster's metadata: with this set,
		// kafka-go refreshes the cache for a topic it does not know instead
		// of failing with Unknown Topic Or Partition. The topics exist by
		// then (ensureTopics), so nothing is created with broker defaults.
		AllowAutoTopicCreation: true,
		ErrorLogger: kafka.LoggerFunc(func(format string, args ...any) {
			logger.Warn(fmt.Sprintf(format, args...))
		}),
	}
}

func (c PublishConfig) withDefaults() PublishConfig {
	if c.Prefix == "" {
		c.Prefix = DefaultPrefix
	}
	if c.Partitions == 0 {
		c.Partitions = DefaultPartitions
	}
	if c.Replication == 0 {
		c.Replication = DefaultReplication
	}
	if c.BatchRows == 0 {
		c.BatchRows = DefaultBatchRows
	}
	if c.Logger == nil {
		c.Logger = slog.New(slog.DiscardHandler)
	}
	return c
}

type publisher struct {
	cfg    PublishConfig
	root   string
	client *kafka.Client
	// w writes the rows; one the manifests and artifacts.
	w, one *kafka.Writer
	enc    *Encoder
	log    *slog.Logger
	// found is what discover read, by dataset.
	found map[string]*discovery
}

// topicSpecs are a dataset's topics: the manifests topic first, then a
// row topic for each split (in the order of the splits' keys).
func (p *publisher) topicSpecs(dataset string, dm *shards.Manifest) []topicSpec {
	retention := "-1"
	if p.cfg.Retention > 0 {
		retention = strconv.FormatInt(p.cfg.Retention.Milliseconds(), 10)
	}
	specs := []topicSpec{{
		name: ManifestTopic(p.cfg.Prefix), partitions: 1, replication: p.cfg.Replication,
		configs: map[string]string{"cleanup.policy": "compact", "retention.ms": "-1"},
	}}
	for _, key := range slices.Sorted(maps.Keys(dm.Splits)) {
		specs = append(specs, topicSpec{
			name: RowTopic(p.cfg.Prefix, dataset, dm.Splits[key].Split), partitions: p.cfg.Partitions, replication: p.cfg.Replication,
			configs: map[string]string{"retention.ms": retention},
		})
	}
	return specs
}

// dataset publishes one dataset: topics, manifest, rows.
func (p *publisher) dataset(ctx context.Context, m *shards.Manifest, dataset string) ([]TopicSummary, error) {
	dm := datasetManifest(m, dataset)
	if len(dm.Splits) == 0 {
		return nil, fmt.Errorf("publishing: the manifest has no dataset %q", dataset)
	}
	splits := slices.Sorted(maps.Keys(dm.Splits))
	d := p.found[dataset]
	topics, err := ensureTopics(ctx, p.client, p.topicSpecs(dataset, dm), d.topics, p.log)
	if err != nil {
		return nil, err
	}

	// The manifest first: a consumer that finds rows finds their manifest.
	// A manifests topic this run created holds none to compare with.
	if !topics[ManifestTopic(p.cfg.Prefix)].created {
		old, err := readManifest(ctx, p.client, p.cfg.Prefix, dataset)
		if err != nil {
			return nil, err
		}
		if old != nil {
			if err := sameShards(old, dm); err != nil {
				return nil, fmt.Errorf("publishing %s under prefix %q: %w", dataset, p.cfg.Prefix, err)
			}
		}
	}
	// The model files before the manifest that names them.
	if err := p.publishArtifacts(ctx, dataset, dm); err != nil {
		return nil, fmt.Errorf("publishing the artifacts of %s: %w", dataset, err)
	}
	mm, err := manifestMessage(dataset, dm)
	if err != nil {
		return nil, err
	}
	mm.Topic = ManifestTopic(p.cfg.Prefix)
	if err := p.one.WriteMessages(ctx, mm); err != nil {
		return nil, fmt.Errorf("publishing the manifest of %s: %w", dataset, err)
	}

	var sums []TopicSummary
	for _, key := range splits {
		split := dm.Splits[key]
		topic := RowTopic(p.cfg.Prefix, dataset, split.Split)
		infos, err := dm.Shards(dataset, split.Split)
		if err != nil {
			return sums, err
		}
		s, err := p.split(ctx, topics[topic], infos, d.have[topic])
		sums = append(sums, s)
		if err != nil {
			return sums, err
		}
	}
	return sums, nil
}

// sameShards refuses a manifest whose shards (by path) have other contents
// than those already published.
func sameShards(old, cur *shards.Manifest) error {
	was := map[string]string{}
	for _, f := range old.Files {
		was[f.Path] = f.SHA256
	}
	for _, f := range cur.Files {
		if sum, ok := was[f.Path]; ok && sum != f.SHA256 {
			return fmt.Errorf("%w: shard %s was published with sha256 %s, the directory holds %s", ErrTopic, f.Path, sum, f.SHA256)
		}
	}
	return nil
}

// present reads the headers of every message of a topic and returns, per
// shard, the rows it holds.
func (p *publisher) present(ctx context.Context, t topicInfo) (map[string]*ranges, error) {
	first, end, err := partitionOffsets(ctx, p.client, t.name, t.partitions)
	if err != nil {
		return nil, err
	}
	have := map[string]*ranges{}
	for part := range t.partitions {
		err := scanPartition(ctx, p.client, offsetRange{t.name, part, first[part], end[part]}, func(m kafka.Message) error {
			h, err := DecodeHeader(m)
			if err != nil {
				// A consumer skips it too; its rows count as missing.
				p.log.Warn("ignoring a bad message", "topic", t.name, "partition", part, "offset", m.Offset, "err", err)
				return nil
			}
			rs := have[h.Shard]
			if rs == nil {
				rs = new(ranges)
				have[h.Shard] = rs
			}
			rs.add(h.First, h.End)
			return nil
		})
		if err != nil {
			return nil, err
		}
	}
	return have, nil
}

// encoded is one message to write, or the error that kept it from being
// made.
type encoded struct {
	msg  kafka.Message
	rows int64
	err  error
}

// split publishes the rows of one split that its topic lacks: have is
// what discover found the topic to hold, nil if the topic did not exist
// then.
func (p *publisher) split(ctx context.Context, t topicInfo, infos []shards.ShardInfo, have map[string]*ranges) (TopicSummary, error) {
	start := time.Now()
	sum := TopicSummary{Topic: t.name}
	for _, f := range infos {
		sum.Rows += f.Rows
	}
	switch {
	case have != nil:
	case t.created:
		// Created by this run: empty.
		have = map[string]*ranges{}
	default:
		// Created by another publisher since discover looked.
		var err error
		if have, err = p.present(ctx, t); err != nil {
			return sum, err
		}
	}
	// Rows the topic holds beyond a shard's end count for nothing.
	for _, f := range infos {
		if rs := have[f.Path]; rs != nil {
			missing := int64(0)
			for _, g := range rs.gaps(0, f.Rows) {
				missing += g.End - g.First
			}
			sum.Skipped += f.Rows - missing
		}
	}
	limit := t.maxMessageBytes()
	if p.cfg.MaxMessageBytes > 0 {
		limit = min(limit, p.cfg.MaxMessageBytes)
	}
	p.w.BatchBytes = int64(limit)
	p.log.Info("publishing", "topic", t.name, "rows", sum.Rows, "already_present", sum.Skipped, "max_message_bytes", limit)

	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	// Messages are planned by one goroutine (row groups copied, batches of
	// rows cut), made by workers (encoding, checksums), and written in the
	// order they were planned, so that a shard's messages keep their order.
	type job struct {
		work func() []encoded
		out  chan []encoded
	}
	jobs := make(chan job, 2*runtime.GOMAXPROCS(0))
	order := make(chan chan []encoded, 4*runtime.GOMAXPROCS(0))
	readErr := make(chan error, 1)
	go func() {
		defer close(order)
		defer close(jobs)
		readErr <- p.cut(ctx, infos, have, limit, func(work func() []encoded) bool {
			j := job{work: work, out: make(chan []encoded, 1)}
			select {
			case order <- j.out:
			case <-ctx.Done():
				return false
			}
			select {
			case jobs <- j:
				return true
			case <-ctx.Done():
				return false
			}
		})
	}()
	var wg sync.WaitGroup
	for range runtime.GOMAXPROCS(0) {
		wg.Go(func() {
			for j := range jobs {
				j.out <- j.work()
			}
		})
	}
	defer wg.Wait()

	// Writes: up to inFlight WriteMessages calls at once, each of a run of
	// messages; kafka-go keeps one produce request per partition in flight
	// and retries it in place, so a partition's messages stay in order.
	const inFlight = 4
	sem := make(chan struct{}, inFlight)
	var mu sync.Mutex
	var writeErr error
	lastReport := time.Now()
	report := func(done bool) {
		if p.cfg.Progress != nil {
			p.cfg.Progress(Progress{Topic: t.name, Rows: sum.Rows, Present: sum.Skipped + sum.Published, Skipped: sum.Skipped,
				Messages: sum.Messages, Bytes: sum.Bytes, Elapsed: time.Since(start), Done: done})
		}
	}
	var pending []kafka.Message
	var pendingRows, pendingBytes int64
	flush := func() {
		if len(pending) == 0 {
			return
		}
		msgs, rows := pending, pendingRows
		pending, pendingRows, pendingBytes = nil, 0, 0
		sem <- struct{}{}
		go func() {
			defer func() { <-sem }()
			err := p.w.WriteMessages(ctx, msgs...)
			mu.Lock()
			defer mu.Unlock()
			if err != nil {
				if writeErr == nil {
					writeErr = describeWriteError(t.name, msgs, err)
					cancel()
				}
				return
			}
			sum.Published += rows
			sum.Messages += int64(len(msgs))
			for _, m := range msgs {
				sum.Bytes += int64(len(m.Value))
				sum.LargestMessage = max(sum.LargestMessage, len(m.Value))
			}
			if time.Since(lastReport) >= time.Second {
				lastReport = time.Now()
				report(false)
			}
		}()
	}
	var encErr error
	for out := range order {
		var es []encoded
		select {
		case es = <-out:
		case <-ctx.Done():
		}
		for _, e := range es {
			if e.err != nil && encErr == nil {
				encErr = e.err
				cancel()
			}
			if encErr != nil {
				continue
			}
			e.msg.Topic = t.name
			pending = append(pending, e.msg)
			pendingRows += e.rows
			pendingBytes += int64(len(e.msg.Value))
		}
		if pendingBytes >= flushBytes || len(pending) >= flushMessages || len(order) == 0 {
			flush()
		}
	}
	flush()
	for range inFlight {
		sem <- struct{}{}
	}
	sum.Elapsed = time.Since(start)
	err := errors.Join(encErr, writeErr, <-readErr)
	if err == nil {
		err = ctx.Err()
	}
	if err == nil {
		report(true)
		p.log.Info("published", "topic", t.name, "rows", sum.Published, "skipped", sum.Skipped, "messages", sum.Messages, "bytes", sum.Bytes, "elapsed", sum.Elapsed)
	}
	return sum, err
}

// describeWriteError names how many of the messages failed and the first
// reason.
func describeWriteError(topic string, msgs []kafka.Message, err error) error {
	var we kafka.WriteErrors
	if errors.As(err, &we) {
		var first error
		for _, e := range we {
			if e != nil {
				first = e
				break
			}
		}
		return fmt.Errorf("writing to %s: %d of %d messages failed (first: %w); publish again to complete the topic", topic, we.Count(), len(msgs), first)
	}
	return fmt.Errorf("writing to %s: %w; publish again to complete the topic", topic, err)
}

// cut reads the shards in order and hands emit, in row order, the work
// that makes the messages of the rows the topic lacks (see cutShard).
func (p *publisher) cut(ctx context.Context, infos []shards.ShardInfo, have map[string]*ranges, limit int, emit func(func() []encoded) bool) error {
	for _, f := range infos {
		missing := []Range{{0, f.Rows}}
		if rs := have[f.Path]; rs != nil {
			missing = rs.gaps(0, f.Rows)
		}
		if len(missing) == 0 {
			continue
		}
		if err := p.cutShard(ctx, f, missing, limit, emit); err != nil {
			return err
		}
	}
	return nil
}

// segment is a run of a shard's rows to publish: a row group copied whole
// (copied set), or rows decoded and encoded again in batches of batchRows.
type segment struct {
	Range
	copied    bool
	group     int
	meta      []byte // the copied value's footer
	from, to  int64  // the copied column chunks' bytes in the shard
	batchRows int
}

// cutShard publishes the missing rows of one shard: each row group that
// is missing whole, holds at most BatchRows rows and makes a message
// under limit is copied (publisher_copy.go); the other missing rows are
// read from the shard and encoded again, in batches that never cross a
// gap or a copied row group.
func (p *publisher) cutShard(ctx context.Context, f shards.ShardInfo, missing []Range, limit int, emit func(func() []encoded) bool) error {
	src, err := openCopySource(p.root, f)
	if err != nil {
		return err
	}
	defer src.close()
	var rows *rowCutter
	defer func() {
		if rows != nil {
			rows.r.Close()
		}
	}()
	for _, s := range p.plan(src, f.Path, missing, limit) {
		if err := ctx.Err(); err != nil {
			return err
		}
		if s.copied {
			value, err := src.value(s.meta, s.from, s.to)
			if err != nil {
				return err
			}
			if !emit(func() []encoded {
				return []encoded{{msg: rowMessage(f.Path, s.First, s.End, value), rows: s.End - s.First}}
			}) {
				return ctx.Err()
			}
			continue
		}
		if rows == nil {
			rows = &rowCutter{r: shards.NewSplitReader(p.root, []shards.ShardInfo{f}), shard: f.Path}
		}
		if err := rows.cut(ctx, s.Range, s.batchRows, func(b Batch) bool {
			return emit(func() []encoded { return p.encodeFitting(b, limit) })
		}); err != nil {
			return err
		}
	}
	return nil
}

// plan lists the segments that publish the missing rows of a shard, in
// row order.
func (p *publisher) plan(src *copySource, shard string, missing []Range, limit int) []segment {
	var segs []segment
	for g := range src.groups() {
		first, end := src.rows(g)
		var parts []Range
		for _, m := range missing {
			if lo, hi := max(m.First, first), min(m.End, end); lo < hi {
				parts = append(parts, Range{lo, hi})
			}
		}
		if len(parts) == 0 {
			continue
		}
		if src.copyable && len(parts) == 1 && parts[0] == (Range{first, end}) && end-first <= int64(p.cfg.BatchRows) {
			meta, from, to, err := src.footer(g)
			if err == nil && int(valueSize(meta, from, to))+headerBytes(shard, first, end) <= limit {
				segs = append(segs, segment{Range: parts[0], copied: true, group: g, meta: meta, from: from, to: to})
				continue
			}
			if err != nil && !errors.Is(err, errNotCopyable) {
				p.log.Warn("re-encoding a row group that cannot be copied", "shard", shard, "row_group", g, "err", err)
			}
		}
		// Batches of rows that, at this row group's compressed size a row,
		// fill about three quarters of a message.
		batch := p.cfg.BatchRows
		if per := src.bytesPerRow(g); per > 0 {
			batch = max(1, min(batch, int(0.75*float64(limit-headerBytes(shard, first, end))/per)))
		}
		for _, r := range parts {
			// Rows to encode again run on across row groups.
			if n := len(segs); n > 0 && !segs[n-1].copied && segs[n-1].End == r.First {
				segs[n-1].End, segs[n-1].batchRows = r.End, min(segs[n-1].batchRows, batch)
				continue
			}
			segs = append(segs, segment{Range: r, group: g, batchRows: batch})
		}
	}
	return segs
}

// headerBytes is what a message of rows first to end of shard adds to its
// value against the topic's limit (see messageSize).
func headerBytes(shard string, first, end int64) int {
	return messageSize(rowMessage(shard, first, end, nil))
}

// rowCutter reads a shard's rows in order, to cut batches from them.
type rowCutter struct {
	r     *shards.SplitReader
	shard string
	at    int64 // index of the next row the reader returns
	buf   []shards.Row
}

// cut reads up to the end of g and hands emit the rows of g in batches of
// at most batchRows rows. Rows before g are read and passed over (a shard
// has no index to seek by).
func (c *rowCutter) cut(ctx context.Context, g Range, batchRows int, emit func(Batch) bool) error {
	if len(c.buf) < batchRows {
		c.buf = make([]shards.Row, batchRows)
	}
	buf := c.buf[:batchRows]
	for c.at < g.End {
		if err := ctx.Err(); err != nil {
			return err
		}
		want := g.End - c.at
		if c.at < g.First {
			want = g.First - c.at
		}
		n, err := c.r.Read(buf[:min(int64(len(buf)), want)])
		if errors.Is(err, io.EOF) {
			return fmt.Errorf("reading shard %s: %d rows, the manifest says more", c.shard, c.at)
		}
		if err != nil {
			return err
		}
		if c.at >= g.First && !emit(Batch{Shard: c.shard, First: c.at, Rows: slices.Clone(buf[:n])}) {
			return ctx.Err()
		}
		c.at += int64(n)
	}
	return nil
}

// encodeFitting encodes a batch as one message, or cuts it in halves
// until each message fits under limit bytes.
func (p *publisher) encodeFitting(b Batch, limit int) []encoded {
	m, err := p.enc.Encode(b)
	if err != nil {
		return []encoded{{err: err}}
	}
	size := messageSize(m)
	if size <= limit {
		return []encoded{{msg: m, rows: int64(len(b.Rows))}}
	}
	if len(b.Rows) == 1 {
		return []encoded{{err: fmt.Errorf("%w: row %d of %s makes a message of %d bytes, the topic takes %d", ErrTooLarge, b.First, b.Shard, size, limit)}}
	}
	half := len(b.Rows) / 2
	out := p.encodeFitting(Batch{Shard: b.Shard, First: b.First, Rows: b.Rows[:half]}, limit)
	return append(out, p.encodeFitting(Batch{Shard: b.Shard, First: b.First + int64(half), Rows: b.Rows[half:]}, limit)...)
}
