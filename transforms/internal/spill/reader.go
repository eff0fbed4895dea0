package spill

import (
	"bufio"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"slices"

	"github.com/apache/beam/sdks/v2/go/pkg/beam/io/filesystem"
	"github.com/klauspost/compress/s2"

	"github.com/parastream/parastream/shards"
)

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
	key    Key  // the key of the row Next returned last
	hasKey bool // whether it had one
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
	n, key, hasKey, err := DecodeRowKeyed(r.raw[r.pos:], row)
	if err != nil {
		r.err = fmt.Errorf("reading spill %s: block %d, row %d: %w", r.path, r.blocks-1, r.rows, err)
		return r.err
	}
	r.pos += n
	r.key, r.hasKey = key, hasKey
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
	case 'S', 'R':
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
	case h[0] == 'S' && int(compLen) > s2.MaxEncodedLen(int(rawLen)):
		return r.corrupt("%d bytes compressed cannot hold %d bytes", compLen, rawLen)
	case h[0] == 'R' && compLen != rawLen:
		return r.corrupt("a stored block of %d bytes, header says %d", compLen, rawLen)
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
	if h[0] == 'R' {
		// Stored: the rows are decoded into strings of their own
		// (DecodeRow), so the bytes are read where they are and the buffer
		// is reused for the next block. rawCRC is checked as for a
		// compressed block, though the frame CRC has covered these bytes.
		if got := crc32.Checksum(r.comp, crcTable); got != rawCRC {
			return r.corrupt("CRC-32C mismatch in the stored block: %#08x, header says %#08x", got, rawCRC)
		}
		r.raw, r.pos, r.left = r.comp, 0, rows
		r.blocks++
		return nil
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
	return readFiles(ctx, paths, false, func(r *shards.Row, _ *Key) error { return fn(r) })
}

// Key returns the key of the row Next returned last, with ok false for a
// row written without one (Writer.Write).
func (r *Reader) Key() (key Key, ok bool) { return r.key, r.hasKey }

// CopyFiles is ReadFiles for loops that keep copies of the rows, not the
// pointers: fn gets the same *shards.Row each call, zeroed and decoded
// afresh, so that a copy (*row) it keeps shares nothing with the next. It
// saves the allocation of a row a call.
func CopyFiles(ctx context.Context, paths []string, fn func(*shards.Row) error) error {
	return readFiles(ctx, paths, true, func(r *shards.Row, _ *Key) error { return fn(r) })
}

// CopyFilesKeyed is CopyFiles that also hands fn each row's key (written
// by Writer.WriteKeyed), nil for a row written without one. The key, like
// the row, is valid during the call: copy it to keep it.
func CopyFilesKeyed(ctx context.Context, paths []string, fn func(*shards.Row, *Key) error) error {
	return readFiles(ctx, paths, true, fn)
}

func readFiles(ctx context.Context, paths []string, reuse bool, fn func(*shards.Row, *Key) error) error {
	for _, path := range paths {
		if err := ctx.Err(); err != nil {
			return err
		}
		if err := spillReadFile(ctx, path, reuse, fn); err != nil {
			return err
		}
	}
	return nil
}

func spillReadFile(ctx context.Context, path string, reuse bool, fn func(*shards.Row, *Key) error) error {
	r, err := Open(ctx, path)
	if err != nil {
		return err
	}
	defer r.Close()
	row := new(shards.Row)
	// One Key for the file's rows: fn gets its address, valid during the
	// call, and a new one a row would be an allocation a row.
	var held Key
	var key *Key
	for i := 0; ; i++ {
		if i%4096 == 4095 {
			if err := ctx.Err(); err != nil {
				return err
			}
		}
		if reuse {
			*row = shards.Row{}
		} else {
			row = new(shards.Row)
		}
		if err := r.Next(row); err != nil {
			if err == io.EOF {
				return r.Close()
			}
			return err
		}
		key = nil
		if k, ok := r.Key(); ok {
			held = k
			key = &held
		}
		if err := fn(row, key); err != nil {
			return fmt.Errorf("reading spill %s: row %d: %w", path, r.Rows()-1, err)
		}
	}
}
