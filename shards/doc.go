// Package shards holds the Parquet contract between the extraction pipelines
// and Kafka: the Row type (one column per field), the Writer that cuts a
// split into bounded, zstd-compressed shards, the streaming readers, and the
// manifest that describes and checksums them.
//
// # Layout
//
// A run writes, under its output root:
//
//	<root>/manifest.json
//	<root>/<corpus>/<split>/part-00000-of-00016.<version>.parquet
//	<root>/<corpus>/<split>/part-00001-of-00016.<version>.parquet
//	...
//
// where <version> is the first 16 hex digits of the file's sha256 (see
// LogicalPath; outputs written before versions have plain names). An
// Output owns a directory's files: a run locks it, and a Commit stages a
// complete new version beside the current one and switches to it by
// renaming the new manifest over the old, so that a reader following the
// manifest sees one version or the other, whenever a run dies. The Output
// also gives a run its work directory (WorkDir, RemoveWorkDir), where the
// pipelines' workers stage shards and leave receipts (WriteReceipt) that
// the driver reads back (ReadReceipts, in name order) and commits (Staged, PutSplits,
// ReplaceShard): no package above shards renames or removes a shard. For an
// output on an object store the workers write these to a staging prefix of
// the output instead (Staging, PutShards, WriteObject; stage.go), so that
// they share no filesystem with the driver.
//
// Each shard holds at most WriterOptions.MaxRows rows (default 1,000,000)
// and about WriterOptions.MaxBytes bytes (default 256 MiB), in row groups of
// at most WriterOptions.RowGroupRows rows (default 10,000), small enough to
// stream. Shards are written under hidden temporary names and renamed once
// the split is complete, so a name part-*-of-*.parquet always means a
// complete file; a split with no rows has no shard. The footer of each shard
// carries the schema version, corpus and split as key/value metadata
// (MetadataSchemaVersion, MetadataCorpus, MetadataSplit).
//
// The Row documentation lists the columns and their types. Lists use the
// standard three-level LIST layout and meta the standard MAP layout, so any
// Parquet reader sees them as lists and maps.
//
// # Determinism
//
// Shards and manifest carry no timestamps, random data or host names: the
// same rows give byte-identical shards (whatever the batching of Write
// calls), and the same run the same manifest. A change in the bytes means a
// change in the data or in the versions the manifest records.
//
// # Reading shards elsewhere
//
// With the DuckDB command line, Python or Node package, every shard of a
// run is one table:
//
//	SELECT corpus, split, count(*) FROM 'out/*/*/*.parquet' GROUP BY ALL;
//	SELECT a, b, label, meta['author'] FROM 'out/reddit/train/*.parquet' LIMIT 5;
//	DESCRIBE SELECT * FROM 'out/*/*/*.parquet';
//
// The glob matches only final names: temporaries start with a dot and end
// in .tmp. After a run died, and until the next run into the directory, it
// can also match files the manifest does not name; the manifest is the
// truth. With pandas (through pyarrow), read one split's directory, or
// every shard through DuckDB:
//
//	import duckdb, pandas as pd
//	df = pd.read_parquet("out/sts/test")   # list columns become arrays, meta a list of (key, value) pairs
//	df = duckdb.sql("SELECT * FROM 'out/*/*/*.parquet'").df()
//
// (pd.read_parquet("out") would also try manifest.json as Parquet.)
//
// tools/interop/read_parquet.mjs prints a shard's rows as JSON lines through
// DuckDB; the interop test uses it to check that an independent reader sees
// exactly what was written.
//
// # Consumers
//
// A consumer opens a split with OpenSplit, which reads the manifest and
// checks each shard's size and row count as it reaches it, or a single file
// with OpenFile. Manifest.Verify recomputes every checksum; run it before
// trusting a directory that came from elsewhere.
package shards
