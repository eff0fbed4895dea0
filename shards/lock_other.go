//go:build !unix

package shards

import "os"

// flock is a no-op where flock(2) does not exist: runs into one output
// directory are not kept apart there.
func flock(*os.File, bool) error { return nil }
