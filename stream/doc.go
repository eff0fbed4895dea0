// Package stream carries shards through Kafka: the message codec, the
// publisher, the consumer that trainers use, and an embedded broker for
// local runs.
package stream
