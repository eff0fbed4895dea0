package transforms

import (
	"context"
	"errors"
	"fmt"
	"github.com/parastream/parastream/internal/beamfn"
	"io"
	"reflect"
	"sort"
	"sync"
	"sync/atomic"

	"github.com/apache/beam/sdks/v2/go/pkg/beam"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/io/fileio"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/io/filesystem"
	_ "github.com/apache/beam/sdks/v2/go/pkg/beam/io/filesystem/local" // file paths without a scheme
	"github.com/apache/beam/sdks/v2/go/pkg/beam/register"

	"github.com/parastream/parastream/corpora"
	"github.com/parastream/parastream/shards"
)

// InputFiles is one input of a format: one path, or two for the formats
// that read two aligned files (Europarl, SimpWiki, TurkCorpus, STS input
// and gold).
type InputFiles struct {
	Paths []string
}

// ReadConfig configures Read.
type ReadConfig struct {
	// Format is a corpora format name ("reddit-comments", "quora", ...).
	Format string
	// Input is a glob of the files to read (for two-file formats, the first
	// file of each pair).
	Input string
	// InputB is a glob of the second files of a two-file format, paired
	// with Input's files in sorted order. For "sts", leave it empty: each
	// input's gold file is found beside it (STS.input.X.txt with
	// STS.gs.X.txt).
	InputB string
	// Options go to the corpora reader.
	Options corpora.Options
	// SkipBadFiles counts a file that cannot be read to its end (a
	// truncated archive) as a reject of reason "bad_file" and goes on; by
	// default the pipeline fails naming the file.
	SkipBadFiles bool
	// Prepare, when set, normalises, tokenises and filters the records as
	// they are read, on goroutines of their own (counters "prepared" and
	// "filtered_<rule>"), so that one large file keeps every core busy.
	Prepare *PrepareConfig
}

// Read matches the input files with fileio.MatchFiles and ReadMatches and
// reads each with its corpora reader, in parallel across files. It returns
// the records as PCollection<shards.Row> (Split empty) and the malformed
// records as PCollection<corpora.Reject>.
//
// Files are opened through Beam's filesystems and decompressed by corpora
// (never textio, which reads only part of a .gz file and treats .bz2 and
// .zst as plain bytes).
func Read(s beam.Scope, cfg ReadConfig) (rows, rejects beam.PCollection) {
	s = s.Scope("transforms.Read")
	return beam.ParDo2(s, &readFn{Format: cfg.Format, Options: cfg.Options, SkipBadFiles: cfg.SkipBadFiles, Prepare: cfg.Prepare}, matchInputs(s, cfg))
}

// ReadAndSpill is Read followed by Spill, in one stage: the goroutines that
// prepare the records (cfg.Prepare, which may be nil) also write them to
// the spill files of their buckets, so that the records never cross Beam
// one by one (Beam's per-element work would cost the read stage about a
// fifth of its time, on one goroutine) and their encoding runs on every
// core. It returns each bucket with one of its files as
// PCollection<KV<int, string>>, as Spill does, and the malformed records as
// PCollection<corpora.Reject>. The files hold the records Read followed by
// Spill would write, in another order, which nothing downstream depends on
// (the pairing sorts each thread, the writers sort each bucket).
func ReadAndSpill(s beam.Scope, cfg ReadConfig, spill SpillConfig) (spills, rejects beam.PCollection) {
	s = s.Scope("transforms.ReadAndSpill." + spill.Name)
	return beam.ParDo2(s, &readSpillFn{
		Format: cfg.Format, Options: cfg.Options, SkipBadFiles: cfg.SkipBadFiles, Prepare: cfg.Prepare,
		Dir: shards.JoinPath(spill.Dir, spill.Name), Key: spill.Key, Buckets: spill.Buckets, Symmetric: spill.Symmetric, Compression: spill.Compression,
	}, matchInputs(s, cfg))
}

// matchInputs matches the input files of cfg and returns them as
// PCollection<InputFiles>, reshuffled so that they are read in parallel.
func matchInputs(s beam.Scope, cfg ReadConfig) beam.PCollection {
	f, err := corpora.LookupFormat(cfg.Format)
	if err != nil {
		panic(fmt.Sprintf("transforms.Read: %v", err)) // Config.Validate catches this first
	}
	a := fileio.ReadMatches(s, fileio.MatchFiles(s, cfg.Input, fileio.MatchEmptyDisallow()), fileio.ReadUncompressed())
	var inputs beam.PCollection
	switch {
	case len(f.Files) == 1:
		inputs = beam.ParDo(s, singleInput, a)
	case cfg.Format == "sts" && cfg.InputB == "":
		inputs = beam.ParDo(s, stsInput, a)
	default:
		b := fileio.ReadMatches(s, fileio.MatchFiles(s, cfg.InputB, fileio.MatchEmptyDisallow()), fileio.ReadUncompressed())
		tagged := beam.Flatten(s, beam.ParDo(s, tagFirst, a), beam.ParDo(s, tagSecond, b))
		inputs = beam.ParDo(s, &pairFilesFn{InputA: cfg.Input, InputB: cfg.InputB}, beam.GroupByKey(s, beam.AddFixedKey(s, tagged)))
	}
	// Reshuffle spreads the files over bundles, so that they are read in
	// parallel.
	return beam.Reshuffle(s, inputs)
}

