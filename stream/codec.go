package stream

import (
	"bytes"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"slices"
	"strconv"
	"strings"
	"sync"
	"unicode/utf8"

	"github.com/parquet-go/parquet-go"
	zstdcodec "github.com/parquet-go/parquet-go/compress/zstd"
	"github.com/parquet-go/parquet-go/format"
	"github.com/segmentio/kafka-go"

	"github.com/parastream/parastream/shards"
)

// Header keys of a row message. Every row message carries each of them
// exactly once; other headers are ignored, so that later versions can add
// some.
const (
	// HeaderSchemaVersion holds shards.SchemaVersion in decimal.
	HeaderSchemaVersion = "parastream.schema_version"
	// HeaderShard holds the shard's path in the manifest, such as
	// "reddit/train/part-00000-of-00016.parquet". It is also the key.
	HeaderShard = "parastream.shard"
	// HeaderRows holds the half-open range of row indices within the shard
	// that the message carries, "first-end": "2000-3000" is rows 2000 to
	// 2999.
	HeaderRows = "parastream.rows"
	// HeaderChecksum holds the CRC-32C (Castagnoli) of the value,
	// "crc32c:" and eight lower-case hex digits.
	HeaderChecksum = "parastream.checksum"
)

// MaxBatchRows is the most rows a message may carry; decoding refuses a
// row range above it before allocating anything.
const MaxBatchRows = 1 << 20

// maxDecodedBytes bounds the uncompressed size of a message's Parquet
// columns, as its footer declares them, so that a small message cannot make
// the decoder allocate without bound.
const maxDecodedBytes = 256 << 20

// crc32c returns the CRC-32C table (package crc32 builds it once).
func crc32c() *crc32.Table { return crc32.MakeTable(crc32.Castagnoli) }

// rowSchema returns the Parquet schema of shards.Row (parquet-go caches it
// by type).
func rowSchema() *parquet.Schema { return parquet.SchemaOf(shards.Row{}) }

// Batch is a run of consecutive rows of one shard: what one message carries.
type Batch struct {
	// Shard is the shard's path in the manifest.
	Shard string
	// First is the index within the shard of Rows[0].
	First int64
	// Rows are rows First to First+len(Rows)-1 of the shard.
	Rows []shards.Row
}

// End is the index after the batch's last row.
func (b *Batch) End() int64 { return b.First + int64(len(b.Rows)) }

// BatchHeader is what a row message's headers say, checked but without
// the rows: DecodeHeader reads it without decoding the Parquet value.
type BatchHeader struct {
	SchemaVersion int
	Shard         string
	// First and End delimit the rows carried: First <= row < End.
	First, End int64
	// Checksum is the CRC-32C of the value.
	Checksum uint32
}

// Rows is the number of rows the message carries.
func (h BatchHeader) Rows() int64 { return h.End - h.First }

// Encode makes the message of a batch: key the shard, value a Parquet file
// of the rows with the shard schema (zstd, one row group, the schema
// version in its key/value metadata), and the four headers. Topic and
// partition are left for the writer. The same batch always gives the same
// bytes. Rows that Row.Validate refuses are an error.
//
// Encode is NewEncoder().Encode(b); a program that encodes many batches
// keeps one Encoder, which reuses its compressor between messages.
func Encode(b Batch) (kafka.Message, error) { return NewEncoder().Encode(b) }

// An Encoder makes row messages (see Encode) with the shards' codec, zstd
// at its fastest level, whose compressors it keeps between messages. It is
// safe for concurrent use.
type Encoder struct {
	codec *zstdcodec.Codec
}

// NewEncoder returns an Encoder.
func NewEncoder() *Encoder {
	return &Encoder{codec: &zstdcodec.Codec{Level: zstdcodec.SpeedFastest}}
}

// Encode makes the message of a batch; see the package function Encode.
func (e *Encoder) Encode(b Batch) (kafka.Message, error) {
	value, err := e.encodeValue(b.Rows)
	if err != nil {
		return kafka.Message{}, fmt.Errorf("encoding rows %d-%d of %s: %w", b.First, b.End(), b.Shard, err)
	}
	return rowMessage(b.Shard, b.First, b.End(), value), nil
}

