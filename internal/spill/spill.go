package spill

// Spill files: the bounded-memory stand-in for a GroupByKey.
//
// Prism holds every GroupByKey's data in memory, so the extraction scatters
// rows into bucket files by a hash of a key, and later DoFns read one bucket
// at a time. This file holds the row codec (AppendRow, DecodeRow), the file
// writer (Writer) and reader (Reader, ReadFiles).
//
// Row encoding (AppendRow). All integers are varints (encoding/binary):
// lengths and counts unsigned, int64 and int32 values zigzag-signed; floats
// are raw IEEE 754 bits, little-endian, so NaN payloads, ±Inf and -0 come
// back bit for bit.
//
//	row     = uvarint(len(body)) body
//	body    = flags                      1 byte: bit 0 set when Label != nil; other bits 0
//	          str(ID) str(Corpus) str(Dataset) str(Split) str(A) str(B)
//	          strs(Context) str(LangA) str(LangB)
//	          [float64(*Label)]          only when flags bit 0 is set
//	          str(GroupKey) str(SourceFile) varint(SourceLine) varint(SourceOffset)
//	          uvarint(n) n×float64       Scores
//	          uvarint(n) n×(str(k) str(v)) Meta, keys in strictly increasing byte order
//	          toks(TokensA, A) toks(TokensB, B)
//	          uvarint(n) n×varint        IDsA, then IDsB
//	          uvarint(n) n×float32       TopicsA, then TopicsB
//	str     = uvarint(len) bytes
//	strs    = uvarint(n) n×str
//	toks    = uvarint(n) n×tok
//	tok     = uvarint(len<<1) bytes                 a literal token
//	        | uvarint(len<<1 | 1) uvarint(skip)     text[at+skip : at+skip+len]
//
// Tokens are mostly the text they were cut from, in order, so a token found
// in its text (A for TokensA, B for TokensB) shortly after the end of the
// previous referenced token (at, starting at 0) is written as a reference
// of two bytes instead of one plus its length, and decodes without a copy.
// That takes a sixth off a typical Reddit row, which compresses and decodes
// faster for it. Other tokens (lowercased ones, the sentence tags) are
// literals.
//
// The encoding of a row is a function of its value: Meta is written in key
// order, so equal rows encode to equal bytes.
//
// File layout (Writer). Fixed-width integers are little-endian.
//
//	file    = magic block* trailer
//	magic   = "PSPILL1\n"
//	block   = kind rows:u32 rawLen:u32 compLen:u32 rawCRC:u32 frameCRC:u32 data[compLen]
//	kind    = 'S' (data is an S2 block)
//	trailer = 'E' rows:u64 blocks:u32 crc:u32
//
// A block holds rows whole encoded rows, rawLen bytes once decompressed (at
// most spillBlockSize, 8 KiB, unless it is a single larger row),
// compressed as one S2 block. The checksums are CRC-32C (Castagnoli): rawCRC of the rawLen
// uncompressed bytes, frameCRC of the block's first 17 bytes (kind to
// rawCRC) followed by the compressed bytes. A reader checks frameCRC before
// decompressing, so a damaged header or frame is reported as such, and
// rawCRC after, end to end. The trailer's crc is the CRC-32C of
// its first 13 bytes; rows and blocks are the file's totals, and nothing
// may follow it. A reader therefore detects any changed byte, a truncated
// file (a short block or trailer) and a file cut at a block boundary (no
// trailer) alike.

import (
	"bufio"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"math"
	"math/rand/v2"
	"path/filepath"
	"slices"
	"strings"
	"sync"

	"github.com/apache/beam/sdks/v2/go/pkg/beam/io/filesystem"
	_ "github.com/apache/beam/sdks/v2/go/pkg/beam/io/filesystem/local" // plain paths
	"github.com/klauspost/compress/s2"

	"github.com/parastream/parastream/shards"
)

// ErrCorrupt is wrapped by every error that reports a spill file or an
// encoded row that cannot be decoded: bad magic, a CRC mismatch, a
// truncated file, an impossible length. Errors from the filesystem itself
// (permission denied, network failures) do not wrap it.
var ErrCorrupt = errors.New("corrupt spill data")

const (
	// spillMagic opens every spill file; its last byte is a newline so that
	// a file opened in a text tool shows what it is.
	spillMagic = "PSPILL1\n"
	// spillBlockSize is the uncompressed size at which a writer compresses
	// and writes its block. A writer's buffer holds one block, so this is
	// most of the memory an open Writer holds, and a pipeline holds
	// one writer per bucket in each scattering bundle: 8 KiB keeps 2,000
	// buckets near 25 MB a bundle. It costs some compression: on Reddit
	// pair rows S2 reaches 1.45:1 (229 bytes a row) against 1.74:1 with
	// 128 KiB blocks, at the same speed (BenchmarkSpillWrite).
	spillBlockSize = 8 << 10
	// spillRowReserve is the room for a typical row that a writer's buffer
	// keeps beyond a block.
	spillRowReserve = 2 << 10
	// spillMaxRow is the largest encoded row a Writer accepts.
	spillMaxRow = 64 << 20
	// spillMaxRaw bounds a block's uncompressed size: a reader refuses a
	// larger rawLen before allocating for it.
	spillMaxRaw = spillBlockSize + spillMaxRow
	// spillBlockHeader and spillTrailer are the sizes of a block's header
	// and of the trailer, their kind byte included.
	spillBlockHeader = 21
	spillTrailer     = 17
	// spillDecodeSlack is the room a reader leaves after a block's
	// decompressed bytes, which lets the decoder use its fastest copies.
	spillDecodeSlack = 64
	// spillTempPrefix and spillTempInfix make a writer's temporary name
	// "<dir>/.<base>.tmp-<random>": hidden, so that globs like *.spill do
	// not match it.
	spillTempPrefix = "."
	spillTempInfix  = ".tmp-"
)

