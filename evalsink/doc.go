// Package evalsink measures checkpoints and writes the result tables.
//
// # Measuring
//
// LoadSets reads the evaluation sets from a directory of shards written by
// parastream extract: every STS (2012-2016), STS Benchmark and SICK set
// (similarity), and the Reddit and Quora test splits (retrieval). An
// Embedder embeds their tokens with a checkpoint's model, mapping tokens
// through the checkpoint's own vocabulary.
//
// Similarity: the cosine of the two embeddings (metric.Cosine; 0 for a
// zero vector), correlated with the gold scores: Pearson and Spearman
// (average ranks for ties) ×100 per set, and per STS year the mean, the
// weighted mean (by pairs) and the pooled score (all the year's pairs as
// one set), and the average over those of the STS 2012-2015 and SICK test
// sets that were evaluated, as Wieting & Gimpel (2017) report it
// (SimilarityScores); the report names the sets it averaged. A correlation
// that is undefined (a constant prediction, fewer than two pairs) is 0,
// never NaN. With ScaleAngular the cosine maps to 5(1 − arccos(cos)/π)
// (metric.Angular); the scatter plot shows the prediction on the
// evaluation's scale.
//
// Retrieval: precision at 1, 3 and 10 and MRR for ranking the true
// response in a pool of 100 candidates (99 drawn at random, seeded, never
// the query itself nor another of its true responses), as Yang et al.
// (2018) report; MAP and MRR where the data gives rankings (a question
// with a relevant and an irrelevant candidate); each with what chance
// scores on the same pools (RetrievalScores; metric.ChanceAP,
// metric.ChanceRR).
//
// Classification: SentEval's transfer tasks on frozen sentence embeddings
// (Classification, a Task): an L2-regularised logistic regression
// (metric.FitLogReg, the objective of scikit-learn's lbfgs
// LogisticRegression) on u (SST-2, MR), (|u−v|, u⊙v) (MRPC, SICK
// entailment) or (u, v, |u−v|, u⊙v) (SNLI), its C chosen on a dev set or
// by (nested) 10-fold cross-validation; accuracy, and F1 of class 1 for
// binary tasks, each with its items.
//
// Rankings (tasks of every evaluation): SemEval-2016/2017 Task 3 subtask
// B, TrecQA and WikiQA dev, each question's candidates ranked by cosine;
// MAP and MRR as each set's official scorer computes them (the SemEval
// scorer v2.2, trec_eval), the report's line saying which questions count
// and how one without a correct candidate counts (metric.ScoreRankings,
// metric.RankingDef). Word similarity in context: SCWS, the target words
// alone and, for a model with a topic context, each with its context's
// topic vector (Embedder.EmbedInContext); Spearman and Pearson against the
// ratings.
//
// Generation: for a model that writes text, BLEU (corpus BLEU-1 to 4 as
// sacrebleu computes it), METEOR (exact then Porter-stem matches, the
// fewest-chunk alignment; no synonyms or paraphrases) and TER (tercom's
// greedy shifts and edits) of its outputs against references;
// GenerationRows makes them a KindGeneration row and AppendResults adds it
// to the result tables.
//
// # Tables
//
// An Evaluator evaluates a checkpoint (Evaluate) and writes one Parquet
// part of Result rows per evaluation under the results directory, named by
// the evaluation's identity (the checkpoint's directory, step and model
// hash; the data's hash; the options): evaluating the same checkpoint
// again adds nothing. The CSV, the Markdown report (laid out as the
// research's tables) and the PNG learning curves are rewritten from all
// parts; a scatter of predictions against gold scores is drawn per
// evaluation. An optional PostgreSQL sink (OpenSQL) stores the same rows
// under a primary key. Columns describes every column once for the CSV,
// SQL, the report, the figures and compare. Watch evaluates each
// checkpoint announced on the checkpoint topic. See docs/evalsink.md.
//
// # Subpackages
//
// The figures are computed by package metric from plain values (it knows
// nothing of checkpoints or tables); package plot draws the PNG charts;
// package adapt trains the STS adaptation that an Evaluator with
// Config.Adapt applies (it imports evalsink, never the other way).
package evalsink
