package compute

import (
	"errors"
	"fmt"
	"math/rand/v2"
)

// Batch is a prepared mini-batch: pair i is (A[i], B[i]) (for the softmax
// loss, input A[i] and response B[i]), padded to Len, with every random draw
// of the step already made so that all backends compute the same loss.
//
// Rows: the batch's 2n sentences are numbered 0..n-1 for the A sides and
// n..2n-1 for the B sides; row r's partner is r±n.
type Batch struct {
	Len    int       // padded length: a multiple of Config.BucketWidth, at least every len(A[i]), len(B[i])
	A, B   [][]int32 // token ids, after truncation and scrambling; none empty
	Labels []float32 // gold scores (loss "sim"), NLI classes (NLI); nil otherwise
	// NLI: the batch is of an NLI dataset and trains the NLI head
	// (Config.NLIHidden; nli.go) instead of Config.Loss: Labels hold each
	// pair's class (0 entailment, 1 neutral, 2 contradiction), and no
	// negatives are drawn.
	NLI bool
	// CtxA and CtxB are the sides' topic vectors (Config.Context topics:
	// Config.Topics values each); nil otherwise.
	CtxA, CtxB [][]float32

	// DropA and DropB multiply the word embedding units, laid out
	// [pair][t][unit] (n·Len·Dim); 0 drops a unit (dropout) or a whole word
	// (word dropout), 1/(1-p) keeps a unit under dropout. nil: no dropout.
	DropA, DropB []float32
	// NegRand is, for each of the 2n rows, a random row outside its pair
	// (margin loss with rand or mix negatives).
	NegRand []int32
	// NegUseMax says, for each row, whether the mix strategy took the max
	// negative (true) or NegRand (false).
	NegUseMax []bool
	// HingeNegB[i] are k pairs j≠i whose B side is a negative of A[i];
	// HingeNegA[i] are k pairs j≠i whose A side is a negative of B[i].
	HingeNegA, HingeNegB [][]int32
	// Neg are the hard negatives of the mnrl loss: Neg[i], when the batch
	// has them, is a text that is not a paraphrase of A[i] (a labelled
	// non-paraphrase of its group), a candidate of every anchor. nil: the
	// in-batch negatives only. A batch has one for every pair or none.
	Neg [][]int32
}

// N is the number of pairs.
func (b *Batch) N() int { return len(b.A) }

// ErrEmptySentence is returned for a pair with an empty side.
var ErrEmptySentence = errors.New("empty sentence")

// BucketLen is the padded length for a longest sentence of n tokens.
func BucketLen(n, width int) int {
	if n < 1 {
		n = 1
	}
	return (n + width - 1) / width * width
}

// NewBatch prepares pairs (a[i], b[i]) for one step of cfg: it truncates to
// cfg.MaxLen, scrambles pairs, draws dropout masks and negatives from rng,
// in that order (scrambling comes before negatives, as in Wieting & Gimpel
// 2017 §4.2). The ids are copied. labels is needed for the sim loss.
func NewBatch(cfg Config, a, b [][]int32, labels []float32, rng *rand.Rand) (*Batch, error) {
	return NewContextBatch(cfg, Pairs{A: a, B: b, Labels: labels}, rng)
}

// Pairs are the input of one step: the pairs (A[i], B[i]), the sim loss's
// labels and the sides' topic vectors (Config.Context topics).
type Pairs struct {
	A, B       [][]int32
	Labels     []float32
	CtxA, CtxB [][]float32
	// NLI makes an NLI batch (Batch.NLI): Labels are the classes.
	NLI bool
	// Neg are hard negatives (Batch.Neg), one a pair, or nil.
	Neg [][]int32
}

