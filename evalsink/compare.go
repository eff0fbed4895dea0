package evalsink

import (
	"bytes"
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/parquet-go/parquet-go"

	"github.com/parastream/parastream/evalsink/metric"
	"github.com/parastream/parastream/internal/atomicfile"
	"github.com/parastream/parastream/trainstep"
)

// Two evaluations are compared figure by figure on the items both scored
// (a paired bootstrap, metric.Bootstrap.Paired): B against A, each figure better,
// worse or within noise. A comparison is a part of the comparisons table
// (ComparisonsDir), written once: `parastream eval compare` records its
// comparisons there (with a Markdown file beside), and `eval watch` each
// new checkpoint's comparison with the best evaluation of its run before
// it.

// ComparisonsDir is the directory of the comparisons table under a
// results directory: a part per comparison.
const ComparisonsDir = "comparisons"

// Origins of a comparison.
const (
	// OriginCompare: parastream eval compare (RunCompare).
	OriginCompare = "compare"
	// OriginWatch: eval watch, a new checkpoint against its run's best
	// before it (Evaluator.CompareWithBest).
	OriginWatch = "watch"
)

// ComparisonRow is one figure of one comparison: a row of the
// comparisons table. Figures are ×100.
type ComparisonRow struct {
	// ComparisonID identifies the comparison: its evaluations, origin,
	// bootstrap and headline (NewEvalID of them).
	ComparisonID string    `parquet:"comparison_id,dict" json:"comparison_id"`
	Origin       string    `parquet:"origin,dict" json:"origin"`
	ComparedAt   time.Time `parquet:"compared_at,timestamp(millisecond)" json:"compared_at"`
	// The two evaluations: A is the reference, B is compared with it.
	EvalA       string `parquet:"eval_a,dict" json:"eval_a"`
	EvalB       string `parquet:"eval_b,dict" json:"eval_b"`
	RunA        string `parquet:"run_a,dict" json:"run_a"`
	RunB        string `parquet:"run_b,dict" json:"run_b"`
	ModelA      string `parquet:"model_a,dict" json:"model_a"`
	ModelB      string `parquet:"model_b,dict" json:"model_b"`
	StepA       int64  `parquet:"step_a" json:"step_a"`
	StepB       int64  `parquet:"step_b" json:"step_b"`
	CheckpointA string `parquet:"checkpoint_a,dict" json:"checkpoint_a"`
	CheckpointB string `parquet:"checkpoint_b,dict" json:"checkpoint_b"`
	// AdaptationA and AdaptationB are the evaluations' Result.Adaptation.
	AdaptationA string `parquet:"adaptation_a,dict" json:"adaptation_a"`
	AdaptationB string `parquet:"adaptation_b,dict" json:"adaptation_b"`
	// The figure: its row's key (as Result's), the column, and how the
	// report names its line (Label).
	Corpus  string `parquet:"corpus,dict" json:"corpus"`
	Split   string `parquet:"split,dict" json:"split"`
	Dataset string `parquet:"dataset,dict" json:"dataset"`
	Year    string `parquet:"year,dict" json:"year"`
	Kind    string `parquet:"kind,dict" json:"kind"`
	Column  string `parquet:"column,dict" json:"column"`
	Label   string `parquet:"label,dict" json:"label"`
	// Items counts the items both evaluations scored; A and B are the
	// figures over them, Diff is B − A and CILow, CIHigh the bootstrap
	// 95% interval of the difference.
	Items  int64   `parquet:"items" json:"items"`
	A      float64 `parquet:"a" json:"a"`
	B      float64 `parquet:"b" json:"b"`
	Diff   float64 `parquet:"diff" json:"diff"`
	CILow  float64 `parquet:"ci_low" json:"ci_low"`
	CIHigh float64 `parquet:"ci_high" json:"ci_high"`
	// Verdict is VerdictBetter, VerdictWorse or VerdictNoise.
	Verdict string `parquet:"verdict,dict" json:"verdict"`
	// Headline marks the comparison's headline figure: the one figure
	// named before looking at the results, whose verdict is a fair 95%
	// test (see CompareOptions.Headline).
	Headline  bool   `parquet:"headline" json:"headline"`
	Resamples int64  `parquet:"resamples" json:"resamples"`
	Seed      uint64 `parquet:"seed" json:"seed"`
}

