package evalsink

import (
	"context"
	"fmt"
	"time"

	"github.com/parastream/parastream/evalsink/metric"
	"github.com/parastream/parastream/trainstep"
	"github.com/parastream/parastream/trainstep/compute"
)

// nliHeadTask scores the checkpoint's own NLI head (a multitask run's,
// compute.Config.NLIHidden; Yang et al. 2018 §2.4 and §4.3) on the NLI
// evaluation sets (snli, multinli; every split but train): each pair's
// class is the head's argmax over its sentences' embeddings, and the row
// (KindClassificationHead) is the accuracy against the gold class. A
// checkpoint without a head, and an adapted evaluation (the head was
// trained on the embeddings as they are, not on the adaptation's map of
// them), give no row.
func nliHeadTask(ctx context.Context, env TaskEnv) ([]RowFigures, error) {
	var sets []*Set
	for _, s := range env.Sets.Sets {
		if trainstep.IsNLIDataset(s.Corpus) && s.Split != "train" {
			sets = append(sets, s)
		}
	}
	if len(sets) == 0 {
		return nil, nil
	}
	if env.Model.NLIHidden <= 0 {
		return nil, nil
	}
	if env.Base.Adaptation != "" {
		env.info("the NLI head is not scored on adapted embeddings (it was trained on the embeddings as they are)", "adaptation", env.Base.Adaptation)
		return nil, nil
	}
	head, err := compute.NewNLIHead(env.Model, env.Emb.model.Params())
	if err != nil {
		return nil, fmt.Errorf("checkpoint %s: %w", env.Dir, err)
	}
	var out []RowFigures
	for _, s := range sets {
		start := time.Now()
		rf, err := scoreNLIHead(ctx, env, head, s)
		if err != nil {
			return nil, fmt.Errorf("scoring the NLI head on %s: %w", s.Dataset, err)
		}
		env.info("scored the NLI head", "set", s.Dataset, "pairs", rf.Row.Pairs, "accuracy", *rf.Row.Accuracy,
			"elapsed", time.Since(start).Round(time.Millisecond))
		out = append(out, rf)
	}
	return out, nil
}

// scoreNLIHead classifies the pairs of one set with head.
func scoreNLIHead(ctx context.Context, env TaskEnv, head *compute.NLIHead, s *Set) (RowFigures, error) {
	a, b := make([][]string, len(s.Pairs)), make([][]string, len(s.Pairs))
	for i, p := range s.Pairs {
		a[i], b[i] = p.A, p.B
	}
	u, err := env.Emb.Embed(ctx, a)
	if err != nil {
		return RowFigures{}, err
	}
	v, err := env.Emb.Embed(ctx, b)
	if err != nil {
		return RowFigures{}, err
	}
	fig := metric.Figure{Column: "accuracy", Metric: metric.MetricMean, Items: make([]metric.Item, len(s.Pairs))}
	correct := 0
	for i, p := range s.Pairs {
		if p.Gold != 0 && p.Gold != 1 && p.Gold != 2 {
			return RowFigures{}, fmt.Errorf("pair %s (%s): label %g is not an NLI class", p.ID, p.Source, p.Gold)
		}
		ok := head.Predict(u[i], v[i]) == int(p.Gold)
		if ok {
			correct++
		}
		fig.Items[i] = metric.Item{ID: p.ID, Pred: b2f(ok), Gold: p.Gold}
	}
	r := env.Base
	r.Corpus, r.Split, r.Dataset, r.Kind, r.Pairs = s.Corpus, s.Split, s.Dataset, KindClassificationHead, int64(len(s.Pairs))
	r.Accuracy = ptr(100 * float64(correct) / float64(max(len(s.Pairs), 1)))
	return RowFigures{Row: r, Figures: []metric.Figure{fig}}, nil
}
