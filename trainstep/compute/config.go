package compute

import (
	"cmp"
	"errors"
	"fmt"
	"math"
	"strconv"
	"strings"

	"github.com/parastream/parastream/featurize/lexicon"
)

// Context kinds (Config.Context).
const (
	// ContextTopics adds each sentence's NMF topic vector θ (featurize's
	// topics_a/topics_b) to its embedding through a learned projection:
	// g(s) = enc(s) + tanh(θ·W_θ + b_θ), W_θ starting at zero, after the
	// context layer of Amiri et al. (2016) Eq. 1 and 4.
	ContextTopics = "topics"
)

// Loss names (Config.Loss).
const (
	LossMargin  = "margin"  // cosine margin with in-batch negatives (Wieting & Gimpel 2017, Eq. 2-5)
	LossHinge   = "hinge"   // bilingual hinge on squared Euclidean distance, k random negatives (Elgohary & Carpuat 2016, Eq. 1)
	LossSoftmax = "softmax" // batch-softmax input-response with a response tower (Yang et al. 2018, §2.1)
	LossSim     = "sim"     // supervised similarity, KL to a sparse target over 1..K (Tai et al. 2015, as in Wieting & Gimpel 2017 §4.3)
	// LossMNRL is the field's in-batch softmax over scaled cosines
	// (sentence-transformers' MultipleNegativesRankingLoss; Henderson et
	// al. 2017): for pairs (a_i, b_i), the cross-entropy of
	// softmax_j(Scale·cos(a_i, c_j)) with target b_i, the candidates c
	// being every b_j and every hard negative (Batch.Neg); with Symmetric
	// also from each b_i to every a_j; summed over the Matryoshka prefixes.
	LossMNRL = "mnrl"
)

// DefaultScale is Config.Scale's default: sentence-transformers' scale of
// the cosines in MultipleNegativesRankingLoss.
const DefaultScale = 20

// Negative selection for the margin loss (Config.Negatives).
const (
	NegMax  = "max"  // the most similar non-partner in the batch
	NegMix  = "mix"  // max or rand, each with probability 0.5
	NegRand = "rand" // a uniformly random non-partner
)

// Starts of the recurrent encoders (Config.RecurrentInit).
const (
	// RecurrentInitGlorot draws the LSTM's and the gates' matrices
	// Glorot-uniform and their biases 0, but the LSTM forget gate's 1 (the
	// usual start).
	RecurrentInitGlorot = "glorot"
	// RecurrentInitAvg starts every recurrent encoder as the averaging
	// model it generalises: the LSTM passes each word through (the cell
	// input's block of W_x the identity, W_h 0, gates open or closed by
	// biases of ±3) and the GRAN gates are open, so that at the start the
	// sentence embedding points where avg's does (layout.go,
	// startAsAverage); training moves it from there.
	RecurrentInitAvg = "avg"
)

// Embedding updates (Config.EmbeddingUpdate).
const (
	UpdateSparse = "sparse"
	UpdateDense  = "dense"
	// DefaultEmbeddingUpdate is Config.EmbeddingUpdate's default.
	DefaultEmbeddingUpdate = UpdateSparse
)

// Optimisers (Config.Optimizer).
const (
	OptAdam    = "adam"
	OptSGD     = "sgd"
	OptRMSProp = "rmsprop"
)

