package trainflags

import (
	"flag"

	"github.com/parastream/parastream/cmd/parastream/internal/cli"
	"github.com/parastream/parastream/trainstep"
	"github.com/parastream/parastream/trainstep/compute"
)

// modelFlagNames are the flags of the model, its loss and its
// regularisation (modelFlags), in the order of the help's "model" group.
// A resume refuses every one of them changed: they are the model.
func modelFlagNames() []string {
	return []string{"model", "loss", "dim", "hidden", "tf-layers", "tf-heads", "tf-filter", "out-vocab", "global-weight", "negatives", "margin", "hinge-k", "scale", "symmetric", "matryoshka", "recurrent-init", "embed-init", "train-cell-bias", "dropout", "word-dropout", "scramble", "lambda-c", "lambda-w", "nli-hidden"}
}

// csaeFlagNames are the flags of the csae encoder (csaeFlags), refused
// changed on resume as the other model flags are.
func csaeFlagNames() []string {
	return []string{"csae-layers", "csae-lambda", "csae-top-k", "csae-zero-context", "csae-recon-weight"}
}

// modelFlags declares on fs the flags of the model, its loss and its
// regularisation (modelFlagNames), writing into cfg.
func modelFlags(fs *flag.FlagSet, cfg *trainstep.Config) {
	fs.StringVar(&cfg.Encoder, "model", compute.EncAvg, compute.ModelHelp())
	fs.StringVar(&cfg.Loss, "loss", "", "loss: margin, hinge, softmax, sim, mnrl (the in-batch softmax over scaled cosines, sentence-transformers' MultipleNegativesRankingLoss); recon for csae; local or local-global for edd (default: margin; recon for csae, local-global for edd)")
	fs.IntVar(&cfg.Dim, "dim", 0, compute.DimHelp())
	fs.IntVar(&cfg.Hidden, "hidden", 0, "LSTM state size (0: --dim)")
	fs.IntVar(&cfg.TFLayers, "tf-layers", 0, "transformer blocks (0: 6)")
	fs.IntVar(&cfg.TFHeads, "tf-heads", 0, "transformer attention heads, dividing --dim (0: 8)")
	fs.IntVar(&cfg.TFFilter, "tf-filter", 0, "transformer feed-forward inner size (0: 4·--dim)")
	fs.IntVar(&cfg.OutVocab, "out-vocab", 0, "edd: the decoder's softmax covers the vocabulary's first N ids (0: 10000)")
	fs.Float64Var(&cfg.GlobalWeight, "global-weight", 0, "edd, loss local-global: weight of the global loss (0: 1)")
	fs.StringVar(&cfg.Negatives, "negatives", "max", "margin loss negatives: max, mix, rand")
	fs.Float64Var(&cfg.Margin, "margin", 0, "δ of the margin or hinge loss (0: 0.4 margin, 1 hinge)")
	fs.IntVar(&cfg.HingeK, "hinge-k", 0, "hinge loss: random negatives per side (0: 1)")
	fs.Float64Var(&cfg.Scale, "scale", 0, "mnrl loss: the cosines' multiplier before the softmax (0: 20)")
	fs.BoolVar(&cfg.Symmetric, "symmetric", false, "mnrl loss: also from each b to every a, the two halves averaged")
	fs.Var((*cli.Ints)(&cfg.Matryoshka), "matryoshka", "mnrl loss: sum it over these leading dimensions of the embedding, the first the whole, as 300,256,128,64 (Kusupati et al. 2022; default: the whole only)")
	fs.StringVar(&cfg.RecurrentInit, "recurrent-init", "", "how the recurrent encoders start: avg (as the averaging model they generalise, the default) or glorot (Glorot-uniform matrices, forget-gate bias 1)")
	fs.StringVar(&cfg.EmbedInit, "embed-init", "", "distribution of the initial embeddings: uniform:A (±A) or normal:S (default "+compute.DefaultEmbedInit+")")
	fs.BoolVar(&cfg.TrainCellBias, "train-cell-bias", false, "also train the LSTMs' cell-input bias (held at 0 by default: from random embeddings it lets recurrent encoders collapse, every sentence one vector)")
	fs.Float64Var(&cfg.Dropout, "dropout", 0, "dropout on word embedding units")
	fs.Float64Var(&cfg.WordDropout, "word-dropout", 0, "probability of dropping a whole word")
	fs.Float64Var(&cfg.Scramble, "scramble", 0, "probability of shuffling the words of a pair")
	fs.Float64Var(&cfg.LambdaC, "lambda-c", 0, "L2 on the compositional parameters")
	fs.Float64Var(&cfg.LambdaW, "lambda-w", 0, "L2 of the word embeddings back to their initial values")
	fs.IntVar(&cfg.NLIHidden, "nli-hidden", 0, "multitask with an NLI dataset (--dataset quora,snli): hidden ReLU units of the NLI head over (u, v, |u−v|, u·v) (0: 512, Yang et al. 2018)")
}

// csaeFlags declares on fs the flags of the csae encoder (compute's
// csae.go; csaeFlagNames), writing into cfg.
func csaeFlags(fs *flag.FlagSet, cfg *trainstep.Config) {
	fs.Var((*cli.Ints)(&cfg.CSAELayers), "csae-layers", "csae: sizes of the layers h_2..h_n above h_1 (whose size is --dim), comma-separated (default: --dim,--dim, three layers)")
	fs.Float64Var(&cfg.CSAELambda, "csae-lambda", 0, "csae: λ, the weight of the context's reconstruction, Eq. 7 (0: 0.5)")
	fs.IntVar(&cfg.CSAETopK, "csae-top-k", 0, "csae: the reconstruction covers the K most frequent ids (0: 5000, or the vocabulary if smaller)")
	fs.BoolVar(&cfg.CSAEZeroContext, "csae-zero-context", false, "csae: feed zero topic vectors (the same model without its context: the ablation); needs --context topics")
	fs.Float64Var(&cfg.CSAEReconWeight, "csae-recon-weight", 0, "csae: add this multiple of the reconstruction loss to a pair loss (margin, sim, ...; 0: none; --loss recon trains the reconstruction alone)")
}
