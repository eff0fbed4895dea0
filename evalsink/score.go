package evalsink

import (
	"context"
	"slices"

	"github.com/parastream/parastream/evalsink/metric"
)

// Kinds of result rows.
const (
	// KindDataset is one set's score.
	KindDataset = "dataset"
	// KindMean is the mean of a year's set scores (the research's "STS
	// 2014 Average").
	KindMean = "mean"
	// KindWeightedMean is the mean of a year's set scores weighted by
	// their pair counts.
	KindWeightedMean = "weighted_mean"
	// KindPooled is the score of all a year's pairs taken together as one
	// set.
	KindPooled = "pooled"
	// KindAverage is the mean of the set scores over every STS 2012-2015
	// test set and SICK test, as Wieting & Gimpel (2017) average their
	// evaluation sets (STS 2016 is for model selection: its year mean is
	// reported on its own).
	KindAverage = "average"
	// KindRetrieval is precision at N and MRR for picking the true
	// response among candidates.
	KindRetrieval = "retrieval"
	// KindRanking is MAP and MRR over the rankings the data gives (a
	// query with labelled candidates, relevant and not).
	KindRanking = "ranking"
	// KindRetrievalChance and KindRankingChance are what a model that
	// ranks at random scores on average on the same pools: the figures
	// to read a KindRetrieval or KindRanking row against.
	KindRetrievalChance = "retrieval_chance"
	KindRankingChance   = "ranking_chance"
	// KindClassification is a classifier trained on frozen embeddings
	// (logistic regression, SentEval's protocol) and scored on held-out
	// items: accuracy, and F1 of the positive class for binary tasks
	// (SST-2, MR, MRPC, SICK entailment, SNLI).
	KindClassification = "classification"
	// KindClassificationHead is the checkpoint's own classifier (the NLI
	// head of a multitask run) scored on an evaluation set: accuracy.
	KindClassificationHead = "classification_head"
	// KindWordContext is Spearman's ρ (and Pearson's r) between human
	// ratings of word pairs in context (SCWS) and the cosine of the two
	// words' representations.
	KindWordContext = "word_context"
)

// Scales of the predicted similarity.
const (
	// ScaleCosine correlates the cosine itself with the gold scores
	// (Wieting & Gimpel 2017).
	ScaleCosine = "cosine"
	// ScaleAngular correlates 5(1 − arccos(cos)/π), the cosine mapped to
	// the 0-5 scale (Yang et al. 2018, Eq. 2). Spearman's ρ is the same
	// on both scales (the map is monotonic); Pearson's r is not.
	ScaleAngular = "angular"
)

// Scored is a similarity set with the model's prediction for each pair.
type Scored struct {
	Set *Set
	// Cos is the cosine of the pair's embeddings; Pred the prediction on
	// the chosen scale; Gold the gold score.
	Cos, Pred, Gold []float64
}

// ScoreSimilarity embeds both sides of every pair of a similarity set and
// returns their cosines and predictions on scale.
func ScoreSimilarity(ctx context.Context, e *Embedder, s *Set, scale string) (*Scored, error) {
	as, bs := make([][]string, len(s.Pairs)), make([][]string, len(s.Pairs))
	for i, p := range s.Pairs {
		as[i], bs[i] = p.A, p.B
	}
	va, err := e.Embed(ctx, as)
	if err != nil {
		return nil, err
	}
	vb, err := e.Embed(ctx, bs)
	if err != nil {
		return nil, err
	}
	sc := &Scored{Set: s, Cos: make([]float64, len(s.Pairs)), Pred: make([]float64, len(s.Pairs)), Gold: make([]float64, len(s.Pairs))}
	for i, p := range s.Pairs {
		sc.Cos[i] = metric.Cosine(va[i], vb[i])
		sc.Pred[i] = sc.Cos[i]
		if scale == ScaleAngular {
			sc.Pred[i] = metric.Angular(sc.Cos[i])
		}
		sc.Gold[i] = p.Gold
	}
	return sc, nil
}

// Score is one similarity figure: a set's, or an aggregate's.
type Score struct {
	Corpus, Split string
	// Dataset is the set's name; for a year's aggregate the year, for
	// the average "all".
	Dataset, Year, Kind string
	Pairs               int64
	// Pearson and Spearman are ×100.
	Pearson, Spearman float64
}

// averageYears returns the STS years KindAverage takes its sets from.
func averageYears() []string { return []string{"2012", "2013", "2014", "2015"} }

// inAverage says whether a set's score enters KindAverage: the STS
// 2012-2015 test sets and SICK's test set.
func inAverage(corpus, split, year string) bool {
	return split == "test" && (corpus == "sts" && slices.Contains(averageYears(), year) || corpus == "sick")
}

// SimilarityScores returns each set's Pearson and Spearman (×100), then
// for each STS year (per split) its mean, weighted mean and pooled score,
// then the average over all sets (KindAverage), where there is one.
func SimilarityScores(scored []*Scored) []Score {
	var out []Score
	type yearKey struct{ split, year string }
	var years []yearKey
	members := map[yearKey][]int{}
	var avg []int
	for _, sc := range scored {
		s := sc.Set
		out = append(out, Score{Corpus: s.Corpus, Split: s.Split, Dataset: s.Dataset, Year: s.Year, Kind: KindDataset,
			Pairs: int64(len(sc.Pred)), Pearson: 100 * metric.Pearson(sc.Pred, sc.Gold), Spearman: 100 * metric.Spearman(sc.Pred, sc.Gold)})
		if s.Corpus == "sts" && s.Year != "" {
			k := yearKey{s.Split, s.Year}
			if _, ok := members[k]; !ok {
				years = append(years, k)
			}
			members[k] = append(members[k], len(out)-1)
		}
		if inAverage(s.Corpus, s.Split, s.Year) {
			avg = append(avg, len(out)-1)
		}
	}
	perSet := slices.Clone(out)
	for _, k := range years {
		idx := members[k]
		var pred, gold []float64
		for _, sc := range scored {
			if sc.Set.Corpus == "sts" && sc.Set.Split == k.split && sc.Set.Year == k.year {
				pred, gold = append(pred, sc.Pred...), append(gold, sc.Gold...)
			}
		}
		mean, weighted := meanOf(perSet, idx, false), meanOf(perSet, idx, true)
		mean.Kind, weighted.Kind = KindMean, KindWeightedMean
		pooled := Score{Kind: KindPooled, Pairs: int64(len(pred)), Pearson: 100 * metric.Pearson(pred, gold), Spearman: 100 * metric.Spearman(pred, gold)}
		for _, a := range []*Score{&mean, &weighted, &pooled} {
			a.Corpus, a.Split, a.Dataset, a.Year = "sts", k.split, k.year, k.year
			out = append(out, *a)
		}
	}
	if len(avg) > 0 {
		a := meanOf(perSet, avg, false)
		a.Corpus, a.Split, a.Dataset, a.Kind = "sts+sick", "test", "all", KindAverage
		out = append(out, a)
	}
	return out
}

// meanOf is the mean (weighted by pairs, or not) of the scores at idx.
func meanOf(scores []Score, idx []int, weighted bool) Score {
	var m Score
	var w float64
	for _, i := range idx {
		s := scores[i]
		f := 1.0
		if weighted {
			f = float64(s.Pairs)
		}
		m.Pearson += f * s.Pearson
		m.Spearman += f * s.Spearman
		m.Pairs += s.Pairs
		w += f
	}
	if w > 0 {
		m.Pearson /= w
		m.Spearman /= w
	}
	return m
}