// spillCRCTable returns the CRC-32C table (package crc32 builds it once).
func spillCRCTable() *crc32.Table { return crc32.MakeTable(crc32.Castagnoli) }

// ---------------------------------------------------------------------------
// Row codec

// AppendRow appends the encoding of r to dst and returns the extended
// buffer. The encoding is self-delimiting (DecodeRow reports its length) and
// deterministic: equal rows give equal bytes whatever the iteration order of
// r.Meta. See the top of spill.go for the layout.
func AppendRow(dst []byte, r *shards.Row) []byte {
	// The body's length goes first. Reserve two bytes for it, enough for
	// bodies of 128 B to 16 KiB, the common case, and move the body when the
	// guess was wrong.
	const guess = 2
	start := len(dst)
	dst = append(dst, 0, 0)
	body := len(dst)

	var flags byte
	if r.Label != nil {
		flags |= 1
	}
	dst = append(dst, flags)
	dst = spillAppendString(dst, r.ID)
	dst = spillAppendString(dst, r.Corpus)
	dst = spillAppendString(dst, r.Dataset)
	dst = spillAppendString(dst, r.Split)
	dst = spillAppendString(dst, r.A)
	dst = spillAppendString(dst, r.B)
	dst = spillAppendStrings(dst, r.Context)
	dst = spillAppendString(dst, r.LangA)
	dst = spillAppendString(dst, r.LangB)
	if r.Label != nil {
		dst = binary.LittleEndian.AppendUint64(dst, math.Float64bits(*r.Label))
	}
	dst = spillAppendString(dst, r.GroupKey)
	dst = spillAppendString(dst, r.SourceFile)
	dst = binary.AppendVarint(dst, r.SourceLine)
	dst = binary.AppendVarint(dst, r.SourceOffset)
	dst = binary.AppendUvarint(dst, uint64(len(r.Scores)))
	for _, f := range r.Scores {
		dst = binary.LittleEndian.AppendUint64(dst, math.Float64bits(f))
	}
	dst = spillAppendMeta(dst, r.Meta)
	dst = spillAppendTokens(dst, r.TokensA, r.A)
	dst = spillAppendTokens(dst, r.TokensB, r.B)
	dst = spillAppendInt32s(dst, r.IDsA)
	dst = spillAppendInt32s(dst, r.IDsB)
	dst = spillAppendFloat32s(dst, r.TopicsA)
	dst = spillAppendFloat32s(dst, r.TopicsB)

	n := uint64(len(dst) - body)
	if k := spillUvarintLen(n); k != guess {
		end := len(dst)
		if k > guess {
			dst = append(dst, make([]byte, k-guess)...)
		}
		copy(dst[start+k:], dst[body:end])
		dst = dst[:start+k+int(n)]
	}
	binary.PutUvarint(dst[start:], n)
	return dst
}

func spillUvarintLen(x uint64) int {
	n := 1
	for x >= 0x80 {
		x >>= 7
		n++
	}
	return n
}

func spillAppendString(dst []byte, s string) []byte {
	dst = binary.AppendUvarint(dst, uint64(len(s)))
	return append(dst, s...)
}

func spillAppendStrings(dst []byte, ss []string) []byte {
	dst = binary.AppendUvarint(dst, uint64(len(ss)))
	for _, s := range ss {
		dst = spillAppendString(dst, s)
	}
	return dst
}

// spillTokenSearch is how far past the previous token, beyond the length
// of the token itself, AppendRow looks for a token in its text.
const spillTokenSearch = 64

func spillAppendTokens(dst []byte, toks []string, text string) []byte {
	dst = binary.AppendUvarint(dst, uint64(len(toks)))
	at := 0
	for _, tok := range toks {
		if tok != "" {
			rest := text[at:]
			i := -1
			switch {
			case strings.HasPrefix(rest, tok):
				i = 0
			case len(rest) > 0 && strings.HasPrefix(rest[1:], tok):
				i = 1
			default:
				i = strings.Index(rest[:min(len(rest), len(tok)+spillTokenSearch)], tok)
			}
			if i >= 0 {
				dst = binary.AppendUvarint(dst, uint64(len(tok))<<1|1)
				dst = binary.AppendUvarint(dst, uint64(i))
				at += i + len(tok)
				continue
			}
		}
		dst = binary.AppendUvarint(dst, uint64(len(tok))<<1)
		dst = append(dst, tok...)
	}
	return dst
}

func spillAppendInt32s(dst []byte, v []int32) []byte {
	dst = binary.AppendUvarint(dst, uint64(len(v)))
	for _, x := range v {
		dst = binary.AppendVarint(dst, int64(x))
	}
	return dst
}

