package main

import (
	"bufio"
	"context"
	"fmt"
	"os"

	"github.com/parastream/parastream/cmd/parastream/internal/cli"
	"github.com/parastream/parastream/evalsink"
	"github.com/parastream/parastream/trainstep"
	"github.com/parastream/parastream/transforms/text"
)

const embedUsage = "parastream embed --checkpoint DIR [--format text|json] [--lower=true|false] [--start-end=true|false] [--adapt] [--truncate-dim N] < sentences.txt"

func runEmbed(ctx context.Context, e *env, args []string) error {
	fs := newFlags(e, "embed", embedUsage)
	dir := fs.String("checkpoint", "", "checkpoint directory, or a checkpoint directory's parent for its latest (required)")
	format := fs.String("format", "text", "text: one line of space-separated numbers per sentence; json: {\"text\": ..., \"vector\": [...]} lines")
	adapt := fs.Bool("adapt", false, "apply the checkpoint's STS adaptation (parastream adapt) to every vector")
	truncate := fs.Int("truncate-dim", 0, "keep each vector's first N dimensions, a Matryoshka prefix (train --matryoshka); 0: all")
	var lower, startEnd cli.OptionalBool
	fs.Var(&lower, "lower", "lowercase before tokenising (default: as the training data was, from the checkpoint)")
	fs.Var(&startEnd, "start-end", "add <s> and </s> around each sentence (default: as the training data was)")
	if err := cli.Parse(fs, args); err != nil {
		return err
	}
	if *dir == "" || fs.NArg() > 0 {
		return fmt.Errorf("%w: --checkpoint is required, and nothing else (sentences come on stdin)", cli.ErrUsage)
	}
	if *format != "text" && *format != "json" {
		return fmt.Errorf("%w: --format %q: give text or json", cli.ErrUsage, *format)
	}
	ckDir, err := trainstep.LatestCheckpoint(*dir)
	if err != nil {
		return err
	}
	emb, ck, err := evalsink.OpenEmbedder(ckDir, topicContext)
	if err != nil {
		return err
	}
	defer emb.Close()
	if *adapt {
		if err := emb.UseAdaptation(ckDir); err != nil {
			return err
		}
	}
	if err := emb.SetTruncate(*truncate); err != nil {
		return fmt.Errorf("%w: --%v", cli.ErrUsage, err)
	}
	opts := text.TokenizeOptions{Lower: true}
	if ck.Run != nil {
		opts = text.TokenizeOptions{Lower: ck.Run.Tokenize.Lower, StartEnd: ck.Run.Tokenize.StartEnd}
	}
	lower.Apply(&opts.Lower)
	startEnd.Apply(&opts.StartEnd)

	out := bufio.NewWriter(e.stdout)
	defer out.Flush()
	sentences, err := emb.EmbedLines(ctx, os.Stdin, func(s string) []string { return text.Tokenize(s, opts) },
		func(line string, vec []float32) error { return evalsink.WriteVector(out, *format, line, vec) })
	if err != nil {
		return err
	}
	to := ""
	if b := emb.Lexicon().Buckets(); b > 0 {
		to = fmt.Sprintf(" (mapped to its %d out-of-vocabulary buckets)", b)
	}
	fmt.Fprintf(e.stderr, "embed: %d sentences with %s (%s, dim %d), %d tokens not in its vocabulary%s, %d distinct sentences without a token id (zero vectors)\n",
		sentences, ckDir, ck.Config.Encoder, ck.Config.EmbedDim(), emb.Unknown, to, emb.Empty)
	return nil
}
