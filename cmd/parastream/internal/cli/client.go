package cli

import (
	"flag"
	"fmt"
	"strings"

	"github.com/parastream/parastream/stream"
)

// ConnectionGroup is the help's group of ClientFlags's flags.
func ConnectionGroup() FlagGroup {
	return FlagGroup{Title: "connection", Names: []string{"brokers", "tls", "tls-ca", "tls-cert", "tls-key", "tls-insecure-skip-verify",
		"sasl-mechanism", "sasl-user", "sasl-password-file", "sasl-password", "broker-retry"}}
}

// ClientFlags adds the flags that say how to reach the brokers, and
// returns the function that makes the configuration from them.
func ClientFlags(fs *flag.FlagSet) func() (stream.ClientConfig, error) {
	brokers := fs.String("brokers", "", "bootstrap brokers, host:port[,host:port...] (required)")
	useTLS := fs.Bool("tls", false, "connect with TLS")
	ca := fs.String("tls-ca", "", "PEM file of the CA that signed the brokers' certificates (default: the system's)")
	cert := fs.String("tls-cert", "", "PEM file of the client certificate, for brokers that require one")
	key := fs.String("tls-key", "", "PEM file of the client certificate's key")
	insecure := fs.Bool("tls-insecure-skip-verify", false, "accept any broker certificate (tests only)")
	mech := fs.String("sasl-mechanism", "", "SASL mechanism: PLAIN, SCRAM-SHA-256 or SCRAM-SHA-512")
	user := fs.String("sasl-user", "", "SASL user")
	passFile := fs.String("sasl-password-file", "", "file holding the SASL password (default: $"+EnvSASLPassword+")")
	pass := fs.String("sasl-password", "", "SASL password; visible to other users in ps: prefer --sasl-password-file or $"+EnvSASLPassword)
	retry := fs.Duration("broker-retry", stream.DefaultRetry, "how long a request the broker fails (a broker restarting) is tried again before the command gives up")
	return func() (stream.ClientConfig, error) {
		cc := stream.ClientConfig{SASLMechanism: strings.ToUpper(*mech), SASLUser: *user, Retry: *retry}
		if cc.SASLMechanism != "" {
			password, err := SASLPassword(fs.Output(), *pass, *passFile)
			if err != nil {
				return cc, err
			}
			if password == "" {
				return cc, fmt.Errorf("%w: --sasl-mechanism %s needs a password: give --sasl-password-file FILE or $%s", ErrUsage, cc.SASLMechanism, EnvSASLPassword)
			}
			cc.SASLPassword = password
		} else if *pass != "" || *passFile != "" {
			return cc, fmt.Errorf("%w: a SASL password without --sasl-mechanism", ErrUsage)
		}
		for _, b := range strings.Split(*brokers, ",") {
			if b = strings.TrimSpace(b); b != "" {
				cc.Brokers = append(cc.Brokers, b)
			}
		}
		if *useTLS || *ca != "" || *cert != "" || *insecure {
			t, err := stream.LoadTLS(*ca, *cert, *key, *insecure)
			if err != nil {
				return cc, err
			}
			cc.TLS = t
		}
		if err := cc.Validate(); err != nil {
			return cc, fmt.Errorf("%w: %v", ErrUsage, err)
		}
		return cc, nil
	}
}
