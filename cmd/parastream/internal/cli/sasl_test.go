package cli

import (
	"bytes"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestSASLPasswordSources(t *testing.T) {
	dir := t.TempDir()
	t.Setenv(EnvSASLPassword, "from-env")
	var warn bytes.Buffer
	if pw, err := SASLPassword(&warn, "", ""); err != nil || pw != "from-env" || warn.Len() > 0 {
		t.Errorf("environment: %q, %v, warning %q", pw, err, warn.String())
	}
	crlf := filepath.Join(dir, "crlf")
	os.WriteFile(crlf, []byte("p w\r\n"), 0o600)
	if pw, err := SASLPassword(&warn, "", crlf); err != nil || pw != "p w" || warn.Len() > 0 {
		t.Errorf("a file ending in CRLF: %q, %v, warning %q", pw, err, warn.String())
	}
	open := filepath.Join(dir, "open")
	os.WriteFile(open, []byte("pw"), 0o644)
	if pw, err := SASLPassword(&warn, "", open); err != nil || pw != "pw" || !strings.Contains(warn.String(), "chmod 600") {
		t.Errorf("a file others may read: %q, %v, warning %q", pw, err, warn.String())
	}
	big := filepath.Join(dir, "big")
	os.WriteFile(big, bytes.Repeat([]byte("x"), maxSecretFile+1), 0o600)
	if _, err := SASLPassword(io.Discard, "", big); err == nil || !strings.Contains(err.Error(), "password alone") {
		t.Errorf("a large file: %v", err)
	}
}
