package main

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/parastream/parastream/cmd/parastream/internal/cli"
	"github.com/parastream/parastream/cmd/parastream/internal/report"
	"github.com/parastream/parastream/corpora/synth"
)

const genUsage = "parastream gen reddit|europarl|ppdb|quora|simpwiki --rows N --out FILE [--out-b FILE] [--compress auto|zstd|gz|bz2|none] [--seed S] [--malformed-rate R] [--submissions FILE]"

func runGen(ctx context.Context, e *env, args []string) error {
	fs := newFlags(e, "gen", genUsage)
	var rows cli.Count = 10000
	fs.Var(&rows, "rows", "rows to write, malformed ones included (comments, line pairs, rules, question pairs); 10k, 10M and 1e6 are fine")
	out := fs.String("out", "", "the file to write (- for standard output); for europarl the English side (FILE.en, or FILE as a stem: FILE.en and FILE.fr), for simpwiki normal.aligned")
	outB := fs.String("out-b", "", "the second file of europarl (French) and simpwiki (simple.aligned); default derived from --out: .en→.fr, normal→simple")
	compress := fs.String("compress", "auto", "compression: zstd, gz, bz2 or none; auto takes it from the file names' suffixes (.zst, .gz, .bz2); an explicit one adds its suffix where a name lacks it")
	seed := fs.Uint64("seed", 1, "seed: the same seed and flags write the same bytes")
	malformed := fs.Float64("malformed-rate", synth.DefaultMalformedRate, "fraction of rows written malformed (0 for none)")
	submissions := fs.String("submissions", "", "reddit: also write the submissions (RS records) of the threads to this file")
	era := fs.String("era", "mixed", "reddit: record layout, one of "+strings.Join(synth.Eras(), ", "))
	start := fs.String("start", synth.DefaultStart().Format("2006-01-02"), "reddit: time of the first thread, YYYY-MM-DD or RFC 3339")
	ppdbVersion := fs.Int("ppdb-version", 2, "ppdb: 2 (six fields, entailment classes) or 1 (five fields)")
	corpus := ""
	if len(args) > 0 && !strings.HasPrefix(args[0], "-") {
		corpus, args = args[0], args[1:]
	}
	if err := cli.Parse(fs, args); err != nil {
		return err
	}
	if corpus == "" && fs.NArg() > 0 {
		corpus = fs.Arg(0)
		if err := cli.Parse(fs, fs.Args()[1:]); err != nil {
			return err
		}
	}
	if fs.NArg() > 0 {
		return fmt.Errorf("%w: unexpected arguments %q", cli.ErrUsage, fs.Args())
	}
	nfiles := synth.FileCount(corpus)
	switch {
	case corpus == "":
		return fmt.Errorf("%w: name the corpus: reddit, europarl, ppdb, quora or simpwiki", cli.ErrUsage)
	case nfiles == 0:
		return fmt.Errorf("%w: unknown corpus %q (reddit, europarl, ppdb, quora, simpwiki)", cli.ErrUsage, corpus)
	case *out == "":
		return fmt.Errorf("%w: --out is required", cli.ErrUsage)
	case *outB != "" && nfiles == 1:
		return fmt.Errorf("%w: --out-b is for the two-file corpora (europarl, simpwiki)", cli.ErrUsage)
	case *submissions != "" && corpus != "reddit":
		return fmt.Errorf("%w: --submissions is for reddit", cli.ErrUsage)
	case *out == "-" && nfiles == 2 && *outB == "":
		return fmt.Errorf("%w: --out - (standard output) needs --out-b for the second file", cli.ErrUsage)
	}

	cfg := synth.Config{Rows: int64(rows), Seed: *seed, MalformedRate: *malformed, Era: *era, PPDBVersion: *ppdbVersion}
	if *malformed == 0 {
		cfg.MalformedRate = synth.NoMalformed
	}
	t, err := parseStart(*start)
	if err != nil {
		return fmt.Errorf("%w: --start: %v", cli.ErrUsage, err)
	}
	cfg.Start = t
	if err := cfg.Validate(); err != nil {
		return fmt.Errorf("%w: %v", cli.ErrUsage, err)
	}

	var explicit synth.Codec
	if *compress != "auto" {
		if explicit, err = synth.ParseCodec(*compress); err != nil {
			return fmt.Errorf("%w: --compress: %v", cli.ErrUsage, err)
		}
	}
	names := synth.FileNames(corpus, *out, *outB, explicit)
	if *submissions != "" {
		names = append(names, synth.WithCodec(*submissions, explicit))
	}
	// The summary goes to stderr when the data goes to stdout.
	summary := e.stdout
	for i, n := range names {
		for _, m := range names[:i] {
			if m == n && n != "-" {
				return fmt.Errorf("%w: two outputs named %s", cli.ErrUsage, n)
			}
		}
		if n == "-" {
			if summary == e.stderr {
				return fmt.Errorf("%w: only one output can be standard output (-)", cli.ErrUsage)
			}
			summary = e.stderr
		}
	}
	began := time.Now()
	progress := report.GenProgress(e.stderr, corpus, began)
	cfg.Progress = func(st synth.Stats) error {
		progress(st)
		return ctx.Err()
	}
	res, err := synth.Generate(synth.Job{Corpus: corpus, Files: names, Submissions: *submissions != "", Codec: explicit, Stdout: e.stdout, Config: cfg})
	if err != nil {
		return err
	}
	report.Gen(summary, corpus, res, time.Since(began))
	return nil
}

func parseStart(s string) (time.Time, error) {
	if t, err := time.Parse("2006-01-02", s); err == nil {
		return t, nil
	}
	return time.Parse(time.RFC3339, s)
}
