package stream

import (
	"encoding/binary"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"

	"github.com/parquet-go/parquet-go"
	"github.com/parquet-go/parquet-go/encoding/thrift"
	"github.com/parquet-go/parquet-go/format"

	"github.com/parastream/parastream/shards"
)

// Publishing without transcoding: a shard's row group that fits in a
// message becomes the message's value as it is. The value is a Parquet
// file made of "PAR1", the row group's compressed column chunks copied
// byte for byte from the shard, a footer (the shard's schema and key/value
// metadata, one row group whose offsets point into the new file, no page
// index and no bloom filters), its length and "PAR1". No row is decoded or
// encoded: publishing costs reading the shard and writing the messages.

// copySource is a shard opened for copying its row groups: the file and
// its footer, read once.
type copySource struct {
	file *os.File
	meta *format.FileMetaData
	// starts[i] is the index of row group i's first row; starts[len] is
	// the shard's row count.
	starts []int64
	// copyable is false when the shard's row groups cannot be copied into
	// messages that Decode accepts (another schema or schema version, a
	// codec messages do not use): they are decoded and encoded again.
	copyable bool
}

// openCopySource opens the shard of info under root and reads its footer.
// A file that is not a Parquet file, or whose row count is not the
// manifest's, is an error.
func openCopySource(root string, info shards.ShardInfo) (*copySource, error) {
	rel := filepath.FromSlash(info.Path)
	if !filepath.IsLocal(rel) {
		return nil, fmt.Errorf("reading shard %s: %w: the path leaves the shards' directory", info.Path, shards.ErrManifest)
	}
	name := filepath.Join(root, rel)
	f, err := os.Open(name)
	if err != nil {
		return nil, fmt.Errorf("reading shard %s: %w", name, err)
	}
	s, err := readCopySource(f, info)
	if err != nil {
		f.Close()
		return nil, fmt.Errorf("reading shard %s: %w", name, err)
	}
	return s, nil
}

func readCopySource(f *os.File, info shards.ShardInfo) (s *copySource, err error) {
	// parquet-go panics on some malformed files; a bad file is an error.
	defer func() {
		if p := recover(); p != nil {
			s, err = nil, fmt.Errorf("malformed Parquet file: %v", p)
		}
	}()
	st, err := f.Stat()
	if err != nil {
		return nil, err
	}
	if st.Size() != info.Bytes {
		return nil, fmt.Errorf("%w: %d bytes, the manifest says %d", shards.ErrChecksum, st.Size(), info.Bytes)
	}
	pf, err := parquet.OpenFile(f, st.Size(), parquet.SkipPageIndex(true), parquet.SkipBloomFilters(true))
	if err != nil {
		return nil, err
	}
	if pf.NumRows() != info.Rows {
		return nil, fmt.Errorf("%w: %d rows, the manifest says %d", shards.ErrRowCount, pf.NumRows(), info.Rows)
	}
	s = &copySource{file: f, meta: pf.Metadata()}
	s.starts = make([]int64, 0, len(s.meta.RowGroups)+1)
	var at int64
	for _, rg := range s.meta.RowGroups {
		s.starts = append(s.starts, at)
		at += rg.NumRows
	}
	s.starts = append(s.starts, at)
	s.copyable = at == info.Rows && copyableFile(pf)
	return s, nil
}

// copyableFile reports whether a shard's row groups, copied, make values
// that Decode accepts: the shard schema exactly, a schema version this
// program reads, codecs that messages use, and nothing encrypted.
func copyableFile(pf *parquet.File) bool {
	if !parquet.EqualNodes(pf.Schema(), rowSchema()) {
		return false
	}
	if v, ok := pf.Lookup(shards.MetadataSchemaVersion); ok {
		if n, err := strconv.Atoi(v); err != nil || n < 1 || n > shards.SchemaVersion {
			return false
		}
	}
	md := pf.Metadata()
	if md.EncryptionAlgorithm.Value != nil {
		return false
	}
	for _, rg := range md.RowGroups {
		for _, c := range rg.Columns {
			switch c.MetaData.Codec {
			case format.Uncompressed, format.Snappy, format.Zstd:
			default:
				return false
			}
			if c.CryptoMetadata.Value != nil || len(c.EncryptedColumnMetadata) > 0 || c.FilePath != "" {
				return false
			}
		}
	}
	return true
}

func (s *copySource) close() error { return s.file.Close() }

// groups returns the number of row groups.
func (s *copySource) groups() int { return len(s.meta.RowGroups) }

