package stream_test

import (
	"bytes"
	"context"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/parquet-go/parquet-go"
	"github.com/segmentio/kafka-go"

	"github.com/parastream/parastream/internal/testenv"
	"github.com/parastream/parastream/shards"
	"github.com/parastream/parastream/stream"
)

// copyDataset writes one shard of 5,000 rows in row groups of 2,000
// (writeDataset): rows 0-2000, 2000-4000 and 4000-5000. It returns the
// root, the shard's path and bytes, and its rows as the shards reader
// reads them.
func copyDataset(t *testing.T) (root, shard string, file []byte, rows []shards.Row) {
	t.Helper()
	root = t.TempDir()
	m := writeDataset(t, root, "sts", map[string]int{"train": 5000}, 5000)
	shard = m.Files[0].Path
	file, err := os.ReadFile(filepath.Join(root, filepath.FromSlash(shard)))
	if err != nil {
		t.Fatal(err)
	}
	r, err := shards.OpenFile(filepath.Join(root, filepath.FromSlash(shard)))
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	if r.NumRowGroups() != 3 {
		t.Fatalf("the shard has %d row groups, want 3", r.NumRowGroups())
	}
	for row, err := range r.All() {
		if err != nil {
			t.Fatal(err)
		}
		rows = append(rows, row)
	}
	return root, shard, file, rows
}

// copied reports whether a message value is a copy of a shard's column
// chunks: the bytes between "PAR1" and the footer occur in the shard.
func copied(t *testing.T, value, shard []byte) bool {
	t.Helper()
	if len(value) < 12 || string(value[:4]) != "PAR1" || string(value[len(value)-4:]) != "PAR1" {
		t.Fatalf("a value of %d bytes is not a Parquet file", len(value))
	}
	footer := int(binary.LittleEndian.Uint32(value[len(value)-8:]))
	chunks := value[4 : len(value)-8-footer]
	return len(chunks) > 1000 && bytes.Contains(shard, chunks)
}

// checkMessages decodes every message and checks that its rows are the
// shard's rows of its range; it returns the ranges, sorted.
func checkMessages(t *testing.T, msgs []kafka.Message, rows []shards.Row) []stream.Range {
	t.Helper()
	var got []stream.Range
	for _, m := range msgs {
		b, err := stream.Decode(m)
		if err != nil {
			t.Fatalf("message at partition %d offset %d: %v", m.Partition, m.Offset, err)
		}
		for i, r := range b.Rows {
			if want := rows[b.First+int64(i)]; !reflect.DeepEqual(normalized(r), normalized(want)) {
				t.Fatalf("row %d of the message of rows %d-%d:\n got %+v\nwant %+v", i, b.First, b.End(), r, want)
			}
		}
		got = append(got, stream.Range{First: b.First, End: b.End()})
	}
	slices.SortFunc(got, func(a, b stream.Range) int { return int(a.First - b.First) })
	return got
}

func TestPublishCopiesRowGroups(t *testing.T) {
	root, shard, file, rows := copyDataset(t)
	br := startBroker(t, "")
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cc := stream.ClientConfig{Brokers: []string{br.Addr()}}
	client := newClient(t, br.Addr())
	topic := stream.RowTopic(stream.DefaultPrefix, "sts", "train")

	// The topic already holds rows 2100-2600 (an earlier run): the middle
	// row group is missing in part, and its other rows are encoded again.
	if err := createTopic(ctx, client, topic, stream.DefaultPartitions); err != nil {
		t.Fatal(err)
	}
	old, err := stream.Encode(stream.Batch{Shard: shard, First: 2100, Rows: rows[2100:2600]})
	if err != nil {
		t.Fatal(err)
	}
	if err := stream.WriteMessages(ctx, cc, topic, []kafka.Message{old}); err != nil {
		t.Fatal(err)
	}
	// Row groups of 2,000 rows are copied when a message may hold them.
	cfg := publishConfig(t, br)
	cfg.BatchRows = 2000
	sums, err := stream.Publish(ctx, root, cfg)
	if err != nil {
		t.Fatal(err)
	}
	if len(sums) != 1 || sums[0].Published != 4500 || sums[0].Skipped != 500 {
		t.Fatalf("published %+v, want 4500 rows and 500 skipped", sums)
	}
	msgs, err := topicMessages(ctx, client, topic, stream.DefaultPartitions)
	if err != nil {
		t.Fatal(err)
	}
	got := checkMessages(t, msgs, rows)
	want := []stream.Range{{First: 0, End: 2000}, {First: 2000, End: 2100}, {First: 2100, End: 2600}, {First: 2600, End: 4000}, {First: 4000, End: 5000}}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("the topic holds the ranges %v, want %v", got, want)
	}
	for _, m := range msgs {
		b, _ := stream.DecodeHeader(m)
		whole := b.First%2000 == 0 && (b.Rows() == 2000 || b.End == 5000)
		if c := copied(t, m.Value, file); c != whole {
			t.Errorf("message of rows %d-%d: copied from the shard %v, want %v", b.First, b.End, c, whole)
		}
		if !whole {
			continue
		}
		// A copied value is a Parquet file of one row group that
		// parquet-go opens with its page index (there is none).
		pf, err := parquet.OpenFile(bytes.NewReader(m.Value), int64(len(m.Value)))
		if err != nil {
			t.Fatalf("rows %d-%d: %v", b.First, b.End, err)
		}
		if n := len(pf.RowGroups()); n != 1 || pf.NumRows() != b.Rows() {
			t.Errorf("rows %d-%d: %d row groups, %d rows", b.First, b.End, n, pf.NumRows())
		}
		for _, k := range []string{shards.MetadataSchemaVersion, shards.MetadataCorpus, shards.MetadataSplit} {
			if _, ok := pf.Lookup(k); !ok {
				t.Errorf("rows %d-%d: the value lacks the shard's metadata %s", b.First, b.End, k)
			}
		}
	}

	// Published again, nothing is missing and nothing is written.
	sums, err = stream.Publish(ctx, root, cfg)
	if err != nil || sums[0].Published != 0 || sums[0].Messages != 0 {
		t.Errorf("publishing again: %+v, %v; want nothing published", sums, err)
	}
}

