package evalsink

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"slices"
	"time"

	"github.com/parastream/parastream/evalsink/metric"
	"github.com/parastream/parastream/stream"
	"github.com/parastream/parastream/trainstep"
)

// Watch evaluates each checkpoint announced on the checkpoint topic of
// prefix, as consumer group group, until ctx is done: those announced
// while no watcher of the group ran first, then each new one as it comes.
// Each evaluation is then compared with the best evaluation of its run
// before it (CompareWithBest) and the comparison recorded. An event's
// offset is committed once its results and its comparison are durable in
// every sink, so a watcher stopped at any moment redoes at most the
// evaluation it was in, and that adds no rows (Evaluate and
// RecordComparison are idempotent). The checkpoint is claimed while it
// is evaluated (trainstep.ClaimCheckpoint: the trainer's pruning passes
// it over); an event whose checkpoint is gone, being removed or does not
// match its sha256sums.txt is logged on one line and skipped; any other
// failure (a sink's) stops the watch with the error.
func Watch(ctx context.Context, ev *Evaluator, cc stream.ClientConfig, prefix, group string, logger *slog.Logger) error {
	if logger == nil {
		logger = slog.New(slog.DiscardHandler)
	}
	return stream.WatchCheckpoints(ctx, cc, prefix, group, logger, func(ctx context.Context, e stream.CheckpointEvent) error {
		// Claimed, the checkpoint is not pruned while it is evaluated; one
		// gone already, being removed or unreadable is passed over.
		skip := func(why string, err error) error {
			logger.Warn("skipping a checkpoint that "+why, "run", e.Run, "step", e.Step, "dir", e.Dir, "err", err)
			if ev.cfg.Watched != nil {
				ev.cfg.Watched(Watched{Run: e.Run, Step: e.Step, Dir: e.Dir, Skipped: fmt.Sprintf("%s (%v)", why, err)})
			}
			return nil
		}
		release, err := trainstep.ClaimCheckpoint(e.Dir)
		if err != nil {
			return skip("is gone or cannot be read", err)
		}
		defer release()
		sum, err := ev.Evaluate(ctx, Target{Dir: e.Dir, Run: e.Run, Model: e.Model})
		if errors.Is(err, fs.ErrNotExist) {
			return skip("is not there", err)
		}
		if err != nil {
			// A checkpoint that cannot be read (one without sha256sums.txt
			// that a trainer of an earlier version was removing) is
			// skipped; another failure (a sink's) stops the watch.
			if cerr := readable(e.Dir); cerr != nil {
				return skip("is gone or cannot be read", cerr)
			}
			return err
		}
		attrs := []any{"run", e.Run, "step", e.Step, "dir", e.Dir, "eval_id", sum.EvalID, "added", sum.Added, "sql_added", sum.SQLInserted}
		c, added, err := ev.CompareWithBest(ctx, sum)
		if err != nil {
			return err
		}
		if c != nil {
			better, worse, noise := c.Counts()
			attrs = append(attrs, "against_step", c.Rows[0].StepA, "against_eval_id", c.Rows[0].EvalA,
				"better", better, "worse", worse, "within_noise", noise, "comparison_added", added)
			if h := c.Headline(); h != nil {
				attrs = append(attrs, "headline", h.Label+" "+columnName(h.Column), "diff", signed(h.Diff),
					"ci", diffInterval(h.CILow, h.CIHigh), "verdict", h.Verdict)
			}
		} else {
			attrs = append(attrs, "verdict", "no evaluation of the run before it with these data and options: nothing to compare")
		}
		logger.Info("evaluated announced checkpoint", attrs...)
		if ev.cfg.Watched != nil {
			w := watchedOf(sum, c, ev.cfg.Headline)
			w.Step, w.Dir = e.Step, e.Dir // as announced
			ev.cfg.Watched(w)
		}
		return nil
	})
}

// readable reports why the checkpoint dir cannot be evaluated: its files
// cannot be read, or it has no vocabulary to map tokens with.
func readable(dir string) error {
	ck, err := trainstep.ReadCheckpoint(dir)
	if err != nil {
		return err
	}
	_, err = ck.Lexicon()
	return err
}

// CompareWithBest compares the evaluation sum (Evaluate's) with the best
// evaluation of its run before it, made alike (the same data, scale,
// candidates, seed and adaptation), and records the comparison
// (RecordComparison, origin OriginWatch), then rewrites the views. Before
// it: a lower step, or the same step evaluated earlier, so the choice
// does not depend on the order checkpoints were announced in. Best: the
// highest headline figure (Config.Headline; ties: the latest). It returns
// a nil comparison when there is none before it; added is false when the
// comparison was recorded already (the same evaluations and headline).
func (ev *Evaluator) CompareWithBest(ctx context.Context, sum *Summary) (c *CheckpointComparison, added bool, err error) {
	if err := ctx.Err(); err != nil {
		return nil, false, err
	}
	out := ev.cfg.Out
	opts, ok, err := readOptions(out, sum.EvalID)
	if err != nil || !ok || len(sum.Rows) == 0 {
		return nil, false, err
	}
	head, named, ok := chooseHeadline(rowFigureKeys(sum.Rows), ev.cfg.Headline)
	if !ok {
		return nil, false, nil
	}
	if ev.cfg.Headline != "" && !named {
		ev.log.Warn("the headline figure named is not among the evaluation's figures: using the default", "headline", ev.cfg.Headline,
			"used", FigureRef{head.dataset, head.kind, head.column}.String())
	}
	all, err := ReadResults(out)
	if err != nil {
		return nil, false, err
	}
	b := sum.Rows[0]
	type candidate struct {
		evalID string
		step   int64
		at     time.Time
		value  float64
	}
	var cands []candidate
	for _, r := range all {
		before := r.Step < b.Step || r.Step == b.Step && r.EvaluatedAt.Before(b.EvaluatedAt)
		if r.EvalID == b.EvalID || r.Run != b.Run || !before || keyOf(r) != (lineKey{head.corpus, head.split, head.dataset, head.kind}) {
			continue
		}
		if p, err := r.column(head.column); err == nil && *p != nil {
			cands = append(cands, candidate{r.EvalID, r.Step, r.EvaluatedAt, **p})
		}
	}
	// The best first; the first made alike is the one.
	slices.SortFunc(cands, func(x, y candidate) int {
		return cmp.Or(cmp.Compare(y.value, x.value), cmp.Compare(y.step, x.step), y.at.Compare(x.at))
	})
	best := ""
	for _, cd := range cands {
		o, ok, err := readOptions(out, cd.evalID)
		if err != nil {
			return nil, false, err
		}
		if ok && o == opts {
			best = cd.evalID
			break
		}
	}
	if best == "" {
		return nil, false, nil
	}
	c, err = CompareEvaluations(out, best, sum.EvalID, CompareOptions{
		Bootstrap: metric.Bootstrap{Resamples: ev.cfg.Resamples, Seed: ev.cfg.Seed},
		Headline:  FigureRef{head.dataset, head.kind, head.column}.String(), Origin: OriginWatch})
	if err != nil {
		return nil, false, err
	}
	if added, err = RecordComparison(out, c); err != nil || !added {
		return c, added, err
	}
	// The report's comparison section: the results read above are still
	// every part (recording adds a comparison, not results).
	_, err = WriteViews(out, all)
	return c, added, err
}
