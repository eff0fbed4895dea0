package corpora

import (
	"bufio"
	"bytes"
	"compress/bzip2"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"unicode/utf8"

	"github.com/klauspost/compress/gzip"
	"github.com/klauspost/compress/zstd"
	"github.com/ulikunitz/xz"
)

// Compression is a container format detected from a file's first bytes.
type Compression int

// The compressions Open detects.
const (
	None Compression = iota
	Gzip
	Bzip2
	Xz
	Zstd
)

func (c Compression) String() string {
	switch c {
	case None:
		return "none"
	case Gzip:
		return "gzip"
	case Bzip2:
		return "bzip2"
	case Xz:
		return "xz"
	case Zstd:
		return "zstd"
	}
	return fmt.Sprintf("Compression(%d)", int(c))
}

// zstdMaxWindow is the largest zstd window accepted. Pushshift dumps are
// compressed with --long=31, a 2 GiB window, which most decoders refuse by
// default.
const zstdMaxWindow = 1 << 31

// Limits protect readers from hostile or broken input. The zero value means
// the defaults.
type Limits struct {
	// MaxLineBytes is the longest line (or quoted record) accepted; longer
	// ones are rejected with ReasonLineTooLong and skipped. Default 1 MiB.
	MaxLineBytes int
	// MaxDecompressedBytes stops reading a file whose decompressed size
	// passes it, with ErrTooLarge. Default 4 TiB.
	MaxDecompressedBytes int64
	// MaxRejectBytes cuts the raw record kept in a ParseError, and so in a
	// rejects file: the first MaxRejectBytes bytes of a rejected record are
	// kept, a line over MaxLineBytes included. Default 64 KiB.
	MaxRejectBytes int
}

// The defaults of Limits.
const (
	DefaultMaxLineBytes         = 1 << 20
	DefaultMaxDecompressedBytes = 4 << 40
	DefaultMaxRejectBytes       = 64 << 10
)

func (l Limits) withDefaults() Limits {
	if l.MaxLineBytes <= 0 {
		l.MaxLineBytes = DefaultMaxLineBytes
	}
	if l.MaxDecompressedBytes <= 0 {
		l.MaxDecompressedBytes = DefaultMaxDecompressedBytes
	}
	if l.MaxRejectBytes <= 0 {
		l.MaxRejectBytes = DefaultMaxRejectBytes
	}
	return l
}

// Input is a decompressed view of one file. Its Read reports a truncated or
// corrupt archive as a *FileError wrapping ErrTruncated or naming the
// codec's complaint, and stops at Limits.MaxDecompressedBytes.
type Input struct {
	// Name is the file's path as given; every error and Source uses it.
	Name string
	// Compression is what the first bytes said.
	Compression Compression

	dec     io.Reader
	latin1  *latin1Reader // set by SetEncoding("latin1")
	closers []io.Closer
	n       int64
	max     int64
	err     error
}

// Open opens a file for reading, detecting its compression from its bytes.
func Open(path string, lim Limits) (*Input, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	in, err := NewInput(path, f, lim)
	if err != nil {
		f.Close()
		return nil, err
	}
	in.closers = append(in.closers, f)
	return in, nil
}

// NewInput wraps r, detecting its compression from the first bytes. name is
// used in errors. Closing the Input does not close r.
func NewInput(name string, r io.Reader, lim Limits) (*Input, error) {
	lim = lim.withDefaults()
	br := bufio.NewReaderSize(r, 256<<10)
	magic, err := br.Peek(6)
	if err != nil && err != io.EOF {
		return nil, &FileError{File: name, Err: fmt.Errorf("reading header: %w", err)}
	}
	in := &Input{Name: name, max: lim.MaxDecompressedBytes, Compression: detect(magic)}
	switch in.Compression {
	case None:
		in.dec = br
	case Gzip:
		zr, err := gzip.NewReader(br)
		if err != nil {
			return nil, in.codecErr(err)
		}
		in.dec = zr
		in.closers = append(in.closers, zr)
	case Bzip2:
		in.dec = bzip2.NewReader(br)
	case Xz:
		xr, err := xz.NewReader(br)
		if err != nil {
			return nil, in.codecErr(err)
		}
		in.dec = xr
	case Zstd:
		zr, err := zstd.NewReader(br, zstd.WithDecoderMaxWindow(zstdMaxWindow), zstd.WithDecoderConcurrency(2))
		if err != nil {
			return nil, in.codecErr(err)
		}
		in.dec = zr
		in.closers = append(in.closers, closerFunc(func() error { zr.Close(); return nil }))
	}
	return in, nil
}

