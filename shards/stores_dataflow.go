//go:build dataflow

package shards

import "context"

// stores are the object stores this build writes, by scheme: S3 and
// Google Cloud Storage.
func stores() map[string]func(context.Context) (objectStore, error) {
	return map[string]func(context.Context) (objectStore, error){"s3": newS3Store, "gs": newGCSStore}
}
