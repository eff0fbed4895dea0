package main

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/parastream/parastream/shards"
	"github.com/parastream/parastream/stream"
)

// asParastream, set in the environment, makes the test binary run
// parastream's main instead of the tests (TestMain).
const asParastream = "PARASTREAM_TEST_BINARY_IS_MAIN"

// TestMain lets this package's test binary stand in for the parastream
// binary: the process tests start it with asParastream set (it is in the
// environment they inherit), and it runs main. No test builds or links a
// second binary.
func TestMain(m *testing.M) {
	if os.Getenv(asParastream) == "1" {
		main()
		return
	}
	if err := os.Setenv(asParastream, "1"); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	os.Exit(m.Run())
}

// buildBinary finds the test binary, which runs as parastream in a child
// process (TestMain).
var buildBinary = sync.OnceValues(os.Executable)

func binary(t *testing.T) string {
	t.Helper()
	bin, err := buildBinary()
	if err != nil {
		t.Fatal(err)
	}
	return bin
}

// brokerProc is a `parastream broker` process.
type brokerProc struct {
	cmd  *exec.Cmd
	addr string
	done chan error
}

// startBrokerProc runs `parastream broker` on listen with the data
// directory and waits for the line that gives its address. The process is
// stopped with SIGTERM at the end of the test if it still runs.
func startBrokerProc(t *testing.T, bin, listen, dataDir string) *brokerProc {
	t.Helper()
	cmd := exec.Command(bin, "broker", "--listen", listen, "--data-dir", dataDir)
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	cmd.Stderr = os.Stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	b := &brokerProc{cmd: cmd, done: make(chan error, 1)}
	lines := bufio.NewScanner(stdout)
	if !lines.Scan() {
		cmd.Process.Kill()
		t.Fatalf("broker printed no address: %v", cmd.Wait())
	}
	first := lines.Text()
	addr, ok := strings.CutPrefix(first, "broker listening on ")
	if !ok {
		t.Fatalf("broker said %q", first)
	}
	b.addr, _, _ = strings.Cut(addr, " ")
	go func() {
		io.Copy(io.Discard, stdout)
		b.done <- cmd.Wait()
	}()
	t.Cleanup(func() { b.stop(t, syscall.SIGTERM) })
	return b
}

// stop signals the broker and waits for it to exit.
func (b *brokerProc) stop(t *testing.T, sig syscall.Signal) {
	if b.cmd.ProcessState != nil {
		return
	}
	if err := b.cmd.Process.Signal(sig); err != nil && !errors.Is(err, os.ErrProcessDone) {
		t.Error(err)
	}
	select {
	case err := <-b.done:
		if sig == syscall.SIGTERM && err != nil {
			t.Errorf("broker after SIGTERM: %v", err)
		}
	case <-time.After(30 * time.Second):
		b.cmd.Process.Kill()
		t.Errorf("broker did not stop within 30s of %v", sig)
		<-b.done
	}
}

// writeShards writes n rows of corpus "sts", split "train", in shards of
// at most maxRows rows, with their manifest, under a new directory.
func writeShards(t *testing.T, n int, maxRows int64) string {
	t.Helper()
	root := t.TempDir()
	w, err := shards.NewWriter(root, "sts", "train", shards.WriterOptions{MaxRows: maxRows})
	if err != nil {
		t.Fatal(err)
	}
	batch := make([]shards.Row, 0, 1000)
	for i := range n {
		a := fmt.Sprintf("sentence %d says something about topic %d", i, i%97)
		batch = append(batch, shards.Row{ID: fmt.Sprint("r", i), Corpus: "sts", Dataset: "sts", Split: "train",
			A: a, B: strings.ToUpper(a), TokensA: strings.Fields(a), SourceLine: int64(i + 1)})
		if len(batch) == cap(batch) || i == n-1 {
			if err := w.Write(batch...); err != nil {
				t.Fatal(err)
			}
			batch = batch[:0]
		}
	}
	infos, err := w.Close()
	if err != nil {
		t.Fatal(err)
	}
	m := shards.NewManifest([]string{"test"})
	m.AddSplit("sts", "train", infos...)
	if err := shards.WriteManifest(root, m); err != nil {
		t.Fatal(err)
	}
	return root
}

