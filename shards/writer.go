package shards

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"hash"
	"os"
	"path"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/parastream/parastream/internal/atomicfile"
	"github.com/parquet-go/parquet-go"
	zstdcodec "github.com/parquet-go/parquet-go/compress/zstd"
	"github.com/zeebo/blake3"
)

// Defaults of WriterOptions.
const (
	DefaultMaxRows       = 1_000_000
	DefaultMaxBytes      = 256 << 20
	DefaultRowGroupRows  = 10_000
	DefaultRowGroupBytes = 1536 << 10
)

// WriterOptions bound the shards a Writer writes. The zero value gives the
// defaults.
type WriterOptions struct {
	// MaxRows is the most rows a shard holds. 0 means DefaultMaxRows
	// (1,000,000).
	MaxRows int64
	// MaxBytes is the size a shard stays under, approximately: before each
	// row the writer adds the bytes already written to the shard, the
	// buffered row group (counted before compression, so an over-estimate)
	// and the row's own size, and starts a new shard when the sum passes
	// MaxBytes. The footer (a few KiB) comes on top. A single row larger
	// than MaxBytes still gets a shard of its own. 0 means DefaultMaxBytes
	// (256 MiB).
	MaxBytes int64
	// RowGroupRows is the most rows in one row group: the unit a reader
	// holds in memory and the stream publisher cuts batches from. 0 means
	// DefaultRowGroupRows (10,000).
	RowGroupRows int64
	// RowGroupBytes closes a row group early once its buffered rows pass
	// this many bytes (before encoding), so that a row group fits in one
	// Kafka message, where the stream publisher can copy it as it is. 0
	// means DefaultRowGroupBytes (1.5 MiB): compressed, such a row group of
	// featurized rows is about 0.45 to 0.85 MB (text compresses to about
	// 0.3 of the estimate, random 50-topic vectors to about 0.55), under
	// Kafka's default message limit of 1 MiB.
	RowGroupBytes int64
	// Overwrite lets the writer replace the shards an earlier run left in
	// the split's directory: Close removes every part-*.parquet file (and
	// .part-*.parquet.tmp temporary) there that it did not write. Without it
	// NewWriter refuses a directory holding part-*.parquet files with
	// ErrExists. Either way the earlier shards stay untouched until Close
	// succeeds in renaming the new ones.
	Overwrite bool
}

// Validate reports an option out of range, saying how to fix it.
func (o WriterOptions) Validate() error {
	var errs []error
	check := func(name string, v, def int64) {
		if v < 0 {
			errs = append(errs, fmt.Errorf("shards: WriterOptions.%s is %d: give a positive value, or 0 for the default %d", name, v, def))
		}
	}
	check("MaxRows", o.MaxRows, DefaultMaxRows)
	check("MaxBytes", o.MaxBytes, DefaultMaxBytes)
	check("RowGroupRows", o.RowGroupRows, DefaultRowGroupRows)
	check("RowGroupBytes", o.RowGroupBytes, DefaultRowGroupBytes)
	return errors.Join(errs...)
}

func (o WriterOptions) withDefaults() WriterOptions {
	if o.MaxRows == 0 {
		o.MaxRows = DefaultMaxRows
	}
	if o.MaxBytes == 0 {
		o.MaxBytes = DefaultMaxBytes
	}
	if o.RowGroupRows == 0 {
		o.RowGroupRows = DefaultRowGroupRows
	}
	if o.RowGroupBytes == 0 {
		o.RowGroupBytes = DefaultRowGroupBytes
	}
	return o
}

// ShardInfo describes one finished shard. It is what the manifest records.
type ShardInfo struct {
	// Path is the shard's path relative to the root, with forward slashes:
	// "<corpus>/<split>/part-00000-of-00016.parquet".
	Path   string `json:"path"`
	Corpus string `json:"corpus"`
	Split  string `json:"split"`
	// Rows is the number of rows in the shard.
	Rows int64 `json:"rows"`
	// Bytes is the size of the file.
	Bytes int64 `json:"bytes"`
	// SHA256 is the hex sha256 of the file's bytes.
	SHA256 string `json:"sha256"`
	// BLAKE3 is the hex BLAKE3-256 of the file's bytes, written beside the
	// sha256 since schema 1's manifests of late 2026: VerifyShard checks it
	// where it is there (1.7 times sha256's speed here, with the same 128-bit
	// collision resistance), and the sha256 where it is not. Tools that do
	// not know it check the sha256.
	BLAKE3 string `json:"blake3,omitempty"`
}

