//go:build dataflow

package main

// unbuiltOut is an output on a store no build has (this one has gs://).
const unbuiltOut = "hdfs://bucket/x"
