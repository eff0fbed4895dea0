//go:build !dataflow

package main

// withDataflow says that this build has the Dataflow runner: built only
// with -tags dataflow (runners_dataflow.go).
const withDataflow = false