// CheckpointComparison is the comparison of two evaluations, figure by
// figure, in the order of the report.
type CheckpointComparison struct {
	ID   string
	Rows []ComparisonRow
}

// FigureRef names one figure of an evaluation, as DATASET:COLUMN or
// DATASET:KIND:COLUMN: "stsb/dev:pearson", "all:average:pearson" (the
// average), "2014:mean:spearman", "quora/test:ranking:map". Without a
// kind, the first figure of the dataset with that column.
type FigureRef struct{ Dataset, Kind, Column string }

// ParseFigureRef parses DATASET:COLUMN or DATASET:KIND:COLUMN.
func ParseFigureRef(s string) (FigureRef, error) {
	p := strings.Split(s, ":")
	var f FigureRef
	switch len(p) {
	case 2:
		f = FigureRef{Dataset: p[0], Column: p[1]}
	case 3:
		f = FigureRef{Dataset: p[0], Kind: p[1], Column: p[2]}
	default:
		return f, fmt.Errorf("evalsink: figure %q: give DATASET:COLUMN or DATASET:KIND:COLUMN, e.g. stsb/dev:pearson or all:average:pearson", s)
	}
	if f.Dataset == "" {
		return f, fmt.Errorf("evalsink: figure %q names no dataset: e.g. stsb/dev:pearson", s)
	}
	if !slices.Contains(figureColumns(), f.Column) {
		return f, fmt.Errorf("evalsink: figure %q: column %q is none of %s", s, f.Column, strings.Join(figureColumns(), ", "))
	}
	if f.Kind != "" && !slices.Contains(kindOrder(), f.Kind) {
		return f, fmt.Errorf("evalsink: figure %q: kind %q is none of %s", s, f.Kind, strings.Join(kindOrder(), ", "))
	}
	return f, nil
}

func (f FigureRef) String() string {
	if f.Kind == "" {
		return f.Dataset + ":" + f.Column
	}
	return f.Dataset + ":" + f.Kind + ":" + f.Column
}

func (f FigureRef) matches(k figureKey) bool {
	return f.Dataset == k.dataset && f.Column == k.column && (f.Kind == "" || f.Kind == k.kind)
}

// defaultHeadlines returns the headline figures tried in turn when none is
// named: the average's Pearson's r, then STS Benchmark dev's; failing
// both, the first figure of the evaluation.
func defaultHeadlines() []FigureRef {
	return []FigureRef{{"all", KindAverage, "pearson"}, {"stsb/dev", KindDataset, "pearson"}}
}

// chooseHeadline picks the headline among keys: the first matching spec
// (a FigureRef; "" or none matching: the defaults). named says whether
// spec matched.
func chooseHeadline(keys []figureKey, spec string) (k figureKey, named, ok bool) {
	refs := defaultHeadlines()
	if ref, err := ParseFigureRef(spec); spec != "" && err == nil {
		refs = append([]FigureRef{ref}, refs...)
	}
	for i, ref := range refs {
		for _, k := range keys {
			if ref.matches(k) {
				return k, spec != "" && i == 0, true
			}
		}
	}
	if len(keys) == 0 {
		return figureKey{}, false, false
	}
	return keys[0], false, true
}

// rowFigureKeys returns the figures of rows that have items (an interval),
// in the rows' order.
func rowFigureKeys(rows []Result) []figureKey {
	var keys []figureKey
	for _, r := range rows {
		for _, c := range figureColumns() {
			if _, ok := r.CILow[c]; ok {
				keys = append(keys, figureKey{r.Corpus, r.Split, r.Dataset, r.Kind, c})
			}
		}
	}
	return keys
}

