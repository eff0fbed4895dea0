package trainstep_test

import (
	"flag"
	"path/filepath"
	"testing"

	"github.com/parastream/parastream/trainstep"
)

// TestKeptFlags: run.json keeps every flag but --resume, --checkpoint-dir
// and passwords, with file names made absolute.
func TestKeptFlags(t *testing.T) {
	fs := flag.NewFlagSet("train", flag.ContinueOnError)
	fs.String("resume", "", "")
	fs.String("checkpoint-dir", "", "")
	fs.String("sasl-password", "", "")
	fs.String("tls-ca", "", "")
	fs.Int("epochs", 1, "")
	if err := fs.Parse([]string{"--tls-ca", "ca.pem", "--sasl-password", "secret"}); err != nil {
		t.Fatal(err)
	}
	got := trainstep.KeptFlags(fs)
	abs, _ := filepath.Abs("ca.pem")
	if len(got) != 2 || got["epochs"] != "1" || got["tls-ca"] != abs {
		t.Errorf("kept %v", got)
	}
}
