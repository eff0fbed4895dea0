package compute

import (
	"fmt"
	"slices"
	"strings"
)

// Encoder names (Config.Encoder). EncCSAE is in csae.go, EncEDD in edd.go.
const (
	EncAvg       = "avg"       // mean of word embeddings (Wieting & Gimpel 2017, §3.1)
	EncLSTM      = "lstm"      // final hidden state of a peephole LSTM
	EncLSTMAvg   = "lstmavg"   // mean of the LSTM hidden states
	EncBiLSTMAvg = "bilstmavg" // forward and backward lstmavg, added
	EncGRAN      = "gran"      // a_t = x_t ⊙ σ(W_x x_t + W_h h_t + b), averaged
	EncGRAN2     = "gran2"     // a_t = h_t ⊙ σ(W_x x_t + W_h h_t + b), averaged
	EncGRAN3     = "gran3"     // a_t = x_t ⊙ g1 + a_{t-1} ⊙ g2, a_{-1}/n
	EncGRAN4     = "gran4"     // as gran3, gates also see a_{t-1}
	EncGRAN5     = "gran5"     // a_t = x_t ⊙ g1 + h_t ⊙ g2, averaged
	EncBiGRAN    = "bigran"    // forward and backward gran, added
	EncDAN       = "dan"       // (Σ words + Σ bigrams)/sqrt(n), feed-forward tanh stack (Yang et al. 2018)
	// EncTransformer is the transformer encoder of Yang et al. (2018,
	// §2.3.2): pre-norm self-attention blocks over sqrt(Dim)·e_t + PE(t),
	// a final layer norm, the outputs averaged over the sentence's words
	// (layout.go, TransformerLayout, has the formulas).
	EncTransformer = "transformer"
)

// The backends an encoder may name in EncoderSpec.Backends: the kinds of
// --device.
const (
	BackendCPU  = "cpu"
	BackendCUDA = "cuda"
)

// EncoderSpec is one entry of the encoder list (EncoderSpecs): every fact
// about an encoder that the packages read (the configuration's defaults
// and checks, the parameter layout, the embedding's size, the help, the
// backends that have it). Its graph is not here: each backend builds it
// from a table of its own keyed by Name (trainstep/cpu/encoders.go,
// trainstep/cuda/encoders.go), and a test of each checks that its table
// and Backends agree.
type EncoderSpec struct {
	// Name is Config.Encoder's value (--model).
	Name string
	// Summary says in one line what it computes.
	Summary string
	// Doc is the page that documents it ("" for those of
	// docs/trainstep.md).
	Doc string
	// Recurrent encoders have an LSTM: Config.RecurrentInit applies to
	// them (default RecurrentInitAvg), and is left empty for the others.
	Recurrent bool
	// LastState says that its embedding is an LSTM's last state: under
	// RecurrentInitAvg its forget gate starts open, so that the state
	// carries the sum of the words (layout.go, startAsAverage).
	LastState bool
	// Generator marks a paraphrase generator rather than a sentence
	// encoder: Encoders leaves it out, and the help names it apart.
	Generator bool
	// Bigrams says that it reads hashed bigram embeddings (ParamBigrams)
	// beside the words: the backends gather the batch's bigram ids.
	Bigrams bool
	// OwnContext says that it takes Config.Context's topic vectors in its
	// own layers: the model adds no ctx.w, ctx.b of its own.
	OwnContext bool
	// Dim is Config.Dim's default for it (0: 300); Loss is Config.Loss's
	// ("": LossMargin).
	Dim  int
	Loss string
	// Backends are the backends that build it (BackendCPU, BackendCUDA);
	// another refuses it, and docs/gpu.md lists the CUDA backend's.
	Backends []string
	// EmbedDim is the size of the sentence embedding under cfg (nil:
	// cfg.Dim).
	EmbedDim func(cfg Config) int
	// Layout lists its parameters after the word embeddings, in Layout's
	// order (nil: none).
	Layout func(cfg Config) []ParamSpec
	// Defaults fills its own zero fields of c, after Dim and Hidden (nil:
	// none).
	Defaults func(c Config) Config
	// Validate reports its own problems of c (after Defaults) through bad
	// (nil: none).
	Validate func(c Config, bad func(format string, a ...any))
}

// Has reports whether the backend named backend (BackendCPU,
// BackendCUDA) builds the encoder.
func (s EncoderSpec) Has(backend string) bool { return slices.Contains(s.Backends, backend) }

