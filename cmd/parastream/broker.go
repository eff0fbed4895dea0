package main

import (
	"cmp"
	"context"
	"fmt"
	"log/slog"
	"os"
	"strings"

	"github.com/parastream/parastream/stream"
)

const brokerUsage = "parastream broker [--listen 127.0.0.1:9092] [--data-dir DIR] [--partitions N] [--sync] [--tls-cert FILE --tls-key FILE] [--sasl-mechanism PLAIN|SCRAM-SHA-256|SCRAM-SHA-512 --sasl-user U --sasl-password P]"

// runBroker runs the embedded broker until SIGINT or SIGTERM.
func runBroker(ctx context.Context, e *env, args []string) error {
	fs := newFlags(e, "broker", brokerUsage)
	listen := fs.String("listen", stream.DefaultListen, "address to listen on (port 0 picks a free one)")
	dataDir := fs.String("data-dir", "", "directory for the broker's log and state, reloaded on start (empty: in memory)")
	partitions := fs.Int("partitions", stream.DefaultPartitions, "partitions of topics created without a count")
	sync := fs.Bool("sync", false, "fsync every produced batch before acknowledging it")
	cert := fs.String("tls-cert", "", "PEM file of the broker's certificate: serve TLS only")
	key := fs.String("tls-key", "", "PEM file of the certificate's key")
	mech := fs.String("sasl-mechanism", "", "require SASL authentication: PLAIN, SCRAM-SHA-256 or SCRAM-SHA-512")
	user := fs.String("sasl-user", "", "the SASL user clients authenticate as")
	pass := fs.String("sasl-password", "", "the SASL user's password (default: $PARASTREAM_SASL_PASSWORD)")
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return fmt.Errorf("%w: unexpected argument %q", errUsage, fs.Arg(0))
	}
	cfg := stream.BrokerConfig{Listen: *listen, DataDir: *dataDir, Partitions: *partitions, SyncWrites: *sync,
		Logger: slog.New(slog.NewTextHandler(e.stderr, &slog.HandlerOptions{Level: slog.LevelWarn}))}
	if (*cert == "") != (*key == "") {
		return fmt.Errorf("%w: give both --tls-cert and --tls-key", errUsage)
	}
	if *cert != "" {
		t, err := stream.LoadServerTLS(*cert, *key)
		if err != nil {
			return err
		}
		cfg.TLS = t
	}
	password := cmp.Or(*pass, os.Getenv("PARASTREAM_SASL_PASSWORD"))
	switch {
	case *mech != "":
		cfg.Users = []stream.BrokerUser{{Mechanism: strings.ToUpper(*mech), User: *user, Password: password}}
	case *user != "" || *pass != "":
		return fmt.Errorf("%w: --sasl-user and --sasl-password need --sasl-mechanism", errUsage)
	}
	if err := cfg.Validate(); err != nil {
		return fmt.Errorf("%w: %v", errUsage, err)
	}
	b, err := stream.StartBroker(ctx, cfg)
	if err != nil {
		return err
	}
	where := "in memory"
	if *dataDir != "" {
		where = "data directory " + *dataDir
	}
	if cfg.TLS != nil {
		where += ", TLS"
	}
	if len(cfg.Users) > 0 {
		where += ", SASL " + cfg.Users[0].Mechanism
	}
	fmt.Fprintf(e.stdout, "broker listening on %s (%s)\n", b.Addr(), where)
	<-ctx.Done()
	err = b.Close()
	fmt.Fprintln(e.stdout, "broker stopped")
	return err
}
