//go:build !dataflow

package main

// withDataflow: this build has no Dataflow runner (-tags dataflow adds it).
const withDataflow = false