// NewContextBatch is NewBatch with the sides' topic vectors (Config.Context
// topics); each is copied, and a missing one (a text featurize found no
// known word in) is zeros.
func NewContextBatch(cfg Config, p Pairs, rng *rand.Rand) (*Batch, error) {
	a, b, labels, ctxA, ctxB := p.A, p.B, p.Labels, p.CtxA, p.CtxB
	n := len(a)
	if n != len(b) {
		return nil, fmt.Errorf("batch: %d A sides, %d B sides", len(a), len(b))
	}
	if n < 2 {
		return nil, fmt.Errorf("batch: %d pairs; in-batch negatives need at least 2", n)
	}
	if p.NLI {
		if err := checkNLILabels(cfg, labels, n); err != nil {
			return nil, err
		}
	} else if cfg.Loss == LossSim && len(labels) != n {
		return nil, fmt.Errorf("batch: loss sim needs %d labels, got %d", n, len(labels))
	}
	if cfg.Context == ContextTopics && (len(ctxA) != n || len(ctxB) != n) {
		return nil, fmt.Errorf("batch: context topics needs %d topic vectors per side, got %d and %d", n, len(ctxA), len(ctxB))
	}
	if !p.NLI && cfg.Loss == LossHinge && cfg.HingeK >= n {
		return nil, fmt.Errorf("batch: %d pairs cannot give %d hinge negatives each", n, cfg.HingeK)
	}
	bt := &Batch{A: make([][]int32, n), B: make([][]int32, n), NLI: p.NLI}
	longest := 0
	for i := range n {
		for side, src := range [][]int32{a[i], b[i]} {
			if len(src) == 0 {
				return nil, fmt.Errorf("batch: pair %d side %c: %w", i, "AB"[side], ErrEmptySentence)
			}
			if len(src) > cfg.MaxLen {
				src = src[:cfg.MaxLen]
			}
			for _, id := range src {
				if id < 0 || int(id) >= cfg.Vocab {
					return nil, fmt.Errorf("batch: pair %d side %c: token id %d outside the vocabulary [0, %d)", i, "AB"[side], id, cfg.Vocab)
				}
			}
			longest = max(longest, len(src))
			cp := append([]int32(nil), src...)
			if side == 0 {
				bt.A[i] = cp
			} else {
				bt.B[i] = cp
			}
		}
	}
	if p.Neg != nil {
		if cfg.Loss != LossMNRL || p.NLI || len(p.Neg) != n {
			return nil, fmt.Errorf("batch: %d hard negatives for %d pairs of loss %s: the mnrl loss takes one a pair", len(p.Neg), n, cfg.Loss)
		}
		bt.Neg = make([][]int32, n)
		for i, src := range p.Neg {
			if len(src) == 0 {
				return nil, fmt.Errorf("batch: pair %d hard negative: %w", i, ErrEmptySentence)
			}
			src = src[:min(len(src), cfg.MaxLen)]
			for _, id := range src {
				if id < 0 || int(id) >= cfg.Vocab {
					return nil, fmt.Errorf("batch: pair %d hard negative: token id %d outside the vocabulary [0, %d)", i, id, cfg.Vocab)
				}
			}
			longest = max(longest, len(src))
			bt.Neg[i] = append([]int32(nil), src...)
		}
	}
	bt.Len = BucketLen(longest, cfg.BucketWidth)
	if cfg.Context == ContextTopics {
		bt.CtxA, bt.CtxB = copyContexts(ctxA, cfg.Topics), copyContexts(ctxB, cfg.Topics)
		for i := range n {
			if bt.CtxA[i] == nil || bt.CtxB[i] == nil {
				return nil, fmt.Errorf("batch: pair %d: a topic vector of %d values, want %d (featurized with another topic model?)", i, max(len(ctxA[i]), len(ctxB[i])), cfg.Topics)
			}
		}
	}
	if labels != nil {
		bt.Labels = append([]float32(nil), labels...)
	}
	if cfg.Scramble > 0 {
		for i := range n {
			if rng.Float64() < cfg.Scramble {
				rng.Shuffle(len(bt.A[i]), func(x, y int) { bt.A[i][x], bt.A[i][y] = bt.A[i][y], bt.A[i][x] })
				rng.Shuffle(len(bt.B[i]), func(x, y int) { bt.B[i][x], bt.B[i][y] = bt.B[i][y], bt.B[i][x] })
			}
		}
	}
	if cfg.Dropout > 0 || cfg.WordDropout > 0 {
		bt.DropA = dropMask(cfg, bt.A, bt.Len, rng)
		bt.DropB = dropMask(cfg, bt.B, bt.Len, rng)
	}
	loss := cfg.Loss
	if p.NLI {
		loss = "" // the head's cross-entropy draws nothing
	}
	switch loss {
	case LossMargin:
		if cfg.Negatives != NegMax {
			bt.NegRand = make([]int32, 2*n)
			bt.NegUseMax = make([]bool, 2*n)
			for r := range 2 * n {
				// Any row but r and its partner: 2n-2 choices.
				c := rng.IntN(2*n - 2)
				lo, hi := min(r%n, r%n+n), max(r%n, r%n+n)
				if c >= lo {
					c++
				}
				if c >= hi {
					c++
				}
				bt.NegRand[r] = int32(c)
				bt.NegUseMax[r] = cfg.Negatives == NegMix && rng.IntN(2) == 0
			}
		}
	case LossHinge:
		bt.HingeNegA = drawOthers(n, cfg.HingeK, rng)
		bt.HingeNegB = drawOthers(n, cfg.HingeK, rng)
	}
	return bt, nil
}

