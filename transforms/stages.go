package transforms

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"sync"

	"github.com/parastream/parastream/internal/beamfn"

	"github.com/apache/beam/sdks/v2/go/pkg/beam"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/register"

	"github.com/parastream/parastream/corpora"
	"github.com/parastream/parastream/internal/atomicfile"
	"github.com/parastream/parastream/shards"
	"github.com/parastream/parastream/transforms/internal/spill"
	"github.com/parastream/parastream/transforms/text"
)

// The extraction pipeline keeps its memory bounded whatever the size of
// the input: instead of grouping records with Beam's GroupByKey, which the
// Prism runner holds in memory, it scatters them into bucket files ("spill"
// files) by a hash of the key they must be grouped by, and a later DoFn
// reads one bucket at a time. Only the names of the spill files go through
// GroupByKey. Memory then holds one bucket (1/Buckets of the data, or the
// largest single thread) per parallel bundle, not the data set.
//
// Spill files live under a work directory that every worker must reach (a
// local directory for Prism; on a cluster a shared mount, or a staging
// prefix on an object store, through Beam's filesystems).

// Scatter keys.
const (
	// ByGroup buckets records by Row.GroupKey (Reddit threads).
	ByGroup = "group"
	// ByDedupeKey buckets records by their normalised dedupe key.
	ByDedupeKey = "dedupe"
)

// externalSplit marks the records of other extractions, read for
// --dedupe-against: they block their dedupe keys and are never written.
const externalSplit = "\x00external"

// Bucketed is a bucket and one of its spill files.
type Bucketed struct {
	Bucket int
	Path   string
}

// SpillConfig configures Spill and Scatter.
type SpillConfig struct {
	// Dir is the work directory and Name the stage's directory in it: the
	// spill files are Dir/Name/b<bucket>-<random>.spill.
	Dir, Name string
	// Key is what a record's bucket is hashed from: ByDedupeKey or ByGroup.
	Key string
	// Buckets is the number of buckets.
	Buckets int
	// Symmetric makes (A, B) and (B, A) one dedupe key.
	Symmetric bool
	// Compression is how the spill files' blocks are written: one of
	// SpillCompressions ("" is "auto").
	Compression string
}

// The spill files' compressions: "auto" stores the blocks of a spill
// directory on the local disk as they are (the CPU time S2 costs is the
// larger cost there) and compresses those on an object store with S2 (the
// network is); "s2" compresses them anywhere (spill files about 1.5 times
// smaller, for about 7% more of an extraction's CPU time), "none" nowhere.
const (
	SpillAuto = "auto"
	SpillS2   = "s2"
	SpillNone = "none"
)

// SpillCompressions lists the values of SpillConfig.Compression.
func SpillCompressions() []string { return []string{SpillAuto, SpillS2, SpillNone} }

// createSpill creates the spill file at path with the blocks compression
// says: "auto" (or "") leaves the choice to spill.Create, by the path.
func createSpill(ctx context.Context, path, compression string) (*spill.Writer, error) {
	switch compression {
	case SpillS2:
		return spill.CreateCompressed(ctx, path, true)
	case SpillNone:
		return spill.CreateCompressed(ctx, path, false)
	}
	return spill.Create(ctx, path)
}

// Spill writes each record of rows (PCollection<shards.Row>) to the spill
// file of its bucket under cfg.Dir/cfg.Name, and returns each bucket with
// one of its files as PCollection<KV<int, string>>.
func Spill(s beam.Scope, rows beam.PCollection, cfg SpillConfig) beam.PCollection {
	s = s.Scope("transforms.Spill." + cfg.Name)
	return beam.ParDo(s, &scatterFn{Dir: shards.JoinPath(cfg.Dir, cfg.Name), Key: cfg.Key, Buckets: cfg.Buckets, Symmetric: cfg.Symmetric, Compression: cfg.Compression}, rows)
}

// Scatter is Spill followed by a GroupByKey: it returns
// PCollection<KV<int, []string>>, each bucket with all of its files.
func Scatter(s beam.Scope, rows beam.PCollection, cfg SpillConfig) beam.PCollection {
	return beam.GroupByKey(s, Spill(s, rows, cfg))
}

type scatterFn struct {
	Dir         string
	Key         string
	Buckets     int
	Symmetric   bool
	Compression string

	sp  *spiller
	key []byte
}

func (fn *scatterFn) StartBundle(_ context.Context, _ func(int, string)) {
	fn.sp = newSpiller(SpillConfig{Dir: fn.Dir, Key: fn.Key, Buckets: fn.Buckets, Symmetric: fn.Symmetric, Compression: fn.Compression})
}

func (fn *scatterFn) ProcessElement(ctx context.Context, r shards.Row, _ func(int, string)) error {
	return fn.sp.write(ctx, &r, &fn.key)
}

