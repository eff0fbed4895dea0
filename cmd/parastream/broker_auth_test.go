package main

import (
	"bufio"
	"bytes"
	"context"
	"crypto/tls"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/segmentio/kafka-go"
	"github.com/segmentio/kafka-go/sasl/plain"

	"github.com/parastream/parastream/cmd/parastream/internal/cli"
	"github.com/parastream/parastream/internal/testenv"
	"github.com/parastream/parastream/stream"
)

// startBrokerCmd runs `parastream broker` in this process with args (and
// --listen 127.0.0.1:0) and returns its address and a function that stops
// it, also called at the end of the test.
func startBrokerCmd(t *testing.T, args ...string) (addr string, stop func()) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	out, w := io.Pipe()
	var errb strings.Builder
	stopped := make(chan int, 1)
	go func() {
		stopped <- run(ctx, append([]string{"broker", "--listen", "127.0.0.1:0"}, args...), &env{stdout: w, stderr: &errb})
		w.Close()
	}()
	var once bool
	stop = func() {
		if once {
			return
		}
		once = true
		cancel()
		if code := <-stopped; code != 0 {
			t.Errorf("broker exited %d: %s", code, errb.String())
		}
	}
	t.Cleanup(stop)
	lines := bufio.NewScanner(out)
	if !lines.Scan() {
		t.Fatalf("the broker printed no address: %s", errb.String())
	}
	go io.Copy(io.Discard, out)
	first := lines.Text()
	addr, ok := strings.CutPrefix(first, "broker listening on ")
	if !ok {
		t.Fatalf("broker said %q", first)
	}
	t.Logf("%s", first)
	addr, _, _ = strings.Cut(addr, " ")
	return addr, stop
}

// writeSecret writes a password file, readable by its owner only.
func writeSecret(t *testing.T, dir, password string) string {
	t.Helper()
	f := filepath.Join(dir, "password")
	if err := os.WriteFile(f, []byte(password+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	return f
}

// TestBrokerTLSAndSASLFlags runs `parastream broker` with TLS and SCRAM,
// its password in a file, then publishes and consumes through it with the
// clients' flags, the password given by each of the three ways; a wrong
// password is refused with an error that says so.
func TestBrokerTLSAndSASLFlags(t *testing.T) {
	dir := t.TempDir()
	cert, key := testenv.SelfSignedCert(t, dir)
	passFile := writeSecret(t, dir, "pw-1")
	addr, _ := startBrokerCmd(t, "--tls-cert", cert, "--tls-key", key,
		"--sasl-mechanism", "scram-sha-512", "--sasl-user", "trainer", "--sasl-password-file", passFile)

	root := writeShards(t, 300, 300)
	auth := []string{"--brokers", addr, "--tls-ca", cert, "--sasl-mechanism", "SCRAM-SHA-512", "--sasl-user", "trainer"}
	t.Setenv(cli.EnvSASLPassword, "pw-1")
	if code, _, errOut := runCLI(t, append([]string{"publish", "--shards", root}, auth...)...); code != 0 {
		t.Fatalf("publish, the password in $%s: exit %d: %s", cli.EnvSASLPassword, code, errOut)
	}
	t.Setenv(cli.EnvSASLPassword, "")
	code, stdout, errOut := runCLI(t, append([]string{"consume", "--dataset", "sts", "--n", "0", "--sasl-password-file", passFile}, auth...)...)
	if code != 0 {
		t.Fatalf("consume, the password in a file: exit %d: %s", code, errOut)
	}
	if got := strings.Count(stdout, "\n"); got != 300 {
		t.Errorf("consume printed %d rows, want 300", got)
	}
	code, _, errOut = runCLI(t, append([]string{"consume", "--dataset", "sts", "--n", "1", "--sasl-password", "pw-1"}, auth...)...)
	if code != 0 || !strings.Contains(errOut, "warning: --sasl-password shows the password") {
		t.Errorf("consume, the password on the command line: exit %d, stderr %q (want a warning)", code, errOut)
	}
	code, _, errOut = runCLI(t, append([]string{"consume", "--dataset", "sts", "--sasl-password-file", writeSecret(t, t.TempDir(), "pw-2")}, auth...)...)
	if code != 1 || !strings.Contains(errOut, "authentication failed") || !strings.Contains(errOut, "password") {
		t.Errorf("consume with a wrong password: exit %d, stderr %q", code, errOut)
	}
	code, _, errOut = runCLI(t, append([]string{"consume", "--dataset", "sts"}, auth...)...)
	if code != 2 || !strings.Contains(errOut, "needs a password") {
		t.Errorf("consume with no password: exit %d, stderr %q", code, errOut)
	}
}

func TestBrokerSASLFlagErrors(t *testing.T) {
	dir := t.TempDir()
	pass := writeSecret(t, dir, "pw")
	empty := filepath.Join(dir, "empty")
	os.WriteFile(empty, nil, 0o600)
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"--sasl-user", "u", "--sasl-password-file", pass}, "need --sasl-mechanism"},
		{[]string{"--sasl-mechanism", "PLAIN", "--sasl-user", "u"}, "needs --sasl-user and a password"},
		{[]string{"--sasl-mechanism", "PLAIN", "--sasl-password-file", pass}, "needs --sasl-user and a password"},
		{[]string{"--sasl-mechanism", "PLAIN", "--sasl-user", "u", "--sasl-password-file", pass, "--sasl-password", "x"}, "not both"},
		{[]string{"--sasl-mechanism", "PLAIN", "--sasl-user", "u", "--sasl-password-file", filepath.Join(dir, "absent")}, "no such file"},
		{[]string{"--sasl-mechanism", "PLAIN", "--sasl-user", "u", "--sasl-password-file", empty}, "is empty"},
		{[]string{"--sasl-mechanism", "PLAIN,GSSAPI", "--sasl-user", "u", "--sasl-password-file", pass}, `"GSSAPI"`},
	} {
		code, _, errOut := runCLI(t, append([]string{"broker", "--listen", "127.0.0.1:0"}, c.args...)...)
		if code == 0 || !strings.Contains(errOut, c.want) {
			t.Errorf("broker %s: exit %d, stderr %q; want an error saying %q", strings.Join(c.args, " "), code, errOut, c.want)
		}
	}
}