// copyContexts copies topic vectors of k values; an empty one is zeros, one
// of another size is nil.
func copyContexts(vs [][]float32, k int) [][]float32 {
	out := make([][]float32, len(vs))
	for i, v := range vs {
		switch len(v) {
		case 0:
			out[i] = make([]float32, k)
		case k:
			out[i] = append([]float32(nil), v...)
		}
	}
	return out
}

// dropMask draws the unit multipliers for one side.
func dropMask(cfg Config, seqs [][]int32, T int, rng *rand.Rand) []float32 {
	d := cfg.Dim
	m := make([]float32, len(seqs)*T*d)
	keep := float32(1)
	if cfg.Dropout > 0 {
		keep = float32(1 / (1 - cfg.Dropout))
	}
	for i, s := range seqs {
		for t := range s {
			row := m[(i*T+t)*d : (i*T+t+1)*d]
			if cfg.WordDropout > 0 && rng.Float64() < cfg.WordDropout {
				continue
			}
			for u := range row {
				if cfg.Dropout == 0 || rng.Float64() >= cfg.Dropout {
					row[u] = keep
				}
			}
		}
	}
	return m
}

// drawOthers draws, for each of n pairs, k distinct other pairs.
func drawOthers(n, k int, rng *rand.Rand) [][]int32 {
	out := make([][]int32, n)
	for i := range n {
		perm := rng.Perm(n - 1)[:k]
		out[i] = make([]int32, k)
		for j, p := range perm {
			if p >= i {
				p++
			}
			out[i][j] = int32(p)
		}
	}
	return out
}