// CompareOptions configures CompareEvaluations.
type CompareOptions struct {
	// Bootstrap seeds the resamples (Seed) and sets their number
	// (Resamples; 0: metric.DefaultResamples).
	Bootstrap metric.Bootstrap
	// Headline names the headline figure (FigureRef syntax); "" or a
	// figure not compared: the average's Pearson's r, else STS Benchmark
	// dev's, else the first figure compared.
	Headline string
	// Origin is OriginCompare ("" means it) or OriginWatch.
	Origin string
}

// CompareEvaluations compares evaluation b of the results directory out
// with evaluation a, figure by figure, by paired bootstrap on the items
// both scored (their predictions parts), every figure both report. It
// writes nothing (RecordComparison does).
func CompareEvaluations(out, a, b string, opts CompareOptions) (*CheckpointComparison, error) {
	rowsA, err := readEvaluation(out, a)
	if err != nil {
		return nil, err
	}
	rowsB, err := readEvaluation(out, b)
	if err != nil {
		return nil, err
	}
	cs, err := ComparePredictions(out, a, b, opts.Bootstrap)
	if err != nil {
		return nil, err
	}
	if len(cs) == 0 {
		return nil, fmt.Errorf("evalsink: evaluations %s and %s share no figure with two items or more: compare evaluations of the same data", a, b)
	}
	keys := make([]figureKey, len(cs))
	for i, c := range cs {
		keys[i] = figureKey{c.Corpus, c.Split, c.Dataset, c.Kind, c.Column}
	}
	head, _, _ := chooseHeadline(keys, opts.Headline)
	byKey := map[lineKey]Result{}
	for _, r := range rowsA {
		byKey[keyOf(r)] = r
	}
	ra, rb := rowsA[0], rowsB[0]
	origin := cmp.Or(opts.Origin, OriginCompare)
	resamples := int64(opts.Bootstrap.ResampleCount())
	id := NewEvalID("comparison", origin, a, b, strconv.FormatUint(opts.Bootstrap.Seed, 10), strconv.FormatInt(resamples, 10),
		head.corpus, head.split, head.dataset, head.kind, head.column)
	now := time.Now().UTC().Truncate(time.Millisecond)
	c := &CheckpointComparison{ID: id}
	for i, x := range cs {
		line := byKey[lineKey{x.Corpus, x.Split, x.Dataset, x.Kind}]
		c.Rows = append(c.Rows, ComparisonRow{
			ComparisonID: id, Origin: origin, ComparedAt: now,
			EvalA: a, EvalB: b, RunA: ra.Run, RunB: rb.Run, ModelA: ra.Model, ModelB: rb.Model, StepA: ra.Step, StepB: rb.Step,
			CheckpointA: ra.Checkpoint, CheckpointB: rb.Checkpoint, AdaptationA: ra.Adaptation, AdaptationB: rb.Adaptation,
			Corpus: x.Corpus, Split: x.Split, Dataset: x.Dataset, Year: line.Year, Kind: x.Kind, Column: x.Column,
			Label: strings.ReplaceAll(lineLabel(line), "**", ""), Items: int64(x.Items),
			A: x.A, B: x.B, Diff: x.Diff, CILow: x.Lo, CIHigh: x.Hi, Verdict: x.Verdict,
			Headline: keys[i] == head, Resamples: resamples, Seed: opts.Bootstrap.Seed,
		})
	}
	slices.SortStableFunc(c.Rows, func(x, y ComparisonRow) int { return lineOrder(x.line(), y.line()) })
	return c, nil
}

// line is the row's figure as a report line, for sorting.
func (r ComparisonRow) line() Result {
	return Result{Corpus: r.Corpus, Split: r.Split, Dataset: r.Dataset, Year: r.Year, Kind: r.Kind}
}

// readEvaluation reads the rows of one evaluation's part.
func readEvaluation(out, evalID string) ([]Result, error) {
	rows, err := readPart(partPath(out, evalID))
	if errors.Is(err, os.ErrNotExist) {
		return nil, fmt.Errorf("evalsink: no evaluation %s in %s", evalID, out)
	}
	if err == nil && len(rows) == 0 {
		err = fmt.Errorf("evalsink: evaluation %s has no rows", evalID)
	}
	return rows, err
}