// kcatPath returns kcat's path; without kcat the test skips, unless
// PARASTREAM_REQUIRE_INTEROP=1 (CI sets it and installs kcat).
func kcatPath(t *testing.T) string {
	t.Helper()
	kcat, err := exec.LookPath("kcat")
	if err == nil {
		return kcat
	}
	msg := "kcat (librdkafka) is not in PATH: apt-get install kcat"
	if os.Getenv("PARASTREAM_REQUIRE_INTEROP") == "1" {
		t.Fatal(msg + " (PARASTREAM_REQUIRE_INTEROP=1 makes this a failure)")
	}
	t.Skip("skipping the kcat interop test: " + msg)
	return ""
}

// kcatClient runs kcat with a configuration file (so that the password is
// not on its command line), as a user would.
type kcatClient struct {
	t          *testing.T
	bin, addr  string
	properties string // the -F file
}

func newKcat(t *testing.T, bin, addr string, props map[string]string) *kcatClient {
	t.Helper()
	var b strings.Builder
	for k, v := range props {
		fmt.Fprintf(&b, "%s=%s\n", k, v)
	}
	f := filepath.Join(t.TempDir(), "kcat.conf")
	if err := os.WriteFile(f, []byte(b.String()), 0o600); err != nil {
		t.Fatal(err)
	}
	return &kcatClient{t: t, bin: bin, addr: addr, properties: f}
}

// run runs kcat with args and stdin, and returns its stdout, stderr and
// error.
func (k *kcatClient) run(stdin string, args ...string) (string, string, error) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, k.bin, append([]string{"-F", k.properties, "-b", k.addr}, args...)...)
	cmd.Stdin = strings.NewReader(stdin)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	return stdout.String(), stderr.String(), err
}

// produceConsume has kcat produce lines to topic, then consume the topic
// from the beginning: it must read back want.
func (k *kcatClient) produceConsume(topic string, lines, want []string) {
	k.t.Helper()
	if len(lines) > 0 {
		if _, stderr, err := k.run(strings.Join(lines, "\n")+"\n", "-P", "-t", topic, "-p", "0"); err != nil {
			k.t.Fatalf("kcat -P: %v\n%s", err, stderr)
		}
	}
	out, stderr, err := k.run("", "-C", "-t", topic, "-o", "beginning", "-e", "-q", "-f", "%s\n")
	if err != nil {
		k.t.Fatalf("kcat -C: %v\n%s", err, stderr)
	}
	if got := strings.Fields(out); strings.Join(got, " ") != strings.Join(want, " ") {
		k.t.Errorf("kcat consumed %q, want %q", got, want)
	}
}

// refused checks that kcat cannot list the topics.
func (k *kcatClient) refused(why string) {
	k.t.Helper()
	out, stderr, err := k.run("", "-L", "-m", "2")
	if err == nil {
		k.t.Errorf("kcat -L with %s: no error\n%s", why, out)
	} else if !strings.Contains(stderr, "Authentication failed") {
		k.t.Errorf("kcat -L with %s: stderr does not say that the authentication failed:\n%s", why, stderr)
	}
}

// createTopic creates topic with kafka-go; password, if given, is the
// trainer user's, for SASL PLAIN.
func createTopic(t *testing.T, addr string, tlsConfig *tls.Config, password, topic string) {
	t.Helper()
	tr := &kafka.Transport{TLS: tlsConfig}
	if password != "" {
		tr.SASL = plain.Mechanism{Username: "trainer", Password: password}
	}
	defer tr.CloseIdleConnections()
	c := &kafka.Client{Addr: kafka.TCP(addr), Timeout: 30 * time.Second, Transport: tr}
	resp, err := c.CreateTopics(context.Background(), &kafka.CreateTopicsRequest{
		Topics: []kafka.TopicConfig{{Topic: topic, NumPartitions: 1, ReplicationFactor: 1}}})
	if err == nil {
		err = resp.Errors[topic]
	}
	if err != nil {
		t.Fatalf("creating topic %s: %v", topic, err)
	}
}

