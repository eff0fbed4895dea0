package evalsink

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/parastream/parastream/internal/atomicfile"
	"github.com/parastream/parastream/trainstep"
)

// Export formats beside the static ones (StaticFormats): the word
// embeddings as GloVe text, and every parameter as safetensors.
const (
	FormatGloVe       = "glove"
	FormatSafetensors = "safetensors"
)

// ExportFormats are the formats Export writes.
func ExportFormats() []string {
	return append([]string{FormatGloVe, FormatSafetensors}, StaticFormats()...)
}

// ExportConfig is what `parastream export` writes.
type ExportConfig struct {
	// Checkpoint is a checkpoint directory, or a run's directory for its
	// newest good checkpoint.
	Checkpoint string
	// Format is one of ExportFormats.
	Format string
	// Out is the file (glove, safetensors; "": the writer Export is
	// given) or the new directory (the static formats) written.
	Out string
	// TruncateDim keeps the embeddings' first TruncateDim dimensions (a
	// Matryoshka prefix) in a static format; 0: all.
	TruncateDim int
	// Version is parastream's, recorded by the static formats.
	Version string
}

// Validate says how to fix a configuration Export cannot write.
func (c ExportConfig) Validate() error {
	static := slices.Contains(StaticFormats(), c.Format)
	switch {
	case c.Checkpoint == "":
		return errors.New("--checkpoint is required")
	case !slices.Contains(ExportFormats(), c.Format):
		return fmt.Errorf("--format %q: give %s", c.Format, strings.Join(ExportFormats(), ", "))
	case static && c.Out == "":
		return fmt.Errorf("--format %s writes a directory: name it (parastream export --checkpoint CK --format %s OUTDIR)", c.Format, c.Format)
	case !static && c.TruncateDim != 0:
		return fmt.Errorf("--truncate-dim is for --format %s", strings.Join(StaticFormats(), " and "))
	}
	return nil
}

// Exported is what Export wrote: the format, the checkpoint (its
// directory, step, encoder, dimensions and words), where (Out; "" for
// the writer), how many bytes and in how long.
type Exported struct {
	Format, Checkpoint, Encoder, Out string
	Step                             int64
	Dim, Words                       int
	Bytes                            int64
	Elapsed                          time.Duration
}

// Export writes the checkpoint c names in c.Format: to c.Out, written
// atomically, or to w when c.Out is "" (glove, safetensors).
func Export(ctx context.Context, c ExportConfig, w io.Writer) (Exported, error) {
	if err := c.Validate(); err != nil {
		return Exported{}, err
	}
	start := time.Now()
	ckDir, err := trainstep.LatestCheckpoint(c.Checkpoint)
	if err != nil {
		return Exported{}, err
	}
	ck, err := trainstep.ReadCheckpoint(ckDir)
	if err != nil {
		return Exported{}, err
	}
	x := Exported{Format: c.Format, Checkpoint: ckDir, Encoder: ck.Config.Encoder, Out: c.Out, Step: ck.State.Step,
		Dim: ck.Config.Dim, Words: len(ck.Vocab)}
	if c.TruncateDim > 0 {
		x.Dim = c.TruncateDim
	}
	if slices.Contains(StaticFormats(), c.Format) {
		if err := ExportStatic(c.Out, ck, StaticConfig{Format: c.Format, TruncateDim: c.TruncateDim, Version: c.Version}); err != nil {
			return x, err
		}
		x.Bytes, err = treeBytes(c.Out)
		x.Elapsed = time.Since(start)
		return x, err
	}
	write := func(w io.Writer) error {
		cw := &countingWriter{w: w}
		bw := bufio.NewWriterSize(cw, 1<<16)
		var err error
		if c.Format == FormatGloVe {
			err = trainstep.WriteGloVe(ctx, bw, ck)
		} else {
			err = trainstep.ExportSafetensors(bw, ck, ckDir)
		}
		if err == nil {
			err = bw.Flush()
		}
		x.Bytes = cw.n
		return err
	}
	if c.Out == "" {
		err = write(w)
	} else {
		err = atomicfile.WriteWith(c.Out, write)
	}
	x.Elapsed = time.Since(start)
	return x, err
}

// countingWriter counts the bytes written through it.
type countingWriter struct {
	w io.Writer
	n int64
}

func (c *countingWriter) Write(p []byte) (int, error) {
	n, err := c.w.Write(p)
	c.n += int64(n)
	return n, err
}

// treeBytes is the size of the files under dir.
func treeBytes(dir string) (int64, error) {
	var n int64
	err := filepath.WalkDir(dir, func(_ string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		fi, err := d.Info()
		if err == nil {
			n += fi.Size()
		}
		return err
	})
	return n, err
}
