// Package adapt trains a checkpoint's STS adaptation (Yang et al. 2018,
// "tuned"): a linear map W of the frozen sentence embeddings, fitted on
// the STS Benchmark train pairs and chosen on dev (Fit, Run), and stored
// in the checkpoint directory as evalsink.SaveAdaptation writes it, where
// evalsink's Evaluator and Embedder apply it. It imports evalsink;
// evalsink does not import it.
package adapt