// TestBrokerKcatInterop: kcat (librdkafka) produces and consumes through
// `parastream broker` over SASL PLAIN, SCRAM-SHA-256 and SCRAM-SHA-512, in
// plaintext and over TLS, and over TLS alone; a wrong password is refused;
// a password changed in the password file applies when the broker starts
// again on its data directory, and the old one is refused.
func TestBrokerKcatInterop(t *testing.T) {
	kcat := kcatPath(t)
	dir := t.TempDir()
	cert, key := testenv.SelfSignedCert(t, dir)
	dataDir := filepath.Join(dir, "data")
	passFile := writeSecret(t, dir, "pw-1")
	mechanisms := []string{"PLAIN", "SCRAM-SHA-256", "SCRAM-SHA-512"}
	sasl := func(protocol, mech, password string) map[string]string {
		p := map[string]string{"security.protocol": protocol, "sasl.mechanism": mech, "sasl.username": "trainer", "sasl.password": password}
		if strings.HasSuffix(protocol, "SSL") {
			p["ssl.ca.location"] = cert
		}
		return p
	}
	brokerArgs := []string{"--data-dir", dataDir, "--sasl-mechanism", strings.Join(mechanisms, ","), "--sasl-user", "trainer", "--sasl-password-file", passFile}

	t.Run("SASL_PLAINTEXT", func(t *testing.T) {
		addr, stop := startBrokerCmd(t, brokerArgs...)
		createTopic(t, addr, nil, "pw-1", "interop")
		var want []string
		for _, mech := range mechanisms {
			want = append(want, "over-"+mech)
			newKcat(t, kcat, addr, sasl("SASL_PLAINTEXT", mech, "pw-1")).produceConsume("interop", []string{"over-" + mech}, want)
			newKcat(t, kcat, addr, sasl("SASL_PLAINTEXT", mech, "pw-2")).refused("a wrong " + mech + " password")
		}
		// librdkafka without ApiVersions falls back to SaslHandshake v0
		// and SASL tokens framed by their length alone.
		old := sasl("SASL_PLAINTEXT", "SCRAM-SHA-256", "pw-1")
		old["api.version.request"], old["broker.version.fallback"] = "false", "0.10.2"
		if out, stderr, err := newKcat(t, kcat, addr, old).run("", "-L"); err != nil || !strings.Contains(out, "interop") {
			t.Errorf("kcat -L after SaslHandshake v0: %v\n%s%s", err, out, stderr)
		}
		stop()

		// The password changes in its file; the broker starts again on
		// the same data directory.
		writeSecret(t, dir, "pw-2")
		addr, _ = startBrokerCmd(t, brokerArgs...)
		for _, mech := range mechanisms {
			newKcat(t, kcat, addr, sasl("SASL_PLAINTEXT", mech, "pw-1")).refused("the password before the restart (" + mech + ")")
		}
		newKcat(t, kcat, addr, sasl("SASL_PLAINTEXT", "SCRAM-SHA-512", "pw-2")).produceConsume("interop", []string{"after-restart"}, append(want, "after-restart"))
	})

	t.Run("SASL_SSL", func(t *testing.T) {
		addr, _ := startBrokerCmd(t, "--tls-cert", cert, "--tls-key", key,
			"--sasl-mechanism", strings.Join(mechanisms, ","), "--sasl-user", "trainer", "--sasl-password-file", writeSecret(t, t.TempDir(), "pw-tls"))
		clientTLS, err := stream.LoadTLS(cert, "", "", false)
		if err != nil {
			t.Fatal(err)
		}
		createTopic(t, addr, clientTLS, "pw-tls", "interop")
		var want []string
		for _, mech := range mechanisms {
			want = append(want, "tls-"+mech)
			newKcat(t, kcat, addr, sasl("SASL_SSL", mech, "pw-tls")).produceConsume("interop", []string{"tls-" + mech}, want)
		}
		newKcat(t, kcat, addr, sasl("SASL_SSL", "SCRAM-SHA-512", "pw-1")).refused("a wrong password over TLS")
	})

	t.Run("SSL", func(t *testing.T) {
		addr, _ := startBrokerCmd(t, "--tls-cert", cert, "--tls-key", key)
		clientTLS, err := stream.LoadTLS(cert, "", "", false)
		if err != nil {
			t.Fatal(err)
		}
		createTopic(t, addr, clientTLS, "", "interop")
		newKcat(t, kcat, addr, map[string]string{"security.protocol": "SSL", "ssl.ca.location": cert}).
			produceConsume("interop", []string{"over-tls"}, []string{"over-tls"})
		// A client that does not trust the certificate is refused.
		out, stderr, err := newKcat(t, kcat, addr, map[string]string{"security.protocol": "SSL"}).run("", "-L", "-m", "3")
		if err == nil {
			t.Errorf("kcat -L without the CA: no error\n%s", out)
		} else if !strings.Contains(stderr, "certificate verify failed") {
			t.Errorf("kcat -L without the CA: stderr does not say that the certificate is not trusted:\n%s", stderr)
		}
	})
}
