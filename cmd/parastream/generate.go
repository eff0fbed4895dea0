package main

import (
	"context"
	"fmt"
	"os"

	"github.com/parastream/parastream/cmd/parastream/internal/cli"
	"github.com/parastream/parastream/evalsink"
)

const generateUsage = "parastream generate --checkpoint DIR [--beam N] [--max-len N] < sentences.txt | parastream generate --checkpoint DIR --eval FILE [--format quora] [--out RESULTS]"

func runGenerate(ctx context.Context, e *env, args []string) error {
	fs := newFlags(e, "generate", generateUsage)
	var g evalsink.GenerationEval
	g.RegisterFlags(fs)
	if err := cli.Parse(fs, args); err != nil {
		return err
	}
	if g.Checkpoint == "" || fs.NArg() > 0 {
		return fmt.Errorf("%w: --checkpoint is required, and nothing else (sentences come on stdin)", cli.ErrUsage)
	}
	return evalsink.RunGenerate(ctx, g, os.Stdin, e.stdout, e.stderr)
}