func spillAppendFloat32s(dst []byte, v []float32) []byte {
	dst = binary.AppendUvarint(dst, uint64(len(v)))
	for _, f := range v {
		dst = binary.LittleEndian.AppendUint32(dst, math.Float32bits(f))
	}
	return dst
}

func spillAppendMeta(dst []byte, m map[string]string) []byte {
	dst = binary.AppendUvarint(dst, uint64(len(m)))
	if len(m) == 0 {
		return dst
	}
	var buf [16]string
	keys := buf[:0]
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	for _, k := range keys {
		dst = spillAppendString(dst, k)
		dst = spillAppendString(dst, m[k])
	}
	return dst
}

// DecodeRow decodes the row at the start of b into r and returns the number
// of bytes it took. A truncated or corrupt encoding returns an error wrapping
// ErrCorrupt; DecodeRow never panics on bad input and never allocates
// more than a small multiple of len(b).
//
// Every field of r is overwritten, and every value AppendRow wrote comes back
// exactly (float bits included), with one normalisation: an empty list or
// map comes back nil, as shards.Row treats a missing list as an empty one.
//
// Memory: the decoded strings never alias b, so b may be reused at once.
// They share one allocation per row (a copy of the row's encoding), so
// keeping any one string of a row keeps that whole copy alive; strings.Clone
// what you keep of many rows. To save allocations, DecodeRow reuses the
// backing arrays of r's slices and r's map (not the Label, which is always
// a fresh pointer): a caller that keeps a decoded row, or any of its slices
// or its map, past the next DecodeRow into the same r must zero r first
// (*r = shards.Row{}). A shallow copy of the struct is not enough. On error
// r holds an unspecified mix of old and new values.
func DecodeRow(b []byte, r *shards.Row) (n int, err error) {
	size, k := binary.Uvarint(b)
	if k <= 0 {
		if k == 0 {
			return 0, fmt.Errorf("%w: row length: truncated varint", ErrCorrupt)
		}
		return 0, fmt.Errorf("%w: row length: varint overflows 64 bits", ErrCorrupt)
	}
	if size > uint64(len(b)-k) {
		return 0, fmt.Errorf("%w: row of %d bytes, only %d left", ErrCorrupt, size, len(b)-k)
	}
	if size == 0 {
		return 0, fmt.Errorf("%w: empty row", ErrCorrupt)
	}
	body := b[k : k+int(size)]
	d := spillDecoder{b: body, s: string(body)}
	d.decode(r)
	if d.err != nil {
		return 0, d.err
	}
	if d.i != len(body) {
		return 0, fmt.Errorf("%w: %d bytes left over after the row's last field", ErrCorrupt, len(body)-d.i)
	}
	return k + int(size), nil
}

// spillDecoder reads one row body. b and s hold the same bytes: numbers are
// read from b and strings sliced from s, so that all of a row's strings
// share s. field names the field being read, for errors. The first error
// sticks: counts read after an error are 0, so nothing is allocated for
// them, and decode stops at the next field.
type spillDecoder struct {
	b     []byte
	s     string
	i     int
	field string
	err   error
}

func (d *spillDecoder) fail(format string, args ...any) {
	if d.err == nil {
		d.err = fmt.Errorf("%w: %s at byte %d: %s", ErrCorrupt, d.field, d.i, fmt.Sprintf(format, args...))
	}
}

func (d *spillDecoder) uvarint() uint64 {
	// Most varints of a row (string lengths, counts) are one byte: that
	// case is inlined.
	if i := d.i; i < len(d.b) {
		if c := d.b[i]; c < 0x80 {
			d.i = i + 1
			return uint64(c)
		}
	}
	return d.uvarintSlow()
}

func (d *spillDecoder) uvarintSlow() uint64 {
	if d.err != nil {
		return 0
	}
	v, k := binary.Uvarint(d.b[d.i:])
	if k <= 0 {
		if k == 0 {
			d.fail("truncated varint")
		} else {
			d.fail("varint overflows 64 bits")
		}
		return 0
	}
	d.i += k
	return v
}

func (d *spillDecoder) varint() int64 {
	u := d.uvarint()
	return int64(u>>1) ^ -int64(u&1)
}

// count reads a list length and checks that n elements of at least minSize
// bytes each fit in what is left of the row, before anything is allocated.
func (d *spillDecoder) count(minSize int) int {
	n := d.uvarint()
	if n == 0 || d.err != nil {
		return 0
	}
	if left := len(d.b) - d.i; n > uint64(left/minSize) {
		d.fail("%d elements cannot fit in the %d bytes left", n, left)
		return 0
	}
	return int(n)
}

func (d *spillDecoder) str() string {
	// Fast path: a one-byte length that fits.
	if i := d.i; i < len(d.b) && d.b[i] < 0x80 {
		n := int(d.b[i])
		i++
		if n <= len(d.b)-i {
			d.i = i + n
			return d.s[i : i+n]
		}
	}
	n := d.uvarint()
	if n > uint64(len(d.b)-d.i) {
		d.strFail(n)
		return ""
	}
	s := d.s[d.i : d.i+int(n)]
	d.i += int(n)
	return s
}

func (d *spillDecoder) strFail(n uint64) {
	d.fail("string of %d bytes, only %d left", n, len(d.b)-d.i)
}

func (d *spillDecoder) fixed(size int) []byte {
	if len(d.b)-d.i < size {
		d.fail("truncated")
		return nil
	}
	p := d.b[d.i : d.i+size]
	d.i += size
	return p
}