// Headline returns the comparison's headline figure; nil when none.
func (c *CheckpointComparison) Headline() *ComparisonRow {
	if c == nil {
		return nil
	}
	for i := range c.Rows {
		if c.Rows[i].Headline {
			return &c.Rows[i]
		}
	}
	return nil
}

// Counts counts the figures by verdict.
func (c *CheckpointComparison) Counts() (better, worse, noise int) {
	for _, r := range c.Rows {
		switch r.Verdict {
		case metric.VerdictBetter:
			better++
		case metric.VerdictWorse:
			worse++
		default:
			noise++
		}
	}
	return better, worse, noise
}

// signed formats a difference with its sign.
func signed(v float64) string {
	s := strconv.FormatFloat(v, 'f', 1, 64)
	if !strings.HasPrefix(s, "-") {
		s = "+" + s
	}
	return s
}

// diffInterval formats a difference's interval: "+1.2 to +3.4".
func diffInterval(lo, hi float64) string { return signed(lo) + " to " + signed(hi) }

// Summary is the comparison in one line: the counts by verdict, then the
// headline figure's.
func (c *CheckpointComparison) Summary() string {
	better, worse, noise := c.Counts()
	s := fmt.Sprintf("B better on %d figures, worse on %d, within noise on %d", better, worse, noise)
	if h := c.Headline(); h != nil {
		s += fmt.Sprintf("; headline %s %s: %s (%s), %s", h.Label, columnName(h.Column), signed(h.Diff), diffInterval(h.CILow, h.CIHigh), h.Verdict)
	}
	return s
}

// evalName names one side of a comparison.
func evalName(run, model, adaptation string, step int64, evalID, dir string) string {
	return fmt.Sprintf("%s (%s, step %d), eval_id %s, checkpoint %s",
		displayRun(Result{Run: run, Adaptation: adaptation}), model, step, evalID, dir)
}

// WriteMarkdown writes the comparison as Markdown: the two evaluations,
// the headline, the counts, a table of every figure and how to read it.
func (c *CheckpointComparison) WriteMarkdown(w io.Writer) error {
	var b strings.Builder
	if len(c.Rows) == 0 {
		return errors.New("evalsink: an empty comparison")
	}
	r0 := c.Rows[0]
	fmt.Fprintf(&b, "# Comparison %s\n\n", c.ID)
	fmt.Fprintf(&b, "- A: %s\n", evalName(r0.RunA, r0.ModelA, r0.AdaptationA, r0.StepA, r0.EvalA, r0.CheckpointA))
	fmt.Fprintf(&b, "- B: %s\n\n", evalName(r0.RunB, r0.ModelB, r0.AdaptationB, r0.StepB, r0.EvalB, r0.CheckpointB))
	if h := c.Headline(); h != nil {
		fmt.Fprintf(&b, "**Headline** (%s %s, %d items): A %.1f, B %.1f, B − A %s (95%% interval %s): **%s**.\n\n",
			h.Label, columnName(h.Column), h.Items, h.A, h.B, signed(h.Diff), diffInterval(h.CILow, h.CIHigh), h.Verdict)
	}
	fmt.Fprintf(&b, "%s.\n\n", c.Summary())
	b.WriteString("| Set | kind | figure | A | B | B − A | 95% interval of B − A | verdict | items |\n")
	b.WriteString("|---|---|---|---:|---:|---:|---|---|---:|\n")
	for _, r := range c.Rows {
		label := r.Label
		if r.Headline {
			label = "**" + label + "** (headline)"
		}
		fmt.Fprintf(&b, "| %s | %s | %s | %.1f | %.1f | %s | %s | %s | %d |\n", label, r.Kind, columnName(r.Column),
			r.A, r.B, signed(r.Diff), diffInterval(r.CILow, r.CIHigh), r.Verdict, r.Items)
	}
	fmt.Fprintf(&b, "\nPaired bootstrap: the items both evaluations scored (pairs; queries for retrieval and rankings) are "+
		"resampled with replacement, within each set for an aggregate, %d times (seed %d), the same resample for A and B; "+
		"the interval is the 2.5th to 97.5th percentile of B − A. Better: the interval lies above 0; worse: below; within noise: it holds 0. "+
		"With %d figures, about 1 in 20 of those that do not differ gets a verdict by chance, and figures over shared items move together: "+
		"read the headline, named before the comparison, as the test, and the rest as where to look. See docs/evalsink.md.\n",
		r0.Resamples, r0.Seed, len(c.Rows))
	_, err := io.WriteString(w, b.String())
	return err
}

