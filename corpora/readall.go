package corpora

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/parastream/parastream/internal/atomicfile"
)

// ReadReport is what reading one input to the end gave (ReadAll).
type ReadReport struct {
	Format  string
	Paths   []string
	Stats   Stats
	Shown   []Example     // the first examples, as many as asked for
	Rejects []*ParseError // the first rejects, as many as asked for
	Elapsed time.Duration
	Err     error // what ended the read early, or nil
}

// ReadAllOptions configures ReadAll. The zero value keeps no examples,
// writes no rejects file and reports no progress.
type ReadAllOptions struct {
	Options
	// Show is how many examples and rejects the report keeps.
	Show int
	// RejectsPath, when set, is the JSON-lines file every reject is
	// written to (RejectsWriter); the rejects found are kept even when
	// the input fails later on.
	RejectsPath string
	// ReplaceRejects lets RejectsPath name a file that exists: it is
	// replaced when the read ends. Without it such a file is refused.
	ReplaceRejects bool
	// Progress, when set, is called with the reader's counts every few
	// seconds.
	Progress func(st Stats, elapsed time.Duration)
}

// Validate checks opts for reading format, before anything is read: the
// format exists, Show is not negative, and RejectsPath names a file that
// may be written (not a directory; an existing one only with
// ReplaceRejects). Its messages name the flags of parastream read.
func (o ReadAllOptions) Validate(format string) error {
	if o.Show < 0 {
		return fmt.Errorf("--show %d: give a count, 0 for none", o.Show)
	}
	if _, err := LookupFormat(format); err != nil {
		return fmt.Errorf("--format: %w", err)
	}
	if o.RejectsPath == "" {
		return nil
	}
	switch fi, err := os.Stat(o.RejectsPath); {
	case err == nil && fi.IsDir():
		return fmt.Errorf("--rejects %s is a directory: name a file, such as %s", o.RejectsPath, filepath.Join(o.RejectsPath, "rejects.jsonl"))
	case err == nil && !o.ReplaceRejects:
		return fmt.Errorf("--rejects %s exists: pass --force to replace it, or name another file", o.RejectsPath)
	}
	return nil
}

// ReadAll reads paths in a format to the end with OpenFormat's reader,
// keeping the first opts.Show examples and rejects. The report is filled
// in when it fails too; its Err is the error returned.
func ReadAll(ctx context.Context, format string, paths []string, opts ReadAllOptions) (rep ReadReport, err error) {
	rep = ReadReport{Format: format, Paths: paths}
	start := time.Now()
	defer func() { rep.Elapsed = time.Since(start); rep.Err = err }()
	r, err := OpenFormat(format, paths, opts.Options)
	if err != nil {
		return rep, err
	}
	defer r.Close()
	var rw *RejectsWriter
	if opts.RejectsPath != "" {
		f, err := atomicfile.Create(opts.RejectsPath)
		if err != nil {
			return rep, err
		}
		defer f.Abort()
		defer func() {
			werr := rw.Flush()
			if werr == nil {
				werr = f.Commit()
			}
			if err == nil {
				err = werr
			}
		}()
		rw = NewRejectsWriter(f)
	}
	next := time.Now().Add(2 * time.Second)
	var n int64
	err = Drain(r, func(ex Example) error {
		if len(rep.Shown) < opts.Show {
			rep.Shown = append(rep.Shown, ex)
		}
		n++
		if n%4096 == 0 {
			if err := ctx.Err(); err != nil {
				return err
			}
			if now := time.Now(); opts.Progress != nil && now.After(next) {
				opts.Progress(r.Stats(), now.Sub(start))
				next = now.Add(2 * time.Second)
			}
		}
		return nil
	}, func(pe *ParseError) error {
		if len(rep.Rejects) < opts.Show {
			rep.Rejects = append(rep.Rejects, pe)
		}
		if rw != nil {
			return rw.Write(pe)
		}
		return nil
	})
	rep.Stats = r.Stats()
	return rep, err
}