func TestPublishCopyFallsBack(t *testing.T) {
	root, _, file, rows := copyDataset(t)
	br := startBroker(t, "")
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	for _, c := range []struct {
		name      string
		batchRows int
		maxBytes  int
	}{
		// A row group of 2,000 rows makes a message of about 420 kB.
		{"row groups over the message limit", 2000, 150_000},
		{"row groups over BatchRows", 999, 0},
	} {
		t.Run(c.name, func(t *testing.T) {
			cfg := publishConfig(t, br)
			cfg.Prefix = fmt.Sprintf("fallback%d", c.batchRows)
			cfg.BatchRows, cfg.MaxMessageBytes = c.batchRows, c.maxBytes
			sums, err := stream.Publish(ctx, root, cfg)
			if err != nil {
				t.Fatal(err)
			}
			if sums[0].Published != 5000 {
				t.Fatalf("published %+v", sums)
			}
			client := newClient(t, br.Addr())
			msgs, err := topicMessages(ctx, client, stream.RowTopic(cfg.Prefix, "sts", "train"), stream.DefaultPartitions)
			if err != nil {
				t.Fatal(err)
			}
			got := checkMessages(t, msgs, rows)
			var at int64
			for _, r := range got {
				if r.First != at {
					t.Fatalf("the ranges %v leave a gap or overlap at %d", got, at)
				}
				at = r.End
				if c.batchRows > 0 && r.End-r.First > int64(c.batchRows) {
					t.Errorf("a message of %d rows, BatchRows is %d", r.End-r.First, c.batchRows)
				}
			}
			if at != 5000 {
				t.Errorf("the ranges %v end at %d, want 5000", got, at)
			}
			for _, m := range msgs {
				if copied(t, m.Value, file) {
					t.Errorf("a message of %d bytes was copied", len(m.Value))
				}
				if c.maxBytes > 0 && len(m.Value) > c.maxBytes {
					t.Errorf("a message of %d bytes, the limit is %d", len(m.Value), c.maxBytes)
				}
			}
		})
	}
}

// TestCopiedMessageDuckDB: DuckDB reads a copied message value with the
// row group's rows.
func TestCopiedMessageDuckDB(t *testing.T) {
	node, err := exec.LookPath("node")
	requireTool(t, "node is not in PATH", "install nodejs", err == nil)
	reader := filepath.Join(testenv.Root(), "tools", "interop", "read_parquet.mjs")
	_, err = os.Stat(filepath.Join(testenv.Root(), "tools", "interop", "node_modules", "@duckdb", "node-api", "package.json"))
	requireTool(t, "tools/interop/node_modules/@duckdb/node-api is absent", "run `cd tools/interop && npm ci`", err == nil)

	root, _, file, rows := copyDataset(t)
	br := startBroker(t, "")
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cfg := publishConfig(t, br)
	cfg.BatchRows = 2000
	if _, err := stream.Publish(ctx, root, cfg); err != nil {
		t.Fatal(err)
	}
	client := newClient(t, br.Addr())
	msgs, err := topicMessages(ctx, client, stream.RowTopic(stream.DefaultPrefix, "sts", "train"), stream.DefaultPartitions)
	if err != nil {
		t.Fatal(err)
	}
	var m *kafka.Message
	for i := range msgs {
		if h, _ := stream.DecodeHeader(msgs[i]); h.First == 2000 {
			m = &msgs[i]
		}
	}
	if m == nil || !copied(t, m.Value, file) {
		t.Fatal("no copied message of rows 2000-4000")
	}
	name := filepath.Join(t.TempDir(), "message.parquet")
	if err := os.WriteFile(name, m.Value, 0o644); err != nil {
		t.Fatal(err)
	}
	lines := bytes.Split(bytes.TrimSpace(run(t, ctx, node, reader, name)), []byte("\n"))
	want := rows[2000:4000]
	if len(lines) != len(want) {
		t.Fatalf("DuckDB read %d rows, want %d", len(lines), len(want))
	}
	for i, line := range lines {
		var got struct {
			ID, A, B string
			Label    *float64
			TokensA  []string `json:"tokens_a"`
			IDsB     []int32  `json:"ids_b"`
			TopicsA  []float32
		}
		if err := json.Unmarshal(line, &got); err != nil {
			t.Fatal(err)
		}
		w := want[i]
		if got.ID != w.ID || got.A != w.A || got.B != w.B || strings.Join(got.TokensA, " ") != strings.Join(w.TokensA, " ") ||
			!reflect.DeepEqual(got.Label, w.Label) || !slices.Equal(got.IDsB, w.IDsB) {
			t.Fatalf("row %d: DuckDB read %+v, want %+v", i, got, w)
		}
	}
}
