package cli

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"strings"
)

// ErrUsage marks a command-line mistake: an unknown flag, a bad value, a
// missing argument. Commands exit with status 2 on it.
var ErrUsage = errors.New("usage")

// IsHelp says whether s asks for help: -h, --help or -help.
func IsHelp(s string) bool { return s == "-h" || s == "--help" || s == "-help" }

// IsVersion says whether s asks for the version: -v, --version or -version.
func IsVersion(s string) bool { return s == "-v" || s == "--version" || s == "-version" }

// NewFlags makes a command's flag set, named as the user runs the command
// ("parastream train"). --help prints usage and one line a flag on stdout
// (Describe groups them); a bad flag prints nothing itself: Parse returns
// it as ErrUsage. fs.Output() is stderr.
func NewFlags(stdout, stderr io.Writer, name, usage string) *flag.FlagSet {
	fs := flag.NewFlagSet(name, flag.ContinueOnError)
	fs.SetOutput(stderr) // what commands write warnings to (fs.Output())
	fs.Usage = func() { printUsage(stdout, fs, usage, "", nil) }
	return fs
}

// Parse parses args. --help prints the command's help and returns
// flag.ErrHelp, as does --help-beam with Beam's flags; a bad flag is
// ErrUsage with a message that names it and, where one is near, the flag
// meant.
func Parse(fs *flag.FlagSet, args []string) error {
	// The flag package prints each error and calls Usage on it too: the
	// error is returned instead, and Usage runs on --help alone.
	usage, output := fs.Usage, fs.Output()
	fs.Usage = func() {}
	fs.SetOutput(io.Discard)
	err := fs.Parse(args)
	fs.Usage = usage
	fs.SetOutput(output)
	switch {
	case errors.Is(err, flag.ErrHelp):
		usage()
		return err
	case err != nil:
		return fmt.Errorf("%w: %s", ErrUsage, flagError(fs, err))
	}
	if f := fs.Lookup("help-beam"); f != nil {
		if h, ok := f.Value.(*beamHelp); ok && h.set {
			printBeamFlags(h.stdout, h.cmd)
			return flag.ErrHelp
		}
	}
	return nil
}

// flagError rewrites the flag package's parse errors to name the flag as
// it is written (--name) and suggest the nearest known flag.
func flagError(fs *flag.FlagSet, err error) string {
	msg := err.Error()
	if name, ok := strings.CutPrefix(msg, "flag provided but not defined: -"); ok {
		msg = "unknown flag --" + name
		if near := closestFlag(fs, name); near != "" {
			return msg + "; did you mean --" + near + "?"
		}
		return msg + "; '" + fs.Name() + " --help' lists the flags"
	}
	if name, ok := strings.CutPrefix(msg, "flag needs an argument: -"); ok {
		return "--" + name + " needs a value: --" + name + " VALUE"
	}
	return strings.Replace(msg, " for flag -", " for --", 1)
}
