//go:build dataflow

package main

import (
	// Google Cloud Dataflow, with its API client, and the gs:// filesystem
	// (Beam's harness registers it too): built only with -tags dataflow
	// (make build-dataflow).
	_ "github.com/apache/beam/sdks/v2/go/pkg/beam/io/filesystem/gcs"
	_ "github.com/apache/beam/sdks/v2/go/pkg/beam/runners/dataflow"
)

func init() {
	builtRunners = append(builtRunners, "dataflow", "DataflowRunner")
	delete(taggedRunners, "dataflow")
	delete(taggedRunners, "DataflowRunner")
}
