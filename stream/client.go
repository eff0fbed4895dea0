package stream

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"syscall"
	"time"

	"github.com/segmentio/kafka-go"
	"github.com/segmentio/kafka-go/sasl"
	"github.com/segmentio/kafka-go/sasl/plain"
	"github.com/segmentio/kafka-go/sasl/scram"
)

// SASL mechanisms a ClientConfig accepts.
const (
	SASLPlain       = "PLAIN"
	SASLScramSHA256 = "SCRAM-SHA-256"
	SASLScramSHA512 = "SCRAM-SHA-512"
)

// ClientConfig says how to reach the brokers: their addresses and, for a
// real cluster, TLS and SASL. The publisher and the consumer share it.
type ClientConfig struct {
	// Brokers are bootstrap addresses, host:port. Required.
	Brokers []string
	// TLS, when set, encrypts every connection; see LoadTLS.
	TLS *tls.Config
	// SASLMechanism is "" (no authentication), SASLPlain, SASLScramSHA256
	// or SASLScramSHA512; SASLUser and SASLPassword are its credentials.
	SASLMechanism string
	SASLUser      string
	SASLPassword  string
	// ClientID names the client to the brokers; "" means "parastream".
	ClientID string
	// Retry is how long a request that fails once the client has been
	// connected (a broker restarting: a fetch, listing offsets, committing
	// a group's offsets) is tried again, with backoff, before the command
	// gives up with ErrUnreachable; 0 means DefaultRetry (2 minutes). At
	// most 24 hours.
	Retry time.Duration
}

// MarshalJSON writes c as its broker list: a configuration kept in a
// file (a checkpoint's run.json) never holds the credentials or the TLS
// setup, which are given again.
func (c ClientConfig) MarshalJSON() ([]byte, error) { return json.Marshal(c.Brokers) }

// UnmarshalJSON reads a broker list (MarshalJSON) into c.Brokers.
func (c *ClientConfig) UnmarshalJSON(data []byte) error { return json.Unmarshal(data, &c.Brokers) }

// Validate reports a setting that cannot work, saying how to fix it.
func (c ClientConfig) Validate() error {
	var errs []error
	if len(c.Brokers) == 0 {
		errs = append(errs, errors.New("stream: no brokers: give at least one host:port (parastream broker prints its address)"))
	}
	for _, b := range c.Brokers {
		if !strings.Contains(b, ":") {
			errs = append(errs, fmt.Errorf("stream: broker %q: give host:port", b))
		}
	}
	if c.Retry < 0 || c.Retry > maxRetry {
		errs = append(errs, fmt.Errorf("stream: broker retry %v: give a positive duration of at most %v (0: the default, %v)", c.Retry, maxRetry, DefaultRetry))
	}
	switch c.SASLMechanism {
	case "":
		if c.SASLUser != "" {
			errs = append(errs, errors.New("stream: a SASL user without a mechanism: give PLAIN, SCRAM-SHA-256 or SCRAM-SHA-512"))
		}
	case SASLPlain, SASLScramSHA256, SASLScramSHA512:
		if c.SASLUser == "" || c.SASLPassword == "" {
			errs = append(errs, fmt.Errorf("stream: SASL %s needs a user and a password", c.SASLMechanism))
		}
	default:
		errs = append(errs, fmt.Errorf("stream: SASL mechanism %q: give PLAIN, SCRAM-SHA-256 or SCRAM-SHA-512", c.SASLMechanism))
	}
	return errors.Join(errs...)
}

func (c ClientConfig) mechanism() (sasl.Mechanism, error) {
	switch c.SASLMechanism {
	case "":
		return nil, nil
	case SASLPlain:
		return plain.Mechanism{Username: c.SASLUser, Password: c.SASLPassword}, nil
	case SASLScramSHA256:
		return scram.Mechanism(scram.SHA256, c.SASLUser, c.SASLPassword)
	case SASLScramSHA512:
		return scram.Mechanism(scram.SHA512, c.SASLUser, c.SASLPassword)
	}
	return nil, c.Validate()
}

func (c ClientConfig) clientID() string {
	if c.ClientID == "" {
		return "parastream"
	}
	return c.ClientID
}

// transport is what kafka.Writer and kafka.Client use.
func (c ClientConfig) transport() (*kafka.Transport, error) {
	mech, err := c.mechanism()
	if err != nil {
		return nil, err
	}
	return &kafka.Transport{
		ClientID:    c.clientID(),
		TLS:         c.TLS,
		SASL:        mech,
		DialTimeout: 10 * time.Second,
		MetadataTTL: 10 * time.Second,
	}, nil
}