// comparisonPath is the part holding a comparison; comparisonMarkdown the
// Markdown file eval compare writes beside it.
func comparisonPath(out, id string) string {
	return filepath.Join(out, ComparisonsDir, "part-"+id+".parquet")
}

func comparisonMarkdown(out, id string) string {
	return filepath.Join(out, ComparisonsDir, "comparison-"+id+".md")
}

// RecordComparison adds the comparison to the comparisons table of out as
// a part of its own, written atomically, unless its part exists already
// (the same evaluations, origin, bootstrap and headline): then it writes
// nothing and added is false.
func RecordComparison(out string, c *CheckpointComparison) (added bool, err error) {
	path := comparisonPath(out, c.ID)
	if _, err := os.Stat(path); err == nil {
		return false, nil
	} else if !errors.Is(err, os.ErrNotExist) {
		return false, fmt.Errorf("recording comparison: %w", err)
	}
	f, err := atomicfile.Create(path)
	if err != nil {
		return false, fmt.Errorf("recording comparison: %w", err)
	}
	defer f.Abort()
	w := parquet.NewGenericWriter[ComparisonRow](f, parquet.Compression(&parquet.Zstd))
	if _, err := w.Write(c.Rows); err != nil {
		return false, fmt.Errorf("recording comparison %s: %w", path, err)
	}
	if err := w.Close(); err != nil {
		return false, fmt.Errorf("recording comparison %s: %w", path, err)
	}
	if err := f.Commit(); err != nil {
		return false, fmt.Errorf("recording comparison %s: %w", path, err)
	}
	return true, nil
}

// ReadComparisons reads every part of the comparisons table of out (none:
// no rows), in the order of the parts' names.
func ReadComparisons(out string) ([]ComparisonRow, error) {
	return readParts(filepath.Join(out, ComparisonsDir), func(name string) ([]ComparisonRow, error) {
		rows, err := parquet.ReadFile[ComparisonRow](name)
		if err != nil {
			return nil, fmt.Errorf("reading comparisons %s: %w", name, err)
		}
		for i := range rows {
			rows[i].ComparedAt = rows[i].ComparedAt.UTC()
		}
		return rows, nil
	})
}

// CompareConfig configures RunCompare.
type CompareConfig struct {
	// Config evaluates A or B when it is a checkpoint (an Evaluator's
	// configuration: Eval is needed only then); Out is the results
	// directory; Seed and Resamples set the comparison's bootstrap;
	// Headline names its headline figure (CompareOptions.Headline).
	Config
	// A and B are compared, B against A: each a checkpoint directory (its
	// evaluation under Config, made when Out lacks it) or an evaluation of
	// Out, by its eval_id or a prefix of it that no other eval_id has.
	A, B string
}

// CompareResult is what RunCompare did.
type CompareResult struct {
	Comparison *CheckpointComparison
	// EvalA and EvalB are the evaluations compared.
	EvalA, EvalB string
	// Markdown and Part are the files holding the comparison; Added is
	// false when the part existed already.
	Markdown, Part string
	Added          bool
}

