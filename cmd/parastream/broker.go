package main

import (
	"context"
	"fmt"
	"log/slog"
	"strings"

	"github.com/parastream/parastream/cmd/parastream/internal/cli"
	"github.com/parastream/parastream/stream"
)

const brokerUsage = "parastream broker [--listen 127.0.0.1:9092] [--data-dir DIR] [--partitions N] [--sync] [--auto-create-topics] [--tls-cert FILE --tls-key FILE] [--sasl-mechanism PLAIN,SCRAM-SHA-256,SCRAM-SHA-512 --sasl-user U --sasl-password-file FILE]"

// runBroker runs the embedded broker until SIGINT or SIGTERM.
func runBroker(ctx context.Context, e *env, args []string) error {
	fs := newFlags(e, "broker", brokerUsage)
	listen := fs.String("listen", stream.DefaultListen, "address to listen on (port 0 picks a free one)")
	dataDir := fs.String("data-dir", "", "directory for the broker's log and state, reloaded on start (empty: in memory)")
	partitions := fs.Int("partitions", stream.DefaultPartitions, "partitions of topics created without a count")
	sync := fs.Bool("sync", false, "fsync every produced batch before acknowledging it")
	autoCreate := fs.Bool("auto-create-topics", false, "create a topic a producer asks for that does not exist (default: refuse, and log it)")
	cert := fs.String("tls-cert", "", "PEM file of the broker's certificate: serve TLS only")
	key := fs.String("tls-key", "", "PEM file of the certificate's key")
	mech := fs.String("sasl-mechanism", "", "require SASL authentication with these mechanisms, comma-separated: PLAIN, SCRAM-SHA-256, SCRAM-SHA-512")
	user := fs.String("sasl-user", "", "the SASL user clients authenticate as")
	passFile := fs.String("sasl-password-file", "", "file holding the SASL user's password, read at each start (default: $"+cli.EnvSASLPassword+")")
	pass := fs.String("sasl-password", "", "the SASL user's password; visible to other users in ps: prefer --sasl-password-file or $"+cli.EnvSASLPassword)
	if err := cli.Parse(fs, args); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return fmt.Errorf("%w: unexpected argument %q", cli.ErrUsage, fs.Arg(0))
	}
	cfg := stream.BrokerConfig{Listen: *listen, DataDir: *dataDir, Partitions: *partitions, SyncWrites: *sync, AutoCreateTopics: *autoCreate,
		Logger: slog.New(slog.NewTextHandler(e.stderr, &slog.HandlerOptions{Level: slog.LevelWarn}))}
	if (*cert == "") != (*key == "") {
		return fmt.Errorf("%w: give both --tls-cert and --tls-key", cli.ErrUsage)
	}
	if *cert != "" {
		t, err := stream.LoadServerTLS(*cert, *key)
		if err != nil {
			return err
		}
		cfg.TLS = t
	}
	switch {
	case *mech != "":
		password, err := cli.SASLPassword(e.stderr, *pass, *passFile)
		if err != nil {
			return err
		}
		if *user == "" || password == "" {
			return fmt.Errorf("%w: --sasl-mechanism needs --sasl-user and a password: --sasl-password-file FILE or $%s", cli.ErrUsage, cli.EnvSASLPassword)
		}
		for m := range strings.SplitSeq(*mech, ",") {
			if m = strings.ToUpper(strings.TrimSpace(m)); m != "" {
				cfg.Users = append(cfg.Users, stream.BrokerUser{Mechanism: m, User: *user, Password: password})
			}
		}
	case *user != "" || *pass != "" || *passFile != "":
		return fmt.Errorf("%w: --sasl-user and the password need --sasl-mechanism", cli.ErrUsage)
	}
	if err := cfg.Validate(); err != nil {
		return fmt.Errorf("%w: %v", cli.ErrUsage, err)
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
		var mechs []string
		for _, u := range cfg.Users {
			mechs = append(mechs, u.Mechanism)
		}
		where += ", SASL " + strings.Join(mechs, ",")
	}
	fmt.Fprintf(e.stdout, "broker listening on %s (%s)\n", b.Addr(), where)
	<-ctx.Done()
	err = b.Close()
	fmt.Fprintln(e.stdout, "broker stopped; "+b.Stats().String())
	return err
}
