package main

import (
	"bufio"
	"context"
	"os/exec"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/parastream/parastream/stream"
)

// TestPublishKilledAndRerun kills a publisher process with SIGKILL once it
// has reported progress, runs it again, and checks that the topic then
// holds every row: the consumer sees each once, dropping (and counting)
// any duplicate the crash left.
func TestPublishKilledAndRerun(t *testing.T) {
	bin := binary(t)
	const rows = 100_000
	root := writeShards(t, rows, 40_000)
	b := startBrokerProc(t, bin, "127.0.0.1:0", t.TempDir())
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()

	// Small messages make the first run slow enough to be killed after its
	// first progress line; the second run cuts its messages differently.
	pub := exec.CommandContext(ctx, bin, "publish", "--shards", root, "--brokers", b.addr, "--batch-rows", "20")
	stderr, err := pub.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := pub.Start(); err != nil {
		t.Fatal(err)
	}
	progress := regexp.MustCompile(`^parastream\.sts\.train: (\d+)/(\d+) rows`)
	lines := bufio.NewScanner(stderr)
	killedAt := -1
	for lines.Scan() {
		if m := progress.FindStringSubmatch(lines.Text()); m != nil {
			n, _ := strconv.Atoi(m[1])
			if n > 0 && n < rows {
				killedAt = n
				pub.Process.Signal(syscall.SIGKILL)
				break
			}
		}
	}
	err = pub.Wait()
	if killedAt < 0 {
		t.Fatalf("the publisher ended (%v) before reporting progress mid-run; nothing was killed", err)
	}
	if ws, ok := pub.ProcessState.Sys().(syscall.WaitStatus); !ok || ws.Signal() != syscall.SIGKILL {
		t.Fatalf("publisher: %v, want killed by SIGKILL", err)
	}
	t.Logf("killed the publisher after it reported %d rows", killedAt)

	out, err := exec.CommandContext(ctx, bin, "publish", "--shards", root, "--brokers", b.addr, "--batch-rows", "1000", "--quiet").CombinedOutput()
	if err != nil {
		t.Fatalf("second publish: %v\n%s", err, out)
	}
	t.Logf("second publish: %s", out)
	summary := regexp.MustCompile(`parastream\.sts\.train: (\d+) rows, (\d+) published, (\d+) already there`).FindStringSubmatch(string(out))
	if summary == nil {
		t.Fatalf("no summary line in %q", out)
	}
	total, _ := strconv.Atoi(summary[1])
	published, _ := strconv.Atoi(summary[2])
	there, _ := strconv.Atoi(summary[3])
	if total != rows || published+there != rows || there < killedAt || published == 0 {
		t.Errorf("second publish: %d rows, %d published, %d already there; want the %d rows split between them, at least %d already there",
			total, published, there, rows, killedAt)
	}

	c, err := stream.NewConsumer(ctx, stream.ConsumerConfig{Client: stream.ClientConfig{Brokers: []string{b.addr}}, Dataset: "sts", Group: "after-crash", Epochs: 1})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	ids := map[string]int{}
	s := readAll(t, ctx, c, ids)
	checkOnce(t, ids, rows)
	t.Logf("consumer: %+v", s)
	if s.BadMessages != 0 {
		t.Errorf("%d bad messages", s.BadMessages)
	}

	// The consume command reads the same, counting.
	out, err = exec.CommandContext(ctx, bin, "consume", "--brokers", b.addr, "--dataset", "sts", "--n", "0", "--quiet").CombinedOutput()
	if err != nil || !strings.Contains(string(out), "parastream.sts.train: 100000 rows") {
		t.Errorf("consume: %v\n%s", err, out)
	}
}
