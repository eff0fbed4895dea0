package pipelines

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"runtime"
	"runtime/debug"
	"slices"
	"strings"
	"time"

	"github.com/apache/beam/sdks/v2/go/pkg/beam"

	"github.com/parastream/parastream/corpora"
	"github.com/parastream/parastream/internal/beamfn"
	"github.com/parastream/parastream/shards"
	"github.com/parastream/parastream/transforms"
	"github.com/parastream/parastream/transforms/text"
)

// ExtractConfig configures one extraction: one corpus, its input files, and
// what to do with them. Start from NewExtractConfig, which sets the
// command line's defaults (the zero value turns every filter off); call
// Validate.
type ExtractConfig struct {
	// Corpus is "reddit" (comments, with Submissions optional) or the name
	// of a corpora format: europarl, moses, ppdb, ppdb-pairs, ppdb-human,
	// simpwiki, turkcorpus, quora, msrp, sts, stsb, sick, snli, sst, mr,
	// semeval-cqa, trecqa, wikiqa, scws.
	Corpus string
	// Input is a glob of the input files; InputB of the second files of
	// two-file formats (see transforms.ReadConfig).
	Input, InputB string
	// Submissions is a glob of Reddit submission files (RS_*): with
	// Pair.Titles, each title pairs with its thread's top-level comments.
	Submissions string
	// Out is the output root: shards, rejects and manifest.json.
	Out string
	// WorkDir holds the spill files while the pipeline runs; every worker
	// must reach it. Default: Out/.work-extract-<random>, removed at the
	// end, or by the next run into Out if this one dies; for an Out on an
	// object store, a temporary directory of this machine with Prism, and
	// Stage on a cluster's runner (the workers share no filesystem).
	WorkDir string
	// Stage, when set, is where the workers leave the shards, their
	// receipts and the rejects parts for the launching machine, in place
	// of WorkDir. RunExtract sets it, for an Out on an object store, to a
	// staging prefix of Out (shards.Output.Staging), which the workers
	// write themselves, each object whole.
	Stage string
	// Reader options: limits, encoding, dataset name, PPDB tier.
	Reader corpora.Options
	// SkipBadFiles counts a file that cannot be read to its end as a
	// reject and goes on, instead of failing the run.
	SkipBadFiles bool
	// Prepare configures normalisation, tokenisation and filters. For
	// Reddit, Prepare.Reddit is forced on.
	Prepare transforms.PrepareConfig
	// Pair configures Reddit thread pairing.
	Pair transforms.PairOptions
	// Split: ratios and seed of the hashed split. Evaluation sets with an
	// official split (their format's corpora.Eval) keep it.
	Split text.SplitRatios
	Seed  uint64
	// Budget samples the corpus down to a number of tokens (both sides of
	// every pair), seeded: the paraphrase research's PPDB sample whose
	// token count matches a SimpWiki run's. Zero Tokens is off.
	Budget transforms.BudgetConfig
	// Buckets is the number of spill buckets, which bounds memory: each
	// holds about 1/Buckets of the records. 0: from the input size, one
	// bucket per 4 MiB of (estimated) decompressed input.
	Buckets int
	// SpillCompression is how the spill files' blocks are written: "auto"
	// (or ""): as they are on a local work directory, S2 on an object
	// store; "s2": S2 wherever (about 1.5 times less temporary disk for
	// about 7% more CPU time); "none": never (transforms.SpillConfig).
	SpillCompression string
	// KeepDuplicates turns deduplication off. Evaluation sets (those with
	// official splits) are never deduplicated: they keep their official
	// pairs.
	KeepDuplicates bool
	// DedupeAgainst lists output roots of earlier extractions whose pairs
	// this run must not repeat (the evaluation sets, typically).
	DedupeAgainst []string
	// Shards bounds the shard files.
	Shards shards.WriterOptions
	// Command is the command line recorded in the manifest.
	Command []string
	// Version is the program's version the manifest records ("": its
	// build info's; see shards.ProgramVersion).
	Version string
}

