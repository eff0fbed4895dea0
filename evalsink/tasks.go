package evalsink

import (
	"context"
	"log/slog"

	"github.com/parastream/parastream/corpora"
	"github.com/parastream/parastream/evalsink/metric"
	"github.com/parastream/parastream/trainstep/compute"
)

// TaskEnv is what an evaluation task gets: the checkpoint's embedder, the
// loaded evaluation sets, the checkpoint, and the row every row of the
// evaluation starts from (its evaluation, run, model, step, checkpoint,
// versions and hashes set).
type TaskEnv struct {
	Emb  *Embedder
	Sets *Sets
	// Dir is the checkpoint directory; Model its model's configuration.
	Dir   string
	Model compute.Config
	// Base is the row a task's rows start from: copy it, then set the
	// corpus, split, dataset, kind, item count and figures.
	Base Result
	// Seed seeds anything random a task does (negatives, folds).
	Seed uint64
	Log  *slog.Logger
}

// Task is one evaluation task beyond similarity and retrieval: it scores
// the sets it knows in env.Sets (none: no rows) and returns its rows, each
// with the figures it reports and their items. The evaluator checks each
// row's figures against its items, adds their bootstrap intervals, and
// keeps the items for comparisons.
type Task func(ctx context.Context, env TaskEnv) ([]RowFigures, error)

// tasks returns the evaluation tasks run after similarity and retrieval,
// in the order of their rows.
func tasks() []Task {
	return []Task{Classification, nliHeadTask, rankingTask, wordContextTask}
}

// taskLabels returns, by corpus, how the report names a row of one of the
// tasks beyond similarity (its kind is not a similarity kind): the set, and
// what the figure was computed with (the training data, the choice of the
// penalty, the questions kept). It covers the evaluation sets of corpora's
// formats by their task, and the similarity sets that a classification
// task also scores (SICK's entailment).
func taskLabels() map[string]func(Result) string {
	labels := map[string]func(Result) string{}
	for _, f := range corpora.EvalFormats() {
		switch f.Eval.Task {
		case TaskClassification:
			labels[f.Corpus] = classificationLabel
		case TaskRanking:
			labels[f.Corpus] = rankingLabels()[f.Corpus]
		case TaskWordContext:
			labels[f.Corpus] = scwsLabel
		}
	}
	for _, t := range classifyTasks() {
		labels[t.corpus] = classificationLabel
	}
	return labels
}

// rankingLabels returns, by ranking set, how the report names its rows:
// the scorer and the questions kept (rankingDefs says what is scored).
func rankingLabels() map[string]func(Result) string {
	return map[string]func(Result) string{
		"semeval-cqa": semevalLabel,
		"trecqa":      trecqaLabel,
		"wikiqa":      wikiqaLabel,
	}
}

// similarityFigures returns the figures of one similarity score: the
// items of its set, or of the sets its aggregate is taken over.
func similarityFigures(scored []*Scored, s Score) []metric.Figure {
	var items []metric.Item
	weighted := false
	add := func(sc *Scored, group string) {
		for i, p := range sc.Set.Pairs {
			items = append(items, metric.Item{ID: p.ID, Group: group, Pred: sc.Pred[i], Gold: sc.Gold[i]})
		}
	}
	for _, sc := range scored {
		set := sc.Set
		switch s.Kind {
		case KindDataset:
			if set.Corpus == s.Corpus && set.Split == s.Split && set.Dataset == s.Dataset {
				add(sc, "")
			}
		case KindMean, KindWeightedMean, KindPooled:
			if set.Corpus == "sts" && set.Split == s.Split && set.Year == s.Year {
				group := set.Dataset
				if s.Kind == KindPooled {
					group = ""
				}
				add(sc, group)
			}
			weighted = s.Kind == KindWeightedMean
		case KindAverage:
			if inAverage(set.Corpus, set.Split, set.Year) {
				add(sc, set.Corpus+"/"+set.Dataset)
			}
		}
	}
	return []metric.Figure{
		{Column: "pearson", Metric: metric.MetricPearson, Weighted: weighted, Items: items},
		{Column: "spearman", Metric: metric.MetricSpearman, Weighted: weighted, Items: items},
	}
}

// retrievalFigures returns the figures of a retrieval row (precision at
// 1, 3, 10 and MRR over its queries) and of its ranking row (MAP and MRR
// over its rankings).
func retrievalFigures(x *Retrieval) (retrieval, ranking []metric.Figure) {
	cols := []struct {
		column string
		value  func(rank int) float64
	}{
		{"p_at_1", func(k int) float64 { return b2f(k <= 1) }},
		{"p_at_3", func(k int) float64 { return b2f(k <= 3) }},
		{"p_at_10", func(k int) float64 { return b2f(k <= 10) }},
		{"mrr", func(k int) float64 { return 1 / float64(k) }},
	}
	for _, c := range cols {
		f := metric.Figure{Column: c.column, Metric: metric.MetricMean}
		for _, q := range x.PerQuery {
			f.Items = append(f.Items, metric.Item{ID: q.ID, Pred: c.value(q.Rank)})
		}
		retrieval = append(retrieval, f)
	}
	return retrieval, rankingFigures(x.PerRanking)
}

// b2f is 1 for true, 0 for false.
func b2f(b bool) float64 {
	if b {
		return 1
	}
	return 0
}