func (fn *scatterFn) FinishBundle(_ context.Context, emit func(int, string)) error {
	return fn.sp.close(emit)
}

// spiller writes records to the spill file of their bucket, one file per
// bucket it has seen, named dir/b<bucket>-<random>.spill. Several
// goroutines may write at once (a lock a bucket): one spiller serves all of
// a stage's goroutines, because every file costs (creating a file or a
// directory took about a millisecond of the kernel's time on the 2-core
// machine of docs/extract.md, a tenth of the pipeline's time at one
// file a bucket and goroutine in a directory a bucket).
type spiller struct {
	cfg   SpillConfig  // its Dir the spill's directory itself
	files []bucketFile // by bucket
}

type bucketFile struct {
	mu   sync.Mutex
	w    *spill.Writer
	path string
}

// newSpiller is the spiller of cfg's buckets, writing into cfg.Dir itself
// (the caller has joined cfg.Name to it).
func newSpiller(cfg SpillConfig) *spiller {
	return &spiller{cfg: cfg, files: make([]bucketFile, cfg.Buckets)}
}

// bucket is r's bucket; key is the caller's buffer for the dedupe key.
func (sp *spiller) bucket(r *shards.Row, key *[]byte) int {
	if sp.cfg.Key == ByGroup {
		return int(text.Hash64(0, r.GroupKey) % uint64(sp.cfg.Buckets))
	}
	*key = appendNormalizedKey((*key)[:0], r, sp.cfg.Symmetric)
	return int(text.Hash64Bytes(0, *key) % uint64(sp.cfg.Buckets))
}

// write writes r to its bucket's file; key is a buffer of the calling
// goroutine's own, for the dedupe key. Scattered by the dedupe key, r is
// written with the key's hash (spill.Key), which the dedupe stage reads
// instead of building the key again.
func (sp *spiller) write(ctx context.Context, r *shards.Row, key *[]byte) error {
	b := sp.bucket(r, key)
	keyed := sp.cfg.Key != ByGroup
	var h spill.Key
	if keyed {
		h = hashKey(*key) // outside the bucket's lock
	}
	f := &sp.files[b]
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.w == nil {
		path := shards.JoinPath(sp.cfg.Dir, fmt.Sprintf("b%05d-%s.spill", b, randomName()))
		w, err := createSpill(ctx, path, sp.cfg.Compression)
		if err != nil {
			return err
		}
		f.w, f.path = w, path
	}
	if !keyed {
		return f.w.Write(r)
	}
	return f.w.WriteKeyed(r, h)
}

// close closes the files and emits each bucket with its file, in bucket
// order. No write may run meanwhile.
func (sp *spiller) close(emit func(int, string)) error {
	var first error
	for b := range sp.files {
		f := &sp.files[b]
		if f.w == nil {
			continue
		}
		if err := f.w.Close(); err != nil && first == nil {
			first = err
		}
		if first == nil {
			emit(b, f.path)
		}
	}
	sp.files = nil
	return first
}

// abort removes the files. No write may run meanwhile.
func (sp *spiller) abort() {
	for b := range sp.files {
		if f := &sp.files[b]; f.w != nil {
			f.w.Abort()
		}
	}
	sp.files = nil
}

func randomName() string {
	var b [8]byte
	rand.Read(b[:])
	return hex.EncodeToString(b[:])
}

// Pair reads the thread buckets of Reddit records (the output of Scatter
// ByGroup), pairs each thread's comments with PairThread, and spills the
// pairs by their dedupe key (spill.Key is not read) under
// spill.Dir/spill.Name into spill.Buckets buckets. It returns
// PCollection<KV<int, string>>, as Spill does.
func Pair(s beam.Scope, threads beam.PCollection, opt PairOptions, spill SpillConfig) beam.PCollection {
	s = s.Scope("transforms.Pair")
	return beam.ParDo(s, &pairFn{Options: opt, Dir: shards.JoinPath(spill.Dir, spill.Name), Buckets: spill.Buckets, Compression: spill.Compression}, threads)
}

type pairFn struct {
	Options     PairOptions
	Dir         string
	Buckets     int
	Compression string

	pool *bundlePool[*pairWorker]
	sp   *spiller // the pool workers'
}

// pairWorker is a pool worker's state: its counts, and the buffers it
// reuses from one bucket to the next.
type pairWorker struct {
	key     []byte
	st      PairStats
	threads int64
	rows    []shards.Row
	order   []*shards.Row
	pairer  pairer
}

func (fn *pairFn) StartBundle(ctx context.Context, _ func(int, string)) {
	fn.pool = newBundlePool(ctx, func() *pairWorker {
		return &pairWorker{}
	})
	fn.sp = newSpiller(SpillConfig{Dir: fn.Dir, Key: ByDedupeKey, Buckets: fn.Buckets, Compression: fn.Compression})
}

