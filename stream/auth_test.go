package stream_test

import (
	"bytes"
	"context"
	"crypto/tls"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/parastream/parastream/internal/testenv"
	"github.com/parastream/parastream/stream"
)

// roundTrip publishes a small dataset through cc and reads it back with
// a consumer: every row once.
func roundTrip(t *testing.T, cc stream.ClientConfig) {
	t.Helper()
	root := t.TempDir()
	writeDataset(t, root, "sts", map[string]int{"train": 700}, 700)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	if _, err := stream.Publish(ctx, root, stream.PublishConfig{Client: cc, BatchRows: 100, Logger: testLogger(t)}); err != nil {
		t.Fatal(err)
	}
	consumeAll(t, cc, "auth")
}

// consumeAll reads the 700 rows roundTrip published, as group.
func consumeAll(t *testing.T, cc stream.ClientConfig, group string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	c, err := stream.NewConsumer(ctx, stream.ConsumerConfig{Client: cc, Dataset: "sts", Group: group, Epochs: 1, Logger: testLogger(t)})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	seen, err := drain(ctx, c)
	if err != nil {
		t.Fatal(err)
	}
	checkEpochs(t, "consumer "+group, seen, 1, 700)
}

// refused publishes through cc and returns the error, failing the test
// when there is none or when it took the whole timeout (a hang).
func refused(t *testing.T, cc stream.ClientConfig) error {
	t.Helper()
	root := t.TempDir()
	writeDataset(t, root, "sts", map[string]int{"train": 10}, 10)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	_, err := stream.Publish(ctx, root, stream.PublishConfig{Client: cc, Logger: testLogger(t)})
	if err == nil {
		t.Fatal("published without a valid TLS or SASL handshake")
	}
	if errors.Is(err, context.DeadlineExceeded) || ctx.Err() != nil {
		t.Fatalf("publishing hung until the deadline: %v", err)
	}
	t.Log(err)
	return err
}

func TestTLS(t *testing.T) {
	certFile, keyFile := testenv.SelfSignedCert(t, t.TempDir())
	serverTLS, err := stream.LoadServerTLS(certFile, keyFile)
	if err != nil {
		t.Fatal(err)
	}
	b, err := stream.StartBroker(context.Background(), stream.BrokerConfig{Listen: "127.0.0.1:0", TLS: serverTLS, Logger: testLogger(t)})
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	brokers := []string{b.Addr()}

	t.Run("trusted", func(t *testing.T) {
		clientTLS, err := stream.LoadTLS(certFile, "", "", false)
		if err != nil {
			t.Fatal(err)
		}
		roundTrip(t, stream.ClientConfig{Brokers: brokers, TLS: clientTLS})
	})
	t.Run("untrusted", func(t *testing.T) {
		err := refused(t, stream.ClientConfig{Brokers: brokers, TLS: &tls.Config{MinVersion: tls.VersionTLS12}})
		if !strings.Contains(err.Error(), "certificate") {
			t.Errorf("the error does not say that the certificate is not trusted: %v", err)
		}
	})
	t.Run("plaintext", func(t *testing.T) {
		if err := refused(t, stream.ClientConfig{Brokers: brokers}); !errors.Is(err, stream.ErrAuthentication) || !strings.Contains(err.Error(), "TLS") {
			t.Errorf("a plaintext client: %v, want ErrAuthentication naming TLS", err)
		}
	})
}

func TestSASL(t *testing.T) {
	for _, mech := range []string{stream.SASLPlain, stream.SASLScramSHA256, stream.SASLScramSHA512} {
		t.Run(mech, func(t *testing.T) {
			b, err := stream.StartBroker(context.Background(), stream.BrokerConfig{
				Listen: "127.0.0.1:0", Logger: testLogger(t),
				Users: []stream.BrokerUser{{Mechanism: mech, User: "trainer", Password: "s3cret-" + mech}},
			})
			if err != nil {
				t.Fatal(err)
			}
			defer b.Close()
			cc := stream.ClientConfig{Brokers: []string{b.Addr()}, SASLMechanism: mech, SASLUser: "trainer", SASLPassword: "s3cret-" + mech}
			roundTrip(t, cc)

			wrong := cc
			wrong.SASLPassword = "guess"
			if err := refused(t, wrong); !errors.Is(err, stream.ErrAuthentication) || !strings.Contains(err.Error(), "password") {
				t.Errorf("the error does not say that the SASL credentials were refused: %v", err)
			}
			if _, err := stream.NewConsumer(context.Background(), stream.ConsumerConfig{Client: wrong, Dataset: "sts", Group: "g"}); !errors.Is(err, stream.ErrAuthentication) {
				t.Errorf("a consumer with the wrong password: %v, want ErrAuthentication", err)
			}
			if err := refused(t, stream.ClientConfig{Brokers: cc.Brokers}); !errors.Is(err, stream.ErrAuthentication) {
				t.Errorf("a client without SASL: %v, want ErrAuthentication", err)
			}
		})
	}
}

func TestBrokerConfigValidateAuth(t *testing.T) {
	for _, c := range []stream.BrokerConfig{
		{TLS: &tls.Config{}},
		{Users: []stream.BrokerUser{{Mechanism: "GSSAPI", User: "u", Password: "p"}}},
		{Users: []stream.BrokerUser{{Mechanism: stream.SASLPlain, User: "u"}}},
	} {
		if err := c.Validate(); err == nil {
			t.Errorf("%+v: no error", c)
		}
	}
}

