// Package spill is the spill file format of the extraction: a compact,
// checksummed sequence of blocks of shards.Row (stored, or S2-compressed:
// CreateCompressed) that the bucket
// stages of package transforms write and read back one bucket at a time,
// the bounded-memory stand-in for a GroupByKey. AppendRow and DecodeRow
// are the row codec; Create and Writer write a file (under a temporary
// name, renamed on Close), Open and Reader read one, and ReadFiles reads a
// bucket's files in order. Paths go through Beam's filesystems, so a spill
// may live on a cluster's shared storage.
package spill
