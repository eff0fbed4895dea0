package trainstep

import (
	"flag"
	"fmt"
	"io"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
)

// This file holds what `parastream train --resume` does with the
// command line: which flags run.json keeps (KeptFlags, RunConfig.Flags)
// and how a resume restores them (RestoreFlags).

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
	// flagNotKept: not in run.json (--resume itself, secrets, and
	// --checkpoint-dir, which defaults to the resumed checkpoint's
	// directory so that a moved run stays where it is).
	flagNotKept
)

// trainFlagPolicy is the policy of the train flags that are not
// flagOverride.
func trainFlagPolicy(name string) (flagPolicy, bool) {
	if slices.Contains(csaeFlagNames(), name) {
		return flagRefused, true
	}
	switch name {
	case "resume", "checkpoint-dir", "sasl-password":
		return flagNotKept, true
	case "vectors", "save-initial", "init-from":
		return flagNewRun, true
	case "dataset", "mix", "split", "topic-prefix",
		"model", "loss", "negatives", "margin",
		"hinge-k", "dim", "context", "train-cell-bias",
		"embed-init", "hidden", "batch", "max-len",
		"bucket-width", "optimizer", "embedding-update", "lr",
		"decay", "dropout", "word-dropout", "scramble",
		"lambda-c", "lambda-w", "seed", "shuffle-buffer",
		"window", "min-label", "tf-layers", "tf-heads", "tf-filter", "out-vocab", "global-weight", "nli-hidden":
		return flagRefused, true
	}
	return flagOverride, false
}

// policyOf is the flag's policy; a password given on the command line is
// never written to disk, whatever its flag is named.
func policyOf(name string) flagPolicy {
	if p, ok := trainFlagPolicy(name); ok {
		return p
	}
	if strings.HasSuffix(name, "password") {
		return flagNotKept
	}
	return flagOverride
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
func legacyFlags(info *RunInfo) map[string]string {
	out := map[string]string{
		"run": info.Run, "dataset": info.Dataset, "split": info.Split, "topic-prefix": info.Prefix,
		"epochs": strconv.Itoa(info.Epochs), "shuffle-buffer": strconv.Itoa(info.ShuffleBuffer), "window": strconv.Itoa(info.Window),
		"checkpoint-every": strconv.FormatInt(info.CheckpointEvery, 10), "keep-checkpoints": strconv.Itoa(info.KeepCheckpoints),
	}
	if len(info.Brokers) > 0 {
		out["brokers"] = strings.Join(info.Brokers, ",")
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
	info, err := ReadRunInfo(ck)
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
			ck, strings.Join(unchecked, ", "), FileConfig)
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
