package trainstep

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"slices"
	"time"

	"github.com/parastream/parastream/internal/progress"
	"github.com/parastream/parastream/trainstep/compute"
)

// loop is one Run.
type loop struct {
	cfg   RunConfig
	tr    *Trainer
	c     *mixer
	log   *slog.Logger
	trace *os.File

	// tokenizeKnown is set when cfg.Tokenize comes from the resumed
	// checkpoint; else Run takes it from the vocabulary (tokenizeOf).
	tokenizeKnown bool
	// lastDir and lastStep are the last durable checkpoint (written, or
	// resumed from; lastStep -1: none); ckStep the step of the last one
	// begun, pending its write while it is in flight.
	lastDir  string
	lastStep int64
	ckStep   int64
	pending  *checkpointWrite
	// at is the consumers' state after the rows of the window being
	// trained were read; feeder runs the feed ahead of the step.
	at     *mixState
	feeder *feeder

	start, lastLine time.Time
	feedWait        time.Duration
	ckWait          time.Duration
	steps, examples int64
	skipped         int64
	filtered        int64
	negatives       int64 // filtered rows indexed as hard negatives
	withNeg         int64 // pairs trained with a hard negative
	lossSum         float64
	lossN           int
	// nliLossSum and nliN are lossSum and lossN of the NLI batches (a
	// multitask run), which the progress line gives apart.
	nliLossSum   float64
	nliN         int
	lineExamples int64
	lastLoss     float64
	traceBuf     bytes.Buffer
}

// errStop ends the loop normally (MaxSteps or Duration reached).
var errStop = errors.New("stop")

func (l *loop) run(ctx context.Context) (RunSummary, error) {
	l.start = time.Now()
	l.lastLine = l.start
	l.at = l.c.state(l.cfg.Split)
	err := l.train(ctx)
	l.stopFeed()
	// No write outlives the run (nor the trainer, closed after it); the
	// summary names the checkpoint it wrote last.
	werr := l.waitCheckpoint()
	return l.summary(), errors.Join(err, werr)
}

// train runs the loop: windows of batches from the feed, a step each, and
// checkpoints.
func (l *loop) train(ctx context.Context) error {
	if l.cfg.SaveInitial && l.lastStep < 0 {
		if err := l.checkpoint(ctx, nil, false); err != nil {
			return err
		}
	}
	readCtx, cancel := ctx, context.CancelFunc(func() {})
	if l.cfg.Duration > 0 {
		readCtx, cancel = context.WithTimeout(ctx, l.cfg.Duration)
	}
	defer cancel()
	f := &feed{c: l.c, cfg: l.cfg, step: l.tr.Steps()}
	if l.cfg.HardNegatives {
		f.negs = newNegIndex()
	}
	next := func() *window { return f.next(readCtx) }
	if l.cfg.FeedAhead > 0 {
		l.feeder = startFeeder(readCtx, f, l.cfg.FeedAhead)
		next = func() *window {
			w, ok := <-l.feeder.out
			if !ok { // the feed stops only after a last window, or when stopped
				return &window{err: errors.New("trainstep: the feed stopped before its last window"), at: l.at}
			}
			return w
		}
	}
	for {
		t0 := time.Now()
		w := next()
		l.feedWait += time.Since(t0)
		l.at = w.at
		l.skipped += w.skipped
		l.filtered += w.filtered
		l.negatives += w.negatives
		l.withNeg += w.withNeg
		if w.err != nil {
			return w.err
		}
		if w.pool != nil {
			return l.finish(ctx, w.readErr, w.pool)
		}
		for i, b := range w.batches {
			if err := l.step(b, w.pairs[i]); err != nil {
				return err
			}
			if err := l.pollCheckpoint(); err != nil {
				return err
			}
			if w.held != nil {
				continue // the consumer is in the next epoch: checkpoints wait for the epoch's end
			}
			// The window's untrained batches, flattened only for a stop or a
			// checkpoint (each step doing it copied a window's rows a step).
			rest := w.batches[i+1:]
			if !l.at.returnable(rest...) {
				continue // rows of a mixed dataset's finished pass: stops and checkpoints wait for them
			}
			if err := l.stopping(ctx); err != nil {
				return l.finish(ctx, err, slices.Concat(rest...))
			}
			if l.tr.Steps()-max(l.ckStep, 0) >= l.cfg.CheckpointEvery {
				if err := l.checkpoint(ctx, slices.Concat(rest...), false); err != nil {
					return err
				}
			}
		}
		if w.held != nil {
			l.tr.EndEpoch()
			untrained := []item{*w.held}
			if err := l.stopping(ctx); err != nil {
				return l.finish(ctx, err, untrained)
			}
			if l.tr.Steps()-max(l.ckStep, 0) >= l.cfg.CheckpointEvery {
				if err := l.checkpoint(ctx, untrained, false); err != nil {
					return err
				}
			}
		}
		if w.readErr != nil {
			return l.finish(ctx, w.readErr, nil)
		}
		if w.eof {
			l.tr.EndEpoch()
			return l.finish(ctx, errStop, nil)
		}
	}
}

