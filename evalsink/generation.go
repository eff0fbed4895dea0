package evalsink

import (
	"fmt"

	"github.com/parastream/parastream/evalsink/metric"
)

// KindGeneration is a row of generation figures: corpus BLEU-1 to 4,
// METEOR and TER of a model's outputs for a set's inputs against the set's
// references (Pairs: the sentences).
const KindGeneration = "generation"

// GenerationSet is a generation evaluation's outputs: the set's names in
// the result rows, and each sentence's hypothesis (the model's output
// tokens) and references (tokens).
type GenerationSet struct {
	// Corpus, Split and Dataset name the set as other rows do ("quora",
	// "test", "quora/test").
	Corpus, Split, Dataset string
	Hyps                   [][]string
	Refs                   [][][]string
}

// GenerationRows scores a generation set and returns its result rows: one
// KindGeneration row carrying base's evaluation columns (EvalID, run,
// model, step, checkpoint, hashes, time, as Evaluator builds them for
// every row) with the set's names, Pairs the sentences, and BLEU1-BLEU4,
// METEOR and TER set (the other figures NULL).
func GenerationRows(base Result, set GenerationSet) ([]Result, error) {
	g, err := metric.ScoreGeneration(set.Hyps, set.Refs)
	if err != nil {
		return nil, fmt.Errorf("scoring generation on %s: %w", set.Dataset, err)
	}
	r := base
	r.Corpus, r.Split, r.Dataset, r.Year, r.Kind = set.Corpus, set.Split, set.Dataset, "", KindGeneration
	r.Pairs, r.Candidates = int64(g.Sentences), 0
	r.Pearson, r.Spearman, r.PAt1, r.PAt3, r.PAt10, r.MRR, r.MAP = nil, nil, nil, nil, nil, nil, nil
	r.BLEU1, r.BLEU2, r.BLEU3, r.BLEU4 = ptr(g.BLEU.B1), ptr(g.BLEU.B2), ptr(g.BLEU.B3), ptr(g.BLEU.B4)
	r.METEOR, r.TER = ptr(g.METEOR), ptr(g.TER)
	return []Result{r}, nil
}