// NewExtractConfig returns the configuration of an extraction with the
// defaults the command line has: a 90/5/5 split with seed 1, lowercased
// tokens, at least one token a side, the conversational research's Reddit
// filters, automatic buckets.
func NewExtractConfig(corpus, input, out string) ExtractConfig {
	rules := text.DefaultRedditRules()
	return ExtractConfig{
		Corpus: corpus, Input: input, Out: out,
		Split: text.DefaultSplitRatios(), Seed: 1,
		Prepare: transforms.PrepareConfig{
			RedditRules: &rules,
			Tokenize:    text.TokenizeOptions{Lower: true},
			Length:      text.LengthRule{MinTokens: 1},
		},
	}
}

// stage is where the workers leave what the launching machine commits:
// Stage, or WorkDir.
func (c ExtractConfig) stage() string {
	if c.Stage != "" {
		return c.Stage
	}
	return c.WorkDir
}

// formatOf is the corpora format a corpus name reads.
func (c ExtractConfig) formatOf() string {
	if c.Corpus == "reddit" {
		return "reddit-comments"
	}
	return c.Corpus
}

// writerGroups is the number of shard writers per split, which run in
// parallel: one per core, at most one per bucket. Each writes its own
// shards, so a split has at least this many when it is large.
func (c ExtractConfig) writerGroups() int {
	return min(max(runtime.GOMAXPROCS(0), 1), max(c.Buckets, 1))
}

// outName names the extraction's output: <out>/<name>/<split>/ and its
// entries in the manifest. It is the --corpus given, so that ppdb,
// ppdb-pairs and ppdb-human (all rows of corpus "ppdb") can share an
// output directory.
func (c ExtractConfig) outName() string { return c.Corpus }

// corpusName is the Example.Corpus the format yields.
func (c ExtractConfig) corpusName() string {
	f, err := corpora.LookupFormat(c.formatOf())
	if err != nil {
		return c.Corpus
	}
	return f.Corpus
}

// eval is how the corpus's rows are evaluated: whether it is an
// evaluation set with official splits, whether its rows are single texts.
func (c ExtractConfig) eval() corpora.Eval { return corpora.Evaluation(c.corpusName()) }

// official says the corpus is an evaluation set with official splits: its
// rows keep them, and every pair.
func (c ExtractConfig) official() bool { return c.eval().Split != nil }

// symmetric says whether (A, B) and (B, A) are the same pair for dedupe:
// true for paraphrase corpora, false for Reddit's input-response pairs.
func (c ExtractConfig) symmetric() bool { return c.corpusName() != "reddit" }

// Validate says what is wrong with the configuration and how to fix it.
func (c *ExtractConfig) Validate() error {
	var errs []error
	if c.Corpus == "" {
		errs = append(errs, errors.New("--corpus is required: reddit, or a format from 'parastream formats'"))
	} else if f, err := corpora.LookupFormat(c.formatOf()); err != nil || c.Corpus == "reddit-comments" {
		errs = append(errs, fmt.Errorf("--corpus %q is not a corpus: use one of %s", c.Corpus, strings.Join(Corpora(), ", ")))
	} else {
		if c.Corpus == "reddit-submissions" {
			errs = append(errs, errors.New("--corpus reddit-submissions: extract Reddit with --corpus reddit --submissions GLOB"))
		}
		if len(f.Files) == 2 && c.InputB == "" && c.Corpus != "sts" {
			errs = append(errs, fmt.Errorf("--corpus %s reads pairs of files (%s): give the second files with --input-b", c.Corpus, strings.Join(f.Files, ", ")))
		}
		if len(f.Files) == 1 && c.InputB != "" {
			errs = append(errs, fmt.Errorf("--corpus %s reads one file per input: --input-b is not used", c.Corpus))
		}
	}
	if c.Input == "" {
		errs = append(errs, errors.New("--input is required: a glob of the input files"))
	}
	if c.SpillCompression != "" && !slices.Contains(transforms.SpillCompressions(), c.SpillCompression) {
		errs = append(errs, fmt.Errorf("--spill-compression %q: use one of %s", c.SpillCompression, strings.Join(transforms.SpillCompressions(), ", ")))
	}
	if c.Submissions != "" && c.Corpus != "reddit" {
		errs = append(errs, errors.New("--submissions is for --corpus reddit"))
	}
	if c.Out == "" {
		errs = append(errs, errors.New("--out is required: the output directory"))
	}
	if c.Split == (text.SplitRatios{}) {
		c.Split = text.DefaultSplitRatios()
	}
	if err := c.Split.Validate(); err != nil {
		errs = append(errs, err)
	}
	if c.Buckets < 0 || c.Buckets > 1<<16 {
		errs = append(errs, fmt.Errorf("--buckets %d: want 1 to 65536, or 0 for automatic", c.Buckets))
	}
	if c.Budget.Tokens < 0 {
		errs = append(errs, fmt.Errorf("--token-budget %d: want a number of tokens, or 0 for no sampling", c.Budget.Tokens))
	}
	if c.Pair.Context < 0 {
		errs = append(errs, fmt.Errorf("--context %d: want 0 or more earlier turns", c.Pair.Context))
	}
	errs = append(errs, c.Prepare.Validate(), c.Shards.Validate())
	return errors.Join(errs...)
}