// strs reads a list of strings: the hot loop of a row of tokens, written
// with the position in a local.
func (d *spillDecoder) strs(dst []string) []string {
	n := d.count(1)
	if n == 0 {
		return nil
	}
	dst = spillReuse(dst, n)
	b, s, i := d.b, d.s, d.i
	for j := range dst {
		var l uint64
		if i < len(b) && b[i] < 0x80 {
			l = uint64(b[i])
			i++
		} else {
			d.i = i
			l = d.uvarintSlow()
			i = d.i
			if d.err != nil {
				return nil
			}
		}
		if l > uint64(len(b)-i) {
			d.i = i
			d.strFail(l)
			return nil
		}
		dst[j] = s[i : i+int(l)]
		i += int(l)
	}
	d.i = i
	return dst
}

// tokens reads a token list cut from text (see toks in the format).
func (d *spillDecoder) tokens(dst []string, text string) []string {
	n := d.count(1)
	if n == 0 {
		return nil
	}
	dst = spillReuse(dst, n)
	at := 0
	for j := range dst {
		tag := d.uvarint()
		l := tag >> 1
		if tag&1 == 0 {
			if l > uint64(len(d.b)-d.i) {
				d.strFail(l)
				return nil
			}
			dst[j] = d.s[d.i : d.i+int(l)]
			d.i += int(l)
			continue
		}
		skip := d.uvarint()
		if d.err != nil {
			return nil
		}
		if left := uint64(len(text) - at); skip > left || l > left-skip {
			d.fail("token of %d bytes at %d+%d is outside its text of %d bytes", l, at, skip, len(text))
			return nil
		}
		at += int(skip)
		dst[j] = text[at : at+int(l)]
		at += int(l)
	}
	return dst
}

func (d *spillDecoder) int32s(dst []int32) []int32 {
	n := d.count(1)
	if n == 0 {
		return nil
	}
	dst = spillReuse(dst, n)
	for j := range dst {
		v := d.varint()
		if v != int64(int32(v)) {
			d.fail("%d overflows int32", v)
			return nil
		}
		dst[j] = int32(v)
	}
	return dst
}

func (d *spillDecoder) float32s(dst []float32) []float32 {
	n := d.count(4)
	if n == 0 {
		return nil
	}
	dst = spillReuse(dst, n)
	p := d.fixed(4 * n)
	for j := range dst {
		dst[j] = math.Float32frombits(binary.LittleEndian.Uint32(p[4*j:]))
	}
	return dst
}

func (d *spillDecoder) float64s(dst []float64) []float64 {
	n := d.count(8)
	if n == 0 {
		return nil
	}
	dst = spillReuse(dst, n)
	p := d.fixed(8 * n)
	for j := range dst {
		dst[j] = math.Float64frombits(binary.LittleEndian.Uint64(p[8*j:]))
	}
	return dst
}

func (d *spillDecoder) meta(m map[string]string) map[string]string {
	n := d.count(2)
	if n == 0 {
		return nil
	}
	if m == nil {
		m = make(map[string]string, n)
	} else {
		clear(m)
	}
	prev := ""
	for j := 0; j < n; j++ {
		k := d.str()
		v := d.str()
		if d.err != nil {
			return nil
		}
		if j > 0 && k <= prev {
			d.fail("key %q does not follow %q: keys must be strictly increasing", k, prev)
			return nil
		}
		m[k] = v
		prev = k
	}
	return m
}

// spillReuse returns a slice of length n, on s's array when it is big enough.
func spillReuse[T any](s []T, n int) []T {
	if cap(s) >= n {
		return s[:n]
	}
	return make([]T, n)
}

func (d *spillDecoder) decode(r *shards.Row) {
	d.field = "flags"
	flags := d.fixed(1)
	if flags == nil {
		return
	}
	if flags[0]&^1 != 0 {
		d.fail("unknown flags %#x", flags[0])
		return
	}
	d.field = "strings"
	r.ID = d.str()
	r.Corpus = d.str()
	r.Dataset = d.str()
	r.Split = d.str()
	r.A = d.str()
	r.B = d.str()
	d.field = "context"
	r.Context = d.strs(r.Context)
	d.field = "lang"
	r.LangA = d.str()
	r.LangB = d.str()
	r.Label = nil
	if flags[0]&1 != 0 {
		d.field = "label"
		if p := d.fixed(8); p != nil {
			label := math.Float64frombits(binary.LittleEndian.Uint64(p))
			r.Label = &label
		}
	}
	d.field = "group_key/source"
	r.GroupKey = d.str()
	r.SourceFile = d.str()
	r.SourceLine = d.varint()
	r.SourceOffset = d.varint()
	if d.err != nil {
		return
	}
	d.field = "scores"
	r.Scores = d.float64s(r.Scores)
	d.field = "meta"
	r.Meta = d.meta(r.Meta)
	d.field = "tokens_a"
	r.TokensA = d.tokens(r.TokensA, r.A)
	d.field = "tokens_b"
	r.TokensB = d.tokens(r.TokensB, r.B)
	if d.err != nil {
		return
	}
	d.field = "ids_a"
	r.IDsA = d.int32s(r.IDsA)
	d.field = "ids_b"
	r.IDsB = d.int32s(r.IDsB)
	d.field = "topics_a"
	r.TopicsA = d.float32s(r.TopicsA)
	d.field = "topics_b"
	r.TopicsB = d.float32s(r.TopicsB)
}