// Config is the full configuration of a model, its loss, its regularisation
// and its optimiser. The zero value is usable: Defaults fills every zero field
// with the documented default, and Validate says how to fix what is wrong.
type Config struct {
	// Model.
	Encoder string `json:"encoder"` // default "avg"
	Dim     int    `json:"dim"`     // word embedding size; default 300
	Hidden  int    `json:"hidden"`  // LSTM state size; default Dim
	// DANLayers are the sizes of the DAN's tanh layers; default [300 300 500]
	// (Yang et al. 2018 §4.1). The last is the embedding size.
	DANLayers []int `json:"dan_layers,omitempty"`
	// TFLayers, TFHeads and TFFilter are the transformer's blocks, its
	// attention heads (Dim must be a multiple) and the inner size of its
	// position-wise feed-forward layer; defaults 6, 8 and 4·Dim, with Dim
	// 512 (Yang et al. 2018: 6 layers, 8 heads, hidden 512, filter 2048).
	TFLayers int `json:"tf_layers,omitempty"`
	TFHeads  int `json:"tf_heads,omitempty"`
	TFFilter int `json:"tf_filter,omitempty"`
	// CSAELayers are the sizes of the csae's layers h_2..h_n above h_1
	// (whose size is Dim); default [Dim Dim] (n = 3, Amiri et al. 2016
	// §4.2). CSAELambda is λ of Eq. 7 (default 0.5), CSAETopK the ids the
	// reconstruction covers (default 5,000, at most Vocab),
	// CSAEZeroContext feeds zero topic vectors (the same architecture, for
	// the ablation) and CSAEReconWeight adds that multiple of the
	// reconstruction loss to a pair loss (0: none). compute/csae.go.
	CSAELayers      []int   `json:"csae_layers,omitempty"`
	CSAELambda      float64 `json:"csae_lambda,omitempty"`
	CSAETopK        int     `json:"csae_top_k,omitempty"`
	CSAEZeroContext bool    `json:"csae_zero_context,omitempty"`
	CSAEReconWeight float64 `json:"csae_recon_weight,omitempty"`
	// TrainCellBias trains the LSTMs' cell-input bias (the third quarter
	// of lstm.b, under g = tanh(zg)). By default it is held at its initial
	// 0: from random embeddings, a trained b_g is one shared vector that
	// lets every sentence embed alike, the margin loss's degenerate
	// optimum (every cosine 1, loss 2δ), which recurrent encoders reach
	// within an epoch on short pairs (docs/trainstep.md, "Every encoder
	// learns"). Without it the LSTM's output has no constant direction.
	TrainCellBias bool `json:"train_cell_bias,omitempty"`
	// RecurrentInit is how the recurrent encoders start: RecurrentInitAvg
	// (the default) or RecurrentInitGlorot. From random embeddings the
	// Glorot start left lstmavg 4 to 6 STS points under avg on sentence
	// pairs; the averaging start closes the gap (docs/trainstep.md, "Every
	// encoder learns"). Empty for avg and dan.
	RecurrentInit string `json:"recurrent_init,omitempty"`
	// BigramBuckets is the number of hashed bigram embeddings of the DAN;
	// default 100003.
	BigramBuckets int `json:"bigram_buckets,omitempty"`
	// Vocab is the number of word embeddings (rows of "embeddings"): the
	// vocabulary's words, then OOVBuckets rows; set by the trainer from the
	// vocabulary (words + OOVBuckets); required.
	Vocab int `json:"vocab"`
	// Context is "" (none) or ContextTopics; Topics is then the size k of
	// the topic vectors (the featurize model's topics), set by the trainer
	// from the data.
	Context string `json:"context,omitempty"`
	Topics  int    `json:"topics,omitempty"`
	// EmbedInit is the distribution the word (and bigram) embeddings are
	// drawn from: "uniform:A" (uniform in ±A) or "normal:S" (mean 0,
	// standard deviation S, PyTorch's nn.Embedding default at S = 1).
	// Default "uniform:0.1". Pretrained vectors replace their words' rows.
	EmbedInit string `json:"embed_init,omitempty"`
	// OOVBuckets is the number of hashed out-of-vocabulary buckets of the
	// data the model trains on (featurize's oov_buckets): with V words, a
	// token outside the vocabulary has the id V + lexicon.Bucket(token,
	// OOVBuckets), and inference maps tokens the same way
	// (lexicon.Lexicon). 0, and a configuration written before the buckets
	// existed, maps such tokens to the vocabulary's <unk>.
	OOVBuckets int `json:"oov_buckets,omitempty"`
	// OOVHash names the hash of the buckets; lexicon.Hash ("crc32-ieee"),
	// the only one, is the default when OOVBuckets > 0.
	OOVHash string `json:"oov_hash,omitempty"`

	// Loss.
	Loss      string  `json:"loss"`      // default "margin"
	Margin    float64 `json:"margin"`    // δ; default 0.4 for margin, 1 for hinge
	Negatives string  `json:"negatives"` // margin loss: max, mix, rand; default max
	HingeK    int     `json:"hinge_k"`   // hinge: random negatives per side; default 1
	// RespHidden are the tanh layers of the softmax loss's response tower,
	// before a final linear layer back to the embedding size; default none.
	RespHidden []int `json:"resp_hidden,omitempty"`
	SimHidden  int   `json:"sim_hidden,omitempty"` // sim: size of h_s; default 50 (Tai et al.)
	SimK       int   `json:"sim_k,omitempty"`      // sim: classes 1..K; default 6 (STS 0-5 mapped to 1-6)
	// SimMin is the label that maps to class 1: y = 1 + label - SimMin.
	// Default 0 (STS); use 1 with SimK 5 for SICK.
	SimMin float64 `json:"sim_min"`
	// Scale multiplies the cosines of the mnrl loss before the softmax
	// (the inverse of a temperature); default DefaultScale (20).
	// Symmetric adds the loss from each b_i over every a_j, and halves the
	// sum (MultipleNegativesSymmetricRankingLoss).
	Scale     float64 `json:"scale,omitempty"`
	Symmetric bool    `json:"symmetric,omitempty"`
	// Matryoshka are the leading dimensions of the sentence embedding the
	// mnrl loss is summed over (Kusupati et al. 2022: each prefix
	// g(s)[:d] trained as an embedding of its own), largest first, the
	// first being EmbedDim; empty: the whole embedding only.
	Matryoshka []int `json:"matryoshka,omitempty"`
	// OutVocab bounds the softmax of the edd decoder to the vocabulary's
	// first OutVocab ids (the special tokens, then the most frequent
	// words; the others are <unk>); 0: DefaultOutVocab. GlobalWeight
	// weighs its global loss (LossLocalGlobal); 0: 1. (edd.go)
	OutVocab     int     `json:"out_vocab,omitempty"`
	GlobalWeight float64 `json:"global_weight,omitempty"`
	// NLIHidden, when positive, gives the model the NLI head of multitask
	// training (nli.go; Yang et al. 2018 §2.4): batches of an NLI dataset
	// (Batch.NLI) train it and the shared encoder by a 3-way softmax over
	// (u, v, |u−v|, u⊙v) through NLIHidden ReLU units, the other batches
	// train by Loss. The trainer sets it (DefaultNLIHidden unless told)
	// for a run whose datasets include an NLI dataset; 0: no head.
	NLIHidden int `json:"nli_hidden,omitempty"`

	// Regularisation.
	Dropout     float64 `json:"dropout"`      // dropout on word embedding units
	WordDropout float64 `json:"word_dropout"` // probability of zeroing a whole word embedding
	Scramble    float64 `json:"scramble"`     // probability of shuffling both sentences of a pair
	LambdaC     float64 `json:"lambda_c"`     // L2 on compositional parameters
	LambdaW     float64 `json:"lambda_w"`     // L2 of word embeddings back to their initial values

	// Optimiser.
	Optimizer string `json:"optimizer"` // default adam
	// EmbeddingUpdate says which rows of the word (and bigram) embeddings
	// a step updates: "sparse" (the default) only the rows of the batch's
	// words, with the lazy semantics of PyTorch's SparseAdam (a row's
	// moments and its λw pull move only when it is in a batch), so a step
	// costs the same whatever the vocabulary; "dense" every row, as a
	// dense optimiser does (rows outside the batch keep moving on their
	// momentum). A configuration written before the field existed
	// trained dense.
	EmbeddingUpdate string  `json:"embedding_update,omitempty"`
	LR              float64 `json:"lr"` // default 0.001 (adam), 0.01 (sgd, rmsprop)
	// Decay multiplies the learning rate once per finished epoch
	// (lr_e = LR·Decay^e); 0 means 1 (no decay).
	Decay float64 `json:"decay"`
	Beta1 float64 `json:"beta1"` // adam; default 0.9
	Beta2 float64 `json:"beta2"` // adam; default 0.999
	Rho   float64 `json:"rho"`   // rmsprop; default 0.9
	Eps   float64 `json:"eps"`   // adam, rmsprop; default 1e-8

	// Batching and seeding.
	BatchSize   int    `json:"batch_size"`   // pairs per batch; default 100
	BucketWidth int    `json:"bucket_width"` // padded lengths are multiples of this; default 8
	MaxLen      int    `json:"max_len"`      // longer sentences are truncated; default 64
	Seed        uint64 `json:"seed"`         // seeds initialisation and noise; default 1

	// own is the encoder's entry when it is not in the list (WithEncoder).
	own *EncoderSpec
}

