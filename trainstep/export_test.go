package trainstep

import (
	"context"

	"github.com/parastream/parastream/shards"
	"github.com/parastream/parastream/stream"
)

// MixQuotas exposes mixQuotas to the external tests.
var MixQuotas = mixQuotas

// WithCheckpointFailpoint is c with f called before each file of a
// checkpoint of the run is written (nil: none).
func WithCheckpointFailpoint(c RunConfig, f func(dir, file string) error) RunConfig {
	c.checkpointFailpoint = f
	return c
}

// WithManifestReader is c with its datasets' manifests read by read.
func WithManifestReader(c RunConfig, read func(ctx context.Context, cc stream.ClientConfig, prefix, dataset string) (*shards.Manifest, error)) RunConfig {
	c.readManifest = read
	return c
}
