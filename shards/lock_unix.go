//go:build unix

package shards

import (
	"errors"
	"fmt"
	"os"
	"syscall"
)

// flock takes an advisory lock on f without waiting: exclusive, or shared.
// The kernel releases it when the process dies, however it dies.
func flock(f *os.File, exclusive bool) error {
	how := syscall.LOCK_SH
	if exclusive {
		how = syscall.LOCK_EX
	}
	for {
		err := syscall.Flock(int(f.Fd()), how|syscall.LOCK_NB)
		switch {
		case err == nil:
			return nil
		case errors.Is(err, syscall.EINTR):
			continue
		case errors.Is(err, syscall.EWOULDBLOCK):
			return ErrLocked
		default:
			return fmt.Errorf("flock: %w", err)
		}
	}
}
