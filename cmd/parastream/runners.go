package main

import (
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
