// Package runlog keeps a Beam run's own logs out of a command's output:
// Beam's and the runner's lines and, on failure, the full error with the
// pipeline's plan go to a file, and the command prints the error's cause
// on one line with the file's path.
package runlog

import (
	"fmt"
	"log/slog"
	"os"
	"strings"

	"github.com/apache/beam/sdks/v2/go/pkg/beam"
	beamlog "github.com/apache/beam/sdks/v2/go/pkg/beam/log"
)

// Log is where a Beam run's own logs go: Beam's and the runner's lines
// and, on failure, the full error with the pipeline's plan. Without
// verbose they go to a file, named by the error when the run fails and
// removed when it succeeds; with verbose to the process's logger.
type Log struct {
	cmd     string
	verbose bool
	f       *os.File
	prev    *slog.Logger
}

// Start initialises Beam (which sets up its logging) and points its logs
// at the run's log file, or at the process's logger with verbose. cmd
// names the command in the file's name and the failure's record.
func Start(cmd string, verbose bool) (*Log, error) {
	l := &Log{cmd: cmd, verbose: verbose, prev: slog.Default()}
	if verbose {
		beamlog.LogLevel = "info"
		beam.Init()
		return l, nil
	}
	beamlog.LogLevel = "warn" // Prism logs each job's lifecycle at info
	beam.Init()
	dir := Dir()
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, fmt.Errorf("creating the run's log directory: %w (or pass --verbose to log to stderr)", err)
	}
	prune(dir, Keep)
	f, err := os.CreateTemp(dir, "parastream-"+cmd+"-*.log")
	if err != nil {
		return nil, fmt.Errorf("creating the run's log file: %w (or pass --verbose to log to stderr)", err)
	}
	l.f = f
	slog.SetDefault(slog.New(slog.NewTextHandler(f, &slog.HandlerOptions{Level: slog.LevelInfo})))
	return l, nil
}

// Failed writes err in full to the log and returns the error to print:
// its cause on one line, and where the rest is.
func (l *Log) Failed(err error) error {
	if l.verbose || l.f == nil {
		return err
	}
	fmt.Fprintf(l.f, "\nparastream %s failed:\n%v\n", l.cmd, err)
	short := shortCause(err)
	path := l.f.Name()
	l.f.Close()
	l.f = nil
	slog.SetDefault(l.prev)
	return &shortError{msg: fmt.Sprintf("%s\n  (the pipeline's plan and logs: %s; --verbose prints them)", short, path), err: err}
}

// Close restores the process's logger and removes the log of a run that
// did not fail.
func (l *Log) Close() {
	if l.f == nil {
		return
	}
	slog.SetDefault(l.prev)
	l.f.Close()
	os.Remove(l.f.Name())
}

// shortError prints as msg and unwraps to the full error.
type shortError struct {
	msg string
	err error
}

func (s *shortError) Error() string { return s.msg }
func (s *shortError) Unwrap() error { return s.err }

// shortCause is the line of a pipeline error that says what went wrong:
// the error a DoFn returned, without the plan and the wrappers Beam puts
// around it ("caused by:", "DoFn[...] failed:"), and a hint where one
// fixes it.
func shortCause(err error) string {
	msg := err.Error()
	if i := strings.LastIndex(msg, "caused by:"); i >= 0 {
		msg = msg[i+len("caused by:"):]
	}
	cause := ""
	for _, line := range strings.Split(msg, "\n") {
		line = strings.TrimSpace(line)
		if line != "" && !strings.HasPrefix(line, "DoFn[") && !strings.HasSuffix(line, "failed:") {
			cause = line
			break
		}
	}
	if cause == "" {
		cause, _, _ = strings.Cut(err.Error(), "\n")
	}
	if strings.Contains(cause, "truncated") {
		cause += "; --skip-bad-files counts such a file as a reject and goes on"
	}
	return cause
}