// ---------------------------------------------------------------------------
// Compression

var (
	// spillFrames pools the buffers blocks are compressed into, shared by
	// the writers, so that an open writer holds only its block of rows
	// (BenchmarkSpillWriterMemory). It stays a package variable until
	// Create takes a pool that its callers share: a buffer of each
	// writer's own doubles the heap of an open writer (11 to 22 KB).
	spillFrames = sync.Pool{New: func() any { return new([]byte) }}
)

// ---------------------------------------------------------------------------
// Writer

// Writer writes rows to one spill file through Beam's filesystem
// abstraction, so that a path may be local or on any registered filesystem
// (gs://, s3://, memfs://, ...). Plain paths use the local filesystem, which
// this package registers.
//
// The rows go to a hidden temporary file beside path
// ("<dir>/.<base>.tmp-<random>") that Close renames to path once the
// trailer is written (filesystem.Rename: a rename where the filesystem has
// one, as local, gs:// and memfs:// do, else a copy and a remove, as on
// s3://), so a file under the final name is always complete. Filesystems
// that can neither rename nor remove get the rows under the final name
// directly; a reader still refuses such a file if the writer did not
// finish, as it lacks its trailer.
//
// Memory: an open writer holds its block buffer, up to spillBlockSize plus
// 4 KiB (about 134 KiB once a block has filled; nothing before the first
// row), and whatever the filesystem's writer buffers: nothing for local
// files, up to a chunk (16 MiB by default) for the GCS client. Compressors
// are shared by all writers (about 0.8 MiB each, one per goroutine
// compressing at the same moment). A Writer is not safe for
// concurrent use.
type Writer struct {
	// ctx is the context given to Create. It is kept, against the
	// usual rule, because io.Closer's Close takes none: the rename that
	// Close does belongs to the write Create began, and the
	// filesystem's writer (GCS's, for one) holds the same context anyway.
	ctx    context.Context
	fs     filesystem.Interface
	w      io.WriteCloser
	path   string
	tmp    string // "" when writing under path directly
	buf    []byte // encoded rows of the current block
	nrows  uint32 // rows in buf
	rows   int64
	bytes  int64
	blocks uint32
	err    error // sticky: the first failure
	closed bool
}

// Create opens a spill file for writing at path. Call Close to finish
// it, or Abort to discard it; until Close succeeds no file exists under
// path (unless the filesystem cannot rename; see Writer).
func Create(ctx context.Context, path string) (*Writer, error) {
	tmp, err := spillTempName(path)
	if err != nil {
		return nil, err
	}
	fs, err := filesystem.New(ctx, path)
	if err != nil {
		return nil, fmt.Errorf("creating spill %s: %w", path, err)
	}
	_, canRename := fs.(filesystem.Renamer)
	_, canRemove := fs.(filesystem.Remover)
	if !canRename && !canRemove {
		tmp = ""
	}
	name := path
	if tmp != "" {
		name = tmp
	}
	w, err := fs.OpenWrite(ctx, name)
	if err != nil {
		fs.Close()
		return nil, fmt.Errorf("creating spill %s: %w", path, err)
	}
	sw := &Writer{ctx: ctx, fs: fs, w: w, path: path, tmp: tmp}
	if err := sw.write([]byte(spillMagic)); err != nil {
		sw.Abort()
		return nil, err
	}
	return sw, nil
}

// spillTempName returns the hidden temporary name for path: the same
// directory, the base name prefixed with "." and suffixed with ".tmp-" and
// 16 random hex digits, so that two attempts at one bucket never collide.
func spillTempName(path string) (string, error) {
	suffix := fmt.Sprintf("%s%016x", spillTempInfix, rand.Uint64())
	if strings.Contains(path, "://") {
		i := strings.LastIndexByte(path, '/')
		base := path[i+1:]
		if base == "" || strings.HasSuffix(path[:i+1], "://") {
			return "", fmt.Errorf("creating spill %s: the path names no file", path)
		}
		return path[:i+1] + spillTempPrefix + base + suffix, nil
	}
	base := filepath.Base(path)
	if path == "" || strings.HasSuffix(path, "/") || base == "." || base == string(filepath.Separator) {
		return "", fmt.Errorf("creating spill %q: the path names no file", path)
	}
	return filepath.Join(filepath.Dir(path), spillTempPrefix+base+suffix), nil
}