// Extract builds the extraction pipeline under s. It reads the inputs,
// normalises, tokenises and filters them, pairs Reddit threads, removes
// duplicates, assigns splits and writes the shards; the rejects go to the
// work directory. RunExtract runs it and writes the manifest. cfg must be
// valid and have its WorkDir and Buckets set (RunExtract sets them).
func Extract(s beam.Scope, cfg ExtractConfig) {
	s = s.Scope("pipelines.Extract")
	// Records are normalised, tokenised and filtered as they are read, on
	// the reader's goroutines,
	prep := cfg.Prepare
	prep.Reddit = cfg.Corpus == "reddit"
	prep.SingleText = cfg.eval().SingleText
	// and written to the spill files of their buckets (by thread for
	// Reddit, by dedupe key otherwise) in the same stage: no record
	// crosses Beam on its own.
	dedupeSpill := transforms.SpillConfig{Dir: cfg.WorkDir, Name: "dedupe", Key: transforms.ByDedupeKey, Buckets: cfg.Buckets, Symmetric: cfg.symmetric(), Compression: cfg.SpillCompression}
	firstSpill := dedupeSpill
	if cfg.Corpus == "reddit" {
		firstSpill = transforms.SpillConfig{Dir: cfg.WorkDir, Name: "threads", Key: transforms.ByGroup, Buckets: cfg.Buckets, Compression: cfg.SpillCompression}
	}
	spills, rejects := transforms.ReadAndSpill(s, transforms.ReadConfig{
		Format: cfg.formatOf(), Input: cfg.Input, InputB: cfg.InputB, Options: cfg.Reader, SkipBadFiles: cfg.SkipBadFiles, Prepare: &prep,
	}, firstSpill)
	transforms.WriteRejects(s, rejects, cfg.stage())
	if cfg.Corpus == "reddit" && cfg.Submissions != "" {
		subs, subRejects := transforms.ReadAndSpill(s.Scope("submissions"), transforms.ReadConfig{
			Format: "reddit-submissions", Input: cfg.Submissions, Options: cfg.Reader, SkipBadFiles: cfg.SkipBadFiles, Prepare: &prep,
		}, firstSpill)
		transforms.WriteRejects(s, subRejects, cfg.stage())
		spills = beam.Flatten(s, spills, subs)
	}
	if cfg.Corpus == "reddit" {
		spills = transforms.Pair(s, beam.GroupByKey(s, spills), cfg.Pair, dedupeSpill)
	}
	for i, dir := range cfg.DedupeAgainst {
		s := s.Scope(fmt.Sprintf("against%d", i))
		external := transforms.Spill(s, transforms.ReadExternal(s, dir), dedupeSpill)
		spills = beam.Flatten(s, spills, external)
	}
	dedupe := transforms.DedupeConfig{
		Corpus: cfg.outName(), Dir: cfg.WorkDir, Out: cfg.Stage, Buckets: cfg.Buckets, Groups: cfg.writerGroups(),
		Symmetric: cfg.symmetric(), KeepDuplicates: cfg.official() || cfg.KeepDuplicates,
		Split:  transforms.SplitConfig{Ratios: cfg.Split, Seed: cfg.Seed, Official: cfg.official()},
		Shards: cfg.Shards, Budget: cfg.Budget, SpillCompression: cfg.SpillCompression,
	}
	if cfg.Budget.Tokens == 0 {
		transforms.DedupeAndWrite(s, spills, dedupe)
		return
	}
	// A token budget samples by the histogram of every kept pair, known
	// only once every bucket is deduplicated: dedupe, then write.
	runs, hist := transforms.DedupeAndSplit(s, spills, dedupe)
	transforms.WriteShards(s, runs, hist, dedupe)
}

