package synth

import (
	"fmt"
	"io"
	"runtime"
	"strings"

	"github.com/dsnet/compress/bzip2"
	"github.com/klauspost/compress/gzip"
	"github.com/klauspost/compress/zstd"
)

// Codec is a compression for generated files: one that corpora.Open
// detects and reads.
type Codec string

// The codecs NewCompressor writes.
const (
	CodecNone  Codec = "none"
	CodecZstd  Codec = "zstd"
	CodecGzip  Codec = "gz"
	CodecBzip2 Codec = "bz2"
)

// ParseCodec reads a codec name: zstd (or zst), gz (gzip), bz2 (bzip2),
// none.
func ParseCodec(s string) (Codec, error) {
	switch strings.ToLower(s) {
	case "zstd", "zst":
		return CodecZstd, nil
	case "gz", "gzip":
		return CodecGzip, nil
	case "bz2", "bzip2":
		return CodecBzip2, nil
	case "none", "":
		return CodecNone, nil
	}
	return "", fmt.Errorf("unknown compression %q (known: zstd, gz, bz2, none)", s)
}

// CodecOf names the codec a file name's suffix says (.zst, .zstd, .gz,
// .bz2), or CodecNone.
func CodecOf(path string) Codec {
	switch {
	case strings.HasSuffix(path, ".zst"), strings.HasSuffix(path, ".zstd"):
		return CodecZstd
	case strings.HasSuffix(path, ".gz"):
		return CodecGzip
	case strings.HasSuffix(path, ".bz2"):
		return CodecBzip2
	}
	return CodecNone
}

// Ext is the file name suffix of the codec (".zst"), empty for none.
func (c Codec) Ext() string {
	switch c {
	case CodecZstd:
		return ".zst"
	case CodecGzip:
		return ".gz"
	case CodecBzip2:
		return ".bz2"
	}
	return ""
}

// NewCompressor compresses what is written to it into w, with the codec's
// default level (zstd on all cores). Close flushes the stream; it does not
// close w.
func NewCompressor(w io.Writer, c Codec) (io.WriteCloser, error) {
	switch c {
	case CodecZstd:
		return zstd.NewWriter(w, zstd.WithEncoderConcurrency(runtime.GOMAXPROCS(0)))
	case CodecGzip:
		return gzip.NewWriterLevel(w, gzip.DefaultCompression)
	case CodecBzip2:
		return bzip2.NewWriter(w, &bzip2.WriterConfig{Level: bzip2.DefaultCompression})
	case CodecNone, "":
		return nopCloser{w}, nil
	}
	return nil, fmt.Errorf("unknown compression %q (known: zstd, gz, bz2, none)", c)
}

type nopCloser struct{ io.Writer }

func (nopCloser) Close() error { return nil }
