package spill

// Spill files: the bounded-memory stand-in for a GroupByKey.
//
// Prism holds every GroupByKey's data in memory, so the extraction scatters
// rows into bucket files by a hash of a key, and later DoFns read one bucket
// at a time. The row codec is in codec.go (AppendRow, DecodeRow), the file
// writer in writer.go (Writer) and the reader in reader.go (Reader,
// ReadFiles); this file holds the file layout they share.
//
// File layout (Writer). Fixed-width integers are little-endian.
//
//	file    = magic block* trailer
//	magic   = "PSPILL1\n"
//	block   = kind rows:u32 rawLen:u32 compLen:u32 rawCRC:u32 frameCRC:u32 data[compLen]
//	kind    = 'S' (data is an S2 block) | 'R' (data is the rows as they are)
//	trailer = 'E' rows:u64 blocks:u32 crc:u32
//
// A block holds rows whole encoded rows, rawLen bytes once decompressed (at
// most spillBlockSize, 32 KiB, unless it is a single larger row),
// compressed as one S2 block ('S', the blocks of a file on a remote
// filesystem) or stored ('R', those of a local file: compLen equals rawLen
// and data is the raw bytes). The checksums are CRC-32C (Castagnoli):
// rawCRC of the rawLen uncompressed bytes, frameCRC of the block's first
// 17 bytes (kind to rawCRC) followed by the compressed bytes. A reader checks frameCRC before
// decompressing, so a damaged header or frame is reported as such, and
// rawCRC after, end to end. The trailer's crc is the CRC-32C of
// its first 13 bytes; rows and blocks are the file's totals, and nothing
// may follow it. A reader therefore detects any changed byte, a truncated
// file (a short block or trailer) and a file cut at a block boundary (no
// trailer) alike.

import (
	"hash/crc32"

	_ "github.com/apache/beam/sdks/v2/go/pkg/beam/io/filesystem/local" // plain paths
)

const (
	// spillMagic opens every spill file; its last byte is a newline so that
	// a file opened in a text tool shows what it is.
	spillMagic = "PSPILL1\n"
	// spillBlockSize is the uncompressed size at which a writer compresses
	// and writes its block. A writer's buffer holds one block, so this is
	// most of the memory an open Writer holds, and a pipeline holds
	// one writer per bucket in each scattering stage: 32 KiB keeps 2,000
	// buckets near 70 MB a stage. Against 8 KiB blocks, it writes 6% and
	// reads 12% faster, with 9% fewer bytes (fewer blocks, each compressed
	// better and checked once); on Reddit pair rows S2 reaches 1.74:1 with
	// 128 KiB blocks, at the same speed (BenchmarkSpillWrite).
	spillBlockSize = 32 << 10
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