// rowMessage is the message of rows first to end of a shard whose value
// is the Parquet file value: key the shard, and the four headers.
func rowMessage(shard string, first, end int64, value []byte) kafka.Message {
	return kafka.Message{
		Key:   []byte(shard),
		Value: value,
		Headers: []kafka.Header{
			{Key: HeaderSchemaVersion, Value: []byte(strconv.Itoa(shards.SchemaVersion))},
			{Key: HeaderShard, Value: []byte(shard)},
			{Key: HeaderRows, Value: fmt.Appendf(nil, "%d-%d", first, end)},
			{Key: HeaderChecksum, Value: fmt.Appendf(nil, "crc32c:%08x", crc32.Checksum(value, crc32c()))},
		},
	}
}

// messageSize is what a message counts against the topic's limit: its
// value, key and header values, and messageOverhead.
func messageSize(m kafka.Message) int {
	size := len(m.Value) + len(m.Key) + messageOverhead
	for _, h := range m.Headers {
		size += len(h.Value)
	}
	return size
}

func (e *Encoder) encodeValue(rows []shards.Row) (value []byte, err error) {
	if len(rows) == 0 {
		return nil, errors.New("no rows")
	}
	for i := range rows {
		if err := rows[i].Validate(); err != nil {
			var re *shards.RowError
			if errors.As(err, &re) {
				re.Index = i
			}
			return nil, err
		}
	}
	defer func() {
		if p := recover(); p != nil {
			value, err = nil, fmt.Errorf("parquet-go panicked: %v", p)
		}
	}()
	var buf bytes.Buffer
	w := parquet.NewGenericWriter[shards.Row](&buf,
		parquet.Compression(e.codec),
		parquet.MaxRowsPerRowGroup(int64(len(rows))),
		parquet.KeyValueMetadata(shards.MetadataSchemaVersion, strconv.Itoa(shards.SchemaVersion)),
	)
	if _, err := w.Write(rows); err != nil {
		return nil, err
	}
	if err := w.Close(); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

// DecodeHeader checks a row message's headers and its checksum, without
// decoding the Parquet value. Errors wrap ErrHeader, ErrSchemaVersion or
// ErrChecksum and name the header.
func DecodeHeader(m kafka.Message) (BatchHeader, error) {
	var h BatchHeader
	seen := map[string]string{}
	for _, hd := range m.Headers {
		switch hd.Key {
		case HeaderSchemaVersion, HeaderShard, HeaderRows, HeaderChecksum:
		default:
			continue
		}
		if _, dup := seen[hd.Key]; dup {
			return h, fmt.Errorf("%w: %s given twice", ErrHeader, hd.Key)
		}
		if !utf8.Valid(hd.Value) {
			return h, fmt.Errorf("%w: %s is not UTF-8", ErrHeader, hd.Key)
		}
		seen[hd.Key] = string(hd.Value)
	}
	for _, k := range []string{HeaderSchemaVersion, HeaderShard, HeaderRows, HeaderChecksum} {
		if _, ok := seen[k]; !ok {
			return h, fmt.Errorf("%w: %s missing (not a parastream row message?)", ErrHeader, k)
		}
	}
	v, err := strconv.Atoi(seen[HeaderSchemaVersion])
	switch {
	case err != nil || v < 1:
		return h, fmt.Errorf("%w: %s is %q", ErrHeader, HeaderSchemaVersion, seen[HeaderSchemaVersion])
	case v > shards.SchemaVersion:
		return h, fmt.Errorf("%w: the message has version %d, this program reads up to %d", ErrSchemaVersion, v, shards.SchemaVersion)
	}
	h.SchemaVersion = v
	h.Shard = seen[HeaderShard]
	if h.Shard == "" {
		return h, fmt.Errorf("%w: %s is empty", ErrHeader, HeaderShard)
	}
	if string(m.Key) != h.Shard {
		return h, fmt.Errorf("%w: key %q is not the shard %q", ErrHeader, m.Key, h.Shard)
	}
	if h.First, h.End, err = parseRange(seen[HeaderRows]); err != nil {
		return h, fmt.Errorf("%w: %s is %q: %v", ErrHeader, HeaderRows, seen[HeaderRows], err)
	}
	sum, ok := strings.CutPrefix(seen[HeaderChecksum], "crc32c:")
	c, err := strconv.ParseUint(sum, 16, 32)
	if !ok || len(sum) != 8 || err != nil {
		return h, fmt.Errorf("%w: %s is %q, want crc32c: and 8 hex digits", ErrHeader, HeaderChecksum, seen[HeaderChecksum])
	}
	h.Checksum = uint32(c)
	if got := crc32.Checksum(m.Value, crc32c()); got != h.Checksum {
		return h, fmt.Errorf("%w: the value's crc32c is %08x, the header says %08x", ErrChecksum, got, h.Checksum)
	}
	return h, nil
}

// parseRange parses "first-end" with 0 <= first < end and at most
// MaxBatchRows rows.
func parseRange(s string) (first, end int64, err error) {
	a, b, ok := strings.Cut(s, "-")
	if !ok {
		return 0, 0, errors.New("want first-end")
	}
	if first, err = strconv.ParseInt(a, 10, 64); err != nil {
		return 0, 0, errors.New("first is not a number")
	}
	if end, err = strconv.ParseInt(b, 10, 64); err != nil {
		return 0, 0, errors.New("end is not a number")
	}
	switch {
	case first < 0 || end <= first:
		return 0, 0, errors.New("want 0 <= first < end")
	case end-first > MaxBatchRows:
		return 0, 0, fmt.Errorf("more than %d rows", MaxBatchRows)
	}
	return first, end, nil
}

// Decode checks a row message and returns its batch: the headers (see
// DecodeHeader), then the value, which must be a Parquet file of the shard
// schema in a codec this package writes or trusts (zstd, snappy or none),
// of the schema version the header names, holding exactly the rows of the
// header's range. Errors wrap ErrHeader, ErrSchemaVersion, ErrChecksum or
// ErrPayload and say what is wrong; no message makes Decode panic.
func Decode(m kafka.Message) (Batch, error) { return decodeColumnsInto(m, nil, nil) }

// DecodeColumns is Decode reading only the named columns of the value:
// the Parquet names of shards.Row's fields (Columns lists them), such as
// "id", "label", "ids_a". The column chunks of the other columns are not
// decompressed, and those fields of the rows are left zero. Everything
// Decode checks is checked, but for the values of the columns not read.
// It decodes the columns itself, page by page, where Decode has
// parquet-go's row reader assemble rows; with every column (Columns()) it
// gives what Decode gives, several times faster. No columns (nil) is
// Decode.
func DecodeColumns(m kafka.Message, columns []string) (Batch, error) {
	if err := checkColumns(columns); err != nil {
		return Batch{}, err
	}
	return decodeColumnsInto(m, columns, nil)
}

// decodeColumnsInto is DecodeColumns, for columns already checked (nil:
// Decode), decoding into reuse's array where it has room (see rowArrays).
func decodeColumnsInto(m kafka.Message, columns []string, reuse []shards.Row) (Batch, error) {
	h, err := DecodeHeader(m)
	if err != nil {
		return Batch{}, err
	}
	rows, err := decodeValue(m.Value, h, columns, reuse)
	if err != nil {
		return Batch{}, fmt.Errorf("%w: rows %d-%d of %s: %w", ErrPayload, h.First, h.End, h.Shard, err)
	}
	return Batch{Shard: h.Shard, First: h.First, Rows: rows}, nil
}

// rowArrays keeps the row arrays of messages whose rows have all been
// handed out, for the decoders to fill again: a message of 2,080 rows
// decodes into about 850 KB of Row structs, which the garbage collector
// would otherwise sweep and the runtime zero and hand out again, message
// after message. A record handed out holds a copy of its row (whose
// slices and strings point into the message's own value arrays, never
// into this array), so an array is put back only once its last row is
// copied out.
type rowArrays struct{ pool sync.Pool }

func (a *rowArrays) get() []shards.Row {
	if p, ok := a.pool.Get().(*[]shards.Row); ok {
		return *p
	}
	return nil
}

func (a *rowArrays) put(rows []shards.Row) {
	if cap(rows) > 0 {
		a.pool.Put(&rows)
	}
}

// decodeValue decodes the rows of a message value: every column, or only
// those named (see DecodeColumns), into reuse when it has room for them
// (zeroed first), else into a new array.
func decodeValue(value []byte, h BatchHeader, columns []string, reuse []shards.Row) (rows []shards.Row, err error) {
	defer func() {
		if p := recover(); p != nil {
			rows, err = nil, fmt.Errorf("malformed Parquet data: %v", p)
		}
	}()
	pf, err := parquet.OpenFile(bytes.NewReader(value), int64(len(value)), parquet.SkipBloomFilters(true), parquet.SkipPageIndex(true))
	if err != nil {
		return nil, fmt.Errorf("not a Parquet file: %w", err)
	}
	if v, ok := pf.Lookup(shards.MetadataSchemaVersion); ok && v != strconv.Itoa(h.SchemaVersion) {
		return nil, fmt.Errorf("the Parquet metadata says schema version %q, the header %d", v, h.SchemaVersion)
	}
	if !parquet.EqualNodes(pf.Schema(), rowSchema()) {
		return nil, errors.New("the columns are not those of the shard schema")
	}
	if n := pf.NumRows(); n != h.Rows() {
		return nil, fmt.Errorf("the value holds %d rows, the header %d", n, h.Rows())
	}
	var declared int64
	for _, rg := range pf.Metadata().RowGroups {
		for _, c := range rg.Columns {
			switch codec := c.MetaData.Codec; codec {
			case format.Uncompressed, format.Snappy, format.Zstd:
			default:
				return nil, fmt.Errorf("column %s is compressed with %s; messages use ZSTD (SNAPPY and none are read too)",
					strings.Join(c.MetaData.PathInSchema, "."), codec)
			}
			if c.MetaData.TotalUncompressedSize < 0 {
				return nil, fmt.Errorf("column %s declares a negative size", strings.Join(c.MetaData.PathInSchema, "."))
			}
			if err := checkChunkBounds(&c.MetaData, int64(len(value))); err != nil {
				return nil, fmt.Errorf("column %s: %w", strings.Join(c.MetaData.PathInSchema, "."), err)
			}
			declared += c.MetaData.TotalUncompressedSize
		}
	}
	if declared > maxDecodedBytes {
		return nil, fmt.Errorf("the columns declare %d bytes uncompressed, more than the %d a message may hold", declared, maxDecodedBytes)
	}
	if n := int(h.Rows()); cap(reuse) >= n {
		rows = reuse[:n]
		clear(rows)
	} else {
		rows = make([]shards.Row, n)
	}
	if len(columns) > 0 {
		// readColumns checks every string it makes (Row.Validate's check,
		// done once, as the strings are made).
		if err := readColumns(pf, rows, columns); err != nil {
			return nil, err
		}
		return rows, nil
	}
	r := parquet.NewGenericReader[shards.Row](pf)
	defer r.Close()
	n, err := r.Read(rows)
	if err != nil && !errors.Is(err, io.EOF) {
		return nil, err
	}
	if int64(n) != h.Rows() {
		return nil, fmt.Errorf("read %d rows, the header says %d", n, h.Rows())
	}
	for i := range rows {
		if err := rows[i].Validate(); err != nil {
			var re *shards.RowError
			if errors.As(err, &re) {
				re.Index = i
			}
			return nil, err
		}
	}
	return rows, nil
}

// checkChunkBounds refuses a column chunk whose pages do not lie within
// it: a data page (or a dictionary page) that its offset puts outside the
// bytes its start and compressed size span, or past the end of the file
// of size bytes. parquet-go's row reader and DecodeColumns' pages would
// each read such a chunk their own way (the first fuzzed value that
// showed it: a dictionary at 1,830, 92 bytes long, and its data page said
// to be at 3,015, inside another column).
func checkChunkBounds(md *format.ColumnMetaData, size int64) error {
	start := chunkStart(md)
	end := start + md.TotalCompressedSize
	switch {
	case start < 4 || md.TotalCompressedSize <= 0 || end > size-8 || end < start:
		return fmt.Errorf("its pages span bytes %d to %d of a %d-byte value", start, end, size)
	case md.DataPageOffset < start || md.DataPageOffset >= end:
		return fmt.Errorf("its first data page is at byte %d, outside its bytes %d to %d", md.DataPageOffset, start, end)
	case md.DictionaryPageOffset > 0 && md.DictionaryPageOffset >= md.DataPageOffset && md.DictionaryPageOffset != start:
		return fmt.Errorf("its dictionary page is at byte %d, after its first data page at %d", md.DictionaryPageOffset, md.DataPageOffset)
	}
	return nil
}

// Columns are the columns of a row message, by their Parquet names, in
// schema order: what DecodeColumns and ConsumerConfig.Columns take.
func Columns() []string {
	fields := rowSchema().Fields()
	names := make([]string, len(fields))
	for i, f := range fields {
		names[i] = f.Name()
	}
	return names
}

// checkColumns refuses a name that is not a column of the shard schema,
// or one given twice.
func checkColumns(columns []string) error {
	seen := map[string]bool{}
	for _, c := range columns {
		if !slices.Contains(Columns(), c) {
			return fmt.Errorf("stream: no column %q in the shard schema: choose among %s", c, strings.Join(Columns(), ", "))
		}
		if seen[c] {
			return fmt.Errorf("stream: column %q given twice", c)
		}
		seen[c] = true
	}
	return nil
}
