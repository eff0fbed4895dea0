//go:build unix

package sysmem

import (
	"syscall"
	"time"
)

// CPUTime is the CPU time (user and system) this process has used, and
// that its waited-for children have, since it started: the difference of
// two readings is a stage's. ok is false where it cannot be read.
func CPUTime() (self, children time.Duration, ok bool) {
	var s, c syscall.Rusage
	if syscall.Getrusage(syscall.RUSAGE_SELF, &s) != nil || syscall.Getrusage(syscall.RUSAGE_CHILDREN, &c) != nil {
		return 0, 0, false
	}
	sum := func(r *syscall.Rusage) time.Duration {
		return time.Duration(r.Utime.Nano() + r.Stime.Nano())
	}
	return sum(&s), sum(&c), true
}
