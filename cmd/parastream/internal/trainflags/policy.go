package trainflags

import (
	"flag"
	"fmt"
	"io"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"github.com/parastream/parastream/trainstep"
)

// This file holds what `parastream train --resume` does with the
// command line: which flags run.json keeps (KeptFlags, RunConfig.Flags)
// and how a resume restores them (RestoreFlags). Every flag of train has a
// policy: derived (the model's flags are refused, a password is not
// kept) or written in policies; TestEveryTrainFlagHasAPolicy fails for a
// flag that has none.

// flagPolicy is what `train --resume` does with a flag of the run.
type flagPolicy int

const (
	// flagOverride: restored when not given; given with another value, the
	// new one applies and a line says so (how long to train, where to
	// write, how to reach the brokers and which device to use).
	flagOverride flagPolicy = iota
	// flagRefused: restored when not given; given with another value, the
	// resume is refused: the value is part of the model or of the data it
	// is trained on.
	flagRefused
	// flagNewRun: kept in run.json for the record, never restored: it
	// only matters when a run starts. Given with another value, refused.
	flagNewRun
	// flagNotKept: not in run.json (--resume itself, secrets,
	// --cpuprofile, and --checkpoint-dir, which defaults to the resumed
	// checkpoint's directory so that a moved run stays where it is).
	flagNotKept
)

// policies is the policy of each flag of train that is not a model flag
// (modelFlagNames, csaeFlagNames: refused) or a password (not kept).
func policies() map[string]flagPolicy {
	return map[string]flagPolicy{
		// Not kept: --resume itself, and --checkpoint-dir (a moved run stays
		// where it is), and --cpuprofile (a profile of this process).
		"resume": flagNotKept, "checkpoint-dir": flagNotKept, "cpuprofile": flagNotKept,
		// Only when a run starts.
		"vectors": flagNewRun, "save-initial": flagNewRun, "init-from": flagNewRun,
		// The data and how it is read and trained on.
		"dataset": flagRefused, "mix": flagRefused, "split": flagRefused, "topic-prefix": flagRefused, "min-label": flagRefused,
		"all-pairs": flagRefused, "hard-negatives": flagRefused,
		"context": flagRefused, "batch": flagRefused, "max-len": flagRefused, "bucket-width": flagRefused,
		"optimizer": flagRefused, "embedding-update": flagRefused, "lr": flagRefused, "decay": flagRefused, "seed": flagRefused,
		"shuffle-buffer": flagRefused, "window": flagRefused,
		// How long to train, what to write and where to show it.
		"run": flagOverride, "epochs": flagOverride, "max-steps": flagOverride, "duration": flagOverride,
		"checkpoint-every": flagOverride, "keep-checkpoints": flagOverride, "keep-optimizer": flagOverride, "checkpoint-async": flagOverride, "feed-ahead": flagOverride,
		"progress-every": flagOverride, "quiet": flagOverride, "v": flagOverride, "trace-ids": flagOverride,
		// How to reach the brokers.
		"brokers": flagOverride, "tls": flagOverride, "tls-ca": flagOverride, "tls-cert": flagOverride, "tls-key": flagOverride,
		"tls-insecure-skip-verify": flagOverride, "sasl-mechanism": flagOverride, "sasl-user": flagOverride, "sasl-password-file": flagOverride,
		"broker-retry": flagOverride, "group-session": flagOverride,
	}
}

// policy is the flag's policy, and whether it has one: written in
// policies, or derived: the model's flags are refused, and a password
// given on the command line is never written to disk, whatever its flag
// is named. A flag without one (none of train's: a test checks) is
// overridden.
func policy(name string) (flagPolicy, bool) {
	switch p, ok := policies()[name]; {
	case ok:
		return p, true
	case slices.Contains(modelFlagNames(), name), slices.Contains(csaeFlagNames(), name):
		return flagRefused, true
	case slices.Contains(DeviceFlagNames(), name): // which device to use
		return flagOverride, true
	case strings.HasSuffix(name, "password"):
		return flagNotKept, true
	}
	return flagOverride, false
}

// policyOf is the flag's policy (policy).
func policyOf(name string) flagPolicy {
	p, _ := policy(name)
	return p
}

// isPathFlag says whether a flag names a file: run.json keeps those as
// absolute paths, so that a resume from another directory finds them.
func isPathFlag(name string) bool {
	switch name {
	case "trace-ids", "vectors", "init-from", "tls-ca", "tls-cert", "tls-key", "cuda-lib-dir":
		return true
	}
	return false
}