// TestSASLPasswordChangedOnRestart starts a broker on a data directory
// with one password, then again on the same directory with another: the
// old password is refused, the new one reads what the first run stored.
func TestSASLPasswordChangedOnRestart(t *testing.T) {
	dir := t.TempDir()
	start := func(password string) *stream.Broker {
		t.Helper()
		b, err := stream.StartBroker(context.Background(), stream.BrokerConfig{
			Listen: "127.0.0.1:0", DataDir: dir, Logger: testLogger(t),
			Users: []stream.BrokerUser{
				{Mechanism: stream.SASLPlain, User: "trainer", Password: password},
				{Mechanism: stream.SASLScramSHA512, User: "trainer", Password: password},
			},
		})
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
	b := start("old-password")
	cc := stream.ClientConfig{Brokers: []string{b.Addr()}, SASLMechanism: stream.SASLScramSHA512, SASLUser: "trainer", SASLPassword: "old-password"}
	roundTrip(t, cc)
	b.Close()
	noSecrets(t, dir, "old-password")

	// What an earlier version left: kfake's users, PLAIN passwords in
	// clear, which kfake reloads over those it is given.
	if err := os.WriteFile(filepath.Join(dir, "sasl.json"), []byte(`{"version":1,"plain":{"trainer":"stale-password"}}`), 0o644); err != nil {
		t.Fatal(err)
	}
	b = start("new-password")
	defer func() {
		b.Close()
		noSecrets(t, dir, "new-password", "stale-password")
	}()
	for _, mech := range []string{stream.SASLPlain, stream.SASLScramSHA512} {
		for _, pw := range []string{"old-password", "stale-password"} {
			old := stream.ClientConfig{Brokers: []string{b.Addr()}, SASLMechanism: mech, SASLUser: "trainer", SASLPassword: pw}
			if err := refused(t, old); !errors.Is(err, stream.ErrAuthentication) {
				t.Errorf("%s with the password %q of an earlier run: %v, want ErrAuthentication", mech, pw, err)
			}
		}
	}
	consumeAll(t, stream.ClientConfig{Brokers: []string{b.Addr()}, SASLMechanism: stream.SASLPlain, SASLUser: "trainer", SASLPassword: "new-password"}, "after-restart")
}

// TestSASLMechanismNotEnabled: a client asking for a mechanism the broker
// was not given is told so.
func TestSASLMechanismNotEnabled(t *testing.T) {
	b, err := stream.StartBroker(context.Background(), stream.BrokerConfig{
		Listen: "127.0.0.1:0", Logger: testLogger(t),
		Users: []stream.BrokerUser{{Mechanism: stream.SASLScramSHA256, User: "trainer", Password: "pw"}},
	})
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	err = refused(t, stream.ClientConfig{Brokers: []string{b.Addr()}, SASLMechanism: stream.SASLPlain, SASLUser: "trainer", SASLPassword: "pw"})
	if !errors.Is(err, stream.ErrAuthentication) || !strings.Contains(err.Error(), "does not take SASL PLAIN") {
		t.Errorf("PLAIN against a SCRAM-SHA-256 broker: %v", err)
	}
}

// TestBrokerGateHostileClients sends what is not a SASL exchange to a
// broker that requires one, over TLS: each connection is closed, and the
// broker goes on serving a proper client.
func TestBrokerGateHostileClients(t *testing.T) {
	certFile, keyFile := testenv.SelfSignedCert(t, t.TempDir())
	serverTLS, err := stream.LoadServerTLS(certFile, keyFile)
	if err != nil {
		t.Fatal(err)
	}
	b, err := stream.StartBroker(context.Background(), stream.BrokerConfig{
		Listen: "127.0.0.1:0", TLS: serverTLS, Logger: testLogger(t),
		Users: []stream.BrokerUser{{Mechanism: stream.SASLPlain, User: "trainer", Password: "pw"}},
	})
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	clientTLS, err := stream.LoadTLS(certFile, "", "", false)
	if err != nil {
		t.Fatal(err)
	}
	for name, payload := range map[string][]byte{
		"a huge frame":           {0x7f, 0xff, 0xff, 0xff},
		"an unknown API key":     {0, 0, 0, 8, 0x7f, 0x00, 0, 0, 0, 0, 0, 1},
		"a truncated header":     {0, 0, 0, 2, 0, 17},
		"authenticate first":     {0, 0, 0, 12, 0, 36, 0, 1, 0, 0, 0, 1, 0xff, 0xff, 0, 0},
		"a metadata request":     {0, 0, 0, 10, 0, 3, 0, 1, 0, 0, 0, 1, 0xff, 0xff},
		"a handshake of garbage": {0, 0, 0, 12, 0, 17, 0, 1, 0, 0, 0, 1, 0xff, 0xff, 0x7f, 0xff},
	} {
		conn, err := tls.Dial("tcp", b.Addr(), clientTLS)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		conn.SetDeadline(time.Now().Add(10 * time.Second))
		conn.Write(payload)
		buf := make([]byte, 256)
		for err == nil {
			_, err = conn.Read(buf)
		}
		if errors.Is(err, os.ErrDeadlineExceeded) {
			t.Errorf("%s: the broker kept the connection open", name)
		}
		conn.Close()
	}
	roundTrip(t, stream.ClientConfig{Brokers: []string{b.Addr()}, TLS: clientTLS, SASLMechanism: stream.SASLPlain, SASLUser: "trainer", SASLPassword: "pw"})
}

// noSecrets fails the test if a file under dir holds one of secrets.
func noSecrets(t *testing.T, dir string, secrets ...string) {
	t.Helper()
	err := filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		data, err := os.ReadFile(path)
		for _, s := range secrets {
			if bytes.Contains(data, []byte(s)) {
				t.Errorf("%s holds the password %q", path, s)
			}
		}
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
}