func (fn *pairFn) ProcessElement(_ int, paths func(*string) bool, _ func(int, string)) error {
	files := collect(paths)
	return fn.pool.submit(func(ctx context.Context, w *pairWorker) error {
		// The bucket's rows, grouped into threads by sorting pointers to
		// them by thread: one array for the bucket, not a slice a thread.
		rows := w.rows[:0]
		err := spill.CopyFiles(ctx, files, func(r *shards.Row) error {
			rows = append(rows, *r)
			return nil
		})
		defer func() { w.rows = reuseRows(rows) }()
		if err != nil {
			return err
		}
		order := w.order[:0]
		for i := range rows {
			order = append(order, &rows[i])
		}
		defer func() {
			clear(order)
			if cap(order) > maxReusedRows {
				order = nil
			}
			w.order = order[:0]
		}()
		slices.SortStableFunc(order, func(a, b *shards.Row) int { return strings.Compare(a.GroupKey, b.GroupKey) })
		var werr error
		var paired, threads int64
		for start := 0; start < len(order) && werr == nil; {
			end := start + 1
			for end < len(order) && order[end].GroupKey == order[start].GroupKey {
				end++
			}
			t := w.pairer.pairThread(order[start:end], fn.Options, func(p *shards.Row) {
				if werr == nil {
					werr = fn.sp.write(ctx, p, &w.key)
				}
			})
			w.st.Pairs += t.Pairs
			w.st.Titles += t.Titles
			w.st.Orphans += t.Orphans
			w.st.NoTitle += t.NoTitle
			paired += t.Pairs
			threads++
			start = end
		}
		progressFrom(ctx).add("paired", paired)
		w.threads += threads
		return werr
	})
}

func (fn *pairFn) FinishBundle(ctx context.Context, emit func(int, string)) error {
	defer fn.pool.release()
	workers, err := fn.pool.wait()
	if err != nil {
		fn.sp.abort()
		return err
	}
	if err := fn.sp.close(emit); err != nil {
		return err
	}
	var c counters
	for _, w := range workers {
		c.add("threads", w.threads)
		c.add("paired", w.st.Pairs)
		c.add("paired_titles", w.st.Titles)
		c.add("orphan_replies", w.st.Orphans)
		c.add("no_title", w.st.NoTitle)
	}
	c.flush(ctx)
	return nil
}

// maxReusedRows is the largest bucket whose row buffers a pool worker
// keeps for its next bucket: a bucket with a huge thread should not pin
// its rows' room for the rest of the stage.
const maxReusedRows = 1 << 16

// reuseRows empties rows for the next bucket, keeping its array unless it
// is larger than maxReusedRows.
func reuseRows(rows []shards.Row) []shards.Row {
	clear(rows)
	if cap(rows) > maxReusedRows {
		return nil
	}
	return rows[:0]
}

// collect reads a GroupByKey's values, sorted, so that they can be used
// after ProcessElement returns.
func collect(paths func(*string) bool) []string {
	var all []string
	var p string
	for paths(&p) {
		all = append(all, p)
	}
	slices.Sort(all)
	return all
}

// SplitConfig chooses each record's split.
type SplitConfig struct {
	Ratios text.SplitRatios
	Seed   uint64
	// Official keeps the evaluation sets' own splits (the official split
	// of the row's corpus, corpora.Eval).
	Official bool
}

// splitter returns the function that chooses a record's split. Each
// corpus's evaluation entry is looked up once.
func (c SplitConfig) splitter() func(r *shards.Row) string {
	evals := map[string]corpora.Eval{}
	return func(r *shards.Row) string {
		if c.Official {
			e, seen := evals[r.Corpus]
			if !seen {
				e = corpora.Evaluation(r.Corpus)
				evals[r.Corpus] = e
			}
			if s, ok := e.OfficialSplit(r.Dataset); ok {
				return s
			}
		}
		return text.AssignSplit(r.GroupKey, c.Seed, c.Ratios)
	}
}

// DedupeConfig configures the stages that deduplicate the dedupe spills,
// assign splits and write the shards: DedupeAndWrite, or DedupeAndSplit
// then WriteShards under a token budget.
type DedupeConfig struct {
	// Corpus names the shards written (their <corpus>/<split>/ directory).
	Corpus string
	// Dir is the work directory: runs, shards and receipts go under it.
	Dir string
	// Out, when set, is where the shards and receipts go in place of Dir:
	// a staging prefix on an object store (shards.Output.Staging), where
	// each writer group writes its shards whole from a temporary directory
	// of its worker, so that the workers share no filesystem.
	Out string
	// Buckets is the number of dedupe buckets, Groups the number of shard
	// writers per split (consecutive buckets share a writer group).
	Buckets, Groups int
	// Symmetric makes (A, B) and (B, A) one pair; KeepDuplicates keeps
	// every record.
	Symmetric, KeepDuplicates bool
	// Split chooses each record's split.
	Split SplitConfig
	// Shards bounds the shard files.
	Shards shards.WriterOptions
	// Budget samples the kept records down to a number of tokens (zero
	// Tokens is off; DedupeAndWrite takes none).
	Budget BudgetConfig
	// SpillCompression is that of the runs DedupeAndSplit spills (see
	// SpillConfig.Compression).
	SpillCompression string
}