// Write adds r to the file. A row whose encoding exceeds 64 MiB is refused
// with an error, and the writer stays usable. Any other error (the
// filesystem's, or the context's) is final: later calls return it, and Close
// discards the file.
func (w *Writer) Write(r *shards.Row) error {
	if w.err != nil {
		return w.err
	}
	if w.closed {
		return fmt.Errorf("writing spill %s: writer is closed", w.path)
	}
	// Grow the buffer by doubling up to one block and a typical row, and no
	// further: it is most of an open writer's memory.
	if c := cap(w.buf); c-len(w.buf) < spillRowReserve && c < spillBlockSize+spillRowReserve {
		w.buf = slices.Grow(w.buf, min(max(2*c, 8<<10), spillBlockSize+spillRowReserve)-len(w.buf))
	}
	before := len(w.buf)
	w.buf = AppendRow(w.buf, r)
	if size := len(w.buf) - before; size > spillMaxRow {
		w.buf = w.buf[:before]
		if cap(w.buf) > 2*spillBlockSize { // do not keep the refused row's room
			w.buf = append(make([]byte, 0, spillBlockSize+spillRowReserve), w.buf...)
		}
		return fmt.Errorf("writing spill %s: row %q encodes to %d bytes, more than the limit of %d", w.path, r.ID, size, spillMaxRow)
	}
	w.rows++
	if len(w.buf) <= spillBlockSize {
		w.nrows++
		return nil
	}
	// The row does not fit: write the block without it, so that blocks stay
	// within spillBlockSize, and start the next with it.
	if before > 0 {
		if err := w.flush(w.buf[:before], w.nrows); err != nil {
			return err
		}
		w.buf = w.buf[:copy(w.buf, w.buf[before:])]
	}
	w.nrows = 1
	if len(w.buf) < spillBlockSize {
		return nil
	}
	// A row of a block or more makes a block of its own.
	if err := w.flush(w.buf, 1); err != nil {
		return err
	}
	w.nrows = 0
	w.buf = w.buf[:0]
	if cap(w.buf) > 2*spillBlockSize {
		w.buf = nil // give a huge row's buffer back
	}
	return nil
}

// flush compresses and writes a block of rows encoded rows.
func (w *Writer) flush(raw []byte, rows uint32) error {
	if err := w.ctx.Err(); err != nil {
		w.err = fmt.Errorf("writing spill %s: %w", w.path, err)
		return w.err
	}
	// Blocks are written with S2, which compresses about three times as
	// fast as zstd's fastest level, at 1.45:1 on Reddit rows instead of
	// about 2.5:1: spill files are short-lived, and writing them is on the
	// pipeline's hot path.
	fp := spillFrames.Get().(*[]byte)
	frame := slices.Grow((*fp)[:0], spillBlockHeader+s2.MaxEncodedLen(len(raw)))
	comp := s2.Encode(frame[spillBlockHeader:cap(frame)], raw)
	frame = frame[:spillBlockHeader+len(comp)]

	h := frame[:spillBlockHeader]
	h[0] = 'S'
	binary.LittleEndian.PutUint32(h[1:], rows)
	binary.LittleEndian.PutUint32(h[5:], uint32(len(raw)))
	binary.LittleEndian.PutUint32(h[9:], uint32(len(frame)-spillBlockHeader))
	crcTable := spillCRCTable()
	binary.LittleEndian.PutUint32(h[13:], crc32.Checksum(raw, crcTable))
	crc := crc32.Update(0, crcTable, h[:17])
	crc = crc32.Update(crc, crcTable, frame[spillBlockHeader:])
	binary.LittleEndian.PutUint32(h[17:], crc)

	err := w.write(frame)
	if cap(frame) <= 2*spillBlockSize {
		*fp = frame
		spillFrames.Put(fp)
	}
	if err != nil {
		return err
	}
	w.blocks++
	return nil
}

func (w *Writer) write(p []byte) error {
	n, err := w.w.Write(p)
	w.bytes += int64(n)
	if err != nil {
		w.err = fmt.Errorf("writing spill %s: %w", w.path, err)
	}
	return w.err
}

// Rows returns the number of rows written so far.
func (w *Writer) Rows() int64 { return w.rows }

// Bytes returns the number of bytes handed to the filesystem so far: after a
// successful Close, the size of the file. Rows still in the block buffer are
// not counted until their block is written.
func (w *Writer) Bytes() int64 { return w.bytes }

// Close writes the last block and the trailer, closes the file and renames
// it to its final name. If anything failed, before or now, it removes the
// temporary file and returns the error instead. Calling Close again returns
// the first call's result.
func (w *Writer) Close() error {
	if w.closed {
		return w.err
	}
	if w.err != nil {
		w.Abort()
		return w.err
	}
	if w.nrows > 0 {
		if err := w.flush(w.buf, w.nrows); err != nil {
			w.Abort()
			return err
		}
	}
	var t [spillTrailer]byte
	t[0] = 'E'
	binary.LittleEndian.PutUint64(t[1:], uint64(w.rows))
	binary.LittleEndian.PutUint32(t[9:], w.blocks)
	binary.LittleEndian.PutUint32(t[13:], crc32.Checksum(t[:13], spillCRCTable()))
	if err := w.write(t[:]); err != nil {
		w.Abort()
		return err
	}
	w.closed = true
	w.buf = nil
	defer w.fs.Close()
	if err := w.w.Close(); err != nil {
		w.err = fmt.Errorf("closing spill %s: %w", w.path, err)
		w.removeTemp()
		return w.err
	}
	if w.tmp == "" {
		return nil
	}
	if err := filesystem.Rename(w.ctx, w.fs, w.tmp, w.path); err != nil {
		w.err = fmt.Errorf("renaming spill %s to %s: %w", w.tmp, w.path, err)
		w.removeTemp()
		return w.err
	}
	return nil
}

// Abort discards the file: it closes the writer and removes the temporary
// file. It returns nil after a successful Close (the file stays) and is
// safe to call more than once, so `defer w.Abort()` right after Create
// cleans up every path that does not reach Close.
func (w *Writer) Abort() error {
	if w.closed {
		return nil
	}
	w.closed = true
	w.buf = nil
	if w.err == nil {
		w.err = fmt.Errorf("writing spill %s: aborted", w.path)
	}
	w.w.Close()
	err := w.removeTemp()
	w.fs.Close()
	return err
}

