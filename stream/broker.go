package stream

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"net"
	"os"
	"path/filepath"
	"strconv"

	"github.com/twmb/franz-go/pkg/kfake"
)

// Defaults of BrokerConfig.
const (
	DefaultListen     = "127.0.0.1:9092"
	DefaultPartitions = 4
)

// BrokerConfig configures the embedded broker. The zero value is an
// in-memory broker on DefaultListen.
type BrokerConfig struct {
	// Listen is the address to listen on, host:port; port 0 picks a free
	// port (see Broker.Addr). "" means DefaultListen.
	Listen string
	// DataDir is where the broker keeps its log segments and state, and
	// where it reloads them from on start. "" keeps everything in memory:
	// it is lost when the broker stops.
	DataDir string
	// Partitions is the partition count of topics created without one
	// (auto-created, or CreateTopics with -1). 0 means DefaultPartitions.
	Partitions int
	// SyncWrites fsyncs every produced batch before acknowledging it, so
	// that an acknowledged message survives a crash of the machine, not
	// only of the process. Slower.
	SyncWrites bool
	// TLS, when set, makes the broker accept TLS connections only, with
	// this configuration (its Certificates are the broker's); see
	// LoadServerTLS.
	TLS *tls.Config
	// Users, when given, makes the broker require SASL authentication as
	// one of them; without, it takes any client. The broker keeps them in
	// memory only (SCRAM passwords salted): each start takes the users it
	// is given, so a changed password applies from the next start and the
	// old one is refused.
	Users []BrokerUser
	// AutoCreateTopics creates a topic a client asks for that does not
	// exist (with Partitions partitions), as a Kafka broker with
	// auto.create.topics.enable does. Without it such a request is
	// refused, and logged once a minute a topic.
	AutoCreateTopics bool
	// Logger receives the broker's warnings and errors; nil discards them.
	Logger *slog.Logger
}

// BrokerUser is a SASL user of the embedded broker: the mechanism it
// authenticates with (SASLPlain, SASLScramSHA256 or SASLScramSHA512), its
// name and password. Users may do everything. One name may be given once
// for each mechanism it may use.
type BrokerUser struct {
	Mechanism, User, Password string
}

// Validate reports a setting out of range, saying how to fix it.
func (c BrokerConfig) Validate() error {
	var errs []error
	if c.Listen != "" {
		if _, port, err := net.SplitHostPort(c.Listen); err != nil {
			errs = append(errs, fmt.Errorf("stream: BrokerConfig.Listen %q: give host:port, such as %s: %v", c.Listen, DefaultListen, err))
		} else if p, err := strconv.Atoi(port); err != nil || p < 0 || p > 65535 {
			errs = append(errs, fmt.Errorf("stream: BrokerConfig.Listen %q: the port must be a number from 0 to 65535", c.Listen))
		}
	}
	if c.Partitions < 0 {
		errs = append(errs, fmt.Errorf("stream: BrokerConfig.Partitions is %d: give a positive count, or 0 for %d", c.Partitions, DefaultPartitions))
	}
	if c.TLS != nil && len(c.TLS.Certificates) == 0 && c.TLS.GetCertificate == nil {
		errs = append(errs, errors.New("stream: BrokerConfig.TLS has no certificate: give the broker's certificate and key (LoadServerTLS)"))
	}
	seen := map[BrokerUser]bool{}
	for i, u := range c.Users {
		if k := (BrokerUser{Mechanism: u.Mechanism, User: u.User}); seen[k] {
			errs = append(errs, fmt.Errorf("stream: BrokerConfig.Users[%d]: user %q is given twice for %s", i, u.User, u.Mechanism))
		} else {
			seen[k] = true
		}
		switch u.Mechanism {
		case SASLPlain, SASLScramSHA256, SASLScramSHA512:
		default:
			errs = append(errs, fmt.Errorf("stream: BrokerConfig.Users[%d]: SASL mechanism %q: give PLAIN, SCRAM-SHA-256 or SCRAM-SHA-512", i, u.Mechanism))
		}
		if u.User == "" || u.Password == "" {
			errs = append(errs, fmt.Errorf("stream: BrokerConfig.Users[%d]: give a user name and a password", i))
		}
	}
	return errors.Join(errs...)
}

// Broker is an embedded single-node broker that speaks the Kafka protocol:
// franz-go's kfake, with its on-disk persistence. Any Kafka client (kafka-go,
// franz-go, librdkafka's kcat) talks to it at Addr.
//
// With a DataDir, kfake appends every produced record batch to segment
// files as it arrives, appends group offset commits to a log, rewrites its
// topic list whenever it changes, and writes the rest of its state on
// Close. Start on the same directory reloads it all: the topics, their
// messages at the same offsets, the consumer groups' committed offsets. A
// process killed without Close keeps what reached the segment files (the
// operating system's page cache survives the process); SyncWrites also
// survives a crash of the machine.
//
// TLS and SASL are the broker's own, in front of kfake (broker_gate.go);
// its SASL users are never written to the data directory.
type Broker struct {
	cluster *kfake.Cluster
	addr    string
	counter *brokerCounter
}

