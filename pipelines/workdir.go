package pipelines

import (
	"fmt"

	"github.com/parastream/parastream/shards"
)

// checkWorkDir refuses a featurize run on a cluster's runner into an
// object store without a work directory: featurize's workers write their
// shards and receipts as plain files that the launching machine commits,
// so it must be one that they all mount, and the default (a temporary
// directory of this machine) is none. (Extract's workers write to the
// store themselves.)
func checkWorkDir(out, workDir, runner string) error {
	if shards.Scheme(out) == "" || workDir != "" || runnerOrPrism(runner) == "prism" {
		return nil
	}
	return fmt.Errorf("featurize %s on %s: give --work-dir, a directory that every worker and this machine mount at the same path (featurize's workers still write their shards there; extract's write to the bucket)", out, runner)
}