// Writer writes the rows of one split of one corpus as a sequence of shards
// under <root>/<corpus>/<split>/.
//
// Each shard is written under a temporary name (.part-00000.parquet.tmp) and
// synced as it fills; Close renames them all to their final names
// part-00000-of-00016.parquet, once the total is known, and syncs the
// directory. A crash therefore leaves only hidden temporaries, never a file
// with a final name and partial content, and Abort removes them.
//
// Shards are zstd-compressed, cut by WriterOptions, and deterministic: the
// same rows give byte-identical shards however they are batched into Write
// calls, in this or any other process, with the same parquet-go version.
// A split with no rows gets no shard at all (and no directory).
//
// A Writer is not safe for concurrent use.
type Writer struct {
	root, corpus, split string
	dir                 string // root/corpus/split
	opts                WriterOptions

	cur    *shardFile  // shard being written, nil between shards
	done   []shardFile // finished shards, still under temporary names
	err    error       // first error: the writer is unusable after it
	closed bool
	one    [1]Row // the row being handed to parquet-go, without allocating
}

// shardFile is one shard: its file, the hash and count of the bytes written
// to it so far, and the Parquet writer feeding it.
type shardFile struct {
	index int
	tmp   string // full path of the temporary file
	file  *os.File
	hash  hash.Hash
	hash3 *blake3.Hasher
	bytes int64
	pw    *parquet.GenericWriter[Row]

	rows       int64
	groupRows  int64
	groupBytes int64
	sum        string // hex sha256, once closed
	sum3       string // hex BLAKE3-256, once closed
}

// Write writes the file and hashes what was written: the sha256 and the
// BLAKE3 are computed on the bytes as they go to disk, never by reading
// them back.
func (s *shardFile) Write(p []byte) (int, error) {
	n, err := s.file.Write(p)
	s.hash.Write(p[:n])
	s.hash3.Write(p[:n])
	s.bytes += int64(n)
	return n, err
}

// NewWriter returns a Writer for the split of the corpus under root. corpus
// and split become directory names and must be plain names (no separator,
// not "." or ".."). Nothing is created until the first row is written.
func NewWriter(root, corpus, split string, opts WriterOptions) (*Writer, error) {
	if err := opts.Validate(); err != nil {
		return nil, err
	}
	for _, name := range []struct{ what, v string }{{"corpus", corpus}, {"split", split}} {
		if err := checkName(name.v); err != nil {
			return nil, fmt.Errorf("shards: %s %q: %w", name.what, name.v, err)
		}
	}
	w := &Writer{
		root:   root,
		corpus: corpus,
		split:  split,
		dir:    filepath.Join(root, corpus, split),
		opts:   opts.withDefaults(),
	}
	if !opts.Overwrite {
		existing, err := w.finalNames()
		if err != nil {
			return nil, err
		}
		if len(existing) > 0 {
			return nil, fmt.Errorf("writing shards to %s (it holds %s): %w", w.dir, existing[0], ErrExists)
		}
	}
	return w, nil
}

