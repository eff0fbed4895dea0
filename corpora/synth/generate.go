package synth

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/parastream/parastream/internal/atomicfile"
)

// FileCount is the number of files Generate writes for a corpus: 1 for
// reddit, ppdb and quora, 2 for europarl and simpwiki, 0 for a corpus it
// does not generate.
func FileCount(corpus string) int {
	switch corpus {
	case "reddit", "ppdb", "quora":
		return 1
	case "europarl", "simpwiki":
		return 2
	}
	return 0
}

// FileNames names the files of a corpus: out and, for two-file corpora,
// outB or a name derived from out (europarl: .en→.fr; simpwiki:
// normal→simple). An explicit codec adds its suffix to a name that lacks
// it.
func FileNames(corpus, out, outB string, explicit Codec) []string {
	if FileCount(corpus) == 1 {
		return []string{WithCodec(out, explicit)}
	}
	if outB != "" {
		return []string{WithCodec(out, explicit), WithCodec(outB, explicit)}
	}
	// The derived name keeps the first one's compression suffix.
	stem, ext := splitCodecExt(WithCodec(out, explicit))
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

// WithCodec adds the codec's suffix to name unless it has it.
func WithCodec(name string, c Codec) string {
	if name == "-" || c == "" || c == CodecNone || CodecOf(name) == c {
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

// Job is one run of Generate: a corpus written to files.
type Job struct {
	Corpus string
	// Files are the names to write, as FileNames gives them, then the
	// reddit submissions' file when Submissions is set. "-" is Stdout.
	Files       []string
	Submissions bool
	// Codec compresses every file; "" takes each file's from its suffix
	// (CodecOf).
	Codec  Codec
	Stdout io.Writer
	Config Config
}

// FileReport is one file Generate wrote: its compressed size.
type FileReport struct {
	Name  string
	Codec Codec
	Bytes int64
}

// Result is what Generate wrote: the corpus's rows, the reddit
// submissions' rows, and the files.
type Result struct {
	Stats, Submissions Stats
	Files              []FileReport
}

// Generate writes the corpus of job to its files, each compressed to a
// temporary file renamed into place at the end; standard output ("-") and
// a file that is not a regular one, such as /dev/null, are written in
// place (renaming over a device would replace it). On failure no file is
// left with its final name.
func Generate(job Job) (Result, error) {
	outs := make([]*genOutput, len(job.Files))
	var err error
	for i, name := range job.Files {
		codec := job.Codec
		if codec == "" {
			codec = CodecOf(name)
		}
		if outs[i], err = openGenOutput(job.Stdout, name, codec); err != nil {
			for _, o := range outs[:i] {
				o.abort()
			}
			return Result{}, err
		}
	}
	defer func() {
		for _, o := range outs {
			o.abort()
		}
	}()
	var res Result
	cfg := job.Config
	switch job.Corpus {
	case "reddit":
		var subW io.Writer
		if job.Submissions {
			subW = outs[1].w
		}
		res.Stats, res.Submissions, err = RedditThreads(outs[0].w, subW, cfg)
	case "europarl":
		res.Stats, err = Europarl(outs[0].w, outs[1].w, cfg)
	case "ppdb":
		res.Stats, err = PPDB(outs[0].w, cfg)
	case "quora":
		res.Stats, err = Quora(outs[0].w, cfg)
	case "simpwiki":
		res.Stats, err = SimpWiki(outs[0].w, outs[1].w, cfg)
	default:
		err = fmt.Errorf("no generator of %q", job.Corpus)
	}
	if err != nil {
		return Result{}, fmt.Errorf("generating %s: %w", job.Corpus, err)
	}
	for _, o := range outs {
		if err := o.commit(); err != nil {
			return Result{}, fmt.Errorf("writing %s: %w", o.name, err)
		}
		res.Files = append(res.Files, FileReport{Name: o.name, Codec: o.codec, Bytes: o.written.n})
	}
	return res, nil
}

// genOutput is one file Generate writes: a compressor over a temporary
// file, renamed into place by commit; or over standard output ("-") or a
// file that is not a regular one, written in place.
type genOutput struct {
	name    string
	codec   Codec
	file    *atomicfile.File // nil when written in place
	direct  io.WriteCloser   // the file written in place
	written *countingWriter  // the compressed bytes
	zw      io.WriteCloser
	w       io.Writer
}

func openGenOutput(stdout io.Writer, name string, codec Codec) (*genOutput, error) {
	o := &genOutput{name: name, codec: codec}
	var dst io.Writer
	switch fi, err := os.Stat(name); {
	case name == "-":
		dst = stdout
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
	if o.zw, err = NewCompressor(o.written, codec); err != nil {
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