// stopFeed stops the feed's goroutine, if it runs.
func (l *loop) stopFeed() {
	if l.feeder != nil {
		l.feeder.stop()
		l.feeder = nil
	}
}

// stopping returns errStop when MaxSteps or Duration is reached, ctx's
// error when it is done, nil otherwise.
func (l *loop) stopping(ctx context.Context) error {
	switch {
	case ctx.Err() != nil:
		return ctx.Err()
	case l.cfg.MaxSteps > 0 && l.steps >= l.cfg.MaxSteps, l.cfg.Duration > 0 && time.Since(l.start) >= l.cfg.Duration:
		return errStop
	}
	return nil
}

// finish writes the last checkpoint, leaving out the untrained rows, and
// returns the run's result for why: errStop (or a read that ran out of
// Duration) ends normally; ctx's error is returned after the checkpoint; any
// other error is returned as it is, after the checkpoint.
func (l *loop) finish(ctx context.Context, why error, untrained []item) error {
	l.stopFeed() // nothing more is read: the last checkpoint leaves out what the feed read ahead
	if ctx.Err() == nil && errors.Is(why, context.DeadlineExceeded) && l.cfg.Duration > 0 {
		why = errStop
	}
	if l.steps == 0 && l.cfg.Resume == "" {
		// A new run that trained nothing has nothing to keep: no
		// checkpoint (a step-0 one would look like a run to resume).
		if why = ignoreStop(why); why == nil {
			s := l.at.stats
			why = fmt.Errorf("trainstep: run %s trained nothing (%d rows read, %d filtered, %d skipped): no checkpoint written", l.cfg.Run, s.Rows, l.filtered, l.skipped)
		}
		return why
	}
	cctx := ctx
	if ctx.Err() != nil {
		// Cancelled: the checkpoint still commits and announces.
		var cancel context.CancelFunc
		cctx, cancel = context.WithTimeout(context.WithoutCancel(ctx), 30*time.Second)
		defer cancel()
	}
	if err := l.checkpoint(cctx, untrained, true); err != nil {
		return errors.Join(err, ignoreStop(why))
	}
	return ignoreStop(why)
}

func ignoreStop(err error) error {
	if errors.Is(err, errStop) {
		return nil
	}
	return err
}

// step trains one batch (its rows b, made into pairs) and traces its ids.
func (l *loop) step(b []item, pairs compute.Pairs) error {
	loss, err := l.tr.StepPairs(pairs)
	if err != nil {
		// The last durable checkpoint is named below: a write in flight
		// finishes first (or fails, and is reported too).
		if werr := l.waitCheckpoint(); werr != nil {
			return errors.Join(err, werr)
		}
		switch {
		case errors.Is(err, ErrNonFinite):
			last := "no checkpoint was written yet"
			if l.lastDir != "" {
				last = fmt.Sprintf("the last good checkpoint is %s (step %d): resume from it with a lower learning rate", l.lastDir, l.lastStep)
			}
			return fmt.Errorf("training stopped: %w; %s", err, last)
		case errors.Is(err, compute.ErrMemoryBudget):
			// Nothing is written: the stream position stays that of the
			// last checkpoint, to which alone the group's offsets are
			// committed.
			last := "no checkpoint was written yet and no offset committed: a new run starts from the beginning"
			if l.lastDir != "" {
				last = fmt.Sprintf("the stream position is that of the last checkpoint, %s (step %d): resume from it with a larger budget", l.lastDir, l.lastStep)
			}
			return fmt.Errorf("training stopped at a batch of %d pairs: %w; %s", len(b), err, last)
		}
		return err
	}
	l.steps++
	l.examples += int64(len(b))
	l.lineExamples += int64(len(b))
	if pairs.NLI {
		l.nliLossSum += loss
		l.nliN++
	} else {
		l.lossSum += loss
		l.lossN++
	}
	if l.trace != nil {
		l.traceBuf.Reset()
		for _, r := range b {
			if len(l.c.names) > 1 {
				// A mix: the row's dataset, and the dataset's own pass.
				fmt.Fprintf(&l.traceBuf, "%d\t%d\t%s\t%s\t%d\n", l.tr.Steps(), r.epoch, r.ID, l.c.names[r.ds], r.Record.Epoch)
			} else {
				fmt.Fprintf(&l.traceBuf, "%d\t%d\t%s\n", l.tr.Steps(), r.epoch, r.ID)
			}
		}
		if _, err := l.trace.Write(l.traceBuf.Bytes()); err != nil {
			return fmt.Errorf("writing the ids trace: %w", err)
		}
		if err := l.trace.Sync(); err != nil {
			return fmt.Errorf("syncing the ids trace: %w", err)
		}
	}
	if time.Since(l.lastLine) >= l.cfg.ProgressEvery {
		l.progress("")
	}
	return nil
}

