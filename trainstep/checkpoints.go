package trainstep

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/parastream/parastream/stream"
)

// RunPosition is the position Run saves in checkpoints (trainer.json's
// position): the run and the consumer's exact stream position; for a mix of
// datasets (Dataset then names them, joined by commas), Mix holds each
// one's and Stream is empty.
type RunPosition struct {
	Run     string          `json:"run"`
	Dataset string          `json:"dataset"`
	Split   string          `json:"split"`
	Stream  stream.Position `json:"stream"`
	Mix     *MixPosition    `json:"mix,omitempty"`
}

// LatestCheckpoint resolves dir to a checkpoint: dir itself when it is one
// (not checked: reading it says what is wrong with it), or else its newest
// good step-N subdirectory (FindCheckpoint), passing over corrupt newer
// ones silently.
func LatestCheckpoint(dir string) (string, error) {
	return FindCheckpoint(dir, nil)
}

// FindCheckpoint resolves dir to a checkpoint as LatestCheckpoint does,
// and calls passed (when not nil) for each step-N checkpoint newer than
// the one it returns that it passed over, with what is wrong with it: a
// file whose sha256 is not the one sha256sums.txt lists, a file missing,
// unreadable or truncated (ReadCheckpoint checks every file). It fails
// when dir holds no good checkpoint, naming the ones it passed over, and
// when it holds the checkpoints of several runs, naming them.
func FindCheckpoint(dir string, passed func(bad string, err error)) (string, error) {
	if _, err := os.Stat(filepath.Join(dir, FileTrainer)); err == nil {
		return dir, nil
	}
	cks, err := stepCheckpoints(dir)
	if err != nil {
		return "", fmt.Errorf("finding a checkpoint in %s: %w", dir, err)
	}
	if err := oneRun(dir); err != nil {
		return "", err
	}
	var bad []error
	for _, c := range cks { // newest first
		path := filepath.Join(dir, c.name)
		err := checkCheckpoint(path)
		if err == nil {
			return path, nil
		}
		bad = append(bad, err)
		if passed != nil {
			passed(path, err)
		}
	}
	if len(bad) > 0 {
		return "", fmt.Errorf("%s holds no good checkpoint: %w", dir, errors.Join(bad...))
	}
	return "", fmt.Errorf("%s is not a checkpoint and holds no step-N checkpoint", dir)
}

// checkCheckpoint checks a checkpoint directory without building its
// model: the sha256 of its files when it lists them (sha256sums.txt), or
// else every file read and parsed (ReadCheckpoint).
func checkCheckpoint(dir string) error {
	if _, err := os.Stat(filepath.Join(dir, FileTrainer)); err != nil {
		return err
	}
	if _, err := os.Stat(filepath.Join(dir, FileSums)); err != nil {
		_, err := ReadCheckpoint(dir)
		return err
	}
	return verifySums(dir)
}

// checkpoint writes a checkpoint at the position of the window being
// trained less the rows read and not trained, then commits the group's
// offsets to it and announces it. Unless the run writes checkpoints
// synchronously (CheckpointSync) or this is the run's last (final), the
// files are written, and the offsets committed, by a goroutine while
// training goes on (see checkpointWrite); a write still in flight from the
// checkpoint before is waited for first.
func (l *loop) checkpoint(ctx context.Context, untrained []item, final bool) error {
	defer func(t0 time.Time) { l.ckWait += time.Since(t0) }(time.Now())
	if l.tr.Steps() == l.ckStep {
		return l.waitCheckpoint() // nothing trained since the checkpoint resumed from or begun last
	}
	// At most one write in flight: the next waits (backpressure).
	if err := l.waitCheckpoint(); err != nil {
		return err
	}
	pos, mix := l.at.positions(untrained)
	rp := RunPosition{Run: l.cfg.Run, Dataset: l.cfg.datasetName(), Split: l.cfg.Split, Mix: mix}
	if mix == nil {
		rp.Stream = pos[0]
	}
	raw, err := json.Marshal(rp)
	if err != nil {
		return err
	}
	info, err := json.MarshalIndent(l.cfg, "", "  ")
	if err != nil {
		return err
	}
	dir, err := filepath.Abs(filepath.Join(l.cfg.CheckpointDir, fmt.Sprintf("step-%08d", l.tr.Steps())))
	if err != nil {
		return err
	}
	var extra map[string][]byte
	if l.tr.Config().Context != "" {
		extra = map[string][]byte{}
		for name, data := range l.cfg.Featurize {
			extra[filepath.Join(DirFeaturize, name)] = data
		}
	}
	p, err := l.tr.beginSave(dir, raw, append(info, '\n'), extra)
	if err != nil {
		return err
	}
	p.failpoint = l.cfg.checkpointFailpoint
	epoch := pos[0].Epoch
	if mix != nil {
		epoch = mix.Epoch
	}
	w := &checkpointWrite{save: p, pos: pos, step: l.tr.Steps(), done: make(chan struct{}),
		event: stream.CheckpointEvent{Run: l.cfg.Run, Model: l.tr.Config().Encoder, Dataset: l.cfg.datasetName(), Step: l.tr.Steps(),
			Epoch: epoch, Dir: dir, Final: final}}
	l.ckStep, l.pending = w.step, w
	if l.cfg.CheckpointSync || final {
		w.run(ctx, l)
		return l.waitCheckpoint()
	}
	// The commit and the announcement outlive a cancelled ctx, as the last
	// checkpoint's do (finish): the files they cover are durable.
	go w.run(context.WithoutCancel(ctx), l)
	return nil
}