// Summary is what an extraction did.
type Summary struct {
	Corpus string
	// Counters are Beam's committed counters (namespace "parastream"):
	// read, parsed, rejected_<reason>, filtered_<rule>, paired,
	// dedupe_<kind>, written_<split>, ...
	Counters map[string]int64
	// Splits maps each split to its rows.
	Splits map[string]int64
	// Rejects is the rejects file (relative to Out, with its version:
	// rejects/<corpus>.<version>.jsonl) and its count.
	Rejects     string
	RejectCount int64
	Elapsed     time.Duration
}

// RunOptions are the driver's options.
type RunOptions struct {
	// Runner is a Beam runner name; "" is Prism, in-process.
	Runner string
	// Progress receives a progress line every ProgressEvery (default 5 s)
	// while the pipeline runs; nil for none.
	Progress      io.Writer
	ProgressEvery time.Duration
	// GCPercent, when positive, sets the Go garbage collector's target
	// (runtime/debug.SetGCPercent) for the run and restores the process's
	// setting afterwards; 0 keeps the process's setting (GOGC). The
	// pipeline's live heap is small and bounded (see docs/extract.md), so a
	// higher target trades a little memory for less collector work: the
	// CLI's default is DefaultGCPercent.
	GCPercent int
	// Failpoint, when set, is called before each file operation of the
	// run's commit (see shards.OutputOptions), and with "workers done"
	// once the workers are done, before the commit; an
	// error it returns fails that operation. It exists for fault-injection
	// tests. (The workers' writes to an object store have their own,
	// shards.WithWorkerFailpoint.)
	Failpoint func(op string) error
}

// DefaultGCPercent is the collector target the CLI runs extraction (and
// featurize) with unless GOGC is set. The pipeline's live heap is a few
// hundred megabytes at most; a higher target means fewer collections. 400
// ran the 1-million-comment benchmark about 5% faster than 200 but let
// peak RSS at 10 million comments grow to 2.1 times that at 1 million
// (the bound is 2); 200 keeps it at about 1.8 (docs/extract.md has the
// figures).
const DefaultGCPercent = 200

// RunExtract validates cfg, locks cfg.Out (a second run into it is refused
// with an error wrapping shards.ErrLocked) and removes what dead runs left
// there, runs the extraction pipeline, and commits the shards, the rejects
// file and manifest.json under cfg.Out as its next version (see
// shards.Commit). The shards of this corpus replace those of an earlier run
// into the same Out; other corpora's entries in the manifest are kept.
func RunExtract(ctx context.Context, cfg ExtractConfig, opts RunOptions) (*Summary, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	start := time.Now()
	if opts.GCPercent > 0 {
		defer debug.SetGCPercent(debug.SetGCPercent(opts.GCPercent))
	}
	if cfg.Buckets == 0 {
		n, err := autoBuckets(cfg)
		if err != nil {
			return nil, err
		}
		cfg.Buckets = n
	}
	// Earlier outputs on an object store are read from local copies,
	// checked against their manifests.
	cfg.DedupeAgainst = slices.Clone(cfg.DedupeAgainst)
	for i, dir := range cfg.DedupeAgainst {
		local, done, err := shards.LocalCopy(ctx, dir)
		if err != nil {
			return nil, fmt.Errorf("--dedupe-against %s: %w", dir, err)
		}
		defer done()
		cfg.DedupeAgainst[i] = local
	}
	out, err := shards.OpenOutput(cfg.Out, opts.outputOptions())
	if err != nil {
		return nil, err
	}
	defer out.Close()
	// On an object store the workers write there themselves (see
	// shards.Output.Staging); on a cluster, with no --work-dir, so do
	// their spill files.
	if cfg.Stage = out.Staging("extract"); cfg.Stage != "" {
		defer out.RemoveStaging(context.Background(), cfg.Stage)
	}
	if cfg.Stage != "" && cfg.WorkDir == "" && runnerOrPrism(opts.Runner) != "prism" {
		cfg.WorkDir = shards.JoinPath(cfg.Stage, "spill")
	} else {
		if cfg.WorkDir, err = out.WorkDir(cfg.WorkDir, "extract"); err != nil {
			return nil, err
		}
		defer out.RemoveWorkDir(cfg.WorkDir)
	}

	p, s := beam.NewPipelineWithRoot()
	Extract(s, cfg)
	progress := transforms.NewProgress()
	stop := startProgress(opts, progress)
	runner := opts.Runner
	if runner == "" {
		runner = "prism"
	}
	res, err := beam.Run(transforms.WithProgress(ctx, progress), runner, p)
	stop()
	if err != nil {
		return nil, fmt.Errorf("running the extraction pipeline on %s: %w", runner, err)
	}
	sum := &Summary{Corpus: cfg.outName(), Counters: committedCounters(res), Splits: map[string]int64{}}
	if runner == "prism" {
		snap := progress.Snapshot()
		reconcileLocal(sum.Counters, snap, "dedupe_")
		reconcileLocal(sum.Counters, snap, "budget_dropped")
	}
	if opts.Failpoint != nil {
		if err := opts.Failpoint("workers done"); err != nil {
			return nil, err
		}
	}
	if err := finish(ctx, out, cfg, sum); err != nil {
		return nil, err
	}
	sum.Elapsed = time.Since(start)
	return sum, nil
}