// out is where the shards and receipts go: Out, or Dir.
func (c DedupeConfig) out() string {
	if c.Out != "" {
		return c.Out
	}
	return c.Dir
}

// Run is one bucket's records of one split, deduplicated, sorted by ID and
// spilled: the unit the shard writer concatenates.
type Run struct {
	Split  string
	Bucket int
	Path   string
	Rows   int64
}

// DedupeAndSplit groups the dedupe spills (PCollection<KV<int, string>>,
// from Spill ByDedupeKey and Pair) by bucket, keeps one record of each
// normalised key (see Deduper), assigns splits, and spills each bucket's
// records of each split sorted by ID. It returns PCollection<KV<string,
// []Run>> grouped by split and writer group ("train/002": groups of
// consecutive buckets, written in parallel), and the token histogram of the kept records
// for budget sampling (a singleton PCollection<TokenHistogram>; empty
// without a budget).
//
// With cfg.KeepDuplicates every record is kept (evaluation sets keep their
// official pairs, duplicates included). cfg.Corpus and cfg.Shards are not
// used: they are WriteShards'.
func DedupeAndSplit(s beam.Scope, spills beam.PCollection, cfg DedupeConfig) (runs, hist beam.PCollection) {
	s = s.Scope("transforms.DedupeAndSplit")
	runs, hists := beam.ParDo2(s, &dedupeFn{Dir: shards.JoinPath(cfg.Dir, "runs"), Buckets: cfg.Buckets, Groups: cfg.Groups, Symmetric: cfg.Symmetric, KeepDuplicates: cfg.KeepDuplicates, Split: cfg.Split, Budget: cfg.Budget, Compression: cfg.SpillCompression}, beam.GroupByKey(s, spills))
	return beam.GroupByKey(s, runs), sumHistograms(s, hists)
}

type dedupeFn struct {
	Dir            string
	Buckets        int
	Groups         int
	Symmetric      bool
	KeepDuplicates bool
	Split          SplitConfig
	Budget         BudgetConfig
	Compression    string

	pool *bundlePool[*dedupeWorker]
}

// dedupeWorker is a pool worker's results.
type dedupeWorker struct {
	runs []Run
	hist TokenHistogram
	st   DedupeStats
}

func (fn *dedupeFn) StartBundle(ctx context.Context, _ func(string, Run), _ func(TokenHistogram)) {
	fn.pool = newBundlePool(ctx, func() *dedupeWorker {
		return &dedupeWorker{hist: TokenHistogram{Cells: map[uint32]int64{}}}
	})
}

func (fn *dedupeFn) ProcessElement(bucket int, paths func(*string) bool, _ func(string, Run), _ func(TokenHistogram)) error {
	files := collect(paths)
	return fn.pool.submit(func(ctx context.Context, w *dedupeWorker) error {
		return fn.dedupe(ctx, bucket, files, w)
	})
}

func (fn *dedupeFn) dedupe(ctx context.Context, bucket int, files []string, w *dedupeWorker) error {
	bySplit, st, err := dedupeBucket(ctx, files, fn.Symmetric, fn.KeepDuplicates, fn.Split)
	if err != nil {
		return err
	}
	w.st.add(st)
	for _, split := range slices.Sorted(maps.Keys(bySplit)) {
		rows := bySplit[split]
		if fn.Budget.Tokens > 0 {
			for i := range rows {
				w.hist.Cells[fn.Budget.cell(rows[i].ID)] += rowTokens(&rows[i])
			}
		}
		path := shards.JoinPath(fn.Dir, split, fmt.Sprintf("b%05d.spill", bucket))
		sw, err := createSpill(ctx, path, fn.Compression)
		if err != nil {
			return err
		}
		for i := range rows {
			if err := sw.Write(&rows[i]); err != nil {
				sw.Abort()
				return err
			}
		}
		if err := sw.Close(); err != nil {
			return err
		}
		w.runs = append(w.runs, Run{Split: split, Bucket: bucket, Path: path, Rows: int64(len(rows))})
	}
	return nil
}

