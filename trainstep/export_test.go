package trainstep

// MixQuotas exposes mixQuotas to the external tests.
var MixQuotas = mixQuotas

// WithCheckpointFailpoint is c with f called before each file of a
// checkpoint of the run is written (nil: none).
func WithCheckpointFailpoint(c RunConfig, f func(dir, file string) error) RunConfig {
	c.checkpointFailpoint = f
	return c
}
