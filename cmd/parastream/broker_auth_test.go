package main

import (
	"bufio"
	"context"
	"io"
	"strings"
	"testing"

	"github.com/parastream/parastream/internal/testenv"
)

// TestBrokerTLSAndSASLFlags runs `parastream broker` with TLS and SCRAM,
// then publishes and consumes through it with the clients' flags; a wrong
// password is refused with an error that says so.
func TestBrokerTLSAndSASLFlags(t *testing.T) {
	cert, key := testenv.SelfSignedCert(t, t.TempDir())
	ctx, cancel := context.WithCancel(context.Background())
	out, w := io.Pipe()
	var errb strings.Builder
	stopped := make(chan int, 1)
	go func() {
		stopped <- run(ctx, []string{"broker", "--listen", "127.0.0.1:0", "--tls-cert", cert, "--tls-key", key,
			"--sasl-mechanism", "scram-sha-512", "--sasl-user", "trainer", "--sasl-password", "pw-1"}, &env{stdout: w, stderr: &errb})
		w.Close()
	}()
	defer func() {
		cancel()
		if code := <-stopped; code != 0 {
			t.Errorf("broker exited %d: %s", code, errb.String())
		}
	}()
	lines := bufio.NewScanner(out)
	if !lines.Scan() {
		t.Fatalf("the broker printed no address: %s", errb.String())
	}
	first := lines.Text()
	go io.Copy(io.Discard, out)
	addr, ok := strings.CutPrefix(first, "broker listening on ")
	if !ok || !strings.Contains(addr, "TLS, SASL SCRAM-SHA-512") {
		t.Fatalf("broker said %q", first)
	}
	addr, _, _ = strings.Cut(addr, " ")

	root := writeShards(t, 300, 300)
	auth := []string{"--brokers", addr, "--tls-ca", cert, "--sasl-mechanism", "SCRAM-SHA-512", "--sasl-user", "trainer"}
	if code, _, errOut := runCLI(t, append([]string{"publish", "--shards", root, "--sasl-password", "pw-1"}, auth...)...); code != 0 {
		t.Fatalf("publish: exit %d: %s", code, errOut)
	}
	code, stdout, errOut := runCLI(t, append([]string{"consume", "--dataset", "sts", "--n", "0", "--sasl-password", "pw-1"}, auth...)...)
	if code != 0 {
		t.Fatalf("consume: exit %d: %s", code, errOut)
	}
	if got := strings.Count(stdout, "\n"); got != 300 {
		t.Errorf("consume printed %d rows, want 300", got)
	}
	code, _, errOut = runCLI(t, append([]string{"consume", "--dataset", "sts", "--sasl-password", "pw-2"}, auth...)...)
	if code != 1 || !strings.Contains(errOut, "authentication failed") || !strings.Contains(errOut, "password") {
		t.Errorf("consume with a wrong password: exit %d, stderr %q", code, errOut)
	}
}