// dialer is what kafka.Reader uses.
func (c ClientConfig) dialer() (*kafka.Dialer, error) {
	mech, err := c.mechanism()
	if err != nil {
		return nil, err
	}
	return &kafka.Dialer{
		ClientID:      c.clientID(),
		Timeout:       10 * time.Second,
		DualStack:     true,
		TLS:           c.TLS,
		SASLMechanism: mech,
	}, nil
}

// check opens a connection to a broker as the clients do, with TLS and
// SASL, and asks it for the cluster's brokers (a request a broker that
// requires SASL answers only once authenticated), so that a refused handshake is
// an error that says what failed rather than a bare EOF from the first
// request: a broker that refuses SASL credentials (as the embedded broker
// does) just closes the connection. Errors wrap ErrAuthentication where
// the handshake was refused.
func (c ClientConfig) check(ctx context.Context) error {
	d, err := c.dialer()
	if err != nil {
		return err
	}
	var errs []error
	for _, addr := range c.Brokers {
		conn, err := d.DialContext(ctx, "tcp", addr)
		if err == nil {
			conn.SetDeadline(time.Now().Add(d.Timeout))
			_, err = conn.Brokers()
			conn.Close()
		}
		if err == nil {
			return nil
		}
		errs = append(errs, c.explain(addr, err))
	}
	return errors.Join(errs...)
}

// explain says why connecting to addr failed with err.
func (c ClientConfig) explain(addr string, err error) error {
	closed := errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, syscall.ECONNRESET)
	switch {
	case errors.Is(err, kafka.SASLAuthenticationFailed):
		return fmt.Errorf("%w: broker %s refused SASL %s authentication of user %q: check the user and the password: %v",
			ErrAuthentication, addr, c.SASLMechanism, c.SASLUser, err)
	case errors.Is(err, kafka.UnsupportedSASLMechanism):
		return fmt.Errorf("%w: broker %s does not take SASL %s: give the mechanism it was started with: %v",
			ErrAuthentication, addr, c.SASLMechanism, err)
	case closed && c.SASLMechanism != "" && !strings.Contains(err.Error(), "SASL handshake failed"):
		return fmt.Errorf("%w: broker %s refused SASL %s authentication of user %q (it closed the connection): check the user and the password: %v",
			ErrAuthentication, addr, c.SASLMechanism, c.SASLUser, err)
	case closed && c.TLS == nil:
		return fmt.Errorf("%w: broker %s closed the connection: does it require TLS (--tls) or SASL (--sasl-mechanism)? %v", ErrAuthentication, addr, err)
	case closed:
		return fmt.Errorf("%w: broker %s closed the connection during the handshake: does it require SASL (--sasl-mechanism), or serve plaintext? %v", ErrAuthentication, addr, err)
	}
	return fmt.Errorf("connecting to broker %s: %w", addr, err)
}

// client is a kafka.Client for admin and group requests.
func (c ClientConfig) client() (*kafka.Client, error) {
	if err := c.Validate(); err != nil {
		return nil, err
	}
	t, err := c.transport()
	if err != nil {
		return nil, err
	}
	return &kafka.Client{Addr: kafka.TCP(c.Brokers...), Timeout: 30 * time.Second, Transport: t}, nil
}

// LoadTLS makes a TLS configuration from PEM files: caFile, when given,
// replaces the system's roots; certFile and keyFile, when given, are the
// client's certificate for brokers that require one. skipVerify accepts
// any server certificate (for tests only).
func LoadTLS(caFile, certFile, keyFile string, skipVerify bool) (*tls.Config, error) {
	cfg := &tls.Config{MinVersion: tls.VersionTLS12, InsecureSkipVerify: skipVerify}
	if caFile != "" {
		pem, err := os.ReadFile(caFile)
		if err != nil {
			return nil, fmt.Errorf("reading TLS CA: %w", err)
		}
		pool := x509.NewCertPool()
		if !pool.AppendCertsFromPEM(pem) {
			return nil, fmt.Errorf("reading TLS CA %s: no PEM certificate in it", caFile)
		}
		cfg.RootCAs = pool
	}
	if (certFile == "") != (keyFile == "") {
		return nil, errors.New("TLS client certificate: give both the certificate and the key file")
	}
	if certFile != "" {
		cert, err := tls.LoadX509KeyPair(certFile, keyFile)
		if err != nil {
			return nil, fmt.Errorf("reading TLS client certificate: %w", err)
		}
		cfg.Certificates = []tls.Certificate{cert}
	}
	return cfg, nil
}

// retryFor is how long to try again: Retry, or DefaultRetry when it is 0.
func (c ClientConfig) retryFor() time.Duration {
	if c.Retry == 0 {
		return DefaultRetry
	}
	return c.Retry
}