func singleInput(f fileio.ReadableFile) InputFiles {
	return InputFiles{Paths: []string{f.Metadata.Path}}
}

func stsInput(f fileio.ReadableFile) (InputFiles, error) {
	gold := corpora.STSGoldPath(f.Metadata.Path)
	if gold == "" {
		return InputFiles{}, fmt.Errorf("%s: not an STS input file name (STS.input.<set>.txt), so its gold file is unknown: pass --input-b", f.Metadata.Path)
	}
	return InputFiles{Paths: []string{f.Metadata.Path, gold}}, nil
}

// taggedPath is a matched file and which glob matched it.
type taggedPath struct {
	Second bool
	Path   string
}

func tagFirst(f fileio.ReadableFile) taggedPath { return taggedPath{Path: f.Metadata.Path} }
func tagSecond(f fileio.ReadableFile) taggedPath {
	return taggedPath{Second: true, Path: f.Metadata.Path}
}

// pairFilesFn pairs the files of the two globs in sorted order.
type pairFilesFn struct {
	InputA, InputB string
}

func (fn *pairFilesFn) ProcessElement(_ int, tagged func(*taggedPath) bool, emit func(InputFiles)) error {
	var a, b []string
	var t taggedPath
	for tagged(&t) {
		if t.Second {
			b = append(b, t.Path)
		} else {
			a = append(a, t.Path)
		}
	}
	if len(a) != len(b) {
		return fmt.Errorf("--input %q matches %d files but --input-b %q matches %d: a two-file format pairs them one to one in sorted order", fn.InputA, len(a), fn.InputB, len(b))
	}
	sort.Strings(a)
	sort.Strings(b)
	for i := range a {
		emit(InputFiles{Paths: []string{a[i], b[i]}})
	}
	return nil
}

// readFn reads one input with its corpora reader.
type readFn struct {
	Format       string
	Options      corpora.Options
	SkipBadFiles bool
	Prepare      *PrepareConfig

	c counters
}

func (fn *readFn) StartBundle(_ context.Context, _ func(shards.Row), _ func(corpora.Reject)) {
	fn.c.reset()
}

func (fn *readFn) ProcessElement(ctx context.Context, in InputFiles, emit func(shards.Row), reject func(corpora.Reject)) error {
	return fn.read(ctx, in, nil, func(b *readBatch) {
		for i := range b.rows {
			emit(b.rows[i])
			b.rows[i] = shards.Row{}
		}
	}, reject)
}

// read reads one input to its end. The records go to sp (from the
// preparing goroutines: see drain) when it is set, else to out, on this
// goroutine with the batch's rejects.
func (fn *readFn) read(ctx context.Context, in InputFiles, sp *spiller, out func(*readBatch), reject func(corpora.Reject)) error {
	f, err := corpora.LookupFormat(fn.Format)
	if err != nil {
		return err
	}
	var inputs []*corpora.Input
	defer func() {
		for _, in := range inputs {
			in.Close()
		}
	}()
	for _, p := range in.Paths {
		rc, err := openPath(ctx, p)
		if err != nil {
			return fmt.Errorf("opening %s: %w", p, err)
		}
		defer rc.Close()
		input, err := corpora.NewInput(p, rc, fn.Options.Limits)
		if err != nil {
			return fn.badFile(p, err, reject)
		}
		inputs = append(inputs, input)
	}
	r, err := corpora.NewReader(f, inputs, fn.Options)
	if err != nil {
		return err
	}
	inputs = nil // the reader closes them now
	defer r.Close()
	err = fn.drain(ctx, r, sp, out, reject)
	st := r.Stats()
	fn.c.add("read", st.Records)
	fn.c.add("parsed", st.Examples)
	for reason, n := range st.Rejected {
		fn.c.add("rejected_"+string(reason), n)
	}
	for kind, n := range st.Skipped {
		fn.c.add("skipped_"+kind, n)
	}
	fn.c.add("bytes_read", st.Bytes)
	fn.c.add("files", int64(len(in.Paths)))
	var spillErr *spillError
	if err != nil && !errors.As(err, &spillErr) {
		return fn.badFile(in.Paths[0], err, reject)
	}
	return err
}

