// Package featurize gives every text of the shards its token ids and its
// NMF topic vector: the vocabulary (counted on the training splits with a
// Beam combine, CountTraining), the tf-idf bag of words (BoW), the topic
// model of Amiri et al. (2016) fitted by coordinate descent with an L1
// penalty on the codes (FitNMF, ChooseK) and applied to any text against
// the frozen topics (Transformer), the saved model (Model, LoadModel), and
// the featurizing DoFn that applies a model, given as a side input, to
// whole shards (Apply). Fit is the fitting driver: it counts and samples
// the training texts, builds the vocabulary and fits the topics.
//
// pipelines.RunFeaturize runs Fit (or loads a saved model), then Apply, and
// commits the output through shards.Output; docs/featurize.md describes the
// formats and the choices.
package featurize