// checkpointWrite is a checkpoint being written: its files, then the
// group's offsets committed to its position, its announcement and the
// removal of old checkpoints. run does it all and closes done; the loop
// reads the outcome (finishCheckpoint) after done.
type checkpointWrite struct {
	save  *pendingSave
	pos   []stream.Position
	step  int64 // the trainer's steps when it was taken
	event stream.CheckpointEvent
	done  chan struct{}

	// Outcome: what writing cost, how many old checkpoints were removed
	// (and what failed removing them), and the error that fails the run.
	saved    SaveStats
	removed  int
	slimmed  int // older checkpoints whose optimiser state was dropped
	pruneErr error
	err      error
}

// run writes the checkpoint, and once its files are durable (synced and
// renamed) commits the group's offsets to its position and announces it.
// It reads only the loop's configuration and its consumers' Commit, which
// may run beside the feed's reading.
func (w *checkpointWrite) run(ctx context.Context, l *loop) {
	defer close(w.done)
	dir := w.save.dir
	if w.saved, w.err = w.save.write(); w.err != nil {
		return
	}
	// The checkpoint is durable: the group may move past its rows.
	if err := l.c.Commit(ctx, w.pos); err != nil {
		if w.event.Final || !errors.Is(err, stream.ErrUnreachable) {
			w.err = fmt.Errorf("checkpoint %s is written, but %w", dir, err)
			return
		}
		// The broker did not come back in time: the checkpoint holds the
		// exact position, and the next checkpoint's commit covers these
		// rows (the group's offsets only ever move forward with them).
		l.cfg.Logger.Warn("the group's offsets were not committed; the next checkpoint commits them", "checkpoint", dir, "err", err)
	}
	w.event.Time = time.Now().UTC()
	if err := stream.AnnounceCheckpoint(ctx, l.cfg.Client, l.cfg.Prefix, w.event); err != nil {
		w.err = fmt.Errorf("checkpoint %s is written, but %w", dir, err)
		return
	}
	if l.cfg.KeepCheckpoints > 0 {
		w.removed, w.pruneErr = pruneCheckpoints(l.cfg.CheckpointDir, l.cfg.KeepCheckpoints)
	}
	var err error
	w.slimmed, err = slimCheckpoints(l.cfg.CheckpointDir, l.cfg.KeepOptimizer)
	w.pruneErr = errors.Join(w.pruneErr, err)
}

// pollCheckpoint takes the outcome of a write in flight that is done; it
// does not wait.
func (l *loop) pollCheckpoint() error {
	if l.pending == nil {
		return nil
	}
	select {
	case <-l.pending.done:
		return l.waitCheckpoint()
	default:
		return nil
	}
}

