package cli_test

import (
	"flag"
	"io"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/parastream/parastream/cmd/parastream/internal/cli"
	"github.com/parastream/parastream/internal/testenv"
	"github.com/parastream/parastream/stream"
)

// TestAddClientOptionRecipe is the command line's half of
// docs/architecture.md's recipe "Add a Kafka client option" (the stream
// package's test of the same name checks Validate and the connections):
// every field of stream.ClientConfig is set by a flag of ClientFlags (or
// says here why it has none), every flag of ClientFlags is in the help's
// ConnectionGroup and named in docs/stream.md, and each is used by a line
// of this test's table, whose configuration shows which fields it sets.
// A new option missing any step fails here.
func TestAddClientOptionRecipe(t *testing.T) {
	noFlag := map[string]string{
		"ClientID": "a library caller's setting: the command's clients all name themselves parastream",
	}
	dir := t.TempDir()
	cert, key := testenv.SelfSignedCert(t, dir)
	pass := filepath.Join(dir, "password")
	if err := os.WriteFile(pass, []byte("secret\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	t.Setenv(cli.EnvSASLPassword, "")
	// Each line, given after --brokers h:1, sets the fields that differ
	// from the configuration of --brokers h:1 alone.
	lines := [][]string{
		{"--brokers", "a:1,b:2"},
		{"--tls"},
		{"--tls-ca", cert},
		{"--tls-cert", cert, "--tls-key", key},
		{"--tls-insecure-skip-verify"},
		{"--sasl-mechanism", "plain", "--sasl-user", "u", "--sasl-password-file", pass},
		{"--sasl-mechanism", "SCRAM-SHA-256", "--sasl-user", "u", "--sasl-password", "p"},
		{"--broker-retry", "30s"},
	}
	parse := func(args []string) (stream.ClientConfig, *flag.FlagSet) {
		t.Helper()
		fs := flag.NewFlagSet("recipe", flag.ContinueOnError)
		fs.SetOutput(io.Discard)
		build := cli.ClientFlags(fs)
		if err := fs.Parse(append([]string{"--brokers", "h:1"}, args...)); err != nil {
			t.Fatalf("%q: %v", args, err)
		}
		cc, err := build()
		if err != nil {
			t.Fatalf("%q: %v", args, err)
		}
		return cc, fs
	}
	base, fs := parse(nil)
	set := map[string]bool{}  // fields some line sets
	used := map[string]bool{} // flags some line gives
	for _, line := range lines {
		cc, _ := parse(line)
		for _, a := range line {
			if name, ok := strings.CutPrefix(a, "--"); ok {
				used[name] = true
			}
		}
		v, b := reflect.ValueOf(cc), reflect.ValueOf(base)
		for i := range v.NumField() {
			if !reflect.DeepEqual(v.Field(i).Interface(), b.Field(i).Interface()) {
				set[v.Type().Field(i).Name] = true
			}
		}
	}
	typ := reflect.TypeFor[stream.ClientConfig]()
	for i := range typ.NumField() {
		name := typ.Field(i).Name
		if _, ok := noFlag[name]; !set[name] && !ok {
			t.Errorf("stream.ClientConfig.%s is set by no flag of ClientFlags: declare its flag there and give it a line in this test", name)
		}
	}
	doc, err := os.ReadFile(filepath.Join(testenv.Root(), "docs", "stream.md"))
	if err != nil {
		t.Fatal(err)
	}
	group := cli.ConnectionGroup().Names
	fs.VisitAll(func(f *flag.Flag) {
		if !used[f.Name] {
			t.Errorf("--%s: no line of this test gives it: add one", f.Name)
		}
		if !slices.Contains(group, f.Name) {
			t.Errorf("--%s is not in ConnectionGroup: the help does not list it", f.Name)
		}
		if !regexp.MustCompile(`--` + regexp.QuoteMeta(f.Name) + `([^a-z0-9-]|$)`).Match(doc) {
			t.Errorf("--%s is not named in docs/stream.md", f.Name)
		}
	})
}