func (w *Writer) removeTemp() error {
	if w.tmp == "" {
		return nil
	}
	rm, ok := w.fs.(filesystem.Remover)
	if !ok {
		return nil
	}
	if err := rm.Remove(w.ctx, w.tmp); err != nil {
		return fmt.Errorf("removing spill temporary %s: %w", w.tmp, err)
	}
	return nil
}

// ---------------------------------------------------------------------------
// Reader

// Reader reads the rows of one spill file in the order they were
// written. It holds one block at a time: about twice spillBlockSize, plus a
// 64 KiB read buffer. A Reader is not safe for concurrent use.
type Reader struct {
	path   string
	fs     filesystem.Interface
	rc     io.ReadCloser
	br     *bufio.Reader
	comp   []byte // the current block, compressed
	raw    []byte // the current block, decompressed: a view of rawBuf
	rawBuf []byte
	pos    int    // next row's offset in raw
	left   uint32 // rows of the block not yet returned
	rows   int64  // rows returned
	blocks uint32 // blocks read
	err    error  // sticky; io.EOF once the trailer is read
	closed bool
}

// Open opens the spill file at path and checks its magic. Plain paths
// are local files; other schemes need their filesystem registered.
func Open(ctx context.Context, path string) (*Reader, error) {
	fs, err := filesystem.New(ctx, path)
	if err != nil {
		return nil, fmt.Errorf("opening spill %s: %w", path, err)
	}
	rc, err := fs.OpenRead(ctx, path)
	if err != nil {
		fs.Close()
		return nil, fmt.Errorf("opening spill %s: %w", path, err)
	}
	r := &Reader{path: path, fs: fs, rc: rc, br: bufio.NewReaderSize(rc, 64<<10)}
	var magic [len(spillMagic)]byte
	if _, err := io.ReadFull(r.br, magic[:]); err != nil {
		r.Close()
		return nil, r.readErr("reading the header", err)
	}
	if string(magic[:]) != spillMagic {
		r.Close()
		return nil, fmt.Errorf("opening spill %s: %w: not a spill file (starts with %q)", path, ErrCorrupt, magic[:])
	}
	return r, nil
}

// readErr wraps an error from the file: an early end of file means the
// file was truncated.
func (r *Reader) readErr(what string, err error) error {
	if errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) {
		return fmt.Errorf("reading spill %s: %w: truncated while %s after %d rows in %d blocks: %w",
			r.path, ErrCorrupt, what, r.rows, r.blocks, io.ErrUnexpectedEOF)
	}
	return fmt.Errorf("reading spill %s: %s: %w", r.path, what, err)
}

func (r *Reader) corrupt(format string, args ...any) error {
	return fmt.Errorf("reading spill %s: %w: block %d (after %d rows): %s",
		r.path, ErrCorrupt, r.blocks, r.rows, fmt.Sprintf(format, args...))
}

// Next decodes the next row into row. It returns io.EOF after the last row,
// once the trailer has confirmed the file is complete; a truncated or
// corrupt file returns an error naming the file and wrapping
// ErrCorrupt. Errors are final. Next reuses row's slices and map as
// DecodeRow does: zero row before each call (*row = shards.Row{}) to keep
// the rows it returns.
func (r *Reader) Next(row *shards.Row) error {
	if r.err != nil {
		return r.err
	}
	if r.left == 0 {
		if err := r.nextBlock(); err != nil {
			r.err = err
			return err
		}
	}
	n, err := DecodeRow(r.raw[r.pos:], row)
	if err != nil {
		r.err = fmt.Errorf("reading spill %s: block %d, row %d: %w", r.path, r.blocks-1, r.rows, err)
		return r.err
	}
	r.pos += n
	r.left--
	r.rows++
	if r.left == 0 && r.pos != len(r.raw) {
		r.err = r.corrupt("%d bytes follow the block's last row", len(r.raw)-r.pos)
		return r.err
	}
	return nil
}

