package main

import (
	"context"
	"fmt"
	"strings"

	"github.com/parastream/parastream/cmd/parastream/internal/cli"
	"github.com/parastream/parastream/cmd/parastream/internal/report"
	"github.com/parastream/parastream/corpora"
)

const readUsage = "parastream read --format NAME [--rejects FILE [--force]] [--show N] FILE [FILE2]"

func runRead(ctx context.Context, e *env, args []string) error {
	fs := newFlags(e, "read", readUsage)
	format := fs.String("format", "", "input format (see 'parastream formats')")
	rejects := fs.String("rejects", "", "write malformed records to this file as JSON lines")
	force := fs.Bool("force", false, "replace the --rejects file if it exists")
	show := fs.Int("show", 3, "print this many examples and rejects")
	dataset := fs.String("dataset", "", "override the dataset name derived from the file names")
	encoding := fs.String("encoding", "", "text encoding of the inputs: utf-8 (default) or latin1")
	maxLine := fs.Int("max-line-bytes", corpora.DefaultMaxLineBytes, "longest line (or quoted record) accepted")
	cli.Describe(fs, e.stdout, readUsage, "parastream read --format quora --show 5 quora_duplicate_questions.tsv",
		cli.FlagGroup{Title: "input", Names: []string{"format", "encoding", "dataset", "max-line-bytes"}},
		cli.FlagGroup{Title: "output", Names: []string{"show", "rejects", "force"}})
	if err := cli.Parse(fs, args); err != nil {
		return err
	}
	if *format == "" || fs.NArg() == 0 {
		return fmt.Errorf("%w: --format and at least one file are required: parastream read --format NAME FILE", cli.ErrUsage)
	}
	opts := corpora.ReadAllOptions{Options: corpora.Options{Dataset: *dataset, Encoding: *encoding, Limits: corpora.Limits{MaxLineBytes: *maxLine}},
		Show: *show, RejectsPath: *rejects, ReplaceRejects: *force, Progress: report.ReadProgress(e.stderr, *format)}
	if err := opts.Validate(*format); err != nil {
		return fmt.Errorf("%w: %v", cli.ErrUsage, err)
	}
	rep, err := corpora.ReadAll(ctx, *format, fs.Args(), opts)
	report.Read(e.stdout, rep, *show)
	return err
}

func runFormats(_ context.Context, e *env, args []string) error {
	fs := newFlags(e, "formats", "parastream formats")
	if err := cli.Parse(fs, args); err != nil {
		return err
	}
	for _, f := range corpora.Formats() {
		fmt.Fprintf(e.stdout, "%-18s %s\n%18s files: %s\n%18s %s\n", f.Name, f.Summary, "", strings.Join(f.Files, ", "), "", f.Mapping)
	}
	return nil
}