// EncoderSpecs is the encoder list, in the order of the help and the
// docs: the one place an encoder is named. It is built when asked (no
// package-level registry).
func EncoderSpecs() []EncoderSpec {
	both := []string{BackendCPU, BackendCUDA}
	cpuOnly := []string{BackendCPU}
	return []EncoderSpec{
		{Name: EncAvg, Summary: "the mean of the word embeddings", Backends: both},
		{Name: EncLSTM, Summary: "the last state of a peephole LSTM", Recurrent: true, LastState: true, Backends: both,
			EmbedDim: hiddenDim, Layout: lstmLayout},
		{Name: EncLSTMAvg, Summary: "the mean of the LSTM's states", Recurrent: true, Backends: both,
			EmbedDim: hiddenDim, Layout: lstmLayout},
		{Name: EncBiLSTMAvg, Summary: "forward and backward lstmavg, added", Recurrent: true, Backends: both,
			EmbedDim: hiddenDim, Layout: func(cfg Config) []ParamSpec {
				return slices.Concat(lstmParams(cfg, "fwd."), lstmParams(cfg, "bwd."))
			}},
		{Name: EncGRAN, Summary: "the mean of the words gated by the LSTM's states", Recurrent: true, Backends: both,
			Layout: func(cfg Config) []ParamSpec {
				return slices.Concat(lstmParams(cfg, ""), granGate(cfg, "", "", cfg.Dim, false))
			}},
		{Name: EncGRAN2, Summary: "the mean of the LSTM's states gated", Recurrent: true, Backends: both,
			EmbedDim: hiddenDim, Layout: func(cfg Config) []ParamSpec {
				return slices.Concat(lstmParams(cfg, ""), granGate(cfg, "", "", cfg.Hidden, false))
			}},
		{Name: EncGRAN3, Summary: "a running gated sum of the words", Recurrent: true, Backends: both,
			Layout: granTwoGates(false)},
		{Name: EncGRAN4, Summary: "gran3 with gates that also see the running sum", Recurrent: true, Backends: both,
			Layout: granTwoGates(true)},
		{Name: EncGRAN5, Summary: "the mean of gated words plus gated states", Recurrent: true, Backends: both,
			Layout: granTwoGates(false), Validate: func(c Config, bad func(string, ...any)) {
				if c.Hidden != c.Dim {
					bad("gran5 adds gated x_t and h_t: hidden (%d) must equal dim (%d)", c.Hidden, c.Dim)
				}
			}},
		{Name: EncBiGRAN, Summary: "forward and backward gran, added", Recurrent: true, Backends: both,
			Layout: func(cfg Config) []ParamSpec {
				var ps []ParamSpec
				for _, p := range []string{"fwd.", "bwd."} {
					ps = slices.Concat(ps, lstmParams(cfg, p), granGate(cfg, p, "", cfg.Dim, false))
				}
				return ps
			}},
		{Name: EncDAN, Summary: "words and hashed bigrams through a tanh stack", Bigrams: true, Backends: both,
			EmbedDim: func(c Config) int { return c.DANLayers[len(c.DANLayers)-1] },
			Layout:   danLayout, Defaults: danDefaults, Validate: danValidate},
		{Name: EncTransformer, Summary: "self-attention blocks, averaged", Doc: "docs/models/transformer.md", Dim: 512, Backends: both,
			Layout: TransformerLayout, Defaults: transformerDefaults, Validate: transformerValidate},
		{Name: EncCSAE, Summary: "the context-sensitive stacked autoencoder", Doc: "docs/models/csae.md", OwnContext: true,
			Loss: LossRecon, Backends: cpuOnly, // the autoencoder's own objective (Amiri et al. 2016, Eq. 7)
			EmbedDim: func(c Config) int { return c.CSAESizes()[len(c.CSAELayers)] },
			Layout:   csaeLayout, Defaults: Config.csaeDefaults},
		{Name: EncEDD, Summary: "a paraphrase generator", Doc: "docs/models/edd.md", Generator: true, Recurrent: true, LastState: true,
			Loss: LossLocalGlobal, Backends: cpuOnly, // the generator with its discriminator (Patro et al. 2018, Eq. 6)
			EmbedDim: hiddenDim, Layout: func(cfg Config) []ParamSpec { return slices.Concat(lstmParams(cfg, ""), eddLayout(cfg)) },
			Defaults: Config.eddDefaults},
	}
}

// LookupEncoder is the list's entry named name.
func LookupEncoder(name string) (EncoderSpec, bool) {
	specs := EncoderSpecs()
	i := slices.IndexFunc(specs, func(s EncoderSpec) bool { return s.Name == name })
	if i < 0 {
		return EncoderSpec{}, false
	}
	return specs[i], true
}

// Encoders lists the names of the sentence encoders (the generators left
// out), in the list's order.
func Encoders() []string { return encoderNames(false) }

// Generators lists the names of the paraphrase generators.
func Generators() []string { return encoderNames(true) }

func encoderNames(generators bool) []string {
	var out []string
	for _, s := range EncoderSpecs() {
		if s.Generator == generators {
			out = append(out, s.Name)
		}
	}
	return out
}

// ModelHelp is the help of train's --model: the sentence encoders, then
// each generator with its page.
func ModelHelp() string {
	var gens []string
	for _, s := range EncoderSpecs() {
		if s.Generator {
			gens = append(gens, fmt.Sprintf("%s (%s, %s)", s.Name, s.Summary, s.Doc))
		}
	}
	return "encoder: " + strings.Join(Encoders(), ", ") + "; " + strings.Join(gens, ", ")
}

