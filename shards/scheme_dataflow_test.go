//go:build dataflow

package shards_test

// gsRefusal is empty: the dataflow build writes gs://.
const gsRefusal = ""
