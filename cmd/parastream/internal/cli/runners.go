package cli

import (
	"fmt"
	"slices"
	"sort"
	"strings"
)

// builtRunners are the --runner names a binary registers with Beam:
// Prism, the portable runner and its Flink and Spark names, and with
// dataflow Dataflow's.
func builtRunners(dataflow bool) []string {
	names := []string{
		"prism", "PrismRunner",
		"universal", "portable", "PortableRunner",
		"flink", "FlinkRunner",
		"spark", "SparkRunner",
	}
	if dataflow {
		names = append(names, "dataflow", "DataflowRunner")
	}
	return names
}

// taggedRunner is the build tag that brings in a runner left out of a
// build, or "".
func taggedRunner(name string, dataflow bool) string {
	if !dataflow && (name == "dataflow" || name == "DataflowRunner") {
		return "dataflow"
	}
	return ""
}

// CheckRunner says whether a binary can run a pipeline on runner ("" is
// Prism): one that imports Prism's and the portable runners, and with
// dataflow (its build tag) Dataflow's. Beam itself exits the process on a
// runner it does not know.
func CheckRunner(runner string, dataflow bool) error {
	if runner == "" || slices.Contains(builtRunners(dataflow), runner) {
		return nil
	}
	if tag := taggedRunner(runner, dataflow); tag != "" {
		return fmt.Errorf("%w: --runner %s: this binary was built without it; build with -tags %s (make build-dataflow)", ErrUsage, runner, tag)
	}
	names := builtRunners(dataflow)
	sort.Strings(names)
	return fmt.Errorf("%w: --runner %s: unknown runner; this binary has %s", ErrUsage, runner, strings.Join(names, ", "))
}
