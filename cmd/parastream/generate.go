package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"strings"

	"github.com/parastream/parastream/cmd/parastream/internal/cli"
	"github.com/parastream/parastream/evalsink"
)

const generateUsage = "parastream generate --checkpoint DIR [--beam N] [--max-len N] < sentences.txt | parastream generate --checkpoint DIR --eval FILE [--format quora] [--out RESULTS]"

func runGenerate(ctx context.Context, e *env, args []string) error {
	fs := newFlags(e, "generate", generateUsage)
	var g evalsink.GenerationEval
	generateFlags(fs, &g)
	if err := cli.Parse(fs, args); err != nil {
		return err
	}
	if g.Checkpoint == "" || fs.NArg() > 0 {
		return fmt.Errorf("%w: --checkpoint is required, and nothing else (sentences come on stdin)", cli.ErrUsage)
	}
	return evalsink.RunGenerate(ctx, g, os.Stdin, e.stdout, e.stderr)
}

// generateFlags declares the flags of `parastream generate` on fs, bound
// to g's fields.
func generateFlags(fs *flag.FlagSet, g *evalsink.GenerationEval) {
	fs.StringVar(&g.Checkpoint, "checkpoint", "", "edd checkpoint directory, or a checkpoint directory's parent for its latest (required)")
	fs.IntVar(&g.Options.Beam, "beam", 1, "beam width (1: greedy search)")
	fs.IntVar(&g.Options.MaxLen, "max-len", 0, "most words generated (0: the model's max_len)")
	fs.Func("eval", "held-out pairs (comma-separated files): generate from each A, score against its B with BLEU-1 to 4, METEOR and TER beside copying the input, instead of reading stdin", func(v string) error {
		for _, f := range strings.Split(v, ",") {
			if f = strings.TrimSpace(f); f != "" {
				g.Pairs = append(g.Pairs, f)
			}
		}
		return nil
	})
	fs.StringVar(&g.Format, "format", "quora", "corpus format of the --eval files (pairs labelled below 1 are left out)")
	fs.IntVar(&g.Limit, "limit", 0, "score only the first N --eval pairs (0: all)")
	fs.StringVar(&g.Out, "out", "", "results directory the --eval rows are appended to (as parastream eval's)")
}
