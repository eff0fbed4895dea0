// Package metric computes the figures evalsink reports, from plain values:
// correlations (Pearson, Spearman with average ranks, Cosine, Angular),
// figures with the items they are computed from and their seeded
// bootstrap intervals and paired comparisons (Figure, Bootstrap),
// L2-regularised logistic regression (FitLogReg, scikit-learn's lbfgs
// objective), the ranking scorers (ScoreRankings: MAP and MRR as the
// SemEval scorer and trec_eval compute them; ChanceAP, ChanceRR), and the
// generation metrics (BLEU as sacrebleu computes it, METEOR with the
// Porter stemmer, TER as tercom).
//
// It knows nothing of checkpoints, sets or result tables: it imports the
// standard library and gonum only.
package metric
