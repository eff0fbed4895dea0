package stream

import "errors"

// Sentinel errors. Match them with errors.Is; the errors returned wrap them
// with the topic, partition, offset or header they concern.
var (
	// ErrHeader reports a message whose headers are missing, repeated or
	// malformed (schema version, shard, row range, checksum).
	ErrHeader = errors.New("bad message header")
	// ErrSchemaVersion reports a message written with a schema version this
	// program does not read.
	ErrSchemaVersion = errors.New("unsupported schema version")
	// ErrChecksum reports a message whose value does not match the checksum
	// its header names.
	ErrChecksum = errors.New("checksum mismatch")
	// ErrPayload reports a message value that is not a Parquet file of the
	// shard schema, or whose rows do not agree with the headers.
	ErrPayload = errors.New("bad message payload")
	// ErrTooLarge reports a single row that does not fit in a message under
	// the topic's maximum message size.
	ErrTooLarge = errors.New("row larger than the maximum message size")
	// ErrTopic reports a topic that exists but does not fit what publishing
	// asks for (too few partitions, not compacted, messages too small).
	ErrTopic = errors.New("topic does not fit")
	// ErrNoManifest reports a dataset with no manifest on the manifests
	// topic: it was never published under this prefix.
	ErrNoManifest = errors.New("no manifest published for the dataset")
	// ErrIncomplete reports a dataset whose manifest is published but whose
	// split's topic is missing, or ended an epoch with fewer rows than the
	// manifest lists (a publish that failed or was stopped part way, or
	// messages removed by retention): publish the dataset again to
	// complete it.
	ErrIncomplete = errors.New("dataset not completely published")
	// ErrPosition reports a position that does not belong to the dataset
	// being consumed, or offsets the broker no longer holds.
	ErrPosition = errors.New("position does not fit the dataset")
	// ErrArtifact reports a model file (vocabulary, topic model) that the
	// dataset's manifest does not list, or that the artifacts topic does
	// not hold as the manifest describes it.
	ErrArtifact = errors.New("artifact not published")
	// ErrAuthentication reports a broker that refused the client's SASL
	// credentials, or closed the connection where TLS or SASL was probably
	// required.
	ErrAuthentication = errors.New("authentication failed")
	// ErrUnreachable reports a broker that failed a client's requests for
	// longer than ClientConfig.Retry (a broker down, or restarting for
	// longer than that).
	ErrUnreachable = errors.New("stream: the broker is unreachable")
	// ErrGroupHeld reports a consumer group that another process is a live
	// member of (JoinGroup): another trainer of the same run, on this
	// machine or another.
	ErrGroupHeld = errors.New("held by another trainer")
	// ErrClosed reports a Consumer used after Close.
	ErrClosed = errors.New("stream: consumer closed")
)
