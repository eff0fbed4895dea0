package main

import (
	"errors"
	"flag"
	"fmt"
	"io"

	"github.com/parastream/parastream/internal/cli"
	"github.com/parastream/parastream/trainstep"
)

// restoreFlags is trainstep.RestoreFlags, a refusal a command-line
// mistake (exit status 2).
func restoreFlags(fs *flag.FlagSet, ck string, w io.Writer) error {
	err := trainstep.RestoreFlags(fs, ck, w)
	if fe := (*trainstep.FlagsError)(nil); errors.As(err, &fe) {
		return fmt.Errorf("%w: %v", cli.ErrUsage, err)
	}
	return err
}

// keptFlags is trainstep.KeptFlags (train.go calls it).
func keptFlags(fs *flag.FlagSet) map[string]string { return trainstep.KeptFlags(fs) }