// Defaults returns c with every zero field set to its default.
func (c Config) Defaults() Config {
	if c.Encoder == "" {
		c.Encoder = EncAvg
	}
	spec, _ := c.Spec()
	if c.OOVBuckets > 0 && c.OOVHash == "" {
		c.OOVHash = lexicon.Hash
	}
	if c.Dim == 0 {
		c.Dim = cmp.Or(spec.Dim, defaultDim)
	}
	if c.Hidden == 0 {
		c.Hidden = c.Dim
	}
	if spec.Defaults != nil {
		c = spec.Defaults(c)
	}
	if c.EmbedInit == "" {
		c.EmbedInit = DefaultEmbedInit
	}
	if c.RecurrentInit == "" && spec.Recurrent {
		c.RecurrentInit = RecurrentInitAvg
	}
	if c.Loss == "" {
		c.Loss = cmp.Or(spec.Loss, LossMargin)
	}
	if c.Margin == 0 {
		switch c.Loss {
		case LossMargin:
			c.Margin = 0.4
		case LossHinge:
			c.Margin = 1
		}
	}
	if c.Loss == LossMargin && c.Negatives == "" {
		c.Negatives = NegMax
	}
	if c.Loss == LossMNRL && c.Scale == 0 {
		c.Scale = DefaultScale
	}
	if c.Loss == LossHinge && c.HingeK == 0 {
		c.HingeK = 1
	}
	if c.Loss == LossSim {
		if c.SimHidden == 0 {
			c.SimHidden = 50
		}
		if c.SimK == 0 {
			c.SimK = 6
		}
	}
	if c.Optimizer == "" {
		c.Optimizer = OptAdam
	}
	if c.EmbeddingUpdate == "" {
		c.EmbeddingUpdate = DefaultEmbeddingUpdate
	}
	if c.LR == 0 {
		c.LR = 0.001
		if c.Optimizer != OptAdam {
			c.LR = 0.01
		}
	}
	if c.Decay == 0 {
		c.Decay = 1
	}
	if c.Beta1 == 0 {
		c.Beta1 = 0.9
	}
	if c.Beta2 == 0 {
		c.Beta2 = 0.999
	}
	if c.Rho == 0 {
		c.Rho = 0.9
	}
	if c.Eps == 0 {
		c.Eps = 1e-8
	}
	if c.BatchSize == 0 {
		c.BatchSize = 100
	}
	if c.BucketWidth == 0 {
		c.BucketWidth = 8
	}
	if c.MaxLen == 0 {
		c.MaxLen = 64
	}
	if c.Seed == 0 {
		c.Seed = 1
	}
	return c
}

