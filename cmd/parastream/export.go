package main

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"slices"
	"strings"

	"github.com/parastream/parastream/cmd/parastream/internal/cli"
	"github.com/parastream/parastream/evalsink"
	"github.com/parastream/parastream/internal/atomicfile"
	"github.com/parastream/parastream/trainstep"
)

const exportUsage = "parastream export --checkpoint DIR --format glove|safetensors [--out FILE] | parastream export --checkpoint DIR --format sentence-transformers|model2vec [--truncate-dim N] OUTDIR"

func runExport(ctx context.Context, e *env, args []string) error {
	fs := newFlags(e, "export", exportUsage)
	dir := fs.String("checkpoint", "", "checkpoint directory, or a checkpoint directory's parent for its latest (required)")
	format := fs.String("format", "glove", "glove: the word embeddings as GloVe text (word v1 ... vd; the vocabulary's words, not the out-of-vocabulary buckets); safetensors: every parameter, with the configuration and vocabulary in the metadata; "+
		"sentence-transformers: a SentenceTransformer directory of one StaticEmbedding module (avg models); model2vec: a model2vec StaticModel directory (avg models)")
	out := fs.String("out", "", "file to write (default: stdout); for sentence-transformers and model2vec, the new directory (or give it after the flags)")
	truncate := fs.Int("truncate-dim", 0, "sentence-transformers, model2vec: keep the embeddings' first N dimensions, a Matryoshka prefix (0: all)")
	if err := cli.Parse(fs, args); err != nil {
		return err
	}
	static := slices.Contains(evalsink.StaticFormats(), *format)
	if static && *out == "" && fs.NArg() == 1 {
		*out = fs.Arg(0)
	} else if *dir == "" || fs.NArg() > 0 {
		return fmt.Errorf("%w: --checkpoint is required, and nothing else but the directory of --format sentence-transformers or model2vec", cli.ErrUsage)
	}
	if !static && *format != "glove" && *format != "safetensors" {
		return fmt.Errorf("%w: --format %q: give glove, safetensors, %s", cli.ErrUsage, *format, strings.Join(evalsink.StaticFormats(), " or "))
	}
	if static && *out == "" {
		return fmt.Errorf("%w: --format %s writes a directory: name it (parastream export --checkpoint CK --format %s OUTDIR)", cli.ErrUsage, *format, *format)
	}
	if !static && *truncate != 0 {
		return fmt.Errorf("%w: --truncate-dim is for --format sentence-transformers and model2vec", cli.ErrUsage)
	}
	if *dir == "" {
		return fmt.Errorf("%w: --checkpoint is required", cli.ErrUsage)
	}
	ckDir, err := trainstep.LatestCheckpoint(*dir)
	if err != nil {
		return err
	}
	ck, err := trainstep.ReadCheckpoint(ckDir)
	if err != nil {
		return err
	}
	if static {
		return evalsink.ExportStatic(*out, ck, evalsink.StaticConfig{Format: *format, TruncateDim: *truncate, Version: cli.BuildVersion(version)})
	}
	write := func(w io.Writer) error {
		if *format == "glove" {
			return trainstep.WriteGloVe(ctx, w, ck)
		}
		return trainstep.ExportSafetensors(w, ck, ckDir)
	}
	if *out == "" {
		bw := bufio.NewWriterSize(e.stdout, 1<<16)
		if err := write(bw); err != nil {
			return err
		}
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
	return f.Commit()
}
