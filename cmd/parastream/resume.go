package main

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

// trainFlagPolicy lists the train flags that are not flagOverride.
var trainFlagPolicy = map[string]flagPolicy{
	"resume": flagNotKept, "checkpoint-dir": flagNotKept, "sasl-password": flagNotKept,
	"vectors": flagNewRun, "save-initial": flagNewRun,
	"dataset": flagRefused, "mix": flagRefused, "split": flagRefused, "topic-prefix": flagRefused,
	"model": flagRefused, "loss": flagRefused, "negatives": flagRefused, "margin": flagRefused,
	"hinge-k": flagRefused, "dim": flagRefused, "context": flagRefused, "train-cell-bias": flagRefused,
	"embed-init": flagRefused, "hidden": flagRefused, "batch": flagRefused, "max-len": flagRefused,
	"bucket-width": flagRefused, "optimizer": flagRefused, "embedding-update": flagRefused, "lr": flagRefused,
	"decay": flagRefused, "dropout": flagRefused, "word-dropout": flagRefused, "scramble": flagRefused,
	"lambda-c": flagRefused, "lambda-w": flagRefused, "seed": flagRefused, "shuffle-buffer": flagRefused,
	"window": flagRefused, "min-label": flagRefused,
}

// policyOf is the flag's policy; a password given on the command line is
// never written to disk, whatever its flag is named.
func policyOf(name string) flagPolicy {
	if p, ok := trainFlagPolicy[name]; ok {
		return p
	}
	if strings.HasSuffix(name, "password") {
		return flagNotKept
	}
	return flagOverride
}

// pathFlags name files: run.json keeps them as absolute paths, so that a
// resume from another directory finds them.
var pathFlags = map[string]bool{"trace-ids": true, "vectors": true, "tls-ca": true, "tls-cert": true, "tls-key": true, "cuda-lib-dir": true}

// flagValue is the flag's value as run.json keeps it.
func flagValue(f *flag.Flag) string {
	v := f.Value.String()
	if pathFlags[f.Name] && v != "" {
		if abs, err := filepath.Abs(v); err == nil {
			return abs
		}
	}
	return v
}

// keptFlags is every flag of fs that run.json keeps, by name, with its
// value (given or default).
func keptFlags(fs *flag.FlagSet) map[string]string {
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
func legacyFlags(info *trainstep.RunInfo) map[string]string {
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

// restoreFlags makes fs the flags of the run of checkpoint ck: each flag
// not given on the command line takes the run's value (run.json); one
// given with another value overrides it, with a line on w, or is refused
// (flagPolicy). A checkpoint without run.json restores nothing.
func restoreFlags(fs *flag.FlagSet, ck string, w io.Writer) error {
	info, err := trainstep.ReadRunInfo(ck)
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
		return fmt.Errorf("%w: resuming %s:\n  %s", errUsage, ck, strings.Join(errs, "\n  "))
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