// dedupeBucket reads a bucket's dedupe spill files, keeps one record of
// each normalised key (every record with keepDuplicates), assigns each its
// split, and returns the records of each split sorted by ID.
func dedupeBucket(ctx context.Context, files []string, symmetric, keepDuplicates bool, split SplitConfig) (map[string][]shards.Row, DedupeStats, error) {
	bySplit := make(map[string][]shards.Row)
	splitOf := split.splitter()
	keep := func(r shards.Row) {
		r.Split = splitOf(&r)
		bySplit[r.Split] = append(bySplit[r.Split], r)
	}
	var st DedupeStats
	if keepDuplicates {
		if err := spill.CopyFiles(ctx, files, func(r *shards.Row) error {
			if r.Split != externalSplit {
				keep(*r)
				st.Kept++
			}
			return nil
		}); err != nil {
			return nil, st, err
		}
	} else {
		d := NewDeduper(symmetric)
		if err := spill.CopyFilesKeyed(ctx, files, func(r *shards.Row, key *spill.Key) error {
			if key == nil {
				d.add(r, r.Split == externalSplit)
			} else {
				d.addHashed(r, r.Split == externalSplit, *key)
			}
			return nil
		}); err != nil {
			return nil, st, err
		}
		st = d.Each(keep)
	}
	for _, rows := range bySplit {
		slices.SortFunc(rows, func(a, b shards.Row) int { return strings.Compare(a.ID, b.ID) })
	}
	st.progress(progressFrom(ctx))
	return bySplit, st, nil
}

func (fn *dedupeFn) FinishBundle(ctx context.Context, emit func(string, Run), emitHist func(TokenHistogram)) error {
	defer fn.pool.release()
	workers, err := fn.pool.wait()
	if err != nil {
		return err
	}
	var c counters
	hist := TokenHistogram{Cells: map[uint32]int64{}}
	for _, w := range workers {
		for _, r := range w.runs {
			emit(splitGroupKey(r.Split, writerGroup(r.Bucket, fn.Buckets, fn.Groups)), r)
		}
		hist = tokenHistFn{}.MergeAccumulators(hist, w.hist)
		w.st.count(&c)
	}
	if len(hist.Cells) > 0 {
		emitHist(hist)
	}
	c.flush(ctx)
	return nil
}

// Receipt is what a shard writer leaves for the driver: the shards one
// writer group wrote for one split, to be renamed into place and go into
// the manifest. Shard paths are relative to Root.
type Receipt struct {
	Corpus string
	Split  string
	Group  int
	Root   string
	Shards []shards.ShardInfo
	// Tokens counts the tokens of the rows written, under a token budget.
	Tokens int64
}

// writerGroup is the writer group of a bucket: consecutive buckets go to
// the same group, so that the groups concatenated in order keep the
// bucket order.
func writerGroup(bucket, buckets, groups int) int {
	return bucket * groups / max(buckets, 1)
}

// splitGroupKey keys a run by its split and writer group.
func splitGroupKey(split string, group int) string { return fmt.Sprintf("%s/%03d", split, group) }

// WriteShards writes the runs (the output of DedupeAndSplit) of each split
// and writer group, in bucket order, as shards under
// dir/shards/<group>/<corpus>/<split>/, writer groups in parallel, and
// leaves a Receipt for each under dir; the driver renames the shards into
// out/<corpus>/<split>/ with their final names (see the pipelines
// package). It returns PCollection<shards.ShardInfo>. With a budget, only
// the records of the priority cells within it are written (hist is
// DedupeAndSplit's). It uses cfg's Corpus, Dir, Shards and Budget.
func WriteShards(s beam.Scope, runs, hist beam.PCollection, cfg DedupeConfig) beam.PCollection {
	s = s.Scope("transforms.WriteShards")
	return beam.ParDo(s, &writeShardsFn{Corpus: cfg.Corpus, Dir: cfg.out(), Options: cfg.Shards, Budget: cfg.Budget}, runs, beam.SideInput{Input: hist})
}

type writeShardsFn struct {
	Corpus  string
	Dir     string
	Options shards.WriterOptions
	Budget  BudgetConfig

	pool *bundlePool[*writeWorker]
}

type writeWorker struct {
	infos   []shards.ShardInfo
	written map[string]int64
	dropped int64
	dedupe  DedupeStats // DedupeAndWrite's
}

func (fn *writeShardsFn) StartBundle(ctx context.Context, _ TokenHistogram, _ func(shards.ShardInfo)) {
	fn.pool = newBundlePool(ctx, func() *writeWorker { return &writeWorker{written: map[string]int64{}} })
}

func (fn *writeShardsFn) ProcessElement(key string, runs func(*Run) bool, hist TokenHistogram, _ func(shards.ShardInfo)) error {
	var all []Run
	var r Run
	for runs(&r) {
		all = append(all, r)
	}
	split, g, _ := strings.Cut(key, "/")
	group, err := strconv.Atoi(g)
	if err != nil {
		return fmt.Errorf("writing shards: bad split/group key %q", key)
	}
	cut, _ := hist.cut(fn.Budget.Tokens)
	return fn.pool.submit(func(ctx context.Context, w *writeWorker) error {
		return fn.write(ctx, split, group, all, cut, w)
	})
}