// spillError is a failure to write a spill file while reading: the run's
// work directory, not the input, is at fault, so SkipBadFiles does not
// skip it.
type spillError struct{ err error }

func (e *spillError) Error() string { return e.err.Error() }
func (e *spillError) Unwrap() error { return e.err }

// readBatch is a batch of what the reader goroutine read.
type readBatch struct {
	rows     []shards.Row
	rejects  []corpora.Reject
	filtered map[string]int64 // drops by rule, with Prepare
	prepared int64
}

// readBatchSize is the records per batch handed from the reader goroutine.
const readBatchSize = 512

// drain reads r to its end in a goroutine of its own, decompressing and
// parsing while other goroutines, one per core, prepare the records (with
// Prepare) and write them to sp's spill files (with sp), and this goroutine
// hands the rest on: the records to out (without sp), the rejects to reject, the
// counts to fn's counters. So reading one large file keeps every core busy.
// Beam's emitters are called from this goroutine only. The spill files
// are created under ctx, which outlives the call (they are closed when the
// bundle finishes).
func (fn *readFn) drain(ctx context.Context, r corpora.Reader, sp *spiller, out func(*readBatch), reject func(corpora.Reject)) error {
	bundle := ctx
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	batches := make(chan readBatch, 8)
	free := make(chan readBatch, 10)
	var readErr error
	go func() {
		defer close(batches)
		var lastRecords, lastBytes int64
		live := func() {
			st := r.Stats()
			progressFrom(ctx).add("read", st.Records-lastRecords)
			progressFrom(ctx).add("bytes_read", st.Bytes-lastBytes)
			lastRecords, lastBytes = st.Records, st.Bytes
		}
		var b readBatch
		next := func() {
			select {
			case b = <-free:
				b.rows, b.rejects = b.rows[:0], b.rejects[:0]
			default:
				b = readBatch{rows: make([]shards.Row, 0, readBatchSize)}
			}
		}
		send := func() error {
			select {
			case batches <- b:
			case <-ctx.Done():
				return ctx.Err()
			}
			live()
			next()
			return nil
		}
		next()
		readErr = corpora.Drain(r, func(e corpora.Example) error {
			b.rows = append(b.rows, shards.TakeExample(&e, ""))
			if len(b.rows) == readBatchSize {
				return send()
			}
			return nil
		}, func(pe *corpora.ParseError) error {
			b.rejects = append(b.rejects, corpora.NewReject(pe))
			return nil
		})
		if readErr == nil && (len(b.rows) > 0 || len(b.rejects) > 0) {
			readErr = send()
		}
		live()
	}()
	var prepared <-chan readBatch = batches
	var workErr error
	if fn.Prepare != nil || sp != nil {
		prepared = fn.prepare(bundle, batches, sp, func(err error) {
			if workErr == nil { // the first error; set before the channel closes
				workErr = err
			}
			cancel()
		})
	}
	for b := range prepared {
		if out != nil {
			out(&b)
		}
		for _, rj := range b.rejects {
			reject(rj)
		}
		for rule, n := range b.filtered {
			fn.c.add("filtered_"+rule, n)
		}
		fn.c.add("prepared", b.prepared)
		select {
		case free <- b:
		default:
		}
	}
	if workErr != nil {
		return workErr
	}
	return readErr
}

// prepare applies the Prepare configuration (if any) to the batches on
// one goroutine per core, keeping the records it does not drop, and with
// sp writes them to the spill file of their bucket, under ctx, and hands
// on empty batches. Batches may
// come out in another order: nothing downstream depends on it (the writers
// sort). A spill error goes to fail (called under a lock, before the
// channel returned closes); the goroutines then drop what is left.
func (fn *readFn) prepare(ctx context.Context, in <-chan readBatch, sp *spiller, fail func(error)) <-chan readBatch {
	out := make(chan readBatch, 8)
	var wg sync.WaitGroup
	var mu sync.Mutex
	var failed atomic.Bool
	for range poolWorkers() {
		wg.Add(1)
		go func() {
			defer wg.Done()
			var key []byte // the dedupe key, for sp
			for b := range in {
				if b.filtered == nil {
					b.filtered = map[string]int64{}
				}
				clear(b.filtered)
				if failed.Load() {
					clear(b.rows)
					b.rows = b.rows[:0]
				}
				if fn.Prepare != nil {
					kept := b.rows[:0]
					for i := range b.rows {
						if rule := fn.Prepare.Apply(&b.rows[i]); rule != "" {
							b.filtered[rule]++
							continue
						}
						kept = append(kept, b.rows[i])
					}
					clear(b.rows[len(kept):])
					b.rows = kept
				}
				b.prepared = int64(len(b.rows))
				if sp != nil {
					for j := range b.rows {
						if err := sp.write(ctx, &b.rows[j], &key); err != nil {
							mu.Lock()
							if !failed.Swap(true) {
								fail(&spillError{err})
							}
							mu.Unlock()
							break
						}
					}
					clear(b.rows)
					b.rows = b.rows[:0]
				}
				out <- b
			}
		}()
	}
	go func() { wg.Wait(); close(out) }()
	return out
}