// rows returns the half-open range of row indices of row group i.
func (s *copySource) rows(i int) (first, end int64) { return s.starts[i], s.starts[i+1] }

// bytesPerRow is the compressed size of a row of row group i, on average.
func (s *copySource) bytesPerRow(i int) float64 {
	rg := &s.meta.RowGroups[i]
	if rg.NumRows == 0 {
		return 0
	}
	var n int64
	for _, c := range rg.Columns {
		n += c.MetaData.TotalCompressedSize
	}
	return float64(n) / float64(rg.NumRows)
}

// errNotCopyable says that a row group's column chunks are not laid out
// as this package copies them (one contiguous run, in schema order).
var errNotCopyable = errors.New("the row group's column chunks are not contiguous")

// chunkStart is where a column chunk's pages begin: its dictionary page,
// or its first data page.
func chunkStart(md *format.ColumnMetaData) int64 {
	if md.DictionaryPageOffset > 0 && md.DictionaryPageOffset < md.DataPageOffset {
		return md.DictionaryPageOffset
	}
	return md.DataPageOffset
}

// footer returns the thrift-encoded FileMetaData of the message value
// holding row group i alone, where the row group's column chunks start at
// offset 4, with their extent in the shard: the bytes from start to end.
func (s *copySource) footer(i int) (meta []byte, start, end int64, err error) {
	rg := &s.meta.RowGroups[i]
	if len(rg.Columns) == 0 || rg.NumRows <= 0 {
		return nil, 0, 0, errNotCopyable
	}
	start = chunkStart(&rg.Columns[0].MetaData)
	end = start
	for j := range rg.Columns {
		md := &rg.Columns[j].MetaData
		if chunkStart(md) != end || md.TotalCompressedSize <= 0 {
			return nil, 0, 0, errNotCopyable
		}
		end += md.TotalCompressedSize
	}
	if start < 4 {
		return nil, 0, 0, errNotCopyable
	}
	shift := 4 - start
	moved := func(off int64) int64 {
		if off > 0 {
			return off + shift
		}
		return off
	}
	cols := make([]format.ColumnChunk, len(rg.Columns))
	for j, c := range rg.Columns {
		c.FileOffset = moved(c.FileOffset)
		c.OffsetIndexOffset, c.OffsetIndexLength = 0, 0
		c.ColumnIndexOffset, c.ColumnIndexLength = 0, 0
		c.MetaData.DataPageOffset = moved(c.MetaData.DataPageOffset)
		c.MetaData.DictionaryPageOffset = moved(c.MetaData.DictionaryPageOffset)
		c.MetaData.IndexPageOffset = moved(c.MetaData.IndexPageOffset)
		c.MetaData.BloomFilterOffset, c.MetaData.BloomFilterLength = 0, 0
		cols[j] = c
	}
	fmd := format.FileMetaData{
		Version: s.meta.Version,
		Schema:  s.meta.Schema,
		NumRows: rg.NumRows,
		RowGroups: []format.RowGroup{{
			Columns:             cols,
			TotalByteSize:       rg.TotalByteSize,
			NumRows:             rg.NumRows,
			SortingColumns:      rg.SortingColumns,
			FileOffset:          4,
			TotalCompressedSize: end - start,
			Ordinal:             0,
		}},
		KeyValueMetadata: s.meta.KeyValueMetadata,
		CreatedBy:        s.meta.CreatedBy,
		ColumnOrders:     s.meta.ColumnOrders,
	}
	meta, err = thrift.Marshal(new(thrift.CompactProtocol), &fmd)
	if err != nil {
		return nil, 0, 0, fmt.Errorf("encoding the footer of row group %d: %w", i, err)
	}
	return meta, start, end, nil
}

// valueSize is the size of the value footer makes: magic, chunks, footer,
// its length, magic.
func valueSize(meta []byte, start, end int64) int64 { return 4 + end - start + int64(len(meta)) + 8 }

// value reads the column chunks of row group i (from start to end in the
// shard) and returns the message value with footer meta.
func (s *copySource) value(meta []byte, start, end int64) ([]byte, error) {
	v := make([]byte, valueSize(meta, start, end))
	copy(v, "PAR1")
	n := 4 + int(end-start)
	if _, err := s.file.ReadAt(v[4:n], start); err != nil {
		return nil, fmt.Errorf("reading shard %s at %d: %w", s.file.Name(), start, err)
	}
	n += copy(v[n:], meta)
	binary.LittleEndian.PutUint32(v[n:], uint32(len(meta)))
	copy(v[n+4:], "PAR1")
	return v, nil
}
