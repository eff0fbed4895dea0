package shards

import "errors"

// Sentinel errors. Match them with errors.Is; the errors returned wrap them
// with the file they concern.
var (
	// ErrClosed reports a Writer or reader used after Close or Abort.
	ErrClosed = errors.New("shards: already closed")
	// ErrInvalidUTF8 reports a row with a string that is not UTF-8, which
	// Parquet readers refuse; see Row.Validate.
	ErrInvalidUTF8 = errors.New("string is not valid UTF-8")
	// ErrExists reports a split directory that already holds shards from an
	// earlier run; set WriterOptions.Overwrite to replace them.
	ErrExists = errors.New("split already holds shards")
	// ErrSchemaVersion reports a shard or manifest written with a schema
	// version this package does not read.
	ErrSchemaVersion = errors.New("unsupported schema version")
	// ErrSchema reports a Parquet file whose columns are not those of Row.
	ErrSchema = errors.New("not a shard: columns differ from the shard schema")
	// ErrCodec reports a Parquet file compressed with a codec the reader
	// refuses (LZ4: see OpenFile).
	ErrCodec = errors.New("unsupported compression codec")
	// ErrManifest reports a manifest that is malformed or inconsistent: a
	// path that leaves the root, a split whose row count is not the sum of
	// its shards, a split missing from it.
	ErrManifest = errors.New("invalid manifest")
	// ErrChecksum reports a file whose sha256 or size is not the one the
	// manifest records.
	ErrChecksum = errors.New("checksum mismatch")
	// ErrLocked reports an output directory that another live run holds
	// (see OpenOutput and LockShared).
	ErrLocked = errors.New("directory locked by another run")
	// ErrCommit reports a commit that cannot go ahead: its new manifest
	// names a file it did not stage, a staged shard that does not match
	// the one it replaces, a commit used after Done or Abort.
	ErrCommit = errors.New("invalid commit")
	// ErrScheme reports a location on a store this program does not
	// write: a scheme it lacks (gs:// outside the dataflow build), or one
	// no build has.
	ErrScheme = errors.New("unsupported location")
	// ErrConflict reports a commit to an object store refused because
	// another run committed a new version since this one began: run
	// again, from that version.
	ErrConflict = errors.New("another run committed first")
	// ErrRowCount reports a shard whose row count is not the one the
	// manifest records.
	ErrRowCount = errors.New("row count mismatch")
	// ErrStagingGone reports a commit to an object store that found an
	// object its workers staged (see Output.Staging) gone: run again.
	ErrStagingGone = errors.New("a staged object of the workers is gone")
)