// checkName accepts a name that can be one path component on every system.
func checkName(name string) error {
	switch {
	case name == "":
		return errors.New("empty name")
	case name == "." || name == "..":
		return errors.New("not a directory name")
	case strings.ContainsAny(name, `/\`+"\x00"):
		return errors.New("holds a path separator")
	}
	return nil
}

// finalNames lists the part-*.parquet files in the split's directory.
func (w *Writer) finalNames() ([]string, error) {
	names, err := filepath.Glob(filepath.Join(w.dir, "part-*.parquet"))
	if err != nil {
		return nil, fmt.Errorf("listing %s: %w", w.dir, err)
	}
	return names, nil
}

// Write appends rows to the split, starting new shards and row groups as the
// bounds require.
//
// Write first checks every row (Row.Validate): if one is invalid it returns
// a *RowError and writes none of the rows, and the Writer stays usable. Any
// other error leaves the Writer unusable: Close returns the error and
// removes the temporaries, as Abort does.
func (w *Writer) Write(rows ...Row) (err error) {
	if w.err != nil {
		return w.err
	}
	if w.closed {
		return ErrClosed
	}
	for i := range rows {
		if err := rows[i].Validate(); err != nil {
			err.(*RowError).Index = i
			return err
		}
	}
	defer func() {
		// parquet-go panics on what it considers programmer errors; here
		// they are errors of this writer.
		if p := recover(); p != nil {
			w.err = fmt.Errorf("writing shards to %s: parquet-go panicked: %v", w.dir, p)
			err = w.err
		}
	}()
	for i := range rows {
		if err := w.writeRow(&rows[i]); err != nil {
			w.err = err
			return err
		}
	}
	return nil
}

// writeRow writes one row. Rows go to parquet-go one at a time, so that
// where pages, row groups and shards end depends only on the sequence of
// rows, never on how the caller batched them: that is what makes shards
// byte-identical across runs.
func (w *Writer) writeRow(r *Row) error {
	size := r.estimatedSize()
	if s := w.cur; s != nil && s.rows > 0 && s.pw.Size()+size > w.opts.MaxBytes {
		if err := w.finishShard(); err != nil {
			return err
		}
	}
	if w.cur == nil {
		if err := w.startShard(); err != nil {
			return err
		}
	}
	s := w.cur
	if s.groupRows > 0 && s.groupBytes+size > w.opts.RowGroupBytes {
		if err := s.pw.Flush(); err != nil {
			return fmt.Errorf("writing shard %s: %w", s.tmp, err)
		}
		s.groupRows, s.groupBytes = 0, 0
	}
	w.one[0] = *r
	_, err := s.pw.Write(w.one[:])
	w.one[0] = Row{} // keep no reference to the caller's lists
	if err != nil {
		return fmt.Errorf("writing shard %s: %w", s.tmp, err)
	}
	s.rows++
	s.groupRows++
	s.groupBytes += size
	if s.rows >= w.opts.MaxRows {
		return w.finishShard()
	}
	if s.groupRows >= w.opts.RowGroupRows {
		if err := s.pw.Flush(); err != nil {
			return fmt.Errorf("writing shard %s: %w", s.tmp, err)
		}
		s.groupRows, s.groupBytes = 0, 0
	}
	return nil
}

// shardCodec compresses shards with zstd at its fastest level: the files
// come out a few percent larger than at the default level, and the writer,
// which the extraction waits on, runs markedly faster.
//
// It stays a package variable, shared by every Writer, until NewWriter's
// callers can share one: the codec pools its zstd encoders, and a codec of
// each Writer's own makes a new Writer allocate about 17 MB more and take
// about 25 ms longer (BenchmarkWriter), which the pipeline's stages, that
// open a Writer for each split of each bucket, would pay many times.
var shardCodec = &zstdcodec.Codec{Level: zstdcodec.SpeedFastest}

// startShard creates the next shard's temporary file.
func (w *Writer) startShard() error {
	if len(w.done) == 0 {
		if err := os.MkdirAll(w.dir, 0o755); err != nil {
			return fmt.Errorf("creating shard directory: %w", err)
		}
	}
	index := len(w.done)
	tmp := filepath.Join(w.dir, fmt.Sprintf(".part-%05d.parquet.tmp", index))
	f, err := os.OpenFile(tmp, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, 0o644)
	if err != nil {
		return fmt.Errorf("creating shard: %w", err)
	}
	s := &shardFile{index: index, tmp: tmp, file: f, hash: sha256.New(), hash3: blake3.New()}
	s.pw = parquet.NewGenericWriter[Row](s, append(unboundedColumns(),
		parquet.Compression(shardCodec),
		parquet.MaxRowsPerRowGroup(w.opts.RowGroupRows),
		parquet.KeyValueMetadata(MetadataSchemaVersion, strconv.Itoa(SchemaVersion)),
		parquet.KeyValueMetadata(MetadataCorpus, w.corpus),
		parquet.KeyValueMetadata(MetadataSplit, w.split),
	)...)
	w.cur = s
	return nil
}

// unboundedColumns are the columns of free text and its tokens: no filter
// is served by the least and greatest sentence of a page, so their pages
// get no bounds (the min and max of the column index and of the chunk's
// and page's statistics), whose search compared every value.
func unboundedColumns() []parquet.WriterOption {
	var opts []parquet.WriterOption
	for _, path := range [][]string{{"a"}, {"b"}, {"context", "list", "element"}, {"tokens_a", "list", "element"}, {"tokens_b", "list", "element"}, {"meta", "key_value", "value"}} {
		opts = append(opts, parquet.SkipPageBounds(path...), parquet.SkipPageStatistics(path...))
	}
	return opts
}

// finishShard writes the current shard's footer, syncs and closes its file.
func (w *Writer) finishShard() error {
	s := w.cur
	w.cur = nil
	fail := func(what string, err error) error {
		s.file.Close()
		os.Remove(s.tmp)
		return fmt.Errorf("%s shard %s: %w", what, s.tmp, err)
	}
	if err := s.pw.Close(); err != nil {
		return fail("writing", err)
	}
	if err := s.file.Sync(); err != nil {
		return fail("syncing", err)
	}
	if err := s.file.Close(); err != nil {
		os.Remove(s.tmp)
		return fmt.Errorf("closing shard %s: %w", s.tmp, err)
	}
	s.sum = hex.EncodeToString(s.hash.Sum(nil))
	s.sum3 = hex.EncodeToString(s.hash3.Sum(nil))
	s.file, s.pw = nil, nil
	w.done = append(w.done, *s)
	return nil
}

// finalName is the name of shard index of total.
func finalName(index, total int) string {
	return fmt.Sprintf("part-%05d-of-%05d.parquet", index, total)
}

// Close finishes the last shard, renames every shard to its final name
// part-NNNNN-of-MMMMM.parquet, syncs the directories and returns the shards
// in order. A split that received no rows returns no shards and leaves no
// files (with Overwrite, it removes an earlier run's). If anything failed,
// Close removes the temporaries and returns the error.
func (w *Writer) Close() ([]ShardInfo, error) {
	if w.closed {
		return nil, ErrClosed
	}
	if w.err != nil {
		w.Abort()
		return nil, w.err
	}
	if w.cur != nil {
		if err := w.finishShard(); err != nil {
			w.err = err
			w.Abort()
			return nil, err
		}
	}
	w.closed = true

	infos := make([]ShardInfo, len(w.done))
	keep := make(map[string]bool, len(w.done))
	for i, s := range w.done {
		name := finalName(i, len(w.done))
		final := filepath.Join(w.dir, name)
		if err := os.Rename(s.tmp, final); err != nil {
			// Leave no partial set of final names behind.
			for renamed := range keep {
				os.Remove(renamed)
			}
			w.removeTemporaries()
			return nil, fmt.Errorf("renaming shard %s: %w", s.tmp, err)
		}
		keep[final] = true
		infos[i] = ShardInfo{
			Path:   path.Join(w.corpus, w.split, name),
			Corpus: w.corpus,
			Split:  w.split,
			Rows:   s.rows,
			Bytes:  s.bytes,
			SHA256: s.sum,
			BLAKE3: s.sum3,
		}
	}
	if w.opts.Overwrite {
		stale, err := w.finalNames()
		if err != nil {
			return nil, err
		}
		// Temporaries of an earlier run that crashed go too.
		temps, _ := filepath.Glob(filepath.Join(w.dir, ".part-*.parquet.tmp"))
		for _, name := range append(stale, temps...) {
			if !keep[name] {
				if err := os.Remove(name); err != nil {
					return nil, fmt.Errorf("removing stale shard: %w", err)
				}
			}
		}
	}
	if len(w.done) > 0 || w.opts.Overwrite {
		for _, dir := range []string{w.dir, filepath.Dir(w.dir), w.root} {
			if err := syncDir(dir); err != nil && !errors.Is(err, os.ErrNotExist) {
				return nil, err
			}
		}
	}
	w.done = nil
	return infos, nil
}

// Abort stops the writer and removes every temporary it created. Shards
// already renamed by a successful Close are left alone. Abort after Close is
// a no-op.
func (w *Writer) Abort() {
	if w.closed {
		return
	}
	w.closed = true
	if s := w.cur; s != nil {
		s.file.Close()
		w.done = append(w.done, *s)
		w.cur = nil
	}
	w.removeTemporaries()
}

func (w *Writer) removeTemporaries() {
	for _, s := range w.done {
		os.Remove(s.tmp)
	}
	w.done = nil
}

// syncDir makes the entries of a directory (new names, renames) durable.
func syncDir(dir string) error {
	if err := atomicfile.SyncDir(dir); err != nil {
		return fmt.Errorf("syncing directory %s: %w", dir, err)
	}
	return nil
}
