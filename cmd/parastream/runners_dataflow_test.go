//go:build dataflow

package main

import (
	"testing"

	"github.com/parastream/parastream/cmd/parastream/internal/cli"
)

func TestCheckRunnerDataflowBuild(t *testing.T) {
	for _, r := range []string{"", "prism", "flink", "dataflow", "DataflowRunner"} {
		if err := cli.CheckRunner(r, withDataflow); err != nil {
			t.Errorf("cli.CheckRunner(%q, withDataflow): %v", r, err)
		}
	}
}