// outputOptions are the options of the output directory a run opens.
func (o RunOptions) outputOptions() shards.OutputOptions {
	opts := shards.OutputOptions{Failpoint: o.Failpoint}
	if o.Progress != nil {
		opts.Logger = slog.New(slog.NewTextHandler(o.Progress, nil))
	}
	return opts
}

// autoBuckets picks one bucket per 4 MiB of estimated decompressed input
// (compressed files count six times their size), from 1 to 4096. A bucket
// of Reddit comments takes about six times its input size in memory while
// it is paired (Go rows, tokens, maps), and the bucket stages hold one per
// core: small buckets keep that near 100 MB.
func autoBuckets(cfg ExtractConfig) (int, error) {
	var total int64
	for _, glob := range []string{cfg.Input, cfg.Submissions} {
		if glob == "" {
			continue
		}
		paths, err := filepath.Glob(glob)
		if err != nil {
			return 0, fmt.Errorf("--input %q: %w", glob, err)
		}
		for _, p := range paths {
			st, err := os.Stat(p)
			if err != nil || st.IsDir() {
				continue
			}
			size := st.Size()
			if compressed(p) {
				size *= 6
			}
			total += size
		}
	}
	return int(min(max(total/(4<<20), 1), 4096)), nil
}

func compressed(path string) bool {
	in, err := corpora.Open(path, corpora.Limits{})
	if err != nil {
		return false
	}
	defer in.Close()
	return in.Compression != corpora.None
}

