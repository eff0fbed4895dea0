//go:build dataflow

package main

import "testing"

func TestCheckRunnerDataflowBuild(t *testing.T) {
	for _, r := range []string{"", "prism", "flink", "dataflow", "DataflowRunner"} {
		if err := checkRunner(r); err != nil {
			t.Errorf("checkRunner(%q): %v", r, err)
		}
	}
}
