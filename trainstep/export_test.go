package trainstep

// MixQuotas exposes mixQuotas to the external tests.
var MixQuotas = mixQuotas

// SetCheckpointFailpoint sets the function called before each file of a
// checkpoint is written (nil: none) until the test ends.
func SetCheckpointFailpoint(t interface{ Cleanup(func()) }, f func(dir, file string) error) {
	checkpointFailpoint = f
	t.Cleanup(func() { checkpointFailpoint = nil })
}