// finish merges the rejects, reads the shard writers' receipts and commits
// the corpus's new shards, rejects file and manifest entries as the
// output's next version.
func finish(ctx context.Context, out *shards.Output, cfg ExtractConfig, sum *Summary) error {
	corpus := cfg.outName()
	c, err := out.Begin(nil, cfg.Command)
	if err != nil {
		return err
	}
	defer c.Abort()
	m := c.Manifest()
	m.CreatedBy.Version = shards.ProgramVersion(cfg.Version)
	m.DropCorpus(corpus)
	scratch := cfg.WorkDir
	if cfg.Stage != "" { // the work directory may be the workers' or gone
		if scratch, err = out.WorkDir("", "rejects"); err != nil {
			return err
		}
		defer out.RemoveWorkDir(scratch)
	}
	merged := filepath.Join(scratch, "rejects.jsonl")
	n, err := transforms.MergeRejects(ctx, cfg.stage(), merged)
	if err != nil {
		return fmt.Errorf("merging rejects: %w", err)
	}
	art, err := c.PutRejects(corpus, merged, n)
	if err != nil {
		return err
	}
	sum.Rejects, sum.RejectCount = art.Path, n

	splits := []string{"train", "dev", "test"}
	if cfg.official() {
		splits = nil
	}
	receipts, err := shards.ReadReceipts[transforms.Receipt](cfg.stage())
	if err != nil {
		return err
	}
	slices.SortFunc(receipts, func(a, b transforms.Receipt) int {
		return cmp.Or(strings.Compare(a.Split, b.Split), a.Group-b.Group)
	})
	// What was written is counted from the receipts, which the shard
	// writers leave once their shards are durable, rather than from Beam's
	// counters: Prism was seen to lose a counter update made in
	// FinishBundle about one run in four.
	for k := range sum.Counters {
		if strings.HasPrefix(k, "written_") {
			delete(sum.Counters, k)
		}
	}
	delete(sum.Counters, "budget_tokens_kept")
	bySplit := map[string][]shards.StagedShard{}
	for _, rec := range receipts {
		sum.Counters["budget_tokens_kept"] += rec.Tokens
		for _, info := range rec.Shards {
			bySplit[rec.Split] = append(bySplit[rec.Split], shards.Staged(rec.Root, info))
		}
	}
	if cfg.Budget.Tokens == 0 {
		delete(sum.Counters, "budget_tokens_kept")
	}
	for _, split := range splits {
		if _, ok := bySplit[split]; !ok {
			bySplit[split] = nil // recorded, empty
		}
	}
	// Receipts come in split and writer-group order: each split's shards
	// are numbered over the groups, in order.
	if sum.Splits, err = c.PutSplits(corpus, bySplit); err != nil {
		return err
	}
	for split, rows := range sum.Splits {
		sum.Counters["written_"+split] = rows
	}
	if m.Stats == nil {
		m.Stats = map[string]int64{}
	}
	for k, v := range sum.Counters {
		m.Stats[corpus+"/"+k] = v
	}
	return c.Done()
}

// committedCounters reads the pipeline's committed counters of namespace
// "parastream".
func committedCounters(res beam.PipelineResult) map[string]int64 {
	out := map[string]int64{}
	if res == nil {
		return out
	}
	for _, c := range res.Metrics().AllMetrics().Counters() {
		if c.Namespace() != beamfn.CounterNamespace {
			continue
		}
		out[c.Name()] += c.Committed
	}
	return out
}

// reconcileLocal raises the committed counters of the prefix to the
// in-process counts where those are higher. The DoFns of an in-process
// (Prism) run count both; Prism was seen to lose a counter update made in
// FinishBundle about one run in four (see finish), and it never adds one,
// so the higher count is the true one, and the one the progress lines
// showed.
func reconcileLocal(committed, local map[string]int64, prefix string) {
	for k, v := range local {
		if strings.HasPrefix(k, prefix) && v > committed[k] {
			committed[k] = v
		}
	}
}

// startProgress prints the in-process progress every few seconds, and once
// more when stopped, with the counts the summary gives.
func startProgress(opts RunOptions, progress *transforms.Progress) (stop func()) {
	start := time.Now()
	line := func(elapsed time.Duration) {
		snap := progress.Snapshot()
		secs := max(elapsed.Seconds(), 1e-3)
		fmt.Fprintf(opts.Progress, "  %6.0fs  read %d records (%.1f MB, %.0f records/s)  paired %d  duplicates dropped %d  written %d\n",
			elapsed.Seconds(), snap["read"], float64(snap["bytes_read"])/1e6, float64(snap["read"])/secs,
			snap["paired"], snap["dedupe_exact"]+snap["dedupe_normalized"]+snap["dedupe_external"], snap["written"])
	}
	stopTicks := everyTick(opts, time.Second, line)
	return func() {
		stopTicks()
		if opts.Progress != nil {
			line(time.Since(start))
		}
	}
}

// everyTick calls fn with the time since it started every
// opts.ProgressEvery (def when that is 0) until stop is called, when
// opts.Progress is set; stop returns once fn has returned for good.
func everyTick(opts RunOptions, def time.Duration, fn func(elapsed time.Duration)) (stop func()) {
	if opts.Progress == nil {
		return func() {}
	}
	every := opts.ProgressEvery
	if every <= 0 {
		every = def
	}
	done := make(chan struct{})
	finished := make(chan struct{})
	start := time.Now()
	go func() {
		defer close(finished)
		t := time.NewTicker(every)
		defer t.Stop()
		for {
			select {
			case <-done:
				return
			case now := <-t.C:
				fn(now.Sub(start))
			}
		}
	}()
	return func() { close(done); <-finished }
}
