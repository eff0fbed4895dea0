package trainstep

import (
	"context"
	"errors"
	"fmt"
	"hash/fnv"
	"io"
	"math/rand/v2"

	"github.com/parastream/parastream/stream"
	"github.com/parastream/parastream/trainstep/compute"
)

// DefaultFeedAhead is RunConfig.FeedAhead's default: windows of ready
// batches the feed keeps ahead of the step.
const DefaultFeedAhead = 2

// The feed reads the rows of a run a window at a time (RunConfig.Window
// batches of rows), checks and filters them, sorts them into length
// buckets, cuts the buckets into batches, shuffles the batches and makes
// their pairs: a window of ready batches. With RunConfig.FeedAhead > 0 it
// runs in a goroutine of its own, up to FeedAhead windows ahead of the
// step, so that the step does not wait for reading and decoding while the
// feed keeps up; otherwise the loop calls it between steps (the serial
// feed). Both give the same windows in the same order: a window's shuffle
// is seeded by the step it starts at, which the feed counts itself (every
// batch is one step), and each window carries the consumers' state after
// its rows were read (mixState), so that a checkpoint's position leaves
// out exactly the rows read and not trained, however far the feed has
// read ahead.

// window is one window of rows, ready to train.
type window struct {
	batches [][]item
	pairs   []compute.Pairs // each batch as the step takes it (feed.pairs)
	// held is the first row of the next epoch, read after the window's
	// rows: it starts the next window.
	held *item
	// eof: the last epoch ended after the window's rows; readErr: reading
	// failed after them (ctx done, Duration over, a broker error). pool,
	// set with readErr when the rows read can be given back, are those
	// rows, untrained (batches is then empty).
	eof     bool
	readErr error
	pool    []item
	// err is a row that cannot be trained: the run fails.
	err error
	// skipped and filtered count the window's rows left out (RunSummary);
	// negatives the filtered rows indexed as hard negatives, withNeg the
	// pairs given one.
	skipped, filtered, negatives, withNeg int64
	// at is the consumers' state after the window's rows were read.
	at *mixState
}

// feed makes windows of ready batches (see above).
type feed struct {
	c     *mixer
	cfg   RunConfig // its Model is the trainer's
	step  int64     // the step the next window starts at
	epoch int       // the run's epoch of the rows being read (0: none yet)
	held  *item
	negs  *negIndex // the hard negatives read so far (RunConfig.HardNegatives), or nil
}

// next reads, checks, buckets, shuffles and pairs the next window.
func (f *feed) next(ctx context.Context) *window {
	w := &window{}
	size := f.cfg.Window * f.cfg.Model.BatchSize
	pool := make([]item, 0, size)
	if f.held != nil {
		pool, f.epoch, f.held = append(pool, *f.held), f.held.epoch, nil
	}
	for len(pool) < size {
		rec, err := f.c.Next(ctx)
		if errors.Is(err, io.EOF) {
			w.eof = true
			break
		}
		if err != nil {
			w.readErr = err
			break
		}
		if err := f.check(rec.Record); err != nil {
			w.err = err
			break
		}
		if f.c.nli[rec.ds] {
			if rec.Label == nil {
				w.err = fmt.Errorf("trainstep: row %s (%s row %d) of the NLI dataset %s has no label: NLI rows need their class (0 entailment, 1 neutral, 2 contradiction)",
					rec.ID, rec.Shard, rec.Index, f.c.names[rec.ds])
				break
			}
		} else if role := f.role(rec); role != rolePositive {
			w.filtered++ // handed out and done with: the position covers it
			if role == roleNegative && f.negs != nil {
				f.negs.add(rec)
				w.negatives++
			}
			continue
		}
		if f.epoch == 0 {
			f.epoch = rec.epoch
		}
		if rec.epoch != f.epoch {
			f.held, w.held = &rec, &rec
			break
		}
		pool = append(pool, rec)
	}
	w.at = f.c.state(f.cfg.Split)
	if w.err != nil {
		return w
	}
	if w.readErr != nil && w.at.returnable(pool) {
		// Cancelled or out of time while reading: the pool is not trained,
		// and the checkpoint leaves it out. (A pool holding rows of a mixed
		// dataset's finished pass, which cannot be read again, is trained
		// first.)
		w.pool = pool
		return w
	}
	// The NLI datasets' rows are batched apart: a batch trains one loss.
	var pairRows, nliRows []item
	for _, r := range pool {
		if f.c.nli[r.ds] {
			nliRows = append(nliRows, r)
		} else {
			pairRows = append(pairRows, r)
		}
	}
	lens := func(r item) (int, int) { return len(r.IDsA), max(len(r.IDsB), len(r.neg)) }
	var negRows []item
	if f.negs != nil {
		pairRows, negRows = f.withNegatives(pairRows)
		if len(negRows) == 1 {
			// One pair cannot be a batch (it has no in-batch negative):
			// it trains among the others, without its hard negative.
			r := negRows[0]
			r.neg = nil
			pairRows, negRows = append(pairRows, r), nil
		}
		w.withNeg = int64(len(negRows))
	}
	batches, skipped := bucket(pairRows, f.cfg.Model.BatchSize, f.cfg.Model.MaxLen, lens)
	negBatches, negSkipped := bucket(negRows, f.cfg.Model.BatchSize, f.cfg.Model.MaxLen, lens)
	batches, skipped = append(batches, negBatches...), skipped+negSkipped
	nliBatches, nliSkipped := bucket(nliRows, f.cfg.Model.BatchSize, f.cfg.Model.MaxLen, lens)
	batches = append(batches, nliBatches...)
	w.skipped = int64(skipped + nliSkipped)
	rng := rand.New(rand.NewPCG(f.cfg.Model.Seed, uint64(f.step)))
	rng.Shuffle(len(batches), func(i, j int) { batches[i], batches[j] = batches[j], batches[i] })
	f.step += int64(len(batches))
	w.batches = batches
	w.pairs = make([]compute.Pairs, len(batches))
	for i, b := range batches {
		w.pairs[i] = f.pairs(b)
	}
	return w
}