// RunCompare compares B with A (evaluating each checkpoint among them
// that Out holds no evaluation of, as Evaluate does), records the
// comparison in Out (RecordComparison, and a Markdown file beside its
// part, atomically), and writes the Markdown, the files and the summary
// to w.
func RunCompare(ctx context.Context, cc CompareConfig, w io.Writer) (*CompareResult, error) {
	if cc.Out == "" {
		return nil, errors.New("evalsink: no results directory")
	}
	if cc.Headline != "" {
		if _, err := ParseFigureRef(cc.Headline); err != nil {
			return nil, err
		}
	}
	var ev *Evaluator
	defer func() {
		if ev != nil {
			ev.Close()
		}
	}()
	resolve := func(ref string) (string, error) {
		if !IsCheckpoint(ref) {
			return ResolveEvaluation(cc.Out, ref)
		}
		if ev == nil {
			var err error
			if ev, err = NewEvaluator(ctx, cc.Config); err != nil {
				return "", err
			}
		}
		sum, err := ev.Evaluate(ctx, Target{Dir: ref})
		if err != nil {
			return "", err
		}
		return sum.EvalID, nil
	}
	res := &CompareResult{}
	var err error
	if res.EvalA, err = resolve(cc.A); err != nil {
		return nil, err
	}
	if res.EvalB, err = resolve(cc.B); err != nil {
		return nil, err
	}
	opts := CompareOptions{Bootstrap: metric.Bootstrap{Resamples: cc.Resamples, Seed: cmp.Or(cc.Seed, DefaultSeed)}, Headline: cc.Headline}
	c, err := CompareEvaluations(cc.Out, res.EvalA, res.EvalB, opts)
	if err != nil {
		return nil, err
	}
	res.Comparison, res.Markdown, res.Part = c, comparisonMarkdown(cc.Out, c.ID), comparisonPath(cc.Out, c.ID)
	var md bytes.Buffer
	if err := c.WriteMarkdown(&md); err != nil {
		return nil, err
	}
	if err := atomicfile.WriteFile(res.Markdown, md.Bytes()); err != nil {
		return nil, fmt.Errorf("writing comparison: %w", err)
	}
	if res.Added, err = RecordComparison(cc.Out, c); err != nil {
		return nil, err
	}
	recorded := "recorded"
	if !res.Added {
		recorded = "recorded before"
	}
	_, err = fmt.Fprintf(w, "%s\n%s; %s in %s\n%s\n", md.String(), res.Markdown, recorded, res.Part, c.Summary())
	return res, err
}

// IsCheckpoint says whether dir is a checkpoint, or a training run's
// checkpoint directory holding one (Evaluate takes its newest good one).
func IsCheckpoint(dir string) bool {
	_, err := trainstep.LatestCheckpoint(dir)
	return err == nil
}

// ResolveEvaluation finds the evaluation of the results directory out
// whose eval_id is ref or begins with it; it must have its predictions
// (the items comparisons need).
func ResolveEvaluation(out, ref string) (string, error) {
	if st, err := os.Stat(ref); err == nil && st.IsDir() {
		return "", fmt.Errorf("evalsink: %s is a directory but no checkpoint (no %s): give a checkpoint directory or an eval_id of %s",
			ref, trainstep.FileTrainer, filepath.Join(out, CSVName))
	}
	if ref == "" || strings.ContainsAny(ref, `/\*?[`) {
		return "", fmt.Errorf("evalsink: no checkpoint %q: give a checkpoint directory or an eval_id of %s", ref, filepath.Join(out, CSVName))
	}
	names, err := filepath.Glob(filepath.Join(out, PartsDir, "part-"+ref+"*.parquet"))
	if err != nil {
		return "", err
	}
	switch len(names) {
	case 0:
		return "", fmt.Errorf("evalsink: no checkpoint directory %s, nor an evaluation %s… in %s: give a checkpoint directory or an eval_id of %s",
			ref, ref, filepath.Join(out, PartsDir), filepath.Join(out, CSVName))
	case 1:
	default:
		return "", fmt.Errorf("evalsink: %d evaluations in %s begin with %s: give more of the eval_id", len(names), filepath.Join(out, PartsDir), ref)
	}
	id := strings.TrimSuffix(strings.TrimPrefix(filepath.Base(names[0]), "part-"), ".parquet")
	if _, err := os.Stat(predictionsPath(out, id)); err != nil {
		return "", fmt.Errorf("evalsink: evaluation %s has no predictions to compare (a generation evaluation, or one made before they were kept): evaluate its checkpoint again", id)
	}
	return id, nil
}
