package compute

import (
	"fmt"
	"math"
	"slices"
)

// The encoder-decoder with a pairwise discriminator (EncEDD; Patro et al.
// 2018, §3). With H = Hidden, D = Dim and K = OutClasses() output classes
// (the vocabulary's first K ids: its special tokens, then its most
// frequent words), a pair (A, B) of n_A and n_B words:
//
//	f     = h_{n_A} of the encoder LSTM over A ("lstm.*", the sentence
//	        embedding Embed returns, as encoder lstm's)
//	decoder LSTM ("dec.lstm.*") over n_B+2 steps, from zero states:
//	  step 0:   xw = f·dec.wf                  (the paper's d_{-1}, Eq. 1)
//	  step 1:   xw = e(<s>)·dec.lstm.wx        (EDDStartID's embedding)
//	  step t+1: xw = e(B_t)·dec.lstm.wx        (teacher forcing, t = 1..n_B)
//	logits_t = h_t·out.w + out.b, t = 1..n_B+1; q_t = softmax(logits_t)
//	targets  y_t = EDDClass(B_t), t = 1..n_B, and y_{n_B+1} = EDDEndID
//	L_local  = −(1/N_tok) Σ_pairs Σ_t log q_t[y_t]   (Eq. 2, the mean over
//	           every target token of the batch)
//	soft words s_t = q_t·E_K, t = 1..n_B (E_K the first K rows of
//	           "embeddings"), f^p = h_{n_B} of the encoder LSTM over s
//	f^g      = the encoder's embedding of B
//	L_global = 1/(N(N−1)) Σ_i Σ_{j≠i} max(0, f^p_i·f^g_j − f^p_i·f^g_i + 1)
//	           (Eq. 3 without its constant j = i terms, as a mean: the
//	           paper's sum is N−1 times the local loss's scale, and under it
//	           the decoder collapsed to empty sentences; docs/models/edd.md)
//	loss     = L_local                       (LossLocal, the ED-L baseline)
//	         = L_local + GlobalWeight·L_global (LossLocalGlobal, EDD-LG shared)

// EncEDD is the encoder-decoder with the pairwise discriminator: an LSTM
// encoder (the last hidden state is the sentence embedding), an LSTM
// decoder that generates the paraphrase, and the encoder reused as the
// discriminator. It trains with LossLocal or LossLocalGlobal.
const EncEDD = "edd"

// Loss names of EncEDD (Config.Loss).
const (
	// LossLocal is the decoder's cross-entropy alone (Patro et al. 2018
	// Eq. 2; their ED-L baseline).
	LossLocal = "local"
	// LossLocalGlobal adds GlobalWeight times the pairwise discriminator's
	// global loss (Eq. 3) through the shared encoder (their EDD-LG
	// (shared)).
	LossLocalGlobal = "local-global"
)

// The special ids an EncEDD model generates with: featurize's vocabulary
// starts with <pad>, <unk>, <s> and </s> (featurize.PadID ... EndID).
const (
	EDDUnkID   int32 = 1 // the class of a word outside the first OutClasses ids
	EDDStartID int32 = 2 // the decoder's first word input
	EDDEndID   int32 = 3 // the class that ends a generated sentence
	// eddSpecials is the number of special ids; OutClasses is at least
	// one more.
	eddSpecials = 4
)

// DefaultOutVocab is Config.OutVocab's default: the decoder's softmax
// covers the 10,000 first ids of the vocabulary.
const DefaultOutVocab = 10000

// OutClasses is K, the size of the EncEDD decoder's softmax: the first
// min(OutVocab, Vocab) ids of the vocabulary.
func (c Config) OutClasses() int {
	k := c.OutVocab
	if k <= 0 {
		k = DefaultOutVocab
	}
	return min(k, c.Vocab)
}

// EDDClass is the output class of token id under k classes: the id itself
// below k, else EDDUnkID.
func EDDClass(id int32, k int) int32 {
	if id >= 0 && int(id) < k {
		return id
	}
	return EDDUnkID
}

// IsEDD reports whether the configuration is the encoder-decoder (which
// generates sentences) rather than a similarity model.
func (c Config) IsEDD() bool { return c.Encoder == EncEDD }

// eddDefaults fills EncEDD's defaults: the Glorot start
// (RecurrentInitAvg starts the encoder alone, as lstm's), OutVocab,
// GlobalWeight and the loss LossLocalGlobal.
func (c Config) eddDefaults() Config {
	if c.Encoder != EncEDD {
		return c
	}
	if c.RecurrentInit == "" {
		c.RecurrentInit = RecurrentInitGlorot
	}
	if c.OutVocab == 0 {
		c.OutVocab = DefaultOutVocab
	}
	if c.GlobalWeight == 0 {
		c.GlobalWeight = 1
	}
	if c.Loss == "" {
		c.Loss = LossLocalGlobal
	}
	return c
}