// pairs makes a batch's rows the step's input (Trainer.StepPairs): their
// ids, their labels when the loss or the NLI head reads them, and their
// topic vectors when the model has a context. A batch is of one dataset
// kind (NLI or pairs).
func (f *feed) pairs(b []item) compute.Pairs {
	p := compute.Pairs{A: make([][]int32, len(b)), B: make([][]int32, len(b)), NLI: len(b) > 0 && f.c.nli[b[0].ds]}
	if f.cfg.Model.Loss == compute.LossSim || p.NLI {
		p.Labels = make([]float32, len(b))
	}
	if f.cfg.Model.Context != "" {
		p.CtxA, p.CtxB = make([][]float32, len(b)), make([][]float32, len(b))
	}
	if len(b) > 0 && b[0].neg != nil {
		p.Neg = make([][]int32, len(b))
	}
	for j, r := range b {
		p.A[j], p.B[j] = r.IDsA, r.IDsB
		if p.Neg != nil {
			p.Neg[j] = r.neg
		}
		if p.Labels != nil && r.Label != nil {
			p.Labels[j] = float32(*r.Label)
		}
		if p.CtxA != nil {
			p.CtxA[j], p.CtxB[j] = r.TopicsA, r.TopicsB
		}
	}
	return p
}

// role is what a row of a pair dataset trains as: its dataset's rule
// (pairRules), one threshold for all (MinLabel), or a positive whatever
// its label (AllPairs).
func (f *feed) role(rec item) pairRole {
	switch {
	case f.cfg.AllPairs:
		return rolePositive
	case f.cfg.MinLabel != nil:
		if rec.Label != nil && *rec.Label < *f.cfg.MinLabel {
			return roleNegative
		}
		return rolePositive
	}
	rule, ok := ruleFor(f.c.names[rec.ds], rec.Corpus)
	if !ok {
		return rolePositive
	}
	return rule.role(rec.Label)
}

// withNegatives splits rows into those without a hard negative and those
// with one (item.neg set, on a copy); the choice among several is a hash
// of the row's id, so that it does not depend on the feed's order.
func (f *feed) withNegatives(rows []item) (without, with []item) {
	for _, r := range rows {
		h := fnv.New32a()
		h.Write([]byte(r.ID))
		sum := h.Sum32()
		neg := f.negs.negative(r, func(n int) int { return int(sum % uint32(n)) })
		if neg == nil {
			without = append(without, r)
			continue
		}
		r.neg = neg
		with = append(with, r)
	}
	return without, with
}

// check refuses a row with no token ids on either side: not featurized
// (the consumer decodes the ids, not the tokens: the trainer reads no
// more of a row than it trains on).
func (f *feed) check(r stream.Record) error {
	if len(r.IDsA) == 0 && len(r.IDsB) == 0 {
		return fmt.Errorf("%w: row %s (%s row %d) has no token ids: run `parastream featurize --in SHARDS --out FEATURIZED` and publish FEATURIZED",
			ErrNotFeaturized, r.ID, r.Shard, r.Index)
	}
	return nil
}

// last reports whether no window follows w.
func (w *window) last() bool { return w.err != nil || w.eof || w.readErr != nil }

// feeder runs a feed ahead of the step in a goroutine, up to ahead windows.
type feeder struct {
	out    chan *window
	cancel context.CancelFunc
	done   chan struct{}
}

// startFeeder starts f in a goroutine reading with ctx.
func startFeeder(ctx context.Context, f *feed, ahead int) *feeder {
	ctx, cancel := context.WithCancel(ctx)
	fd := &feeder{out: make(chan *window, ahead), cancel: cancel, done: make(chan struct{})}
	go func() {
		defer close(fd.done)
		defer close(fd.out)
		for {
			w := f.next(ctx)
			select {
			case fd.out <- w:
			case <-ctx.Done():
				return
			}
			if w.last() {
				return
			}
		}
	}()
	return fd
}

// stop stops the feed and waits for its goroutine: the consumers are the
// caller's again.
func (fd *feeder) stop() {
	fd.cancel()
	<-fd.done
}
