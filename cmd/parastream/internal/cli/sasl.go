package cli

import (
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
)

// EnvSASLPassword is where every command that connects, and the broker,
// look for the SASL password when no flag names one.
const EnvSASLPassword = "PARASTREAM_SASL_PASSWORD"

// maxSecretFile bounds a password file: a password, not a data file.
const maxSecretFile = 64 << 10

// SASLPassword picks the SASL password from, in order, --sasl-password-file,
// --sasl-password and $PARASTREAM_SASL_PASSWORD. --sasl-password works but
// shows the password to everyone who can list the machine's processes, so
// it earns a warning on stderr.
func SASLPassword(stderr io.Writer, value, file string) (string, error) {
	switch {
	case file != "" && value != "":
		return "", fmt.Errorf("%w: give --sasl-password-file or --sasl-password, not both", ErrUsage)
	case file != "":
		return readSecretFile(stderr, file)
	case value != "":
		fmt.Fprintf(stderr, "warning: --sasl-password shows the password to every user of this machine (ps, /proc): give --sasl-password-file FILE or $%s\n", EnvSASLPassword)
		return value, nil
	}
	return os.Getenv(EnvSASLPassword), nil
}

// readSecretFile reads a password from file: its whole content, less one
// line ending. A file others may read earns a warning.
func readSecretFile(stderr io.Writer, file string) (string, error) {
	f, err := os.Open(file)
	if err != nil {
		return "", fmt.Errorf("reading the SASL password: %w", err)
	}
	defer f.Close()
	if st, err := f.Stat(); err == nil && st.Mode().IsRegular() && st.Mode().Perm()&0o077 != 0 {
		fmt.Fprintf(stderr, "warning: the SASL password file %s may be read by other users (mode %04o): chmod 600 it\n", file, st.Mode().Perm())
	}
	data, err := io.ReadAll(io.LimitReader(f, maxSecretFile+1))
	if err != nil {
		return "", fmt.Errorf("reading the SASL password from %s: %w", file, err)
	}
	if len(data) > maxSecretFile {
		return "", fmt.Errorf("reading the SASL password from %s: the file is over %d KiB: give a file that holds the password alone", file, maxSecretFile>>10)
	}
	password := strings.TrimSuffix(strings.TrimSuffix(string(data), "\n"), "\r")
	if password == "" {
		return "", errors.New("reading the SASL password: " + file + " is empty")
	}
	return password, nil
}