// progress writes a progress line: examples/s, loss and lag since the last
// line.
func (l *loop) progress(note string) {
	now := time.Now()
	if l.lossN > 0 {
		l.lastLoss = l.lossSum / float64(l.lossN)
	} else if l.nliN > 0 {
		l.lastLoss = l.nliLossSum / float64(l.nliN) // an NLI-only run
	}
	if l.cfg.Progress != nil {
		s := l.at.stats
		rate := float64(l.lineExamples) / max(now.Sub(l.lastLine).Seconds(), 1e-9)
		nli := ""
		if l.nliN > 0 {
			nli = fmt.Sprintf(" nli loss %.4f (%d steps)", l.nliLossSum/float64(l.nliN), l.nliN)
		}
		detail := ""
		if l.cfg.ProgressDetail {
			detail = fmt.Sprintf(" lag %d messages on %s%s", s.Lag, l.tr.ShortDevice(), memoryNote(l.tr.Model()))
		}
		fmt.Fprintf(l.cfg.Progress, "train %s: step %d epoch %d rows %s %.0f examples/s%s loss %.4f%s%s%s\n",
			l.cfg.Run, l.tr.Steps(), s.Epoch, l.at.rows, rate, eta(l.cfg.Epochs, s.Epoch, l.at, rate), l.lastLoss, nli, detail, note)
	}
	l.lastLine, l.lineExamples, l.lossSum, l.lossN, l.nliLossSum, l.nliN = now, 0, 0, 0, 0, 0
}

// eta is the progress line's time left, " ETA 1m20s": the rows left in
// this epoch and in the epochs after it, at rate rows a second; "" when
// the run has no end in epochs (--epochs 0) or no rate yet.
func eta(epochs, epoch int, at *mixState, rate float64) string {
	if epochs <= 0 || at == nil || at.total <= 0 || rate <= 0 {
		return ""
	}
	left := at.total - at.done + int64(max(epochs-epoch, 0))*at.total
	return " ETA " + progress.Duration(time.Duration(float64(left)/rate*float64(time.Second)))
}

// memoryNote is the progress line's part on the model's memory, for a
// model that accounts for it: its graphs, the bytes they hold between
// steps, the most one takes while it runs, and the budget.
func memoryNote(m compute.Model) string {
	r, ok := m.(compute.MemoryReporter)
	if !ok {
		return ""
	}
	mem := r.Memory()
	s := fmt.Sprintf(", graphs %d holding %s, largest run %s", mem.Graphs, compute.FormatBytes(mem.Held), compute.FormatBytes(mem.Run))
	if mem.Budget > 0 {
		s += fmt.Sprintf(", %s of a %s budget", compute.FormatBytes(mem.Peak()), compute.FormatBytes(mem.Budget))
	}
	return s
}

func (l *loop) summary() RunSummary {
	// The steps since the last progress line, when there are any: a run
	// that failed before its first line (or checkpoint) has no other.
	loss := l.lastLoss
	if l.lossN > 0 {
		loss = l.lossSum / float64(l.lossN)
	} else if l.nliN > 0 {
		loss = l.nliLossSum / float64(l.nliN)
	}
	return RunSummary{Run: l.cfg.Run, Steps: l.steps, TotalSteps: l.tr.Steps(), Examples: l.examples, Skipped: l.skipped, Filtered: l.filtered, Negatives: l.negatives, WithNegative: l.withNeg,
		Epoch: l.at.stats.Epoch, Checkpoint: l.lastDir, Loss: loss, Elapsed: time.Since(l.start), Stream: l.at.stats,
		Device: l.tr.Device(), FeedWait: l.feedWait, CheckpointWait: l.ckWait}
}
