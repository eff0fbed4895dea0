package text

import (
	"encoding/binary"
	"fmt"
	"hash"
	"hash/fnv"
	"math"
	"strings"
)

// SplitRatios are the shares of train, dev and test; they sum to 1.
type SplitRatios struct {
	Train, Dev, Test float64
}

// DefaultSplitRatios returns 90% train, 5% dev, 5% test.
func DefaultSplitRatios() SplitRatios { return SplitRatios{Train: 0.90, Dev: 0.05, Test: 0.05} }

// Validate checks the ratios are non-negative and sum to 1.
func (r SplitRatios) Validate() error {
	if r.Train < 0 || r.Dev < 0 || r.Test < 0 {
		return fmt.Errorf("split ratios must not be negative: %g/%g/%g", r.Train, r.Dev, r.Test)
	}
	if s := r.Train + r.Dev + r.Test; math.Abs(s-1) > 1e-9 {
		return fmt.Errorf("split ratios must sum to 1, got %g (%g/%g/%g)", s, r.Train, r.Dev, r.Test)
	}
	return nil
}

// ParseSplitRatios reads "0.9,0.05,0.05" (train, dev, test).
func ParseSplitRatios(s string) (SplitRatios, error) {
	var r SplitRatios
	if _, err := fmt.Sscanf(strings.ReplaceAll(s, " ", ""), "%g,%g,%g", &r.Train, &r.Dev, &r.Test); err != nil {
		return r, fmt.Errorf("split ratios %q: want train,dev,test such as 0.9,0.05,0.05", s)
	}
	return r, r.Validate()
}

// unitHash maps a seed and a key to a number in [0, 1), the same on every
// machine and in every run.
func unitHash(seed uint64, key string) float64 {
	return float64(Hash64(seed, key)>>11) / (1 << 53)
}

// Hash64 is FNV-1a over the seed's bytes and the key, finished with
// MurmurHash3's 64-bit mixer (Mix64): FNV alone changes only its low bits
// when the last byte changes, so keys with a long common prefix (Reddit
// thread ids) would get nearly the same high bits and land in the same
// split. It keys the splits, the spill buckets and the token budget's
// cells.
func Hash64(seed uint64, key string) uint64 { return hash64(seed, key) }

// Hash64Bytes is Hash64 of a key held in bytes.
func Hash64Bytes(seed uint64, key []byte) uint64 { return hash64(seed, key) }

// hash64 is Hash64 written out: hash/fnv's New64a, behind an interface,
// escapes to the heap and so costs an allocation per key on the hot path.
func hash64[K string | []byte](seed uint64, key K) uint64 {
	const offset, prime = 14695981039346656037, 1099511628211
	h := uint64(offset)
	for i := range 8 {
		h ^= (seed >> (8 * i)) & 0xff
		h *= prime
	}
	for i := 0; i < len(key); i++ {
		h ^= uint64(key[i])
		h *= prime
	}
	return Mix64(h)
}

// SeededFNV is a 64-bit FNV-1a hash that has written the seed's
// little-endian bytes: write the key's bytes, then finish Sum64 with
// Mix64, as Hash64 does.
func SeededFNV(seed uint64) hash.Hash64 {
	h := fnv.New64a()
	var b [8]byte
	binary.LittleEndian.PutUint64(b[:], seed)
	h.Write(b[:])
	return h
}

// Mix64 is MurmurHash3's 64-bit finaliser, which spreads every input bit
// over every output bit.
func Mix64(k uint64) uint64 {
	k ^= k >> 33
	k *= 0xff51afd7ed558ccd
	k ^= k >> 33
	k *= 0xc4ceb9fe1a85ec53
	k ^= k >> 33
	return k
}

// AssignSplit chooses the split of a record from a hash of its group, so
// that every record of a group (a Reddit thread, a Quora question) lands in
// the same split, and the choice is the same in every run for a seed.
func AssignSplit(group string, seed uint64, r SplitRatios) string {
	u := unitHash(seed, group)
	switch {
	case u < r.Train:
		return "train"
	case u < r.Train+r.Dev:
		return "dev"
	}
	return "test"
}
