package main

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"time"

	"github.com/parastream/parastream/cmd/parastream/internal/cli"
	"github.com/parastream/parastream/cmd/parastream/internal/report"
	"github.com/parastream/parastream/internal/atomicfile"
	"github.com/parastream/parastream/trainstep"
)

const exportUsage = "parastream export --checkpoint DIR --format glove|safetensors [--out FILE]"

func runExport(ctx context.Context, e *env, args []string) error {
	fs := newFlags(e, "export", exportUsage)
	dir := fs.String("checkpoint", "", "checkpoint directory, or a checkpoint directory's parent for its latest (required)")
	format := fs.String("format", "glove", "glove: the word embeddings as GloVe text (word v1 ... vd; the vocabulary's words, not the out-of-vocabulary buckets); safetensors: every parameter, with the configuration and vocabulary in the metadata")
	out := fs.String("out", "", "file to write (default: stdout)")
	if err := cli.Parse(fs, args); err != nil {
		return err
	}
	if *dir == "" || fs.NArg() > 0 {
		return fmt.Errorf("%w: --checkpoint is required, and nothing else", cli.ErrUsage)
	}
	if *format != "glove" && *format != "safetensors" {
		return fmt.Errorf("%w: --format %q: give glove or safetensors", cli.ErrUsage, *format)
	}
	ckDir, err := trainstep.LatestCheckpoint(*dir)
	if err != nil {
		return err
	}
	ck, err := trainstep.ReadCheckpoint(ckDir)
	if err != nil {
		return err
	}
	start, n := time.Now(), int64(0)
	write := func(w io.Writer) error {
		c := &report.Counter{W: w}
		defer func() { n = c.N }()
		if *format == "glove" {
			return trainstep.WriteGloVe(ctx, c, ck)
		}
		return trainstep.ExportSafetensors(c, ck, ckDir)
	}
	if *out == "" {
		bw := bufio.NewWriterSize(e.stdout, 1<<16)
		if err := write(bw); err != nil {
			return err
		}
		defer func() { report.Export(e.stderr, exported(*format, ck, ckDir, "", n, start)) }() // stdout is the data
		return bw.Flush()
	}
	f, err := atomicfile.Create(*out)
	if err != nil {
		return err
	}
	defer f.Abort()
	bw := bufio.NewWriterSize(f, 1<<16)
	if err := write(bw); err != nil {
		return err
	}
	if err := bw.Flush(); err != nil {
		return err
	}
	if err := f.Commit(); err != nil {
		return err
	}
	report.Export(e.stdout, exported(*format, ck, ckDir, *out, n, start))
	return nil
}

func exported(format string, ck *trainstep.Checkpoint, ckDir, out string, n int64, start time.Time) report.Exported {
	return report.Exported{Format: format, Checkpoint: ckDir, Encoder: ck.Config.Encoder, Out: out, Step: ck.State.Step,
		Dim: ck.Config.Dim, Words: len(ck.Vocab), Bytes: n, Elapsed: time.Since(start)}
}
