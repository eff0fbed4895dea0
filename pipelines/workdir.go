package pipelines

import (
	"fmt"

	"github.com/parastream/parastream/shards"
)

// checkWorkDir refuses a run on a cluster's runner into an object store
// without a work directory: the shard writers on the workers write plain
// files there that the launching machine commits, so it must be one that
// they all mount, and the default (a temporary directory of this machine)
// is none.
func checkWorkDir(out, workDir, runner string) error {
	if shards.Scheme(out) == "" || workDir != "" || runnerOrPrism(runner) == "prism" {
		return nil
	}
	return fmt.Errorf("%s on %s: give --work-dir, a directory that every worker and this machine mount at the same path (the workers' shards pass through it)", out, runner)
}
