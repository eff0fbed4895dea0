package stream_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/parastream/parastream/internal/testenv"
	"github.com/parastream/parastream/stream"
)

// The interop test talks to the embedded broker with Debian's kcat
// (librdkafka), and reads a message value that kcat saved with DuckDB
// (tools/interop/read_parquet.mjs). Without kcat, node or the DuckDB
// package it skips, unless PARASTREAM_REQUIRE_INTEROP=1, when it fails.

func requireTool(t *testing.T, what, install string, ok bool) {
	t.Helper()
	if ok {
		return
	}
	msg := fmt.Sprintf("interop test: %s; %s", what, install)
	if os.Getenv("PARASTREAM_REQUIRE_INTEROP") == "1" {
		t.Fatal(msg + " (PARASTREAM_REQUIRE_INTEROP=1 makes this a failure)")
	}
	t.Skip("skipping " + msg)
}

func run(t *testing.T, ctx context.Context, name string, args ...string) []byte {
	t.Helper()
	cmd := exec.CommandContext(ctx, name, args...)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("%s %s: %v\n%s", name, strings.Join(args, " "), err, stderr.String())
	}
	return out
}

func TestInteropKcatDuckDB(t *testing.T) {
	kcat, err := exec.LookPath("kcat")
	requireTool(t, "kcat is not in PATH", "apt-get install kcat", err == nil)
	node, err := exec.LookPath("node")
	requireTool(t, "node is not in PATH", "install nodejs", err == nil)
	reader := filepath.Join(testenv.Root(), "tools", "interop", "read_parquet.mjs")
	_, err = os.Stat(filepath.Join(testenv.Root(), "tools", "interop", "node_modules", "@duckdb", "node-api", "package.json"))
	requireTool(t, "tools/interop/node_modules/@duckdb/node-api is absent", "run `cd tools/interop && npm ci`", err == nil)

	root := t.TempDir()
	writeDataset(t, root, "sts", map[string]int{"train": 1200, "test": 100}, 1200)
	b := startBroker(t, "")
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cfg := publishConfig(t, b)
	cfg.BatchRows = 400
	if _, err := stream.Publish(ctx, root, cfg); err != nil {
		t.Fatal(err)
	}

	// kcat lists the topics.
	list := string(run(t, ctx, kcat, "-b", b.Addr(), "-L"))
	for _, topic := range []string{"parastream.manifests", "parastream.sts.train", "parastream.sts.test"} {
		if !strings.Contains(list, `topic "`+topic+`"`) {
			t.Errorf("kcat -L does not list %s:\n%s", topic, list)
		}
	}
	// kcat consumes every message of the train topic, with its headers.
	var msgs int
	for p := range stream.DefaultPartitions {
		out := run(t, ctx, kcat, "-b", b.Addr(), "-C", "-t", "parastream.sts.train", "-p", fmt.Sprint(p), "-o", "beginning", "-e", "-q", "-f", "%k|%h\n")
		for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
			if line == "" {
				continue
			}
			msgs++
			if !strings.HasPrefix(line, "sts/train/part-00000-of-00001.parquet|") || !strings.Contains(line, stream.HeaderRows+"=") || !strings.Contains(line, stream.HeaderChecksum+"=crc32c:") {
				t.Errorf("kcat message: %q", line)
			}
		}
	}
	if msgs != 3 {
		t.Errorf("kcat consumed %d messages of the train topic, want 3 (1200 rows, 400 a message)", msgs)
	}

	// One message value, saved by kcat, read by DuckDB: the rows the
	// header names, with their values.
	part := -1
	for p := range stream.DefaultPartitions {
		out := run(t, ctx, kcat, "-b", b.Addr(), "-C", "-t", "parastream.sts.train", "-p", fmt.Sprint(p), "-o", "beginning", "-e", "-q", "-f", "%o\n")
		if len(bytes.TrimSpace(out)) > 0 {
			part = p
		}
	}
	if part < 0 {
		t.Fatal("no partition holds the train rows")
	}
	value := run(t, ctx, kcat, "-b", b.Addr(), "-C", "-t", "parastream.sts.train", "-p", fmt.Sprint(part), "-o", "1", "-c", "1", "-e", "-q", "-f", "%s")
	file := filepath.Join(t.TempDir(), "message.parquet")
	if err := os.WriteFile(file, value, 0o644); err != nil {
		t.Fatal(err)
	}
	lines := bytes.Split(bytes.TrimSpace(run(t, ctx, node, reader, file)), []byte("\n"))
	want := genRows("sts", "train", splitSeed("train"), 1200)[400:800]
	if len(lines) != len(want) {
		t.Fatalf("DuckDB read %d rows from the message, want %d (rows 400-800)", len(lines), len(want))
	}
	for i, line := range lines {
		var got struct {
			ID, A, B string
			Label    any
			TokensA  []string `json:"tokens_a"`
		}
		if err := json.Unmarshal(line, &got); err != nil {
			t.Fatal(err)
		}
		w := want[i]
		if got.ID != w.ID || got.A != w.A || got.B != w.B || strings.Join(got.TokensA, " ") != strings.Join(w.TokensA, " ") ||
			(w.Label == nil) != (got.Label == nil) {
			t.Fatalf("row %d: DuckDB read %+v, want %+v", i, got, w)
		}
	}
}
