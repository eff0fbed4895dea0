//go:build dataflow

package main

import (
	// Google Cloud Dataflow, with its API client, and the gs:// filesystem
	// (Beam's harness registers it too): built only with -tags dataflow
	// (make build-dataflow).
	_ "github.com/apache/beam/sdks/v2/go/pkg/beam/io/filesystem/gcs"
	_ "github.com/apache/beam/sdks/v2/go/pkg/beam/runners/dataflow"
)

// withDataflow says that this build has the Dataflow runner.
const withDataflow = true