func (fn *writeShardsFn) write(ctx context.Context, split string, group int, runs []Run, cut uint64, w *writeWorker) error {
	slices.SortFunc(runs, func(a, b Run) int { return a.Bucket - b.Bucket })
	opts := fn.Options
	opts.Overwrite = true
	root, done, err := shards.LocalRoot(fn.Dir, groupRel(group))
	if err != nil {
		return err
	}
	defer done()
	sw, err := shards.NewWriter(root, fn.Corpus, split, opts)
	if err != nil {
		return err
	}
	var n, tokens, dropped int64
	for _, run := range runs {
		err := spill.CopyFiles(ctx, []string{run.Path}, func(row *shards.Row) error {
			if fn.Budget.Tokens > 0 && uint64(fn.Budget.cell(row.ID)) >= cut {
				dropped++
				return nil
			}
			if fn.Budget.Tokens > 0 {
				tokens += rowTokens(row)
			}
			if n++; n%(1<<14) == 0 {
				progressFrom(ctx).add("written", 1<<14)
			}
			return sw.Write(*row)
		})
		if err != nil {
			sw.Abort()
			return fmt.Errorf("writing split %s: %w", split, err)
		}
	}
	infos, err := sw.Close()
	if err != nil {
		return err
	}
	if root, err = shards.StageShards(ctx, root, fn.Dir, groupRel(group), infos); err != nil {
		return err
	}
	progressFrom(ctx).add("written", n%(1<<14))
	// Counted in-process too: Prism may lose the FinishBundle counter (see
	// the driver's reconcileLocal).
	progressFrom(ctx).add("budget_dropped", dropped)
	w.dropped += dropped
	w.written[split] += n
	w.infos = append(w.infos, infos...)
	return writeReceipt(ctx, fn.Dir, Receipt{Corpus: fn.Corpus, Split: split, Group: group, Root: root, Shards: infos, Tokens: tokens})
}

// writeReceipt leaves a writer group's receipt for the driver, once its
// shards are durable: dir/receipts/<split>-<group>.json, so that the
// receipts read back in split and writer-group order.
func writeReceipt(ctx context.Context, dir string, rec Receipt) error {
	return shards.WriteReceipt(ctx, dir, fmt.Sprintf("%s-%03d", rec.Split, rec.Group), rec)
}

// groupRel is where a writer group's shards are under the work directory.
func groupRel(group int) string { return fmt.Sprintf("shards/g%03d", group) }

// DedupeAndWrite is DedupeAndSplit and WriteShards in one stage, for runs
// without a token budget (which needs every bucket's histogram before the
// first row is written): it groups the dedupe spills
// (PCollection<KV<int, string>>) by writer group, and each group, on a
// worker of its own, deduplicates its buckets one after the other, in
// bucket order, and writes their rows straight into the group's shards.
// The shards are byte for byte those of the two stages, with one spill
// pass and one GroupByKey fewer. It returns the shards written
// (PCollection<shards.ShardInfo>) and leaves the receipts, as WriteShards.
// cfg.Budget must be off.
func DedupeAndWrite(s beam.Scope, spills beam.PCollection, cfg DedupeConfig) beam.PCollection {
	s = s.Scope("transforms.DedupeAndWrite")
	byGroup := beam.ParDo(s, &writerGroupFn{Buckets: cfg.Buckets, Groups: cfg.Groups}, spills)
	return beam.ParDo(s, &dedupeWriteFn{Corpus: cfg.Corpus, Dir: cfg.out(), Symmetric: cfg.Symmetric, KeepDuplicates: cfg.KeepDuplicates, Split: cfg.Split, Options: cfg.Shards}, beam.GroupByKey(s, byGroup))
}

// writerGroupFn keys a bucket's spill file by the bucket's writer group.
type writerGroupFn struct {
	Buckets, Groups int
}

func (fn *writerGroupFn) ProcessElement(bucket int, path string) (int, Bucketed) {
	return writerGroup(bucket, fn.Buckets, fn.Groups), Bucketed{Bucket: bucket, Path: path}
}

type dedupeWriteFn struct {
	Corpus         string
	Dir            string
	Symmetric      bool
	KeepDuplicates bool
	Split          SplitConfig
	Options        shards.WriterOptions

	pool *bundlePool[*writeWorker]
}

func (fn *dedupeWriteFn) StartBundle(ctx context.Context, _ func(shards.ShardInfo)) {
	fn.pool = newBundlePool(ctx, func() *writeWorker { return &writeWorker{written: map[string]int64{}} })
}