// StartBroker starts a broker and returns once it accepts connections.
func StartBroker(ctx context.Context, cfg BrokerConfig) (b *Broker, err error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	listen := cfg.Listen
	if listen == "" {
		listen = DefaultListen
	}
	partitions := cfg.Partitions
	if partitions == 0 {
		partitions = DefaultPartitions
	}
	logger := cfg.Logger
	if logger == nil {
		logger = slog.New(slog.DiscardHandler)
	}
	var users *saslUsers
	if len(cfg.Users) > 0 {
		if users, err = newSASLUsers(cfg.Users); err != nil {
			return nil, err
		}
	}
	counter := newBrokerCounter()
	opts := []kfake.Opt{
		kfake.NumBrokers(1),
		kfake.ListenFn(func(network, _ string) (net.Listener, error) {
			var lc net.ListenConfig
			ln, err := lc.Listen(ctx, network, listen)
			if err != nil {
				return ln, err
			}
			if cfg.TLS != nil || users != nil {
				ln = newGate(ln, cfg.TLS, users, logger)
			}
			return countingListener{Listener: ln, k: counter}, nil
		}),
		kfake.DefaultNumPartitions(partitions),
		kfake.WithLogger(kfakeLogger{logger}),
		kfake.ClusterID("parastream"),
	}
	if cfg.DataDir != "" {
		if err := os.MkdirAll(cfg.DataDir, 0o755); err != nil {
			return nil, fmt.Errorf("starting broker: %w", err)
		}
		// kfake's own SASL is off (see broker_gate.go), but an earlier
		// version used it and left its users in sasl.json, PLAIN
		// passwords in clear, which kfake would load and save again.
		if err := os.Remove(filepath.Join(cfg.DataDir, "sasl.json")); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return nil, fmt.Errorf("starting broker: removing the SASL users an earlier version saved: %w", err)
		}
		opts = append(opts, kfake.DataDir(cfg.DataDir))
	}
	if cfg.SyncWrites {
		opts = append(opts, kfake.SyncWrites())
	}
	if cfg.AutoCreateTopics {
		opts = append(opts, kfake.AllowAutoTopicCreation())
	}
	// kfake panics on some inconsistent persisted state; here that is an
	// error naming the data directory.
	defer func() {
		if p := recover(); p != nil {
			b, err = nil, fmt.Errorf("starting broker on data directory %q: kfake panicked: %v", cfg.DataDir, p)
		}
	}()
	c, err := kfake.NewCluster(opts...)
	if err != nil {
		if cfg.DataDir != "" {
			return nil, fmt.Errorf("starting broker on %s (data directory %s): %w", listen, cfg.DataDir, err)
		}
		return nil, fmt.Errorf("starting broker on %s: %w", listen, err)
	}
	addrs := c.ListenAddrs()
	if len(addrs) != 1 {
		c.Close()
		return nil, fmt.Errorf("starting broker: listening on %d addresses, want 1", len(addrs))
	}
	if !cfg.AutoCreateTopics {
		watchUnknownTopics(c, logger)
	}
	counter.observe(c)
	logger.Info("broker started", "addr", addrs[0], "data_dir", cfg.DataDir)
	return &Broker{cluster: c, addr: addrs[0], counter: counter}, nil
}

// LoadServerTLS makes a broker's TLS configuration from its certificate
// and key, PEM files (the certificate file may hold the chain after it).
func LoadServerTLS(certFile, keyFile string) (*tls.Config, error) {
	cert, err := tls.LoadX509KeyPair(certFile, keyFile)
	if err != nil {
		return nil, fmt.Errorf("reading the broker's TLS certificate: %w", err)
	}
	return &tls.Config{MinVersion: tls.VersionTLS12, Certificates: []tls.Certificate{cert}}, nil
}

// Addr is the host:port the broker listens on: the bootstrap address
// clients are given.
func (b *Broker) Addr() string { return b.addr }

// Stats is what the broker has served since it started.
func (b *Broker) Stats() BrokerStats { return b.counter.stats() }

// Close stops accepting connections, writes the broker's state to its data
// directory, if any, and stops. Close after Close is a no-op.
func (b *Broker) Close() error {
	b.cluster.Close()
	return nil
}

// kfakeLogger hands kfake's log lines to slog.
type kfakeLogger struct{ l *slog.Logger }

func (k kfakeLogger) Logf(level kfake.LogLevel, format string, args ...any) {
	var l slog.Level
	switch level {
	case kfake.LogLevelError:
		l = slog.LevelError
	case kfake.LogLevelWarn:
		l = slog.LevelWarn
	case kfake.LogLevelInfo:
		l = slog.LevelInfo
	default:
		l = slog.LevelDebug
	}
	ctx := context.Background()
	if k.l.Enabled(ctx, l) {
		k.l.Log(ctx, l, fmt.Sprintf(format, args...), "component", "kfake")
	}
}