// Check reports a batch that does not fit cfg: sequences longer than Len,
// masks or negatives of the wrong size.
func (b *Batch) Check(cfg Config) error {
	n := b.N()
	if n < 2 || len(b.B) != n {
		return fmt.Errorf("batch: %d A sides and %d B sides; need equal counts of at least 2", n, len(b.B))
	}
	for i := range n {
		if len(b.A[i]) == 0 || len(b.B[i]) == 0 {
			return fmt.Errorf("batch: pair %d: %w", i, ErrEmptySentence)
		}
		if len(b.A[i]) > b.Len || len(b.B[i]) > b.Len {
			return fmt.Errorf("batch: pair %d longer than the padded length %d", i, b.Len)
		}
	}
	if cfg.Context == ContextTopics {
		if len(b.CtxA) != n || len(b.CtxB) != n {
			return fmt.Errorf("batch: context topics needs %d topic vectors per side", n)
		}
		for i := range n {
			if len(b.CtxA[i]) != cfg.Topics || len(b.CtxB[i]) != cfg.Topics {
				return fmt.Errorf("batch: pair %d: topic vectors of %d and %d values, want %d", i, len(b.CtxA[i]), len(b.CtxB[i]), cfg.Topics)
			}
		}
	}
	if b.Neg != nil {
		if cfg.Loss != LossMNRL || len(b.Neg) != n {
			return fmt.Errorf("batch: %d hard negatives for %d pairs of loss %s: the mnrl loss takes one a pair", len(b.Neg), n, cfg.Loss)
		}
		if cfg.Context != "" {
			return errors.New("batch: hard negatives with a topic context: train one or the other")
		}
		for i, s := range b.Neg {
			if len(s) == 0 || len(s) > b.Len {
				return fmt.Errorf("batch: pair %d: a hard negative of %d tokens, padded length %d", i, len(s), b.Len)
			}
		}
	}
	if b.DropA != nil && (len(b.DropA) != n*b.Len*cfg.Dim || len(b.DropB) != len(b.DropA)) {
		return fmt.Errorf("batch: dropout masks of %d and %d values, want %d", len(b.DropA), len(b.DropB), n*b.Len*cfg.Dim)
	}
	if b.NLI {
		return checkNLILabels(cfg, b.Labels, n)
	}
	switch cfg.Loss {
	case LossMargin:
		if cfg.Negatives != NegMax && (len(b.NegRand) != 2*n || len(b.NegUseMax) != 2*n) {
			return fmt.Errorf("batch: %s negatives need NegRand and NegUseMax for %d rows", cfg.Negatives, 2*n)
		}
	case LossHinge:
		if len(b.HingeNegA) != n || len(b.HingeNegB) != n {
			return fmt.Errorf("batch: hinge negatives for %d pairs needed", n)
		}
	case LossSim:
		if len(b.Labels) != n {
			return fmt.Errorf("batch: loss sim needs %d labels, got %d", n, len(b.Labels))
		}
	}
	return nil
}

// BigramID hashes the bigram (u, v) into one of buckets DAN bigram
// embeddings (FNV-1a over the two ids).
func BigramID(u, v int32, buckets int) int32 {
	h := uint64(14695981039346656037)
	for _, x := range [2]uint32{uint32(u), uint32(v)} {
		for k := 0; k < 4; k++ {
			h ^= uint64(byte(x >> (8 * k)))
			h *= 1099511628211
		}
	}
	return int32(h % uint64(buckets))
}

// SimTarget is the sparse target distribution of Tai et al. (2015) over
// classes 1..k for a score y in [1, k]: p_floor(y) = floor(y)-y+1,
// p_floor(y)+1 = y-floor(y). Index 0 is class 1.
func SimTarget(y float64, k int) []float64 {
	y = min(max(y, 1), float64(k))
	p := make([]float64, k)
	f := int(y)
	if f >= k {
		p[k-1] = 1
		return p
	}
	p[f-1] = float64(f) - y + 1
	p[f] = y - float64(f)
	return p
}

// checkNLILabels reports an NLI batch that the model cannot train: no
// head, or labels that are not n classes.
func checkNLILabels(cfg Config, labels []float32, n int) error {
	if cfg.NLIHidden <= 0 {
		return errors.New("batch: an NLI batch, but the model has no NLI head (nli_hidden 0)")
	}
	if len(labels) != n {
		return fmt.Errorf("batch: an NLI batch of %d pairs needs %d labels, got %d", n, n, len(labels))
	}
	for i, y := range labels {
		if y != 0 && y != 1 && y != 2 {
			return fmt.Errorf("batch: NLI pair %d: label %g is not a class (0 entailment, 1 neutral, 2 contradiction)", i, y)
		}
	}
	return nil
}
