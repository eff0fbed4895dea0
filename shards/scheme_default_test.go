//go:build !dataflow

package shards_test

// gsRefusal is what CheckLocation says of gs:// in a build without it.
const gsRefusal = "dataflow build"
