package stream_test

import (
	"context"
	"crypto/tls"
	"errors"
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
	c, err := stream.NewConsumer(ctx, stream.ConsumerConfig{Client: cc, Dataset: "sts", Group: "auth", Epochs: 1, Logger: testLogger(t)})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	seen, err := drain(ctx, c)
	if err != nil {
		t.Fatal(err)
	}
	checkEpochs(t, "consumer", seen, 1, 700)
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
