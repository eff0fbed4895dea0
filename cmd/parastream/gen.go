package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/parastream/parastream/corpora/synth"
	"github.com/parastream/parastream/internal/atomicfile"
)

const genUsage = "parastream gen reddit|europarl|ppdb|quora|simpwiki --rows N --out FILE [--out-b FILE] [--compress auto|zstd|gz|bz2|none] [--seed S] [--malformed-rate R] [--submissions FILE]"

// genCorpora are the corpora gen writes, with the files each writes.
var genCorpora = map[string]int{"reddit": 1, "europarl": 2, "ppdb": 1, "quora": 1, "simpwiki": 2}

func runGen(ctx context.Context, e *env, args []string) error {
	fs := newFlags(e, "gen", genUsage)
	var rows rowsFlag = 10000
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
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	if corpus == "" && fs.NArg() > 0 {
		corpus = fs.Arg(0)
		if err := parseFlags(fs, fs.Args()[1:]); err != nil {
			return err
		}
	}
	if fs.NArg() > 0 {
		return fmt.Errorf("%w: unexpected arguments %q", errUsage, fs.Args())
	}
	nfiles, ok := genCorpora[corpus]
	switch {
	case corpus == "":
		return fmt.Errorf("%w: name the corpus: reddit, europarl, ppdb, quora or simpwiki", errUsage)
	case !ok:
		return fmt.Errorf("%w: unknown corpus %q (reddit, europarl, ppdb, quora, simpwiki)", errUsage, corpus)
	case *out == "":
		return fmt.Errorf("%w: --out is required", errUsage)
	case *outB != "" && nfiles == 1:
		return fmt.Errorf("%w: --out-b is for the two-file corpora (europarl, simpwiki)", errUsage)
	case *submissions != "" && corpus != "reddit":
		return fmt.Errorf("%w: --submissions is for reddit", errUsage)
	case *out == "-" && nfiles == 2 && *outB == "":
		return fmt.Errorf("%w: --out - (standard output) needs --out-b for the second file", errUsage)
	}

	cfg := synth.Config{Rows: int64(rows), Seed: *seed, MalformedRate: *malformed, Era: *era, PPDBVersion: *ppdbVersion}
	if *malformed == 0 {
		cfg.MalformedRate = synth.NoMalformed
	}
	t, err := parseStart(*start)
	if err != nil {
		return fmt.Errorf("%w: --start: %v", errUsage, err)
	}
	cfg.Start = t
	if err := cfg.Validate(); err != nil {
		return fmt.Errorf("%w: %v", errUsage, err)
	}

	var explicit synth.Codec
	if *compress != "auto" {
		if explicit, err = synth.ParseCodec(*compress); err != nil {
			return fmt.Errorf("%w: --compress: %v", errUsage, err)
		}
	}
	names := genNames(corpus, *out, *outB, explicit)
	if *submissions != "" {
		names = append(names, withCodec(*submissions, explicit))
	}
	// The summary goes to stderr when the data goes to stdout.
	report := e.stdout
	for i, n := range names {
		for _, m := range names[:i] {
			if m == n && n != "-" {
				return fmt.Errorf("%w: two outputs named %s", errUsage, n)
			}
		}
		if n == "-" {
			if report == e.stderr {
				return fmt.Errorf("%w: only one output can be standard output (-)", errUsage)
			}
			report = e.stderr
		}
	}
	outs := make([]*genOutput, len(names))
	for i, name := range names {
		codec := explicit
		if codec == "" {
			codec = synth.CodecOf(name)
		}
		if outs[i], err = openGenOutput(e, name, codec); err != nil {
			for _, o := range outs[:i] {
				o.abort()
			}
			return err
		}
	}
	defer func() {
		for _, o := range outs {
			o.abort()
		}
	}()

	began := time.Now()
	next := began.Add(2 * time.Second)
	cfg.Progress = func(st synth.Stats) error {
		if err := ctx.Err(); err != nil {
			return err
		}
		if now := time.Now(); now.After(next) {
			secs := now.Sub(began).Seconds()
			fmt.Fprintf(e.stderr, "  gen %s: %d rows, %s, %.0f MB/s, %.0f rows/s\n", corpus, st.Rows, humanBytes(st.Bytes), float64(st.Bytes)/1e6/secs, float64(st.Rows)/secs)
			next = now.Add(2 * time.Second)
		}
		return nil
	}
	var st, sub synth.Stats
	switch corpus {
	case "reddit":
		var subW io.Writer
		if *submissions != "" {
			subW = outs[1].w
		}
		st, sub, err = synth.RedditThreads(outs[0].w, subW, cfg)
	case "europarl":
		st, err = synth.Europarl(outs[0].w, outs[1].w, cfg)
	case "ppdb":
		st, err = synth.PPDB(outs[0].w, cfg)
	case "quora":
		st, err = synth.Quora(outs[0].w, cfg)
	case "simpwiki":
		st, err = synth.SimpWiki(outs[0].w, outs[1].w, cfg)
	}
	if err != nil {
		return fmt.Errorf("generating %s: %w", corpus, err)
	}
	for _, o := range outs {
		if err := o.commit(); err != nil {
			return fmt.Errorf("writing %s: %w", o.name, err)
		}
	}
	elapsed := time.Since(began)
	secs := elapsed.Seconds()
	fmt.Fprintf(report, "gen %s: %d rows, %d malformed%s%s; %s in %s (%.0f MB/s, %.0f rows/s) to %s\n",
		corpus, st.Rows, st.Malformed, breakdown(st.MalformedByReason), threadsNote(corpus, st, sub),
		humanBytes(st.Bytes+sub.Bytes), elapsed.Round(time.Millisecond), float64(st.Bytes+sub.Bytes)/1e6/secs, float64(st.Rows)/secs,
		filesNote(outs))
	return nil
}

