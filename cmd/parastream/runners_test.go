//go:build !dataflow

package main

import (
	"strings"
	"testing"

	"github.com/apache/beam/sdks/v2/go/pkg/beam/runners"

	"github.com/parastream/parastream/cmd/parastream/internal/cli"
	"github.com/parastream/parastream/internal/testenv"
)

// Without -tags dataflow, --runner dataflow fails at once, exit 2, with one line
// (then the usage)
// that says how to get it; an unknown runner lists the ones built in.
func TestRunnerNotBuilt(t *testing.T) {
	t.Cleanup(func() { *runners.Runner = "" })
	for _, tc := range []struct {
		cmd, runner, want string
	}{
		{"extract", "dataflow", "build with -tags dataflow"},
		{"featurize", "DataflowRunner", "build with -tags dataflow"},
		{"extract", "nosuch", "unknown runner; this binary has "},
	} {
		args := []string{tc.cmd, "--runner", tc.runner, "--out", t.TempDir()}
		if tc.cmd == "extract" {
			args = append(args, "--corpus", "quora", "--input", testenv.Fixture("quora/*"))
		} else {
			args = append(args, "--in", t.TempDir())
		}
		code, _, stderr := runCLI(t, args...)
		first, _, _ := strings.Cut(stderr, "\n")
		if code != 2 || !strings.Contains(first, tc.want) || strings.Count(stderr, "\n") > 2 {
			t.Errorf("%s --runner %s: exit %d, stderr %q; want exit 2 (a command-line mistake) and one line with %q, then the usage", tc.cmd, tc.runner, code, stderr, tc.want)
		}
	}
}

func TestCheckRunnerDefaultBuild(t *testing.T) {
	for _, r := range []string{"", "prism", "flink", "spark", "universal", "portable"} {
		if err := cli.CheckRunner(r, withDataflow); err != nil {
			t.Errorf("cli.CheckRunner(%q, withDataflow): %v", r, err)
		}
	}
}
