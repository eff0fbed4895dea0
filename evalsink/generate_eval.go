package evalsink

import (
	"cmp"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"time"

	"github.com/parastream/parastream/corpora"
	"github.com/parastream/parastream/shards"
	"github.com/parastream/parastream/trainstep/compute"
)

// CopyInputSuffix ends the dataset name of the copy-the-input row of a
// generation evaluation: the input itself as the paraphrase, the figure a
// generator has to beat on overlapping pairs such as Quora's duplicates.
const CopyInputSuffix = "/copy-input"

// GenerationEval configures EvaluateGeneration and RunGenerate (Validate
// says what is missing). The zero value of each field but Checkpoint is
// its default.
type GenerationEval struct {
	// Checkpoint is the edd checkpoint (or a directory of checkpoints:
	// its latest).
	Checkpoint string
	// Pairs are the corpus files of the held-out pairs, read with the
	// corpora reader Format (default "quora"); a labelled pair is kept
	// when its label is at least MinLabel (default 1: Quora's duplicates).
	Pairs    []string
	Format   string
	MinLabel float64
	// Limit bounds the pairs scored (the first ones read); 0: all.
	Limit int
	// Options say how to search.
	Options compute.GenerateOptions
	// Out is the results directory the rows are appended to
	// (AppendResults); "" writes none.
	Out string
}

// Validate says what in c cannot run and how to fix it.
func (c GenerationEval) Validate() error {
	var errs []error
	if c.Checkpoint == "" {
		errs = append(errs, errors.New("no checkpoint: give the edd checkpoint directory (or a directory of checkpoints for its latest)"))
	}
	if c.Options.Beam < 0 {
		errs = append(errs, fmt.Errorf("beam %d: give a beam width of 1 or more (1: greedy search)", c.Options.Beam))
	}
	if c.Options.MaxLen < 0 {
		errs = append(errs, fmt.Errorf("max len %d: give the most words to generate, or 0 for the model's max_len", c.Options.MaxLen))
	}
	if c.Limit < 0 {
		errs = append(errs, fmt.Errorf("limit %d: give the number of held-out pairs to score, or 0 for all", c.Limit))
	}
	if err := errors.Join(errs...); err != nil {
		return fmt.Errorf("evalsink: generation: %w", err)
	}
	return nil
}

// EvaluateGeneration generates a paraphrase from the A side of each
// held-out pair and scores them against the B sides with BLEU-1 to 4,
// METEOR and TER (GenerationRows), beside the same figures of the A sides
// themselves (the copy-the-input row, CopyInputSuffix). It returns the
// rows, appended to cfg.Out when set.
func EvaluateGeneration(ctx context.Context, cfg GenerationEval) ([]Result, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	if len(cfg.Pairs) == 0 {
		return nil, errors.New("evaluating generation: no held-out pair files given")
	}
	if cfg.MinLabel == 0 {
		cfg.MinLabel = 1
	}
	format := cmp.Or(cfg.Format, "quora")
	p, _, err := OpenParaphraser(cfg.Checkpoint)
	if err != nil {
		return nil, err
	}
	defer p.Close()
	var src, refs [][]string
	r, err := corpora.OpenFormat(format, cfg.Pairs, corpora.Options{})
	if err != nil {
		return nil, fmt.Errorf("evaluating generation: %w", err)
	}
	errLimit := errors.New("limit")
	err = corpora.Drain(r, func(e corpora.Example) error {
		if e.HasLabel && e.Label < cfg.MinLabel {
			return nil
		}
		a, b := p.Tokenize(e.A), p.Tokenize(e.B)
		if len(a) == 0 || len(b) == 0 {
			return nil
		}
		src, refs = append(src, a), append(refs, b)
		if cfg.Limit > 0 && len(src) == cfg.Limit {
			return errLimit
		}
		return ctx.Err()
	}, nil)
	r.Close()
	if err != nil && !errors.Is(err, errLimit) {
		return nil, fmt.Errorf("reading the held-out pairs: %w", err)
	}
	if len(src) == 0 {
		return nil, fmt.Errorf("evaluating generation: no pair with a label of at least %g in %v", cfg.MinLabel, cfg.Pairs)
	}
	hyps, err := p.Paraphrase(src, cfg.Options)
	if err != nil {
		return nil, fmt.Errorf("generating: %w", err)
	}
	info, err := readCheckpointInfo(p.Dir())
	if err != nil {
		return nil, err
	}
	dataHash, err := hashFiles(cfg.Pairs...)
	if err != nil {
		return nil, fmt.Errorf("hashing the held-out pairs: %w", err)
	}
	version, _ := shards.BuildInfo()
	base := Result{
		EvalID: NewEvalID(info.checkpointID, dataHash, format, fmt.Sprint(cfg.MinLabel, cfg.Limit, cfg.Options.Beam, cfg.Options.MaxLen), KindGeneration),
		Run:    cmp.Or(info.run, filepath.Base(filepath.Dir(info.dir))), Model: info.encoder,
		Step: info.step, Epoch: int64(info.epoch), Checkpoint: info.dir, CheckpointID: info.checkpointID,
		EvaluatedAt: time.Now().UTC().Truncate(time.Millisecond),
		Versions:    fmt.Sprintf("parastream %s; %s", version, runtime.Version()),
		DataHash:    dataHash, ModelHash: info.modelHash,
	}
	many := make([][][]string, len(refs))
	for i, r := range refs {
		many[i] = [][]string{r}
	}
	name := fmt.Sprintf("%s/held-out", format)
	if cfg.Options.Beam > 1 {
		name += fmt.Sprintf("/beam%d", cfg.Options.Beam)
	}
	rows, err := GenerationRows(base, GenerationSet{Corpus: format, Split: "held-out", Dataset: name, Hyps: hyps, Refs: many})
	if err != nil {
		return nil, err
	}
	copyRows, err := GenerationRows(base, GenerationSet{Corpus: format, Split: "held-out", Dataset: name + CopyInputSuffix, Hyps: src, Refs: many})
	if err != nil {
		return nil, err
	}
	rows = append(rows, copyRows...)
	if cfg.Out != "" {
		if _, err := AppendResults(cfg.Out, rows); err != nil {
			return nil, err
		}
	}
	return rows, nil
}