// EmbedDim is the size of the sentence embedding g(s).
func (c Config) EmbedDim() int {
	if spec, ok := c.Spec(); ok && spec.EmbedDim != nil {
		return spec.EmbedDim(c)
	}
	return c.Dim
}

// Validate reports every problem of c (after Defaults) in one error.
func (c Config) Validate() error {
	var errs []error
	bad := func(format string, a ...any) { errs = append(errs, fmt.Errorf(format, a...)) }
	spec, known := c.Spec()
	if !known {
		bad("encoder %q: use one of %s, or %s (a generator)", c.Encoder, strings.Join(Encoders(), ", "), strings.Join(Generators(), ", "))
	}
	if c.Dim <= 0 || c.Hidden <= 0 {
		bad("dim %d, hidden %d: both must be positive", c.Dim, c.Hidden)
	}
	if spec.Validate != nil {
		spec.Validate(c, bad)
	}
	if c.Vocab <= 0 {
		bad("vocab %d: set it to the vocabulary size", c.Vocab)
	}
	switch c.Context {
	case "":
	case ContextTopics:
		if c.Topics <= 0 {
			bad("context topics needs topics, the size of the topic vectors, > 0 (got %d): train on featurized data", c.Topics)
		}
	default:
		bad("context %q: use topics, or none", c.Context)
	}
	switch c.RecurrentInit {
	case "", RecurrentInitGlorot, RecurrentInitAvg:
	default:
		bad("recurrent_init %q: use avg or glorot", c.RecurrentInit)
	}
	if _, _, err := ParseEmbedInit(cmp.Or(c.EmbedInit, DefaultEmbedInit)); err != nil {
		errs = append(errs, err)
	}
	if err := lexicon.CheckHash(c.OOVHash, c.OOVBuckets); err != nil {
		bad("%v", err)
	} else if c.OOVBuckets > 0 && c.Vocab <= c.OOVBuckets {
		bad("vocab %d, oov_buckets %d: vocab counts the rows of the words and then of the buckets, so it must exceed oov_buckets", c.Vocab, c.OOVBuckets)
	}
	switch c.Loss {
	case LossMargin:
		switch c.Negatives {
		case NegMax, NegMix, NegRand:
		default:
			bad("negatives %q: use max, mix or rand", c.Negatives)
		}
		if c.Margin <= 0 {
			bad("margin %g: must be positive (the research tunes 0.4, 0.6, 0.8)", c.Margin)
		}
	case LossHinge:
		if c.HingeK <= 0 {
			bad("hinge_k %d: must be at least 1", c.HingeK)
		}
		if c.HingeK >= c.BatchSize {
			bad("hinge_k %d: must be below the batch size %d (negatives come from the batch)", c.HingeK, c.BatchSize)
		}
		if c.Margin <= 0 {
			bad("margin %g: must be positive", c.Margin)
		}
	case LossSoftmax:
		for _, n := range c.RespHidden {
			if n <= 0 {
				bad("resp_hidden %v: sizes must be positive", c.RespHidden)
				break
			}
		}
	case LossSim:
		if c.SimK < 2 || c.SimHidden <= 0 {
			bad("sim_k %d, sim_hidden %d: need K ≥ 2 and a positive hidden size", c.SimK, c.SimHidden)
		}
	case LossMNRL:
		if !(c.Scale > 0) || math.IsInf(c.Scale, 0) {
			bad("scale %g: must be positive (sentence-transformers uses 20)", c.Scale)
		}
	case LossRecon, LossLocal, LossLocalGlobal:
	default:
		bad("loss %q: use margin, hinge, softmax, sim or mnrl (recon for csae; local, local-global for edd)", c.Loss)
	}
	c.validateMatryoshka(bad)
	if c.NLIHidden < 0 {
		bad("nli_hidden %d: give the NLI head's hidden units (512 in Yang et al. 2018), or 0 for no head", c.NLIHidden)
	}
	if c.NLIHidden > 0 && spec.Generator {
		bad("an NLI head trains a sentence encoder: not the %s generator", c.Encoder)
	}
	c.csaeValidate(bad)
	errs = append(errs, c.validateEDD()...)
	for _, p := range []struct {
		name string
		v    float64
	}{{"dropout", c.Dropout}, {"word_dropout", c.WordDropout}, {"scramble", c.Scramble}} {
		if p.v < 0 || p.v >= 1 {
			bad("%s %g: must be in [0, 1)", p.name, p.v)
		}
	}
	if c.LambdaC < 0 || c.LambdaW < 0 {
		bad("lambda_c %g, lambda_w %g: must not be negative", c.LambdaC, c.LambdaW)
	}
	switch c.Optimizer {
	case OptAdam, OptSGD, OptRMSProp:
	default:
		bad("optimizer %q: use adam, sgd or rmsprop", c.Optimizer)
	}
	switch c.EmbeddingUpdate {
	case "", UpdateSparse, UpdateDense:
	default:
		bad("embedding_update %q: use sparse or dense", c.EmbeddingUpdate)
	}
	if c.LR <= 0 || c.Decay <= 0 || c.Decay > 1 {
		bad("lr %g, decay %g: lr must be positive and decay in (0, 1]", c.LR, c.Decay)
	}
	if c.Beta1 <= 0 || c.Beta1 >= 1 || c.Beta2 <= 0 || c.Beta2 >= 1 || c.Rho <= 0 || c.Rho >= 1 || c.Eps <= 0 {
		bad("beta1 %g, beta2 %g, rho %g must be in (0, 1) and eps %g positive", c.Beta1, c.Beta2, c.Rho, c.Eps)
	}
	if c.BatchSize < 2 {
		bad("batch_size %d: in-batch negatives need at least 2 pairs", c.BatchSize)
	}
	if c.BucketWidth <= 0 || c.MaxLen <= 0 {
		bad("bucket_width %d, max_len %d: must be positive", c.BucketWidth, c.MaxLen)
	}
	if len(errs) > 0 {
		return fmt.Errorf("invalid trainstep config: %w", errors.Join(errs...))
	}
	return nil
}