// badFile fails the bundle with err, or with SkipBadFiles counts it and
// keeps it as a reject.
func (fn *readFn) badFile(path string, err error, reject func(corpora.Reject)) error {
	if !fn.SkipBadFiles {
		return err
	}
	fn.c.add("rejected_bad_file", 1)
	reject(corpora.Reject{File: path, Reason: "bad_file", Detail: err.Error()})
	return nil
}

func (fn *readFn) FinishBundle(ctx context.Context, _ func(shards.Row), _ func(corpora.Reject)) {
	fn.c.flush(ctx)
}

// readSpillFn is readFn writing its records to spill files (ReadAndSpill):
// one spiller per preparing goroutine, for the bundle, whose files are
// emitted when the bundle finishes.
type readSpillFn struct {
	Format       string
	Options      corpora.Options
	SkipBadFiles bool
	Prepare      *PrepareConfig
	// Dir, Key, Buckets, Symmetric and Compression are the spill's (see
	// scatterFn).
	Dir         string
	Key         string
	Buckets     int
	Symmetric   bool
	Compression string

	read readFn
	sp   *spiller // the preparing goroutines'
}

func (fn *readSpillFn) StartBundle(_ context.Context, _ func(int, string), _ func(corpora.Reject)) {
	fn.read = readFn{Format: fn.Format, Options: fn.Options, SkipBadFiles: fn.SkipBadFiles, Prepare: fn.Prepare}
	fn.read.c.reset()
	fn.sp = newSpiller(SpillConfig{Dir: fn.Dir, Key: fn.Key, Buckets: fn.Buckets, Symmetric: fn.Symmetric, Compression: fn.Compression})
}

func (fn *readSpillFn) ProcessElement(ctx context.Context, in InputFiles, _ func(int, string), reject func(corpora.Reject)) error {
	return fn.read.read(ctx, in, fn.sp, nil, reject)
}

func (fn *readSpillFn) FinishBundle(ctx context.Context, emit func(int, string), _ func(corpora.Reject)) error {
	fn.read.c.flush(ctx)
	err := fn.sp.close(emit)
	fn.sp = nil
	return err
}

// openPath opens a file through Beam's filesystems (local paths, and
// gs:// and others where registered).
func openPath(ctx context.Context, path string) (io.ReadCloser, error) {
	fs, err := filesystem.New(ctx, path)
	if err != nil {
		return nil, err
	}
	defer fs.Close()
	return fs.OpenRead(ctx, path)
}

func init() {
	beam.RegisterType(reflect.TypeOf((*shards.Row)(nil)).Elem())
	beam.RegisterType(reflect.TypeOf((*corpora.Reject)(nil)).Elem())
	beam.RegisterType(reflect.TypeOf((*InputFiles)(nil)).Elem())
	beam.RegisterType(reflect.TypeOf((*taggedPath)(nil)).Elem())
	register.Function1x1(singleInput)
	register.Function1x2(stsInput)
	register.Function1x1(tagFirst)
	register.Function1x1(tagSecond)
	beamfn.DoFn3x1[int, func(*taggedPath) bool, func(InputFiles), error](&pairFilesFn{})
	beamfn.DoFn4x1[context.Context, InputFiles, func(int, string), func(corpora.Reject), error](&readSpillFn{},
		beamfn.Method3x0[context.Context, func(int, string), func(corpora.Reject)]("StartBundle"),
		beamfn.Method3x1[context.Context, func(int, string), func(corpora.Reject), error]("FinishBundle"))
	beamfn.DoFn4x1[context.Context, InputFiles, func(shards.Row), func(corpora.Reject), error](&readFn{},
		beamfn.Method3x0[context.Context, func(shards.Row), func(corpora.Reject)]("StartBundle"),
		beamfn.Method3x0[context.Context, func(shards.Row), func(corpora.Reject)]("FinishBundle"))
	register.Emitter1[InputFiles]()
	register.Emitter1[shards.Row]()
	register.Emitter1[corpora.Reject]()
	register.Iter1[taggedPath]()
}