// validateEDD reports the problems of an EncEDD configuration, and of an
// EncEDD loss under another encoder.
func (c Config) validateEDD() []error {
	edd := c.Encoder == EncEDD
	eddLoss := c.Loss == LossLocal || c.Loss == LossLocalGlobal
	var errs []error
	switch {
	case edd && !eddLoss:
		errs = append(errs, fmt.Errorf("encoder edd trains with loss %s or %s, not %q", LossLocal, LossLocalGlobal, c.Loss))
	case !edd && eddLoss:
		errs = append(errs, fmt.Errorf("loss %s trains the decoder of encoder edd: use --model edd, or a similarity loss (%v) with %s", c.Loss, Losses(), c.Encoder))
	}
	if !edd {
		return errs
	}
	if c.OutVocab < 0 {
		errs = append(errs, fmt.Errorf("out_vocab %d: use 0 for the default %d, or a positive count", c.OutVocab, DefaultOutVocab))
	}
	if c.Vocab > 0 && c.OutClasses() <= eddSpecials {
		errs = append(errs, fmt.Errorf("out_vocab %d, vocab %d: the decoder needs more than the %d special ids (<pad> <unk> <s> </s>) among its classes", c.OutVocab, c.Vocab, eddSpecials))
	}
	if c.GlobalWeight < 0 || math.IsInf(c.GlobalWeight, 0) || math.IsNaN(c.GlobalWeight) {
		errs = append(errs, fmt.Errorf("global_weight %g: must be a finite, non-negative weight (0 takes the default 1)", c.GlobalWeight))
	}
	if c.Context != "" {
		errs = append(errs, fmt.Errorf("encoder edd takes no context (%q): leave --context empty", c.Context))
	}
	return errs
}

// eddLayout lists the decoder's parameters after the encoder's "lstm.*":
// the decoder LSTM "dec.lstm.*" (its inputs the word embeddings), dec.wf
// (H, 4H) taking f into the decoder's first step, and the output layer
// out.w (H, K), out.b (K).
func eddLayout(cfg Config) []ParamSpec {
	d, h, k := cfg.Dim, cfg.Hidden, cfg.OutClasses()
	spec := func(name string, init Init, shape ...int) ParamSpec {
		return ParamSpec{Name: name, Shape: shape, Init: init, Compositional: true}
	}
	return []ParamSpec{
		spec("dec.lstm.wx", InitGlorot, d, 4*h),
		spec("dec.lstm.wh", InitGlorot, h, 4*h),
		spec("dec.lstm.b", InitZero, 4*h),
		spec("dec.lstm.pi", InitZero, h),
		spec("dec.lstm.pf", InitZero, h),
		spec("dec.lstm.po", InitZero, h),
		spec("dec.wf", InitGlorot, h, 4*h),
		spec("out.w", InitGlorot, h, k),
		spec("out.b", InitZero, k),
	}
}

// Generator is a Model that generates sentences (EncEDD): for each input
// sequence of token ids, the ids of its paraphrase, without the end id.
type Generator interface {
	Generate(seqs [][]int32, opts GenerateOptions) ([][]int32, error)
}

// GenerateOptions says how a Generator searches.
type GenerateOptions struct {
	// Beam is the beam width; 0 or 1 is greedy search.
	Beam int
	// MaxLen bounds the generated words (the end id not counted); 0: the
	// model's MaxLen.
	MaxLen int
}

// StepFunc is one decoder step for BeamSearch: from the state of a
// hypothesis and the last token it fed, the log-probabilities of the
// next token (over every class) and the new state.
type StepFunc[S any] func(state S, token int32) (logp []float64, next S)

// Hypothesis is a finished sequence of BeamSearch with its log-probability.
type Hypothesis struct {
	Tokens []int32
	LogP   float64
}

// BeamSearch finds, with beam width beam (1: greedy), the sequence of at
// most maxLen tokens before end that has the highest total log-probability
// under step, starting from state start with token first fed. A
// hypothesis ends when it emits end, or at maxLen tokens (then it ends
// there without the end token's probability). Among the finished
// hypotheses it returns the most probable (unnormalised by length, the
// plain search of Sutskever et al. 2014); ties go to the first found.
func BeamSearch[S any](step StepFunc[S], start S, first, end int32, beam, maxLen int) Hypothesis {
	beam, maxLen = max(beam, 1), max(maxLen, 1)
	type live struct {
		tokens []int32
		logp   float64
		state  S
		last   int32
	}
	beams := []live{{state: start, last: first}}
	best := Hypothesis{LogP: math.Inf(-1)}
	found := false
	for len(beams) > 0 {
		type cand struct {
			from  int
			token int32
			logp  float64
		}
		var cands []cand
		states := make([]S, len(beams))
		for i, b := range beams {
			logp, next := step(b.state, b.last)
			states[i] = next
			for _, c := range topK(logp, beam) {
				cands = append(cands, cand{from: i, token: c, logp: b.logp + logp[c]})
			}
		}
		slices.SortStableFunc(cands, func(a, b cand) int {
			switch {
			case a.logp > b.logp:
				return -1
			case a.logp < b.logp:
				return 1
			}
			return 0
		})
		var nextBeams []live
		for _, c := range cands {
			if len(nextBeams) == beam {
				break
			}
			// A hypothesis that cannot beat the best finished one never
			// will: log-probabilities only fall.
			if found && c.logp <= best.LogP {
				break
			}
			tokens := slices.Clone(beams[c.from].tokens)
			if c.token != end {
				tokens = append(tokens, c.token)
			}
			if c.token == end || len(tokens) >= maxLen {
				if !found || c.logp > best.LogP {
					best, found = Hypothesis{Tokens: tokens, LogP: c.logp}, true
				}
				continue
			}
			nextBeams = append(nextBeams, live{tokens: tokens, logp: c.logp, state: states[c.from], last: c.token})
		}
		beams = nextBeams
	}
	return best
}

// topK lists the indices of the k largest values of v, largest first
// (lowest index first among equals).
func topK(v []float64, k int) []int32 {
	k = min(k, len(v))
	out := make([]int32, 0, k+1)
	for i, x := range v {
		if len(out) == k && x <= v[out[k-1]] {
			continue
		}
		j := len(out)
		if j == k {
			j--
		}
		for j > 0 && x > v[out[j-1]] {
			j--
		}
		if len(out) < k {
			out = append(out, 0)
		}
		copy(out[j+1:], out[j:len(out)-1])
		out[j] = int32(i)
	}
	return out
}