// waitCheckpoint waits for the write in flight, if any, and takes its
// outcome: the checkpoint is the last durable one, and a progress line
// says so; a failed write fails the run.
func (l *loop) waitCheckpoint() error {
	w := l.pending
	if w == nil {
		return nil
	}
	<-w.done
	l.pending = nil
	dir := w.save.dir
	if w.save.sums != nil {
		// Written: the next checkpoint links its unchanged files.
		l.tr.noteSaved(w.save)
		l.lastDir, l.lastStep = dir, w.step
	}
	if w.err != nil {
		return w.err
	}
	note := fmt.Sprintf(" checkpoint %s (%s", dir, w.saved)
	if trained := l.tr.Steps() - w.step; trained > 0 {
		note += fmt.Sprintf(", in the background of %d steps", trained)
	}
	note += ")"
	if w.pruneErr != nil {
		// The new checkpoint is whole: an old one left behind loses nothing.
		l.cfg.Logger.Warn("removing old checkpoints", "dir", l.cfg.CheckpointDir, "err", w.pruneErr)
	}
	if w.removed > 0 {
		note += fmt.Sprintf(", %d older removed (--keep-checkpoints %d)", w.removed, l.cfg.KeepCheckpoints)
	}
	if w.slimmed > 0 {
		note += fmt.Sprintf(", optimiser state dropped from %d older (--keep-optimizer %d)", w.slimmed, l.cfg.KeepOptimizer)
	}
	l.progress(note)
	return nil
}

// stepCheckpoint is a step-N directory of a checkpoint directory.
type stepCheckpoint struct {
	name string
	step int64
}

// stepCheckpoints lists dir's step-N directories, newest (highest N) first.
func stepCheckpoints(dir string) ([]stepCheckpoint, error) {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return nil, err
	}
	var cks []stepCheckpoint
	for _, e := range entries {
		n, ok := strings.CutPrefix(e.Name(), "step-")
		step, err := strconv.ParseInt(n, 10, 64)
		if e.IsDir() && ok && err == nil {
			cks = append(cks, stepCheckpoint{e.Name(), step})
		}
	}
	slices.SortFunc(cks, func(a, b stepCheckpoint) int { return cmp.Compare(b.step, a.step) })
	return cks, nil
}

// pruneCheckpoints removes the step-N checkpoints of dir but the newest
// keep. It returns how many it removed.
func pruneCheckpoints(dir string, keep int) (int, error) {
	// Under the directory's lock, with no checkpoint being written, a
	// .step-N.*.tmp directory is a killed trainer's: it goes too.
	removed, err := removeLeftovers(dir)
	errs := []error{err}
	cks, err := stepCheckpoints(dir)
	if err != nil || len(cks) <= keep {
		return removed, errors.Join(append(errs, err)...)
	}
	for _, c := range cks[keep:] {
		// A checkpoint a watcher is evaluating (ClaimCheckpoint) stays
		// until a later prune.
		ok, err := removeUnclaimed(filepath.Join(dir, c.name))
		if err != nil {
			errs = append(errs, err)
			continue
		}
		if ok {
			removed++
		}
	}
	return removed, errors.Join(errs...)
}

// WithoutRecords returns pos less the given rows, which a consumer at pos
// has handed out: a consumer started at the result hands them out again
// (and every other row pos had not handed out), so that rows read but not
// trained at a checkpoint are trained after a resume. The rows must be of
// pos's epoch.
func WithoutRecords(pos stream.Position, recs []stream.Record) stream.Position {
	if len(recs) == 0 {
		return pos
	}
	pos.Partitions = slices.Clone(pos.Partitions)
	byShard := map[string][]int64{}
	for _, r := range recs {
		if r.Epoch != pos.Epoch {
			panic(fmt.Sprintf("trainstep: a row of epoch %d taken out of a position in epoch %d", r.Epoch, pos.Epoch))
		}
		byShard[r.Shard] = append(byShard[r.Shard], r.Index)
		for i := range pos.Partitions {
			if p := &pos.Partitions[i]; p.Partition == r.Partition {
				// Read again from the row's message on: the rows there that
				// were handed out and trained are in Delivered, and skipped.
				p.Offset = min(p.Offset, r.Offset)
			}
		}
	}
	delivered := make(map[string][]stream.Range, len(pos.Delivered))
	for shard, rs := range pos.Delivered {
		delivered[shard] = rs
	}
	for shard, idx := range byShard {
		slices.Sort(idx)
		var out []stream.Range
		k := 0
		for _, r := range delivered[shard] {
			for ; k < len(idx) && idx[k] < r.End; k++ {
				if idx[k] < r.First {
					continue
				}
				if idx[k] > r.First {
					out = append(out, stream.Range{First: r.First, End: idx[k]})
				}
				r.First = idx[k] + 1
			}
			if r.First < r.End {
				out = append(out, r)
			}
		}
		if len(out) == 0 {
			delete(delivered, shard)
		} else {
			delivered[shard] = out
		}
	}
	pos.Delivered = delivered
	return pos
}
