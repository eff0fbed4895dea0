//go:build !dataflow

package shards

import "context"

// stores are the object stores this build writes, by scheme: S3 (gs://
// is in the dataflow build).
func stores() map[string]func(context.Context) (objectStore, error) {
	return map[string]func(context.Context) (objectStore, error){"s3": newS3Store}
}
