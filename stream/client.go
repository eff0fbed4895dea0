package stream

import (
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"os"
	"strings"
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
}

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
	switch c.SASLMechanism {
	case "":
		if c.SASLUser != "" {
			errs = append(errs, errors.New("stream: a SASL user without a mechanism: give PLAIN, SCRAM-SHA-256 or SCRAM-SHA-512"))
		}
	case SASLPlain, SASLScramSHA256, SASLScramSHA512:
		if c.SASLUser == "" {
			errs = append(errs, fmt.Errorf("stream: SASL %s needs a user and password", c.SASLMechanism))
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