type closerFunc func() error

func (f closerFunc) Close() error { return f() }

func detect(magic []byte) Compression {
	switch {
	case bytes.HasPrefix(magic, []byte{0x1f, 0x8b}):
		return Gzip
	case bytes.HasPrefix(magic, []byte("BZh")):
		return Bzip2
	case bytes.HasPrefix(magic, []byte{0xfd, '7', 'z', 'X', 'Z', 0x00}):
		return Xz
	case bytes.HasPrefix(magic, []byte{0x28, 0xb5, 0x2f, 0xfd}):
		return Zstd
	}
	return None
}

// Encodings that SetEncoding accepts.
const (
	EncodingUTF8   = "utf-8"
	EncodingLatin1 = "latin1"
)

// SetEncoding declares the text encoding of the file: "utf-8" (the default)
// or "latin1" (ISO-8859-1, which old corpora such as Moses's sample tables
// use), converted to UTF-8 as it is read. Call it before the first Read.
// Offsets then count bytes of the converted text.
func (in *Input) SetEncoding(enc string) error {
	switch strings.ToLower(enc) {
	case "", EncodingUTF8, "utf8":
		in.latin1 = nil
	case EncodingLatin1, "iso-8859-1", "latin-1":
		in.latin1 = &latin1Reader{r: readerFunc(in.read)}
	default:
		return fmt.Errorf("unknown encoding %q (known: utf-8, latin1)", enc)
	}
	return nil
}

type readerFunc func([]byte) (int, error)

func (f readerFunc) Read(p []byte) (int, error) { return f(p) }

// Read reads decompressed bytes, converted to UTF-8 when SetEncoding said
// the file is Latin-1.
func (in *Input) Read(p []byte) (int, error) {
	if in.latin1 != nil {
		return in.latin1.Read(p)
	}
	return in.read(p)
}

func (in *Input) read(p []byte) (int, error) {
	if in.err != nil {
		return 0, in.err
	}
	n, err := in.dec.Read(p)
	in.n += int64(n)
	if in.n > in.max {
		in.err = &FileError{File: in.Name, Err: fmt.Errorf("%w: more than %d bytes", ErrTooLarge, in.max)}
		return 0, in.err
	}
	if err != nil && err != io.EOF {
		err = in.codecErr(err)
		in.err = err
	}
	return n, err
}

// latin1Reader converts ISO-8859-1 to UTF-8: each byte is the code point
// of the same value, so a byte of 0x80 or more becomes two bytes.
type latin1Reader struct {
	r       io.Reader
	buf     []byte
	out     []byte
	pending []byte
}

func (l *latin1Reader) Read(p []byte) (int, error) {
	if len(l.pending) > 0 {
		n := copy(p, l.pending)
		l.pending = l.pending[n:]
		return n, nil
	}
	want := max(len(p)/2, 1)
	if cap(l.buf) < want {
		l.buf = make([]byte, want)
	}
	n, err := l.r.Read(l.buf[:want])
	out := l.out[:0]
	for _, c := range l.buf[:n] {
		if c < utf8.RuneSelf {
			out = append(out, c)
		} else {
			out = utf8.AppendRune(out, rune(c))
		}
	}
	l.out = out
	k := copy(p, out)
	if k < len(out) { // only when len(p) == 1
		l.pending = append(l.pending[:0], out[k:]...)
		if err == io.EOF {
			err = nil
		}
	}
	return k, err
}

// BytesRead is the number of decompressed bytes read so far.
func (in *Input) BytesRead() int64 { return in.n }

// Close releases the decoder and the file Open opened.
func (in *Input) Close() error {
	var errs []error
	for i := len(in.closers) - 1; i >= 0; i-- {
		errs = append(errs, in.closers[i].Close())
	}
	in.closers = nil
	return errors.Join(errs...)
}

// codecErr turns a decompressor's complaint into a FileError, mapping an
// early end of stream to ErrTruncated.
func (in *Input) codecErr(err error) error {
	var fe *FileError
	if errors.As(err, &fe) {
		return err
	}
	if in.Compression != None && (errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, io.EOF)) {
		return &FileError{File: in.Name, Err: fmt.Errorf("%w: %s stream ends early", ErrTruncated, in.Compression)}
	}
	if in.Compression == None {
		return &FileError{File: in.Name, Err: err}
	}
	return &FileError{File: in.Name, Err: fmt.Errorf("corrupt %s stream: %w", in.Compression, err)}
}
