package shards

import (
	"errors"
	"fmt"
	"io"
	"iter"
	"os"
	"path"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/parquet-go/parquet-go"
	"github.com/parquet-go/parquet-go/format"
)

// rowSchema returns the Parquet schema of Row (parquet-go caches it by
// type).
func rowSchema() *parquet.Schema { return parquet.SchemaOf(Row{}) }

// FileReader streams the rows of one shard. It reads one page of each column
// at a time, so memory stays bounded by the row group, whatever the size of
// the file.
//
// A FileReader is not safe for concurrent use.
type FileReader struct {
	name   string
	file   *os.File
	pf     *parquet.File
	rows   *parquet.GenericReader[Row]
	closed bool
}

// OpenFile opens the shard at name and reads its footer. It fails with
// ErrSchemaVersion for a shard of a newer schema version, with ErrSchema for
// a Parquet file that lacks a column of Row, and with ErrCodec for one
// compressed with LZ4 (parquet-go's LZ4 decoder does not bound its memory
// on corrupt data). Errors name the file.
func OpenFile(name string) (*FileReader, error) {
	f, err := os.Open(name)
	if err != nil {
		return nil, fmt.Errorf("reading shard %s: %w", name, err)
	}
	r, err := openParquet(name, f)
	if err != nil {
		f.Close()
		return nil, fmt.Errorf("reading shard %s: %w", name, err)
	}
	return r, nil
}

func openParquet(name string, f *os.File) (r *FileReader, err error) {
	// parquet-go panics on some malformed files; a bad file is an error here.
	defer func() {
		if p := recover(); p != nil {
			r, err = nil, fmt.Errorf("malformed Parquet file: %v", p)
		}
	}()
	st, err := f.Stat()
	if err != nil {
		return nil, err
	}
	pf, err := parquet.OpenFile(f, st.Size(), parquet.SkipBloomFilters(true))
	if err != nil {
		return nil, err
	}
	if err := checkSchema(pf); err != nil {
		return nil, err
	}
	if err := checkCodecs(pf); err != nil {
		return nil, err
	}
	return &FileReader{
		name: name,
		file: f,
		pf:   pf,
		rows: parquet.NewGenericReader[Row](pf),
	}, nil
}

// checkSchema accepts a file written by this package, or by another tool
// that kept every column of Row.
func checkSchema(pf *parquet.File) error {
	if v, ok := pf.Lookup(MetadataSchemaVersion); ok {
		n, err := strconv.Atoi(v)
		if err != nil || n < 1 {
			return fmt.Errorf("%w: %s is %q", ErrSchemaVersion, MetadataSchemaVersion, v)
		}
		if n > SchemaVersion {
			return fmt.Errorf("%w: the shard has version %d, this program reads up to %d", ErrSchemaVersion, n, SchemaVersion)
		}
	}
	schema, want := pf.Schema(), rowSchema()
	if parquet.EqualNodes(schema, want) {
		return nil
	}
	var missing []string
	for _, field := range want.Fields() {
		if !hasField(schema, field.Name()) {
			missing = append(missing, field.Name())
		}
	}
	if len(missing) > 0 {
		return fmt.Errorf("%w: missing %q", ErrSchema, missing)
	}
	return nil
}

// checkCodecs refuses compression codecs this package does not trust
// parquet-go to decode safely: its LZ4 decoder doubles its buffer without
// bound on corrupt input, so a damaged page would exhaust memory instead of
// failing. Shards are written with ZSTD; other tools' rewrites with SNAPPY,
// GZIP, BROTLI or no compression are read too.
func checkCodecs(pf *parquet.File) error {
	for _, rg := range pf.Metadata().RowGroups {
		for _, c := range rg.Columns {
			switch codec := c.MetaData.Codec; codec {
			case format.Uncompressed, format.Snappy, format.Gzip, format.Brotli, format.Zstd:
			default:
				return fmt.Errorf("%w: column %s is compressed with %s; shards use ZSTD (SNAPPY, GZIP, BROTLI and none are read too)",
					ErrCodec, strings.Join(c.MetaData.PathInSchema, "."), codec)
			}
		}
	}
	return nil
}

func hasField(n parquet.Node, name string) bool {
	for _, f := range n.Fields() {
		if f.Name() == name {
			return true
		}
	}
	return false
}

// Name returns the path the shard was opened with.
func (r *FileReader) Name() string { return r.name }

// NumRows returns the number of rows in the shard, from its footer.
func (r *FileReader) NumRows() int64 { return r.pf.NumRows() }

// NumRowGroups returns the number of row groups in the shard.
func (r *FileReader) NumRowGroups() int { return len(r.pf.RowGroups()) }

// Read reads the next rows into buf and returns how many it read. It returns
// 0 and io.EOF after the last row, and never a count above 0 together with
// an error. The rows share no memory with earlier reads, so callers may keep
// them.
func (r *FileReader) Read(buf []Row) (n int, err error) {
	if r.closed {
		return 0, ErrClosed
	}
	if len(buf) == 0 {
		return 0, nil
	}
	defer func() {
		if p := recover(); p != nil {
			n, err = 0, fmt.Errorf("reading shard %s: malformed Parquet data: %v", r.name, p)
		}
	}()
	// parquet-go decodes into the values it is given, reusing their lists
	// and maps; start from zero rows so that rows handed out earlier are
	// never overwritten.
	clear(buf)
	n, err = r.rows.Read(buf)
	switch {
	case err == nil:
		return n, nil
	case errors.Is(err, io.EOF):
		if n > 0 {
			return n, nil
		}
		return 0, io.EOF
	default:
		return 0, fmt.Errorf("reading shard %s: %w", r.name, err)
	}
}

