package main

import (
	"fmt"
	"slices"
	"sort"
	"strings"

	// The reflection-optimised runtime and plain file paths, which every
	// runner uses.
	_ "github.com/apache/beam/sdks/v2/go/pkg/beam/core/runtime/exec/optimized"
	_ "github.com/apache/beam/sdks/v2/go/pkg/beam/io/filesystem/local"

	// The runners of the default build: Prism in-process, and the portable
	// runner that submits to a job server (Flink, Spark, or any other).
	// Dataflow and the Google Cloud clients come with -tags dataflow
	// (runners_dataflow.go).
	_ "github.com/apache/beam/sdks/v2/go/pkg/beam/runners/flink"
	_ "github.com/apache/beam/sdks/v2/go/pkg/beam/runners/prism"
	_ "github.com/apache/beam/sdks/v2/go/pkg/beam/runners/spark"
	_ "github.com/apache/beam/sdks/v2/go/pkg/beam/runners/universal"
)

// builtRunners are the --runner names this binary registers with Beam,
// Dataflow's with -tags dataflow (runners_dataflow.go).
func builtRunners() []string {
	names := []string{
		"prism", "PrismRunner",
		"universal", "portable", "PortableRunner",
		"flink", "FlinkRunner",
		"spark", "SparkRunner",
	}
	if withDataflow {
		names = append(names, "dataflow", "DataflowRunner")
	}
	return names
}

// taggedRunner is the build tag that brings in a runner left out of this
// build, or "".
func taggedRunner(name string) string {
	if !withDataflow && (name == "dataflow" || name == "DataflowRunner") {
		return "dataflow"
	}
	return ""
}

// checkRunner says whether this binary can run a pipeline on runner (""
// is Prism). Beam itself exits the process on a runner it does not know.
func checkRunner(runner string) error {
	if runner == "" || slices.Contains(builtRunners(), runner) {
		return nil
	}
	if tag := taggedRunner(runner); tag != "" {
		return fmt.Errorf("--runner %s: this binary was built without it; build with -tags %s (make build-dataflow)", runner, tag)
	}
	names := builtRunners()
	sort.Strings(names)
	return fmt.Errorf("--runner %s: unknown runner; this binary has %s", runner, strings.Join(names, ", "))
}