// nextBlock reads and checks the next block, or the trailer (io.EOF).
func (r *Reader) nextBlock() error {
	if r.closed {
		return fmt.Errorf("reading spill %s: reader is closed", r.path)
	}
	var h [spillBlockHeader]byte
	if _, err := io.ReadFull(r.br, h[:1]); err != nil {
		return r.readErr("looking for the trailer", err)
	}
	switch h[0] {
	case 'E':
		var t [spillTrailer]byte
		t[0] = 'E'
		if _, err := io.ReadFull(r.br, t[1:]); err != nil {
			return r.readErr("reading the trailer", err)
		}
		return r.trailer(t)
	case 'S':
	default:
		return r.corrupt("unknown frame kind %#x", h[0])
	}
	if _, err := io.ReadFull(r.br, h[1:]); err != nil {
		return r.readErr("reading a block header", err)
	}
	rows := binary.LittleEndian.Uint32(h[1:])
	rawLen := binary.LittleEndian.Uint32(h[5:])
	compLen := binary.LittleEndian.Uint32(h[9:])
	rawCRC := binary.LittleEndian.Uint32(h[13:])
	frameCRC := binary.LittleEndian.Uint32(h[17:])
	switch {
	case rawLen > spillMaxRaw:
		return r.corrupt("%d bytes uncompressed, more than the limit of %d", rawLen, spillMaxRaw)
	case int(compLen) > s2.MaxEncodedLen(int(rawLen)):
		return r.corrupt("%d bytes compressed cannot hold %d bytes", compLen, rawLen)
	case rows == 0 || rows > rawLen:
		return r.corrupt("%d rows cannot fit in %d bytes", rows, rawLen)
	}
	// Read the block in pieces of at most 1 MiB, so that a damaged length
	// costs memory only for bytes that are there.
	r.comp = r.comp[:0]
	for len(r.comp) < int(compLen) {
		n := min(int(compLen)-len(r.comp), 1<<20)
		r.comp = slices.Grow(r.comp, n)
		if _, err := io.ReadFull(r.br, r.comp[len(r.comp):len(r.comp)+n]); err != nil {
			return r.readErr("reading a block", err)
		}
		r.comp = r.comp[:len(r.comp)+n]
	}
	crcTable := spillCRCTable()
	got := crc32.Update(0, crcTable, h[:17])
	got = crc32.Update(got, crcTable, r.comp)
	if got != frameCRC {
		return r.corrupt("CRC-32C mismatch in the block's header or compressed bytes: %#08x, header says %#08x", got, frameCRC)
	}
	if need := int(rawLen) + spillDecodeSlack; cap(r.rawBuf) < need {
		r.rawBuf = make([]byte, 0, max(need, min(spillBlockSize+spillDecodeSlack, 2*cap(r.rawBuf))))
	}
	// The decoder is limited to the buffer's capacity, and to the frame's
	// declared size.
	raw := r.rawBuf[:0]
	if n, derr := s2.DecodedLen(r.comp); derr != nil || n != int(rawLen) {
		return r.corrupt("decompressing: S2 block of %d bytes, header says %d (%v)", n, rawLen, derr)
	}
	raw, err := s2.Decode(raw[:cap(raw)], r.comp)
	if err != nil {
		return r.corrupt("decompressing: %v", err)
	}
	if len(raw) != int(rawLen) {
		return r.corrupt("decompressed to %d bytes, header says %d", len(raw), rawLen)
	}
	if got := crc32.Checksum(raw, spillCRCTable()); got != rawCRC {
		return r.corrupt("CRC-32C mismatch in the decompressed block: %#08x, header says %#08x", got, rawCRC)
	}
	r.raw, r.pos, r.left = raw, 0, rows
	r.blocks++
	return nil
}

func (r *Reader) trailer(t [spillTrailer]byte) error {
	if got, want := crc32.Checksum(t[:13], spillCRCTable()), binary.LittleEndian.Uint32(t[13:]); got != want {
		return r.corrupt("trailer CRC-32C mismatch: %#08x, trailer says %#08x", got, want)
	}
	rows := binary.LittleEndian.Uint64(t[1:])
	blocks := binary.LittleEndian.Uint32(t[9:])
	if rows != uint64(r.rows) || blocks != r.blocks {
		return r.corrupt("trailer counts %d rows in %d blocks, the file holds %d in %d", rows, blocks, r.rows, r.blocks)
	}
	if _, err := r.br.ReadByte(); err != io.EOF {
		if err != nil {
			return r.readErr("checking the end of the file", err)
		}
		return r.corrupt("bytes follow the trailer")
	}
	r.raw, r.rawBuf, r.comp = nil, nil, nil
	return io.EOF
}

// Rows returns the number of rows Next has returned. Once Next has returned
// io.EOF it is the file's total, as the trailer records it (Next checks the
// two agree).
func (r *Reader) Rows() int64 { return r.rows }

// Close releases the file. It does not check that the file was read to the
// end.
func (r *Reader) Close() error {
	if r.closed {
		return nil
	}
	r.closed = true
	r.raw, r.rawBuf, r.comp = nil, nil, nil
	err := r.rc.Close()
	r.fs.Close()
	if err != nil {
		return fmt.Errorf("closing spill %s: %w", r.path, err)
	}
	return nil
}

// ReadFiles calls fn for every row of the spill files at paths, file by
// file in the order given. It stops at the first error: a file's, fn's
// (returned wrapped with the file's name, so errors.Is still finds it) or
// ctx's, checked between files and every 4096 rows.
//
// fn gets a fresh row each call, which it may keep. Loops that do not keep
// rows save allocations with Reader.Next and a single reused row.
func ReadFiles(ctx context.Context, paths []string, fn func(*shards.Row) error) error {
	for _, path := range paths {
		if err := ctx.Err(); err != nil {
			return err
		}
		if err := spillReadFile(ctx, path, fn); err != nil {
			return err
		}
	}
	return nil
}

func spillReadFile(ctx context.Context, path string, fn func(*shards.Row) error) error {
	r, err := Open(ctx, path)
	if err != nil {
		return err
	}
	defer r.Close()
	for i := 0; ; i++ {
		if i%4096 == 4095 {
			if err := ctx.Err(); err != nil {
				return err
			}
		}
		row := new(shards.Row)
		if err := r.Next(row); err != nil {
			if err == io.EOF {
				return r.Close()
			}
			return err
		}
		if err := fn(row); err != nil {
			return fmt.Errorf("reading spill %s: row %d: %w", path, r.Rows()-1, err)
		}
	}
}
