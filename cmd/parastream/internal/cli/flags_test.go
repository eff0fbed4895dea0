package cli_test

import (
	"bytes"
	"errors"
	"flag"
	"io"
	"strings"
	"testing"

	"github.com/parastream/parastream/cmd/parastream/internal/cli"
)

// A mistake is one ErrUsage naming the flag as written and the flag meant;
// --help prints the grouped help on stdout and nothing on stderr.
func TestParse(t *testing.T) {
	var stdout, stderr bytes.Buffer
	fs := cli.NewFlags(&stdout, &stderr, "prog cmd", "prog cmd --input FILE")
	fs.String("input", "", "the file read")
	fs.Int("show", 3, "rows shown")
	cli.Describe(fs, &stdout, "prog cmd --input FILE", "prog cmd --input a.tsv", cli.FlagGroup{Title: "input", Names: []string{"input"}})
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"--inptu", "x"}, "unknown flag --inptu; did you mean --input?"},
		{[]string{"--zzzzzz"}, "unknown flag --zzzzzz; 'prog cmd --help' lists the flags"},
		{[]string{"--input"}, "--input needs a value: --input VALUE"},
		{[]string{"--show", "many"}, "for --show"},
	} {
		err := cli.Parse(fs, tc.args)
		if !errors.Is(err, cli.ErrUsage) || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%q: %v, want a usage error with %q", tc.args, err, tc.want)
		}
	}
	if stdout.Len() > 0 || stderr.Len() > 0 {
		t.Errorf("mistakes printed %q on stdout, %q on stderr", stdout.String(), stderr.String())
	}
	if err := cli.Parse(fs, []string{"--help"}); !errors.Is(err, flag.ErrHelp) {
		t.Fatalf("--help: %v", err)
	}
	want := "usage: prog cmd --input FILE\n\ninput:\n  --input string         the file read\n\nother:\n  --show int             rows shown (default 3)\n\nexample:\n  prog cmd --input a.tsv\n"
	if stdout.String() != want || stderr.Len() > 0 {
		t.Errorf("--help wrote %q, stderr %q; want %q", stdout.String(), stderr.String(), want)
	}
}

// Beam's flags parse on a command's flag set but its --help leaves them to
// --help-beam.
func TestAddBeamFlags(t *testing.T) {
	var stdout bytes.Buffer
	name := "beamtest-flag"
	if flag.CommandLine.Lookup(name) == nil {
		flag.String(name, "", "a flag on the default set, as Beam's are")
	}
	fs := cli.NewFlags(&stdout, io.Discard, "prog cmd", "prog cmd")
	cli.AddBeamFlags(fs, &stdout)
	if err := cli.Parse(fs, []string{"--" + name, "x"}); err != nil {
		t.Fatal(err)
	}
	cli.Parse(fs, []string{"--help"})
	if strings.Contains(stdout.String(), name) || !strings.Contains(stdout.String(), "--help-beam") {
		t.Errorf("--help: %q", stdout.String())
	}
	stdout.Reset()
	if err := cli.Parse(fs, []string{"--help-beam"}); !errors.Is(err, flag.ErrHelp) || !strings.Contains(stdout.String(), "--"+name) {
		t.Errorf("--help-beam: %v, %q", err, stdout.String())
	}
}

func TestCheckRunner(t *testing.T) {
	for _, tc := range []struct {
		runner   string
		dataflow bool
		want     string
	}{
		{"", false, ""},
		{"prism", false, ""},
		{"FlinkRunner", false, ""},
		{"dataflow", true, ""},
		{"dataflow", false, "build with -tags dataflow"},
		{"nosuch", false, "unknown runner; this binary has "},
	} {
		err := cli.CheckRunner(tc.runner, tc.dataflow)
		if tc.want == "" && err != nil || tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want)) {
			t.Errorf("CheckRunner(%q, %v): %v, want %q", tc.runner, tc.dataflow, err, tc.want)
		}
	}
}

func TestInts(t *testing.T) {
	var v cli.Ints
	fs := flag.NewFlagSet("t", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	fs.Var(&v, "layers", "")
	if err := fs.Parse([]string{"--layers", "200, 100,50"}); err != nil {
		t.Fatal(err)
	}
	if v.String() != "200,100,50" {
		t.Fatalf("parsed %v", v)
	}
	if err := fs.Parse([]string{"--layers", "200,x"}); err == nil || !strings.Contains(err.Error(), `"x" is not an integer`) {
		t.Fatalf("--layers 200,x: %v", err)
	}
}