func threadsNote(corpus string, st, sub synth.Stats) string {
	if corpus != "reddit" {
		return ""
	}
	if sub.Rows == 0 {
		return fmt.Sprintf(" in %d threads", st.Threads)
	}
	return fmt.Sprintf(" in %d threads; %d submissions, %d malformed", st.Threads, sub.Rows, sub.Malformed)
}

func filesNote(outs []*genOutput) string {
	parts := make([]string, len(outs))
	for i, o := range outs {
		parts[i] = o.name
		if o.codec != synth.CodecNone {
			parts[i] += fmt.Sprintf(" (%s %s)", o.codec, humanBytes(o.written.n))
		}
	}
	return strings.Join(parts, ", ")
}

// genNames names the files of a corpus: --out and, for two-file corpora,
// --out-b or a name derived from --out. An explicit codec adds its suffix
// to a name that lacks it.
func genNames(corpus, out, outB string, explicit synth.Codec) []string {
	if genCorpora[corpus] == 1 {
		return []string{withCodec(out, explicit)}
	}
	if outB != "" {
		return []string{withCodec(out, explicit), withCodec(outB, explicit)}
	}
	// The derived name keeps the first one's compression suffix.
	stem, ext := splitCodecExt(withCodec(out, explicit))
	switch corpus {
	case "europarl":
		if s, ok := strings.CutSuffix(stem, ".en"); ok {
			return []string{stem + ext, s + ".fr" + ext}
		}
		return []string{stem + ".en" + ext, stem + ".fr" + ext}
	default: // simpwiki
		dir, base := filepath.Split(stem)
		if i := strings.LastIndex(base, "normal"); i >= 0 {
			return []string{stem + ext, dir + base[:i] + "simple" + base[i+len("normal"):] + ext}
		}
		return []string{stem + ".normal.aligned" + ext, stem + ".simple.aligned" + ext}
	}
}

// withCodec adds the codec's suffix to name unless it has it.
func withCodec(name string, c synth.Codec) string {
	if name == "-" || c == "" || c == synth.CodecNone || synth.CodecOf(name) == c {
		return name
	}
	return name + c.Ext()
}

