package main

import (
	"context"
	"fmt"

	"github.com/parastream/parastream/cmd/parastream/internal/cli"
	"github.com/parastream/parastream/cmd/parastream/internal/report"
	"github.com/parastream/parastream/evalsink"
)

const exportUsage = "parastream export --checkpoint DIR --format glove|safetensors [--out FILE] | parastream export --checkpoint DIR --format sentence-transformers|model2vec [--truncate-dim N] OUTDIR"

func runExport(ctx context.Context, e *env, args []string) error {
	fs := newFlags(e, "export", exportUsage)
	c := evalsink.ExportConfig{Version: cli.BuildVersion(version)}
	fs.StringVar(&c.Checkpoint, "checkpoint", "", "checkpoint directory, or a checkpoint directory's parent for its latest (required)")
	fs.StringVar(&c.Format, "format", evalsink.FormatGloVe, "glove: the word embeddings as GloVe text (word v1 ... vd; the vocabulary's words, not the out-of-vocabulary buckets); safetensors: every parameter, with the configuration and vocabulary in the metadata; "+
		"sentence-transformers: a SentenceTransformer directory of one StaticEmbedding module (avg models); model2vec: a model2vec StaticModel directory (avg models)")
	fs.StringVar(&c.Out, "out", "", "file to write (default: stdout); for sentence-transformers and model2vec, the new directory (or give it after the flags)")
	fs.IntVar(&c.TruncateDim, "truncate-dim", 0, "sentence-transformers, model2vec: keep the embeddings' first N dimensions, a Matryoshka prefix (0: all)")
	if err := cli.Parse(fs, args); err != nil {
		return err
	}
	if c.Out == "" && fs.NArg() == 1 { // the directory (or file) may follow the flags
		c.Out = fs.Arg(0)
	} else if fs.NArg() > 0 {
		return fmt.Errorf("%w: nothing but the output may follow the flags", cli.ErrUsage)
	}
	if err := c.Validate(); err != nil {
		return fmt.Errorf("%w: %v", cli.ErrUsage, err)
	}
	x, err := evalsink.Export(ctx, c, e.stdout)
	if err != nil {
		return err
	}
	summary := e.stdout
	if c.Out == "" {
		summary = e.stderr // stdout is the data
	}
	report.Export(summary, x)
	return nil
}
