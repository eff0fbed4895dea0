// Package trainstep is the compute core of the trainer: a seeded Trainer
// whose Step trains one batch of token-id pairs, length buckets with masks,
// checkpoints (a directory written atomically: safetensors parameters and
// optimiser state, configuration, vocabulary and the stream position),
// word-vector readers (GloVe and word2vec text) for initialisation, and
// Embed for inference.
//
// The arithmetic sits behind compute.Backend; trainstep/cpu is the gorgonia
// CPU backend and the default. See docs/trainstep.md for the encoders,
// losses and their formulas.
package trainstep
