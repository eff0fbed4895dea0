package main

import (
	"context"
	"fmt"

	"github.com/parastream/parastream/cmd/parastream/internal/cli"
	"github.com/parastream/parastream/evalsink"
	"github.com/parastream/parastream/evalsink/adapt"
)

const adaptUsage = "parastream adapt --checkpoint DIR --eval SHARDS [--seed N] [--epochs N] [-v]"

func runAdapt(ctx context.Context, e *env, args []string) error {
	fs := newFlags(e, "adapt", adaptUsage)
	dir := fs.String("checkpoint", "", "checkpoint directory; the adaptation is written into it (adapt-sts.safetensors, adapt-sts.json) (required)")
	eval := fs.String("eval", "", "evaluation shards holding stsb/train and stsb/dev (parastream extract --corpus stsb) (required)")
	seed := fs.Uint64("seed", evalsink.DefaultSeed, "seed of the minibatch order")
	epochs := fs.Int("epochs", adapt.DefaultEpochs, "most passes over STSb train per setting of the search (learning rate × λ)")
	verbose := fs.Bool("v", false, "log each setting's best dev Pearson")
	cli.Describe(fs, e.stdout, adaptUsage, "parastream adapt --checkpoint ckpt/step-00000340 --eval eval\nparastream eval run --adapt --checkpoint ckpt/step-00000340 --eval eval --out results",
		cli.FlagGroup{Title: "input", Names: []string{"checkpoint", "eval"}},
		cli.FlagGroup{Title: "training", Names: []string{"seed", "epochs"}},
		cli.FlagGroup{Title: "run", Names: []string{"v"}})
	if err := cli.Parse(fs, args); err != nil {
		return err
	}
	if *dir == "" || *eval == "" || fs.NArg() > 0 {
		return fmt.Errorf("%w: --checkpoint and --eval are required, and nothing else", cli.ErrUsage)
	}
	return adapt.Run(ctx, adapt.Config{Checkpoint: *dir, Eval: *eval, Seed: *seed, Epochs: *epochs, ContextFor: topicContext,
		Logger: cli.Logger(e.stderr, *verbose)}, e.stdout)
}
