// Package stream carries shards through Kafka: the message codec, the
// publisher, the consumer that trainers use, and an embedded broker for
// local runs.
//
// # Topics and messages
//
// The rows of a dataset's split go to the topic "<prefix>.<dataset>.<split>"
// (RowTopic), the dataset's manifest to the compacted "<prefix>.manifests"
// (ManifestTopic), keyed by dataset. A row message carries a Batch: rows
// First to End-1 of one shard, as a small Parquet file with the shard
// schema, keyed by the shard, with the headers HeaderSchemaVersion,
// HeaderShard, HeaderRows and HeaderChecksum (Encode, Decode).
//
// # Publishing
//
// Publish creates or checks the topics, publishes the manifest, then the
// rows that the topics do not already hold, waiting for every replica: a
// publisher that crashed is run again and completes the topic.
//
// # Consuming
//
// A Consumer reads one split for a training run (a consumer group): in
// epochs, through a seeded shuffle buffer, dropping rows already handed out
// in the epoch. Position is its exact place, to save with a checkpoint and
// start from (ConsumerConfig.Start); Commit stores it in the group once the
// caller's work is durable.
//
// # The embedded broker
//
// StartBroker runs franz-go's kfake, a Kafka-protocol broker, persisting to
// a data directory, behind its own TLS and SASL (PLAIN, SCRAM-SHA-256,
// SCRAM-SHA-512; broker_gate.go, broker_sasl.go) that Kafka's clients,
// librdkafka's included, log in to. See docs/stream.md for the whole story.
package stream
