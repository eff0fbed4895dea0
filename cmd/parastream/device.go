package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"

	"github.com/parastream/parastream/cmd/parastream/internal/cli"
	"github.com/parastream/parastream/cmd/parastream/internal/trainflags"
	"github.com/parastream/parastream/trainstep/compute"
	"github.com/parastream/parastream/trainstep/device"
)

// deviceFlags are the device.Config of --device and the flags beside it
// (trainflags.Device).
type deviceFlags struct{ *device.Config }

func addDeviceFlags(fs *flag.FlagSet) deviceFlags {
	c := &device.Config{}
	trainflags.Device(fs, c)
	return deviceFlags{c}
}

// usage makes a setting device refuses as given a usage error.
func usage(err error) error {
	var bad *device.InvalidError
	if errors.As(err, &bad) {
		return fmt.Errorf("%w: %v", cli.ErrUsage, err)
	}
	return err
}

func (d deviceFlags) backend(note io.Writer, log *slog.Logger) (compute.Backend, func() error, error) {
	b, release, err := d.Open(note, log)
	return b, release, usage(err)
}
