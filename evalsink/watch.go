package evalsink

import (
	"context"
	"errors"
	"io/fs"
	"log/slog"

	"github.com/parastream/parastream/stream"
)

// Watch evaluates each checkpoint announced on the checkpoint topic of
// prefix, as consumer group group, until ctx is done: those announced
// while no watcher of the group ran first, then each new one as it comes.
// An event's offset is committed once its results are durable in every
// sink (Evaluate returned), so a watcher stopped at any moment redoes at
// most the evaluation it was in, and that adds no rows (Evaluate is
// idempotent). An event whose checkpoint directory is gone is logged and
// skipped; any other failure stops the watch with the error.
func Watch(ctx context.Context, ev *Evaluator, cc stream.ClientConfig, prefix, group string, logger *slog.Logger) error {
	if logger == nil {
		logger = slog.New(slog.DiscardHandler)
	}
	return stream.WatchCheckpoints(ctx, cc, prefix, group, logger, func(ctx context.Context, e stream.CheckpointEvent) error {
		sum, err := ev.Evaluate(ctx, Target{Dir: e.Dir, Run: e.Run, Model: e.Model})
		if errors.Is(err, fs.ErrNotExist) {
			logger.Warn("skipping a checkpoint that is not there", "run", e.Run, "step", e.Step, "dir", e.Dir, "err", err)
			return nil
		}
		if err != nil {
			return err
		}
		logger.Info("evaluated announced checkpoint", "run", e.Run, "step", e.Step, "dir", e.Dir, "eval_id", sum.EvalID,
			"added", sum.Added, "sql_added", sum.SQLInserted)
		return nil
	})
}
