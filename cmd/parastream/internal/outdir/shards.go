package outdir

import (
	"fmt"

	"github.com/parastream/parastream/shards"
)

// CheckShards checks the output of a command that writes shards (extract,
// featurize): a location on an object store this binary writes
// (s3://bucket/prefix; gs:// in the dataflow build), or a local directory
// that Check accepts. A store it lacks is refused before any work, naming
// the build that has it.
func CheckShards(dir string) error {
	if shards.Scheme(dir) == "" {
		return Check(dir)
	}
	if err := shards.CheckLocation(dir); err != nil {
		return fmt.Errorf("%w: %v", ErrRefused, err)
	}
	return nil
}

// Prepare checks the output of a command that writes shards (CheckShards)
// and returns what its run calls at the end: done(true), after a failure,
// removes the local output directory if this run created it, lock and
// all (Created), so that a failed run leaves nothing behind.
func Prepare(dir string) (done func(failed bool), err error) {
	if err := CheckShards(dir); err != nil {
		return nil, err
	}
	return Created(dir), nil
}
