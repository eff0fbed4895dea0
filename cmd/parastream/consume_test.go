package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os/exec"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/parastream/parastream/shards"
	"github.com/parastream/parastream/stream"
)

// TestConsumePrintsFeaturizedRows publishes featurized rows to a
// `parastream broker` and reads them back with `parastream consume --n 0
// --shuffle-buffer 1`: every row comes once, in topic order, with its token
// ids and topic vectors exactly as written (the parity harness,
// scripts/parity.py, trains from this output), and rows without them carry
// no ids_a/topics_a keys.
func TestConsumePrintsFeaturizedRows(t *testing.T) {
	bin := binary(t)
	const rows = 300
	root := t.TempDir()
	w, err := shards.NewWriter(root, "para", "train", shards.WriterOptions{MaxRows: 120})
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]shards.Row{}
	for i := range rows {
		r := shards.Row{ID: fmt.Sprint("row", i), Corpus: "para", Dataset: "para", Split: "train",
			A: fmt.Sprint("a ", i), B: fmt.Sprint("b ", i), TokensA: []string{"a", fmt.Sprint(i)}, TokensB: []string{"b", fmt.Sprint(i)}}
		if i%10 != 3 { // every tenth row is not featurized
			r.IDsA = []int32{int32(i), 7, int32(i % 13)}
			r.IDsB = []int32{int32(i + 1)}
			// Values that a float64 round trip would change.
			r.TopicsA = []float32{0.1, float32(i) / 3, 1e-7}
			r.TopicsB = []float32{float32(i) * 1.1, 0}
		}
		want[r.ID] = r
		if err := w.Write(r); err != nil {
			t.Fatal(err)
		}
	}
	infos, err := w.Close()
	if err != nil {
		t.Fatal(err)
	}
	m := shards.NewManifest([]string{"consume_test"})
	m.AddSplit("para", "train", infos...)
	if err := shards.WriteManifest(root, m); err != nil {
		t.Fatal(err)
	}

	b := startBrokerProc(t, bin, "127.0.0.1:0", t.TempDir())
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	if out, err := exec.CommandContext(ctx, bin, "publish", "--shards", root, "--brokers", b.addr, "--topic-prefix", "ct", "--quiet").CombinedOutput(); err != nil {
		t.Fatalf("publish: %v\n%s", err, out)
	}
	cmd := exec.CommandContext(ctx, bin, "consume", "--brokers", b.addr, "--topic-prefix", "ct", "--dataset", "para",
		"--n", "0", "--shuffle-buffer", "1", "--quiet=false")
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("consume: %v\n%s", err, stderr.String())
	}
	if !strings.Contains(stderr.String(), fmt.Sprintf("ct.para.train: %d rows", rows)) {
		t.Errorf("consume's summary: %s", stderr.String())
	}
	seen := map[string]bool{}
	lines := bufio.NewScanner(&stdout)
	for lines.Scan() {
		var keys map[string]json.RawMessage
		if err := json.Unmarshal(lines.Bytes(), &keys); err != nil {
			t.Fatalf("line %q: %v", lines.Text(), err)
		}
		var got stream.RowJSON
		if err := json.Unmarshal(lines.Bytes(), &got); err != nil {
			t.Fatal(err)
		}
		r, ok := want[got.ID]
		if !ok || seen[got.ID] {
			t.Fatalf("row %q: unexpected or repeated", got.ID)
		}
		seen[got.ID] = true
		if got.A != r.A || got.B != r.B || got.Epoch != 1 {
			t.Errorf("row %s: a %q b %q epoch %d, want %q %q 1", got.ID, got.A, got.B, got.Epoch, r.A, r.B)
		}
		if !slices.Equal(got.IDsA, r.IDsA) || !slices.Equal(got.IDsB, r.IDsB) ||
			!slices.Equal(got.TopicsA, r.TopicsA) || !slices.Equal(got.TopicsB, r.TopicsB) {
			t.Errorf("row %s: ids %v %v topics %v %v, want %v %v %v %v", got.ID, got.IDsA, got.IDsB, got.TopicsA, got.TopicsB,
				r.IDsA, r.IDsB, r.TopicsA, r.TopicsB)
		}
		for _, k := range []string{"ids_a", "ids_b", "topics_a", "topics_b"} {
			if _, ok := keys[k]; ok != (r.IDsA != nil) {
				t.Errorf("row %s: key %s present %v, want %v", got.ID, k, ok, r.IDsA != nil)
			}
		}
	}
	if len(seen) != rows {
		t.Errorf("%d distinct rows printed, want %d", len(seen), rows)
	}
}