// All returns an iterator over the rows that remain, in order. It stops
// after the first error, which it yields with a zero Row.
func (r *FileReader) All() iter.Seq2[Row, error] { return all(r.Read) }

// Close releases the file. Close after Close is a no-op.
func (r *FileReader) Close() error {
	if r.closed {
		return nil
	}
	r.closed = true
	r.rows.Close()
	if err := r.file.Close(); err != nil {
		return fmt.Errorf("closing shard %s: %w", r.name, err)
	}
	return nil
}

// readBatch is the batch All reads in.
const readBatch = 256

func all(read func([]Row) (int, error)) iter.Seq2[Row, error] {
	return func(yield func(Row, error) bool) {
		buf := make([]Row, readBatch)
		for {
			n, err := read(buf)
			for i := range n {
				if !yield(buf[i], nil) {
					return
				}
			}
			if errors.Is(err, io.EOF) {
				return
			}
			if err != nil {
				yield(Row{}, err)
				return
			}
		}
	}
}

// SplitReader streams every row of one split, shard after shard in the
// manifest's order. It holds one shard open at a time, and checks each
// shard's size and row count against the manifest as it opens it (the full
// sha256 check is Manifest.Verify).
//
// A SplitReader is not safe for concurrent use.
type SplitReader struct {
	root   string
	shards []ShardInfo
	next   int         // index in shards of the next shard to open
	cur    *FileReader // nil between shards
	closed bool
}

// OpenSplit reads the manifest under root and returns a reader of the split
// of the corpus. A split the manifest does not list is an error wrapping
// ErrManifest; a split it lists with no rows reads as empty.
func OpenSplit(root, corpus, split string) (*SplitReader, error) {
	m, err := ReadManifest(root)
	if err != nil {
		return nil, err
	}
	infos, err := m.Shards(corpus, split)
	if err != nil {
		return nil, err
	}
	return NewSplitReader(root, infos), nil
}

// NewSplitReader returns a reader of the given shards under root, in the
// order given.
func NewSplitReader(root string, shards []ShardInfo) *SplitReader {
	return &SplitReader{root: root, shards: shards}
}

// Shards returns the shards the reader reads, in order.
func (r *SplitReader) Shards() []ShardInfo { return r.shards }

// NumRows returns the number of rows in the split, from the manifest.
func (r *SplitReader) NumRows() int64 {
	var n int64
	for _, s := range r.shards {
		n += s.Rows
	}
	return n
}

// Read reads the next rows into buf, crossing from one shard to the next.
// It follows the conventions of FileReader.Read.
func (r *SplitReader) Read(buf []Row) (int, error) {
	if r.closed {
		return 0, ErrClosed
	}
	if len(buf) == 0 {
		return 0, nil
	}
	for {
		if r.cur == nil {
			if r.next == len(r.shards) {
				return 0, io.EOF
			}
			if err := r.open(r.shards[r.next]); err != nil {
				return 0, err
			}
			r.next++
		}
		n, err := r.cur.Read(buf)
		if n > 0 || !errors.Is(err, io.EOF) {
			return n, err
		}
		if err := r.cur.Close(); err != nil {
			return 0, err
		}
		r.cur = nil
	}
}

// open opens one shard and checks it against its manifest entry.
func (r *SplitReader) open(info ShardInfo) error {
	name, err := localPath(r.root, info.Path)
	if err != nil {
		return fmt.Errorf("reading shard %s: %w", info.Path, err)
	}
	st, err := os.Stat(name)
	if err != nil {
		return fmt.Errorf("reading shard %s: %w", name, err)
	}
	if st.Size() != info.Bytes {
		return fmt.Errorf("reading shard %s: %w: %d bytes, the manifest says %d", name, ErrChecksum, st.Size(), info.Bytes)
	}
	f, err := OpenFile(name)
	if err != nil {
		return err
	}
	if f.NumRows() != info.Rows {
		f.Close()
		return fmt.Errorf("reading shard %s: %w: %d rows, the manifest says %d", name, ErrRowCount, f.NumRows(), info.Rows)
	}
	r.cur = f
	return nil
}

// All returns an iterator over the rows that remain, in order. It stops
// after the first error, which it yields with a zero Row.
func (r *SplitReader) All() iter.Seq2[Row, error] { return all(r.Read) }

// Close closes the open shard, if any. Close after Close is a no-op.
func (r *SplitReader) Close() error {
	if r.closed {
		return nil
	}
	r.closed = true
	if r.cur != nil {
		err := r.cur.Close()
		r.cur = nil
		return err
	}
	return nil
}

// localPath turns a manifest path (relative, forward slashes) into a path
// under root, refusing one that would leave root.
func localPath(root, p string) (string, error) {
	if p == "" || path.IsAbs(p) || !filepath.IsLocal(filepath.FromSlash(p)) || path.Clean(p) != p {
		return "", fmt.Errorf("%w: path %q is not a clean path inside the root", ErrManifest, p)
	}
	return filepath.Join(root, filepath.FromSlash(p)), nil
}
