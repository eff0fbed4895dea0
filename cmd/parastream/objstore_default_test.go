//go:build !dataflow

package main

// unbuiltOut is an output on a store this build does not have.
const unbuiltOut = "gs://bucket/x"
