package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"sort"
	"strings"
	"time"

	"github.com/parastream/parastream/corpora"
	"github.com/parastream/parastream/internal/atomicfile"
)

const readUsage = "parastream read --format NAME [--rejects FILE [--force]] [--show N] FILE [FILE2]"

func runRead(ctx context.Context, e *env, args []string) error {
	fs := newFlags(e, "read", readUsage)
	format := fs.String("format", "", "input format (see 'parastream formats')")
	rejects := fs.String("rejects", "", "write malformed records to this file as JSON lines")
	force := fs.Bool("force", false, "replace the --rejects file if it exists")
	show := fs.Int("show", 3, "print this many examples and rejects")
	dataset := fs.String("dataset", "", "override the dataset name derived from the file names")
	encoding := fs.String("encoding", "", "text encoding of the inputs: utf-8 (default) or latin1")
	maxLine := fs.Int("max-line-bytes", corpora.DefaultMaxLineBytes, "longest line (or quoted record) accepted")
	describe(fs, e, readUsage, "parastream read --format quora --show 5 quora_duplicate_questions.tsv",
		flagGroup{"input", []string{"format", "encoding", "dataset", "max-line-bytes"}},
		flagGroup{"output", []string{"show", "rejects", "force"}})
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	if *format == "" || fs.NArg() == 0 {
		return fmt.Errorf("%w: --format and at least one file are required: parastream read --format NAME FILE", errUsage)
	}
	if *rejects != "" && !*force {
		if _, err := os.Stat(*rejects); err == nil {
			return fmt.Errorf("--rejects %s exists: pass --force to replace it, or name another file", *rejects)
		}
	}
	opts := corpora.Options{Dataset: *dataset, Encoding: *encoding, Limits: corpora.Limits{MaxLineBytes: *maxLine}}
	rep, err := readFormat(ctx, e, *format, fs.Args(), opts, *show, *rejects)
	rep.print(e.stdout, *show)
	return err
}

func runFormats(_ context.Context, e *env, args []string) error {
	fs := newFlags(e, "formats", "parastream formats")
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	for _, f := range corpora.Formats() {
		fmt.Fprintf(e.stdout, "%-18s %s\n%18s files: %s\n%18s %s\n", f.Name, f.Summary, "", strings.Join(f.Files, ", "), "", f.Mapping)
	}
	return nil
}

// readReport is what reading one input gave.
type readReport struct {
	format  string
	paths   []string
	stats   corpora.Stats
	shown   []corpora.Example
	rejects []*corpora.ParseError
	elapsed time.Duration
	err     error
}

// readFormat reads paths in a format to the end, keeping the first show
// examples and rejects, writing every reject to rejectsPath when set, and
// reporting progress on stderr every few seconds.
func readFormat(ctx context.Context, e *env, format string, paths []string, opts corpora.Options, show int, rejectsPath string) (rep readReport, err error) {
	rep = readReport{format: format, paths: paths}
	start := time.Now()
	defer func() { rep.elapsed = time.Since(start); rep.err = err }()
	r, err := corpora.OpenFormat(format, paths, opts)
	if err != nil {
		return rep, err
	}
	defer r.Close()
	var rw *corpora.RejectsWriter
	if rejectsPath != "" {
		f, err := atomicfile.Create(rejectsPath)
		if err != nil {
			return rep, err
		}
		defer f.Abort()
		// The rejects found are kept even when the input fails later on.
		defer func() {
			werr := rw.Flush()
			if werr == nil {
				werr = f.Commit()
			}
			if err == nil {
				err = werr
			}
		}()
		rw = corpora.NewRejectsWriter(f)
	}
	next := time.Now().Add(2 * time.Second)
	var n int64
	err = corpora.Drain(r, func(ex corpora.Example) error {
		if len(rep.shown) < show {
			rep.shown = append(rep.shown, ex)
		}
		n++
		if n%4096 == 0 {
			if err := ctx.Err(); err != nil {
				return err
			}
			if now := time.Now(); now.After(next) {
				st := r.Stats()
				fmt.Fprintf(e.stderr, "  %s: %d examples, %d rejected, %s read, %.0f examples/s\n", format, st.Examples, st.RejectedTotal(), humanBytes(st.Bytes), float64(st.Examples)/now.Sub(start).Seconds())
				next = now.Add(2 * time.Second)
			}
		}
		return nil
	}, func(pe *corpora.ParseError) error {
		if len(rep.rejects) < show {
			rep.rejects = append(rep.rejects, pe)
		}
		if rw != nil {
			return rw.Write(pe)
		}
		return nil
	})
	rep.stats = r.Stats()
	return rep, err
}

func (rep readReport) print(w io.Writer, show int) {
	st := rep.stats
	fmt.Fprintf(w, "%s  %s\n", rep.format, strings.Join(rep.paths, " + "))
	fmt.Fprintf(w, "  records %d  examples %d  rejected %d%s  skipped %d%s  %s decompressed in %s\n",
		st.Records, st.Examples, st.RejectedTotal(), breakdown(st.Rejected), sumSkipped(st.Skipped), breakdown(st.Skipped),
		humanBytes(st.Bytes), rep.elapsed.Round(time.Millisecond))
	for _, ex := range rep.shown[:min(show, len(rep.shown))] {
		fmt.Fprintf(w, "  example  %s\n", clip(ex.String(), 220))
	}
	for _, pe := range rep.rejects[:min(show, len(rep.rejects))] {
		fmt.Fprintf(w, "  reject   %s\n", clip(pe.Error(), 220))
	}
	if rep.err != nil {
		fmt.Fprintf(w, "  ERROR    %v\n", rep.err)
		return
	}
	o := outcome{read: st.Records, kept: st.Examples, keptNoun: "examples", dropped: map[string]int64{}}
	for r, n := range st.Rejected {
		o.dropped[string(r)] += n
	}
	for k, n := range st.Skipped {
		o.dropped[k] += n
	}
	for _, h := range o.hints() {
		fmt.Fprintf(w, "  %s\n", h)
	}
}

func breakdown[K ~string](m map[K]int64) string {
	if len(m) == 0 {
		return ""
	}
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, string(k))
	}
	sort.Strings(keys)
	parts := make([]string, len(keys))
	for i, k := range keys {
		parts[i] = fmt.Sprintf("%s %d", k, m[K(k)])
	}
	return " (" + strings.Join(parts, ", ") + ")"
}

func sumSkipped(m map[string]int64) int64 {
	var n int64
	for _, v := range m {
		n += v
	}
	return n
}

func clip(s string, n int) string {
	if r := []rune(s); len(r) > n {
		return string(r[:n]) + "…"
	}
	return s
}

func humanBytes(n int64) string {
	switch {
	case n >= 1<<30:
		return fmt.Sprintf("%.1f GiB", float64(n)/(1<<30))
	case n >= 1<<20:
		return fmt.Sprintf("%.1f MiB", float64(n)/(1<<20))
	case n >= 1<<10:
		return fmt.Sprintf("%.1f KiB", float64(n)/(1<<10))
	}
	return fmt.Sprintf("%d B", n)
}