func (fn *dedupeWriteFn) ProcessElement(group int, items func(*Bucketed) bool, _ func(shards.ShardInfo)) error {
	files := map[int][]string{}
	var b Bucketed
	for items(&b) {
		files[b.Bucket] = append(files[b.Bucket], b.Path)
	}
	return fn.pool.submit(func(ctx context.Context, w *writeWorker) error {
		return fn.write(ctx, group, files, w)
	})
}

func (fn *dedupeWriteFn) write(ctx context.Context, group int, files map[int][]string, w *writeWorker) error {
	opts := fn.Options
	opts.Overwrite = true
	root, done, err := shards.LocalRoot(fn.Dir, groupRel(group))
	if err != nil {
		return err
	}
	defer done()
	writers := map[string]*shards.Writer{}
	abort := func() {
		for _, sw := range writers {
			sw.Abort()
		}
	}
	written := map[string]int64{}
	for _, bucket := range slices.Sorted(maps.Keys(files)) {
		paths := files[bucket]
		slices.Sort(paths)
		bySplit, st, err := dedupeBucket(ctx, paths, fn.Symmetric, fn.KeepDuplicates, fn.Split)
		if err != nil {
			abort()
			return err
		}
		w.dedupe.add(st)
		for split, rows := range bySplit {
			sw := writers[split]
			if sw == nil {
				if sw, err = shards.NewWriter(root, fn.Corpus, split, opts); err != nil {
					abort()
					return err
				}
				writers[split] = sw
			}
			if err := sw.Write(rows...); err != nil {
				abort()
				return fmt.Errorf("writing split %s: %w", split, err)
			}
			written[split] += int64(len(rows))
			progressFrom(ctx).add("written", int64(len(rows)))
		}
	}
	for _, split := range slices.Sorted(maps.Keys(writers)) {
		infos, err := writers[split].Close()
		delete(writers, split)
		if err != nil {
			abort()
			return err
		}
		staged, err := shards.StageShards(ctx, root, fn.Dir, groupRel(group), infos)
		if err != nil {
			abort()
			return err
		}
		w.written[split] += written[split]
		w.infos = append(w.infos, infos...)
		if err := writeReceipt(ctx, fn.Dir, Receipt{Corpus: fn.Corpus, Split: split, Group: group, Root: staged, Shards: infos}); err != nil {
			return err
		}
	}
	return nil
}

func (fn *dedupeWriteFn) FinishBundle(ctx context.Context, emit func(shards.ShardInfo)) error {
	defer fn.pool.release()
	workers, err := fn.pool.wait()
	if err != nil {
		return err
	}
	var c counters
	for _, w := range workers {
		for split, n := range w.written {
			c.add("written_"+split, n)
		}
		w.dedupe.count(&c)
		for _, info := range w.infos {
			emit(info)
		}
	}
	c.flush(ctx)
	return nil
}

func (fn *writeShardsFn) FinishBundle(ctx context.Context, _ TokenHistogram, emit func(shards.ShardInfo)) error {
	defer fn.pool.release()
	workers, err := fn.pool.wait()
	if err != nil {
		return err
	}
	var c counters
	for _, w := range workers {
		for split, n := range w.written {
			c.add("written_"+split, n)
		}
		c.add("budget_dropped", w.dropped)
		for _, info := range w.infos {
			emit(info)
		}
	}
	c.flush(ctx)
	return nil
}

// WriteRejects writes the malformed records (PCollection<corpora.Reject>)
// as JSON lines under dir/rejects/, a file per bundle; the driver merges
// them (see MergeRejects). dir may be a staging prefix on an object store
// (shards.Output.Staging): a bundle's file is then written on its worker's
// temporary directory and put there whole when the bundle finishes.
func WriteRejects(s beam.Scope, rejects beam.PCollection, dir string) {
	s = s.Scope("transforms.WriteRejects")
	beam.ParDo0(s, &rejectsFn{Dir: shards.JoinPath(dir, "rejects")}, rejects)
}

type rejectsFn struct {
	Dir string
	// f is the bundle's file: under Dir, or, where Dir is on an object
	// store, a temporary file that FinishBundle puts at part.
	f    *atomicfile.File
	tmp  *os.File
	part string
	enc  *json.Encoder
}

func (fn *rejectsFn) ProcessElement(r corpora.Reject) error {
	if fn.enc == nil {
		name := randomName() + ".jsonl"
		if shards.Scheme(fn.Dir) == "" {
			f, err := atomicfile.Create(filepath.Join(fn.Dir, name))
			if err != nil {
				return err
			}
			fn.f, fn.enc = f, json.NewEncoder(f)
		} else {
			f, err := os.CreateTemp("", "parastream-rejects-*.jsonl")
			if err != nil {
				return fmt.Errorf("writing rejects: %w", err)
			}
			fn.tmp, fn.part, fn.enc = f, shards.JoinPath(fn.Dir, name), json.NewEncoder(f)
		}
		fn.enc.SetEscapeHTML(false)
	}
	return fn.enc.Encode(r)
}