// DimHelp is the help of train's --dim: its default, and the encoders
// whose default differs.
func DimHelp() string {
	var own []string
	for _, s := range EncoderSpecs() {
		if s.Dim != 0 {
			own = append(own, fmt.Sprintf("%d for %s, the paper's", s.Dim, s.Name))
		}
	}
	return fmt.Sprintf("word embedding size (0: %d; %s)", defaultDim, strings.Join(own, "; "))
}

// defaultDim is Config.Dim's default for an encoder whose spec gives none.
const defaultDim = 300

// WithEncoder returns c set to train spec, an encoder outside the list:
// its name is spec.Name, and Defaults, Validate, Layout and EmbedDim read
// spec rather than the list. It is how a test (or an experiment before
// its encoder joins EncoderSpecs) runs a new encoder; config.json does
// not keep spec, so a checkpoint of it reads back only once it is listed.
func (c Config) WithEncoder(spec EncoderSpec) Config {
	c.Encoder = spec.Name
	c.own = &spec
	return c
}

// Spec is the entry of c's encoder: WithEncoder's, or the list's.
func (c Config) Spec() (EncoderSpec, bool) {
	if c.own != nil && c.own.Name == c.Encoder {
		return *c.own, true
	}
	return LookupEncoder(c.Encoder)
}

// hiddenDim is the embedding size of the encoders that output LSTM states.
func hiddenDim(c Config) int { return c.Hidden }

// compositional is a parameter of the λc term.
func compositional(name string, init Init, shape ...int) ParamSpec {
	return ParamSpec{Name: name, Shape: shape, Init: init, Compositional: true}
}

// lstmLayout is the LSTM alone.
func lstmLayout(cfg Config) []ParamSpec { return lstmParams(cfg, "") }

// lstmParams is an LSTM's parameters under prefix (Layout's doc has the
// packing).
func lstmParams(cfg Config, prefix string) []ParamSpec {
	d, h := cfg.Dim, cfg.Hidden
	return []ParamSpec{
		compositional(prefix+"lstm.wx", InitGlorot, d, 4*h),
		compositional(prefix+"lstm.wh", InitGlorot, h, 4*h),
		compositional(prefix+"lstm.b", InitZero, 4*h), // forget slice set to 1 in InitParams
		compositional(prefix+"lstm.pi", InitZero, h),
		compositional(prefix+"lstm.pf", InitZero, h),
		compositional(prefix+"lstm.po", InitZero, h),
	}
}

// granGate is GRAN gate i's parameters under prefix, out values wide,
// with a matrix on a_{t-1} when withA (gran4).
func granGate(cfg Config, prefix, i string, out int, withA bool) []ParamSpec {
	d, h := cfg.Dim, cfg.Hidden
	ps := []ParamSpec{
		compositional(prefix+"gran.wx"+i, InitGlorot, d, out),
		compositional(prefix+"gran.wh"+i, InitGlorot, h, out),
	}
	if withA {
		ps = append(ps, compositional(prefix+"gran.wa"+i, InitGlorot, d, out))
	}
	return append(ps, compositional(prefix+"gran.b"+i, InitZero, out))
}

// granTwoGates is the layout of gran3, gran4 (withA) and gran5: the LSTM
// and gates "1" and "2".
func granTwoGates(withA bool) func(Config) []ParamSpec {
	return func(cfg Config) []ParamSpec {
		return slices.Concat(lstmParams(cfg, ""), granGate(cfg, "", "1", cfg.Dim, withA), granGate(cfg, "", "2", cfg.Dim, withA))
	}
}

// danLayout is the DAN's bigram embeddings and tanh layers.
func danLayout(cfg Config) []ParamSpec {
	ps := []ParamSpec{{Name: ParamBigrams, Shape: []int{cfg.BigramBuckets, cfg.Dim}, Init: InitEmbedding}}
	in := cfg.Dim
	for i, n := range cfg.DANLayers {
		ps = append(ps, compositional(fmt.Sprintf("dan.w%d", i), InitGlorot, in, n), compositional(fmt.Sprintf("dan.b%d", i), InitZero, n))
		in = n
	}
	return ps
}

func danDefaults(c Config) Config {
	if len(c.DANLayers) == 0 {
		c.DANLayers = []int{300, 300, 500}
	}
	if c.BigramBuckets == 0 {
		c.BigramBuckets = 100003
	}
	return c
}

func danValidate(c Config, bad func(string, ...any)) {
	if len(c.DANLayers) == 0 {
		bad("dan needs at least one layer in dan_layers")
	}
	for _, n := range c.DANLayers {
		if n <= 0 {
			bad("dan_layers %v: sizes must be positive", c.DANLayers)
			break
		}
	}
	if c.BigramBuckets <= 0 {
		bad("bigram_buckets %d: must be positive for dan", c.BigramBuckets)
	}
}