// DefaultEmbedInit is Config.EmbedInit's default.
const DefaultEmbedInit = "uniform:0.1"

// ParseEmbedInit reads Config.EmbedInit: its kind ("uniform" or "normal")
// and scale (the half-width or the standard deviation, positive).
func ParseEmbedInit(s string) (kind string, scale float64, err error) {
	kind, v, ok := strings.Cut(s, ":")
	scale, perr := strconv.ParseFloat(v, 64)
	if !ok || (kind != "uniform" && kind != "normal") || perr != nil || !(scale > 0) || math.IsInf(scale, 0) {
		return "", 0, fmt.Errorf("embed_init %q: use uniform:A (uniform in ±A) or normal:S (standard deviation S), as uniform:0.1 or normal:1", s)
	}
	return kind, scale, nil
}

// Losses lists the loss names.
func Losses() []string {
	return []string{LossMargin, LossHinge, LossSoftmax, LossSim, LossRecon, LossMNRL}
}

// validateMatryoshka checks Config.Matryoshka: an mnrl loss's decreasing
// prefixes of the embedding, the first the whole of it.
func (c Config) validateMatryoshka(bad func(format string, a ...any)) {
	m := c.Matryoshka
	if len(m) == 0 {
		return
	}
	if c.Loss != LossMNRL {
		bad("matryoshka %v: only the mnrl loss sums over prefixes (--loss mnrl)", m)
		return
	}
	if m[0] != c.EmbedDim() {
		bad("matryoshka %v: start with the embedding size %d, then smaller sizes (as %d,128,64)", m, c.EmbedDim(), c.EmbedDim())
		return
	}
	for i := 1; i < len(m); i++ {
		if m[i] <= 0 || m[i] >= m[i-1] {
			bad("matryoshka %v: sizes must decrease and stay positive (as %d,128,64)", m, c.EmbedDim())
			return
		}
	}
}

// MatryoshkaDims are the prefixes of the embedding the mnrl loss sums
// over: Config.Matryoshka, or the whole embedding.
func (c Config) MatryoshkaDims() []int {
	if len(c.Matryoshka) > 0 {
		return c.Matryoshka
	}
	return []int{c.EmbedDim()}
}