// hashFiles is the hex SHA-256 of the bytes of paths, one after another.
func hashFiles(paths ...string) (string, error) {
	h := sha256.New()
	for _, p := range paths {
		f, err := os.Open(p)
		if err != nil {
			return "", err
		}
		_, err = io.Copy(h, f)
		f.Close()
		if err != nil {
			return "", fmt.Errorf("reading %s: %w", p, err)
		}
	}
	return hex.EncodeToString(h.Sum(nil)), nil
}

// RunGenerate is `parastream generate`: with no cfg.Pairs it writes a
// paraphrase of each line of in to out; with held-out pairs it runs
// EvaluateGeneration and writes its rows to out as a table. It logs a
// summary line to log.
func RunGenerate(ctx context.Context, cfg GenerationEval, in io.Reader, out, log io.Writer) error {
	if err := cfg.Validate(); err != nil {
		return err
	}
	if len(cfg.Pairs) > 0 {
		rows, err := EvaluateGeneration(ctx, cfg)
		if err != nil {
			return err
		}
		fmt.Fprintf(out, "%-36s %6s %6s %6s %6s %6s %6s %6s\n", "dataset", "pairs", "BLEU-1", "BLEU-2", "BLEU-3", "BLEU-4", "METEOR", "TER")
		for _, r := range rows {
			fmt.Fprintf(out, "%-36s %6d %6.1f %6.1f %6.1f %6.1f %6.1f %6.1f\n", r.Dataset, r.Pairs, *r.BLEU1, *r.BLEU2, *r.BLEU3, *r.BLEU4, *r.METEOR, *r.TER)
		}
		if cfg.Out != "" {
			fmt.Fprintf(log, "generate: %d rows appended to %s\n", len(rows), cfg.Out)
		}
		return nil
	}
	p, ck, err := OpenParaphraser(cfg.Checkpoint)
	if err != nil {
		return err
	}
	defer p.Close()
	n, err := p.ParaphraseLines(ctx, in, out, cfg.Options)
	if err != nil {
		return err
	}
	fmt.Fprintf(log, "generate: %d sentences with %s (%s, beam %d), %d tokens not in its vocabulary\n",
		n, p.Dir(), ck.Config.Encoder, max(cfg.Options.Beam, 1), p.emb.Unknown)
	return nil
}