func (fn *rejectsFn) FinishBundle(ctx context.Context) error {
	f, tmp := fn.f, fn.tmp
	fn.f, fn.tmp, fn.enc = nil, nil, nil
	switch {
	case f != nil:
		return f.Commit()
	case tmp != nil:
		defer os.Remove(tmp.Name())
		if err := tmp.Close(); err != nil {
			return fmt.Errorf("writing rejects: %w", err)
		}
		return shards.PutFile(ctx, tmp.Name(), fn.part)
	}
	return nil
}

// MergeRejects merges the rejects files of a run's work directory (or
// staging prefix) into one local file at path, sorted by file, line and offset so that two runs over the
// same input give the same file. It returns the number of rejects.
func MergeRejects(ctx context.Context, dir, path string) (int64, error) {
	parts, err := shards.Glob(ctx, shards.JoinPath(dir, "rejects", "*.jsonl"))
	if err != nil {
		return 0, err
	}
	var all []corpora.Reject
	for _, p := range parts {
		b, err := shards.ReadFile(ctx, p)
		if err != nil {
			return 0, err
		}
		dec := json.NewDecoder(strings.NewReader(string(b)))
		for dec.More() {
			var r corpora.Reject
			if err := dec.Decode(&r); err != nil {
				return 0, fmt.Errorf("reading rejects part %s: %w", p, err)
			}
			all = append(all, r)
		}
	}
	slices.SortFunc(all, func(a, b corpora.Reject) int {
		if c := strings.Compare(a.File, b.File); c != 0 {
			return c
		}
		if a.Offset != b.Offset {
			if a.Offset < b.Offset {
				return -1
			}
			return 1
		}
		return strings.Compare(string(a.Reason), string(b.Reason))
	})
	f, err := atomicfile.Create(path)
	if err != nil {
		return 0, err
	}
	defer f.Abort()
	enc := json.NewEncoder(f)
	enc.SetEscapeHTML(false)
	for _, r := range all {
		if err := enc.Encode(r); err != nil {
			return 0, err
		}
	}
	return int64(len(all)), f.Commit()
}

func init() {
	beam.RegisterType(reflect.TypeOf((*Run)(nil)).Elem())
	beam.RegisterType(reflect.TypeOf((*shards.ShardInfo)(nil)).Elem())
	beamfn.DoFn3x1[context.Context, shards.Row, func(int, string), error](&scatterFn{},
		beamfn.Method2x0[context.Context, func(int, string)]("StartBundle"),
		beamfn.Method2x1[context.Context, func(int, string), error]("FinishBundle"))
	beamfn.DoFn3x1[int, func(*string) bool, func(int, string), error](&pairFn{},
		beamfn.Method2x0[context.Context, func(int, string)]("StartBundle"),
		beamfn.Method2x1[context.Context, func(int, string), error]("FinishBundle"))
	beamfn.DoFn4x1[int, func(*string) bool, func(string, Run), func(TokenHistogram), error](&dedupeFn{},
		beamfn.Method3x0[context.Context, func(string, Run), func(TokenHistogram)]("StartBundle"),
		beamfn.Method3x1[context.Context, func(string, Run), func(TokenHistogram), error]("FinishBundle"))
	beamfn.DoFn4x1[string, func(*Run) bool, TokenHistogram, func(shards.ShardInfo), error](&writeShardsFn{},
		beamfn.Method3x0[context.Context, TokenHistogram, func(shards.ShardInfo)]("StartBundle"),
		beamfn.Method3x1[context.Context, TokenHistogram, func(shards.ShardInfo), error]("FinishBundle"))
	beam.RegisterType(reflect.TypeOf((*Bucketed)(nil)).Elem())
	beamfn.DoFn2x2[int, string, int, Bucketed](&writerGroupFn{})
	beamfn.DoFn3x1[int, func(*Bucketed) bool, func(shards.ShardInfo), error](&dedupeWriteFn{},
		beamfn.Method2x0[context.Context, func(shards.ShardInfo)]("StartBundle"),
		beamfn.Method2x1[context.Context, func(shards.ShardInfo), error]("FinishBundle"))
	register.Iter1[Bucketed]()
	register.Emitter1[TokenHistogram]()
	beamfn.DoFn1x1[corpora.Reject, error](&rejectsFn{}, beamfn.Method1x1[context.Context, error]("FinishBundle"))
	register.Emitter2[int, string]()
	register.Emitter2[string, Run]()
	register.Emitter1[shards.ShardInfo]()
	register.Iter1[string]()
	register.Iter1[Run]()
}