func splitCodecExt(name string) (stem, ext string) {
	for _, x := range []string{".zst", ".zstd", ".gz", ".bz2"} {
		if s, ok := strings.CutSuffix(name, x); ok {
			return s, x
		}
	}
	return name, ""
}

// genOutput is one file gen writes: a compressor over a temporary file,
// renamed into place by commit; or over standard output ("-") or a file
// that is not a regular one, such as /dev/null, written in place (renaming
// over a device would replace it).
type genOutput struct {
	name    string
	codec   synth.Codec
	file    *atomicfile.File // nil when written in place
	direct  io.WriteCloser   // the file written in place
	written *countingWriter  // the compressed bytes
	zw      io.WriteCloser
	w       io.Writer
}

func openGenOutput(e *env, name string, codec synth.Codec) (*genOutput, error) {
	o := &genOutput{name: name, codec: codec}
	var dst io.Writer
	switch fi, err := os.Stat(name); {
	case name == "-":
		dst = e.stdout
	case err == nil && !fi.Mode().IsRegular():
		f, err := os.OpenFile(name, os.O_WRONLY, 0)
		if err != nil {
			return nil, err
		}
		o.direct, dst = f, f
	default:
		f, err := atomicfile.Create(name)
		if err != nil {
			return nil, err
		}
		// The temporary file is private; the data file it becomes is not.
		if err := f.Chmod(0o644); err != nil {
			f.Abort()
			return nil, err
		}
		o.file, dst = f, f
	}
	o.written = &countingWriter{w: dst}
	var err error
	if o.zw, err = synth.NewCompressor(o.written, codec); err != nil {
		o.abort()
		return nil, err
	}
	o.w = o.zw
	return o, nil
}

func (o *genOutput) commit() error {
	if err := o.zw.Close(); err != nil {
		return err
	}
	switch {
	case o.file != nil:
		return o.file.Commit()
	case o.direct != nil:
		err := o.direct.Close()
		o.direct = nil
		return err
	}
	return nil
}

func (o *genOutput) abort() {
	switch {
	case o == nil:
	case o.file != nil:
		o.file.Abort()
	case o.direct != nil:
		o.direct.Close()
		o.direct = nil
	}
}

type countingWriter struct {
	w io.Writer
	n int64
}

func (c *countingWriter) Write(p []byte) (int, error) {
	n, err := c.w.Write(p)
	c.n += int64(n)
	return n, err
}

// rowsFlag is a row count that takes k, M and G suffixes and exponents
// (10M, 2.5k, 1e6).
type rowsFlag int64

func (r *rowsFlag) String() string { return strconv.FormatInt(int64(*r), 10) }

func (r *rowsFlag) Set(s string) error {
	s = strings.ReplaceAll(strings.ReplaceAll(s, "_", ""), ",", "")
	mult := 1.0
	switch {
	case strings.HasSuffix(s, "k"), strings.HasSuffix(s, "K"):
		mult, s = 1e3, s[:len(s)-1]
	case strings.HasSuffix(s, "M"), strings.HasSuffix(s, "m"):
		mult, s = 1e6, s[:len(s)-1]
	case strings.HasSuffix(s, "G"), strings.HasSuffix(s, "B"):
		mult, s = 1e9, s[:len(s)-1]
	}
	if n, err := strconv.ParseInt(s, 10, 64); err == nil && mult == 1 && n >= 0 {
		*r = rowsFlag(n)
		return nil
	}
	f, err := strconv.ParseFloat(s, 64)
	if err != nil || f*mult < 0 || f*mult > 1<<62 || f*mult != float64(int64(f*mult)) {
		return fmt.Errorf("%q is not a whole number of rows", s)
	}
	*r = rowsFlag(f * mult)
	return nil
}

func parseStart(s string) (time.Time, error) {
	if t, err := time.Parse("2006-01-02", s); err == nil {
		return t, nil
	}
	return time.Parse(time.RFC3339, s)
}
