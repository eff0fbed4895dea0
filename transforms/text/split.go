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
func Hash64(seed uint64, key string) uint64 {
	h := SeededFNV(seed)
	h.Write([]byte(key))
	return Mix64(h.Sum64())
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

// OfficialSplit is the split an evaluation set was released with: STS
// sets are test sets except the 2012 training sets; STS Benchmark and SICK
// name theirs (train, dev, test; train, trial, test); SNLI, MSRP, SST,
// SemEval CQA, TrecQA and WikiQA take the split their dataset's name holds
// (train, dev or test); MR and SCWS, which have none, are test sets. ok is
// false for corpora without official splits.
func OfficialSplit(corpus, dataset string) (split string, ok bool) {
	switch corpus {
	case "sts":
		if strings.Contains(strings.SplitN(dataset, "/", 2)[0], "train") {
			return "train", true
		}
		return "test", true
	case "stsb", "sick":
		name := dataset[strings.LastIndexByte(dataset, '/')+1:]
		switch name {
		case "train", "dev", "test", "trial":
			return name, true
		}
		return "test", true
	case "snli", "msrp", "sst", "semeval-cqa", "trecqa", "wikiqa":
		// The split the dataset's name holds (snli/dev, msrp/train,
		// semeval-cqa/train-part2, trecqa/clean-dev, multinli/dev_matched).
		return splitInName(dataset[strings.LastIndexByte(dataset, '/')+1:]), true
	case "mr", "scws":
		// No split: evaluated whole (MR by 10-fold cross-validation).
		return "test", true
	}
	return "", false
}

// splitInName is the split a dataset's name holds: train, dev (dev,
// trial, valid) or test, which is also the default.
func splitInName(name string) string {
	name = strings.ToLower(name)
	switch {
	case strings.Contains(name, "train"):
		return "train"
	case strings.Contains(name, "dev"), strings.Contains(name, "trial"), strings.Contains(name, "valid"):
		return "dev"
	}
	return "test"
}

// SingleText says whether a corpus's records are single texts (B empty):
// the length rule then checks A alone (SST, MR).
func SingleText(corpus string) bool { return corpus == "sst" || corpus == "mr" }
