package main

import (
	"flag"
	"os"

	"github.com/apache/beam/sdks/v2/go/pkg/beam/runners"

	"github.com/parastream/parastream/cmd/parastream/internal/cli"
	"github.com/parastream/parastream/internal/runlog"
	"github.com/parastream/parastream/pipelines"
)

// pipelineFlags are the run flags of the commands that run a Beam
// pipeline (extract, featurize): --gc-percent, --quiet, --verbose.
type pipelineFlags struct {
	gcPercent      *int
	quiet, verbose *bool
}

func addPipelineFlags(fs *flag.FlagSet) pipelineFlags {
	return pipelineFlags{
		gcPercent: fs.Int("gc-percent", pipelines.DefaultGCPercent, "the Go collector's target during the run (0 or GOGC set: the process's own setting)"),
		quiet:     fs.Bool("quiet", false, "no progress lines"),
		verbose:   fs.Bool("verbose", false, "let Beam and the runner log at info level"),
	}
}

// start checks Beam's --runner, opens the run's log (runlog) and returns
// the pipeline's run options; the caller closes the log.
func (p pipelineFlags) start(e *env, command string) (pipelines.RunOptions, *runlog.Log, error) {
	if err := cli.CheckRunner(*runners.Runner, withDataflow); err != nil {
		return pipelines.RunOptions{}, nil, err
	}
	log, err := runlog.Start(command, *p.verbose)
	if err != nil {
		return pipelines.RunOptions{}, nil, err
	}
	opts := pipelines.RunOptions{Runner: *runners.Runner}
	if os.Getenv("GOGC") == "" {
		opts.GCPercent = *p.gcPercent
	}
	if !*p.quiet {
		opts.Progress = e.stderr
	}
	return opts, log, nil
}