// flagValue is the flag's value as run.json keeps it.
func flagValue(f *flag.Flag) string {
	v := f.Value.String()
	if isPathFlag(f.Name) && v != "" {
		if abs, err := filepath.Abs(v); err == nil {
			return abs
		}
	}
	return v
}

// KeptFlags is every flag of fs, the train command's, that run.json
// keeps (RunConfig.Flags), by name, with its value (given or default).
func KeptFlags(fs *flag.FlagSet) map[string]string {
	out := map[string]string{}
	fs.VisitAll(func(f *flag.Flag) {
		if policyOf(f.Name) != flagNotKept {
			out[f.Name] = flagValue(f)
		}
	})
	return out
}

// legacyFlags are the flags a run.json written before it kept them all
// still says: its loop settings. The model is the checkpoint's anyway.
func legacyFlags(info *trainstep.RunConfig) map[string]string {
	out := map[string]string{
		"run": info.Run, "dataset": info.Dataset, "split": info.Split, "topic-prefix": info.Prefix,
		"epochs": strconv.Itoa(info.Epochs), "shuffle-buffer": strconv.Itoa(info.ShuffleBuffer), "window": strconv.Itoa(info.Window),
		"checkpoint-every": strconv.FormatInt(info.CheckpointEvery, 10), "keep-checkpoints": strconv.Itoa(info.KeepCheckpoints),
	}
	if len(info.Client.Brokers) > 0 {
		out["brokers"] = strings.Join(info.Client.Brokers, ",")
	}
	return out
}

// FlagsError is a resume refused for the flags given: each problem names
// a flag, the run's value and what to do.
type FlagsError struct {
	Checkpoint string
	Problems   []string
}

func (e *FlagsError) Error() string {
	return fmt.Sprintf("resuming %s:\n  %s", e.Checkpoint, strings.Join(e.Problems, "\n  "))
}

// RestoreFlags makes fs, the train command's flags, the flags of the run
// of checkpoint ck: each flag not given on the command line takes the
// run's value (run.json); one given with another value overrides it, with
// a line on w, or is refused (a *FlagsError): it would change the model
// or its data, or it only sets up a new run. A checkpoint without
// run.json restores nothing.
func RestoreFlags(fs *flag.FlagSet, ck string, w io.Writer) error {
	info, err := trainstep.ReadRunConfig(ck)
	if err != nil || info == nil {
		return err
	}
	saved, legacy := info.Flags, info.Flags == nil
	if legacy {
		saved = legacyFlags(info)
	}
	given := map[string]bool{}
	fs.Visit(func(f *flag.Flag) { given[f.Name] = true })
	var unchecked []string
	var errs []string
	fs.VisitAll(func(f *flag.Flag) {
		p := policyOf(f.Name)
		if p == flagNotKept {
			return
		}
		was, ok := saved[f.Name]
		switch {
		case !ok:
			switch {
			case given[f.Name] && p == flagNewRun:
				errs = append(errs, fmt.Sprintf("--%s %s: it sets up a new run: leave it out to resume", f.Name, f.Value))
			case given[f.Name] && legacy && p == flagRefused:
				unchecked = append(unchecked, "--"+f.Name)
			}
		case !given[f.Name]:
			if p == flagNewRun {
				return
			}
			if err := fs.Set(f.Name, was); err != nil {
				errs = append(errs, fmt.Sprintf("--%s: the run's value %q: %v", f.Name, was, err))
			}
		case flagValue(f) == was:
		case p == flagOverride:
			fmt.Fprintf(w, "train: --%s %s overrides the run's %s\n", f.Name, f.Value, show(was))
		case p == flagNewRun:
			errs = append(errs, fmt.Sprintf("--%s %s: it sets up a new run (this one was started with %s): leave it out to resume", f.Name, f.Value, show(was)))
		default:
			errs = append(errs, fmt.Sprintf("--%s %s: the run was started with %s and a resume keeps its model and data: leave it out, or start a new run without --resume", f.Name, f.Value, show(was)))
		}
	})
	if len(errs) > 0 {
		return &FlagsError{Checkpoint: ck, Problems: errs}
	}
	if len(unchecked) > 0 {
		slices.Sort(unchecked)
		fmt.Fprintf(w, "train: %s was written before run.json kept every flag: %s not checked against the run (the model is the checkpoint's, %s)\n",
			ck, strings.Join(unchecked, ", "), trainstep.FileConfig)
	}
	return nil
}

// show quotes an empty value.
func show(v string) string {
	if v == "" {
		return `""`
	}
	return v
}
