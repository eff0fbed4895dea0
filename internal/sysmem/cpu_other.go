//go:build !unix

package sysmem

import "time"

// CPUTime cannot be read here: ok is false.
func CPUTime() (self, children time.Duration, ok bool) { return 0, 0, false }