// readAll reads one epoch of sts/train and returns how often each ID came
// and the consumer's stats.
func readAll(t *testing.T, ctx context.Context, c *stream.Consumer, ids map[string]int) stream.Stats {
	t.Helper()
	for {
		r, err := c.Next(ctx)
		if errors.Is(err, io.EOF) {
			return c.Stats()
		}
		if err != nil {
			t.Fatal(err)
		}
		ids[r.ID]++
	}
}

// checkOnce checks that ids holds r0 to r<n-1> once each.
func checkOnce(t *testing.T, ids map[string]int, n int) {
	t.Helper()
	if len(ids) != n {
		t.Errorf("%d distinct rows, want %d", len(ids), n)
	}
	for i := range n {
		if c := ids[fmt.Sprint("r", i)]; c != 1 {
			t.Fatalf("row r%d came %d times", i, c)
		}
	}
}

// TestBrokerRestartWhileConsuming stops the broker process in the middle of
// an epoch (SIGKILL, then SIGTERM), restarts it on its data directory and
// the same address, and checks that the consumer carries on with nothing
// lost or repeated, and that the group's committed offsets survived.
func TestBrokerRestartWhileConsuming(t *testing.T) {
	bin := binary(t)
	const rows = 40_000
	root := writeShards(t, rows, 10_000)
	data := t.TempDir()
	b := startBrokerProc(t, bin, "127.0.0.1:0", data)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cc := stream.ClientConfig{Brokers: []string{b.addr}}
	if _, err := stream.Publish(ctx, root, stream.PublishConfig{Client: cc, BatchRows: 500}); err != nil {
		t.Fatal(err)
	}
	// In topic order, so that the committed offsets move on (a shuffle
	// buffer holds back the offset of every message with a row in it).
	c, err := stream.NewConsumer(ctx, stream.ConsumerConfig{Client: cc, Dataset: "sts", Group: "restart", Epochs: 1, ShuffleBuffer: 1})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	ids := map[string]int{}
	next := func(n int) {
		for range n {
			r, err := c.Next(ctx)
			if err != nil {
				t.Fatal(err)
			}
			ids[r.ID]++
		}
	}
	next(10_000)
	if err := c.Commit(ctx, c.Position()); err != nil {
		t.Fatal(err)
	}
	committed := c.Position()

	for _, sig := range []syscall.Signal{syscall.SIGKILL, syscall.SIGTERM} {
		b.stop(t, sig)
		b = startBrokerProc(t, bin, b.addr, data)
		next(10_000)
	}
	readAll(t, ctx, c, ids)
	checkOnce(t, ids, rows)

	// The group's commit, made before both restarts, is still there: a
	// consumer of the group without a position starts from it.
	c2, err := stream.NewConsumer(ctx, stream.ConsumerConfig{Client: cc, Dataset: "sts", Group: "restart", Epochs: 1, ShuffleBuffer: 1})
	if err != nil {
		t.Fatal(err)
	}
	defer c2.Close()
	got := c2.Position()
	moved := false
	for i, p := range committed.Partitions {
		q := got.Partitions[i]
		if q.Offset != p.Offset || q.End != p.End {
			t.Errorf("partition %d: the group resumes at offset %d (end %d), committed %d (end %d)", i, q.Offset, q.End, p.Offset, p.End)
		}
		moved = moved || p.Offset > 0
	}
	if !moved {
		t.Errorf("the commit after 10,000 rows left every offset at 0: %+v", committed.Partitions)
	}
	rest := map[string]int{}
	readAll(t, ctx, c2, rest)
	if len(rest) != rows-10_000 {
		t.Errorf("from the group's offsets: %d rows, want the %d after the commit", len(rest), rows-10_000)
	}
}
