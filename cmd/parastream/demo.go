package main

import (
	"context"
	"fmt"
	"path/filepath"

	"github.com/parastream/parastream/cmd/parastream/internal/cli"
	"github.com/parastream/parastream/cmd/parastream/internal/demo"
	"github.com/parastream/parastream/cmd/parastream/internal/outdir"
)

func runDemo(ctx context.Context, e *env, args []string) error {
	fs := newFlags(e, "demo", "parastream demo [--data DIR] [--out DIR] [--show N] [--models]")
	data := fs.String("data", "testdata", "directory of the fixtures")
	out := fs.String("out", filepath.Join("out", "demo"), "directory for the demo's outputs (rejects files, shards)")
	show := fs.Int("show", 0, "print each input's and corpus's whole report with this many examples and rejects (0: one line each)")
	models := fs.Bool("models", false, "instead: train the transformer, the context-sensitive autoencoder and the paraphrase generator for a few steps each, and evaluate them (make demo-models)")
	if err := cli.Parse(fs, args); err != nil {
		return err
	}
	if err := outdir.Check(*out); err != nil {
		return fmt.Errorf("%w: --out: %v", cli.ErrUsage, err)
	}
	cfg := demo.Config{Data: *data, Out: *out, Show: *show, Stdout: e.stdout, Stderr: e.stderr, ContextFor: topicContext, Self: selfName()}
	if *models {
		return cfg.Models(ctx)
	}
	return demo.Run(ctx, cfg)
}
