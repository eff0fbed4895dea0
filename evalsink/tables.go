package evalsink

import (
	"bytes"
	"cmp"
	"encoding/csv"
	"encoding/json"
	"fmt"
	"io"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"github.com/parastream/parastream/evalsink/metric"
	"github.com/parastream/parastream/internal/atomicfile"
)

// Names of the views under a results directory.
const (
	CSVName    = "results.csv"
	ReportName = "report.md"
	PlotsDir   = "plots"
)

// csvHeader returns the CSV's columns: the Result schema's.
func csvHeader() []string {
	cols := Columns()
	names := make([]string, len(cols))
	for i, c := range cols {
		names[i] = c.Name
	}
	return names
}

// WriteViews rewrites the views of every row of a results directory: the
// CSV, the Markdown report (with eval watch's comparisons, read from the
// directory) and the learning curves (one PNG per aggregate
// kind and run). It returns the plots written.
func WriteViews(out string, rows []Result) ([]string, error) {
	var b bytes.Buffer
	if err := WriteCSV(&b, rows); err != nil {
		return nil, err
	}
	if err := atomicfile.WriteFile(filepath.Join(out, CSVName), b.Bytes()); err != nil {
		return nil, fmt.Errorf("writing %s: %w", CSVName, err)
	}
	comparisons, err := ReadComparisons(out)
	if err != nil {
		return nil, err
	}
	b.Reset()
	if err := writeReport(&b, rows, comparisons); err != nil {
		return nil, err
	}
	if err := atomicfile.WriteFile(filepath.Join(out, ReportName), b.Bytes()); err != nil {
		return nil, fmt.Errorf("writing %s: %w", ReportName, err)
	}
	return WriteCurves(filepath.Join(out, PlotsDir), rows)
}

// WriteCSV writes rows as CSV with a header; NULL figures are empty.
func WriteCSV(w io.Writer, rows []Result) error {
	cw := csv.NewWriter(w)
	if err := cw.Write(csvHeader()); err != nil {
		return err
	}
	cols := Columns()
	for _, r := range rows {
		rec := make([]string, len(cols))
		for i, c := range cols {
			rec[i] = c.Text(&r)
		}
		if err := cw.Write(rec); err != nil {
			return err
		}
	}
	cw.Flush()
	return cw.Error()
}

// intervalJSON writes an interval map as a JSON object with sorted keys;
// "" for none.
func intervalJSON(m map[string]float64) string {
	if len(m) == 0 {
		return ""
	}
	b, err := json.Marshal(m) // sorts the keys
	if err != nil {
		// A map of strings to finite floats always marshals; NaN is not
		// stored (see metric.Bootstrap.Interval).
		return ""
	}
	return string(b)
}

// column is one column of the report: a run at its latest evaluated step.
// A run's embedding evaluations (similarity, retrieval) and its generation
// evaluations (KindGeneration rows, evaluated apart) are picked apart:
// each family's evaluation of the highest step; evalID is "" where the run
// has none of a family.
type column struct {
	run      string
	embed    columnEval
	generate columnEval
}

// columnEval is the evaluation a column shows for one family of tables.
type columnEval struct {
	model  string
	step   int64
	evalID string
}

// reportColumns picks, for each run, its evaluation of the highest step
// (the latest evaluated of those), one among its embedding evaluations and
// one among its generation evaluations.
func reportColumns(rows []Result) []column {
	type pick struct {
		r  Result
		ok bool
	}
	best := map[string]*[2]pick{}
	var runs []string
	for _, r := range rows {
		run := displayRun(r) // an adapted evaluation: a column of its own
		b, ok := best[run]
		if !ok {
			b = &[2]pick{}
			best[run] = b
			runs = append(runs, run)
		}
		f := &b[0]
		if r.Kind == KindGeneration {
			f = &b[1]
		}
		if !f.ok || r.Step > f.r.Step || (r.Step == f.r.Step && r.EvaluatedAt.After(f.r.EvaluatedAt)) {
			*f = pick{r, true}
		}
	}
	slices.Sort(runs)
	cols := make([]column, len(runs))
	for i, run := range runs {
		cols[i].run = run
		for f, c := range []*columnEval{&cols[i].embed, &cols[i].generate} {
			if p := best[run][f]; p.ok {
				*c = columnEval{model: p.r.Model, step: p.r.Step, evalID: p.r.EvalID}
			}
		}
	}
	return cols
}

// lineKey identifies a line of the report: a figure of every column.
type lineKey struct{ corpus, split, dataset, kind string }

func keyOf(r Result) lineKey { return lineKey{r.Corpus, r.Split, r.Dataset, r.Kind} }

// kindOrder returns the kinds of rows in the order of the report.
func kindOrder() []string {
	return []string{KindDataset, KindMean, KindWeightedMean, KindPooled, KindAverage,
		KindRetrieval, KindRetrievalChance, KindRanking, KindRankingChance, KindClassification, KindClassificationHead,
		KindWordContext, KindGeneration}
}

// isSimilarity says whether a kind of row holds correlations.
func isSimilarity(kind string) bool {
	switch kind {
	case KindRetrieval, KindRetrievalChance, KindRanking, KindRankingChance, KindGeneration,
		KindClassification, KindClassificationHead, KindWordContext:
		return false
	}
	return true
}

// SmallSet is the fewest pairs (retrieval: queries) a line needs for its
// figures to be compared between models: below it the report marks the
// line as too small to compare. A correlation over 100 pairs still has a
// standard error of about 0.1 (10 points ×100).
const SmallSet = 100

// lineOrder sorts report lines: STS by split and year (its sets, then the
// year's aggregates), STS Benchmark, SICK, the average, retrieval.
func lineOrder(a, b Result) int {
	corpus := func(r Result) int {
		switch r.Corpus {
		case "sts":
			return 0
		case "stsb":
			return 1
		case "sick":
			return 2
		case "sts+sick":
			return 3
		}
		if i := slices.Index(corpusOrder(), r.Corpus); i >= 0 {
			return 4 + i // retrieval, then the other tasks' corpora
		}
		return 4 + len(corpusOrder()) // generation sets of other corpora

	}
	// The test split first (the research's tables), then the others.
	split := func(r Result) string {
		if r.Split == "test" {
			return ""
		}
		return r.Split
	}
	kinds := kindOrder()
	return cmp.Or(cmp.Compare(corpus(a), corpus(b)), cmp.Compare(split(a), split(b)), cmp.Compare(a.Year, b.Year),
		cmp.Compare(slices.Index(kinds, a.Kind), slices.Index(kinds, b.Kind)), cmp.Compare(a.Dataset, b.Dataset))
}

// setLabel is how the report names a set.
func setLabel(r Result) string {
	year := r.Year
	if r.Split != "test" && !strings.HasSuffix(year, r.Split) {
		year += " " + r.Split
	}
	switch r.Corpus {
	case "sts":
		_, set, _ := strings.Cut(r.Dataset, "/")
		return year + " " + set
	case "stsb":
		return "STS Benchmark " + r.Split
	case "sick":
		return "SICK " + r.Split
	}
	return r.Dataset
}

// averageLabel names the average by the sets it averaged (members, each
// set's label), grouping the STS sets of a year: "Average of 2 sets: STS
// 2012 MSRpar; SICK test".
func averageLabel(members []Result) string {
	var parts []string
	lastYear := ""
	for _, m := range members {
		if m.Corpus != "sts" {
			parts, lastYear = append(parts, setLabel(m)), ""
			continue
		}
		_, set, _ := strings.Cut(m.Dataset, "/")
		if m.Year == lastYear {
			parts[len(parts)-1] += ", " + set
			continue
		}
		parts, lastYear = append(parts, "STS "+m.Year+" "+set), m.Year
	}
	noun := "sets"
	if len(members) == 1 {
		noun = "set"
	}
	return fmt.Sprintf("**Average of %d %s**: %s", len(members), noun, strings.Join(parts, "; "))
}

// lineLabel is how the report names a line.
func lineLabel(r Result) string {
	year := r.Year
	if r.Split != "test" && !strings.HasSuffix(year, r.Split) {
		year += " " + r.Split
	}
	if label := taskLabels()[r.Corpus]; label != nil && !isSimilarity(r.Kind) {
		return label(r)
	}
	switch r.Kind {
	case KindMean:
		return "**STS " + year + " mean**"
	case KindWeightedMean:
		return "STS " + year + " weighted mean (by pairs)"
	case KindPooled:
		return "STS " + year + " pooled (all pairs)"
	case KindAverage:
		return "**Average of the STS 2012–2015 and SICK test sets**"
	case KindRetrieval:
		if r.Candidates < 1 {
			return r.Dataset + " (no true pair to rank)"
		}
		return r.Dataset + fmt.Sprintf(", pool of %d (the true response, %d others)", r.Candidates, r.Candidates-1)
	case KindRetrievalChance, KindRankingChance:
		return r.Dataset + " chance (the same pools in random order)"
	case KindRanking:
		return r.Dataset + fmt.Sprintf(" rankings: questions with a relevant and an irrelevant candidate (%d candidates in all)", r.Candidates)
	}
	return setLabel(r)
}

// WriteReport writes the Markdown report: one table per figure with a
// line per set or aggregate and a column per run (its latest evaluated
// step), laid out as the research's tables, each figure with its 95%
// interval.
func WriteReport(w io.Writer, rows []Result) error { return writeReport(w, rows, nil) }

// writeReport writes the report, and a section on eval watch's
// comparisons where there are some.
func writeReport(w io.Writer, rows []Result, comparisons []ComparisonRow) error {
	cols := reportColumns(rows)
	in := map[string]int{}
	for i, c := range cols {
		for _, e := range []columnEval{c.embed, c.generate} {
			if e.evalID != "" {
				in[e.evalID] = i
			}
		}
	}
	cells := map[lineKey][]*Result{}
	var lines []Result
	for i := range rows {
		r := &rows[i]
		ci, ok := in[r.EvalID]
		if !ok {
			continue
		}
		k := keyOf(*r)
		if cells[k] == nil {
			cells[k] = make([]*Result, len(cols))
			lines = append(lines, *r)
		}
		cells[k][ci] = r
	}
	slices.SortStableFunc(lines, lineOrder)
	var b strings.Builder
	b.WriteString("# Evaluation results\n\n")
	if len(cols) == 0 {
		b.WriteString("No checkpoint evaluated yet.\n")
		_, err := io.WriteString(w, b.String())
		return err
	}
	// The sets each column's average averaged.
	members := make([][]Result, len(cols))
	for _, r := range rows {
		if ci, ok := in[r.EvalID]; ok && r.Kind == KindDataset && inAverage(r.Corpus, r.Split, r.Year) {
			members[ci] = append(members[ci], r)
		}
	}
	for _, m := range members {
		slices.SortStableFunc(m, lineOrder)
	}
	label := func(l Result) string {
		cs := cells[keyOf(l)]
		if l.Kind == KindAverage {
			var labels []string
			for ci, c := range cs {
				if c != nil && !slices.Contains(labels, averageLabel(members[ci])) {
					labels = append(labels, averageLabel(members[ci]))
				}
			}
			if len(labels) == 1 {
				return labels[0]
			}
			return lineLabel(l) + " (the sets differ by run: see each run's n)"
		}
		var cands []int64
		for _, c := range cs {
			if c != nil && !slices.Contains(cands, c.Candidates) {
				cands = append(cands, c.Candidates)
			}
		}
		if len(cands) > 1 {
			return lineLabel(l) + " (the pool differs by run)"
		}
		return lineLabel(l)
	}
	// n: the pairs (queries) of the line, one figure when every column
	// has the same; marked when too few to compare.
	small := false
	count := func(l Result) string {
		var ns []string
		least := int64(-1)
		for _, c := range cells[keyOf(l)] {
			if c == nil {
				continue
			}
			if n := strconv.FormatInt(c.Pairs, 10); !slices.Contains(ns, n) {
				ns = append(ns, n)
			}
			if least < 0 || c.Pairs < least {
				least = c.Pairs
			}
		}
		n := strings.Join(ns, "/")
		if least >= 0 && least < SmallSet {
			small = true
			n += " †"
		}
		return n
	}
	header := func(first string, generation bool) {
		b.WriteString("| " + first + " | n |")
		for _, c := range cols {
			e := c.embed
			if generation {
				e = c.generate
			}
			if e.evalID == "" {
				fmt.Fprintf(&b, " %s |", c.run)
				continue
			}
			fmt.Fprintf(&b, " %s (%s, step %d) |", c.run, e.model, e.step)
		}
		b.WriteString("\n|---|---:|" + strings.Repeat("---:|", len(cols)) + "\n")
	}
	intervals := false
	has := func(r *Result, c Column) bool { return r != nil && *c.Figure(r) != nil }
	cell := func(r *Result, c Column) string {
		if !has(r, c) {
			return "–"
		}
		s := strconv.FormatFloat(**c.Figure(r), 'f', 1, 64)
		lo, okLo := r.CILow[c.Name]
		hi, okHi := r.CIHigh[c.Name]
		if okLo && okHi {
			intervals = true
			s += " (" + figureInterval(lo, hi) + ")"
		}
		return s
	}
	// table writes a table of the lines keep keeps, a line per figure;
	// named: each line names its figure.
	table := func(title string, keep func(Result) bool, figures []Column, named bool) {
		var sel []Result
		for _, l := range lines {
			if keep(l) {
				sel = append(sel, l)
			}
		}
		if len(sel) == 0 {
			return
		}
		fmt.Fprintf(&b, "## %s\n\n", title)
		header("Dataset", sel[0].Kind == KindGeneration)
		for _, l := range sel {
			for _, m := range figures {
				if !slices.ContainsFunc(cells[keyOf(l)], func(c *Result) bool { return has(c, m) }) {
					continue // a figure no column has (F1 of a 3-class task)
				}
				name := label(l)
				if named {
					name += " " + cmp.Or(m.Symbol, m.Label)
				}
				b.WriteString("| " + name + " | " + count(l) + " |")
				for _, c := range cells[keyOf(l)] {
					if c == nil {
						b.WriteString(" |")
						continue
					}
					b.WriteString(" " + cell(c, m) + " |")
				}
				b.WriteString("\n")
			}
		}
		b.WriteString("\n")
	}
	similarity := func(r Result) bool { return isSimilarity(r.Kind) }
	for _, c := range Columns() {
		if c.Carries(KindDataset) {
			table("Semantic textual similarity: "+c.Label+" × 100", similarity, []Column{c}, false)
		}
	}
	for _, t := range reportTables() {
		table(t.title, func(r Result) bool { return slices.Contains(t.kinds, r.Kind) }, t.figures(), true)
	}
	b.WriteString(footer(rows))
	if intervals {
		fmt.Fprintf(&b, "\nIn parentheses, a figure's 95%% interval: a seeded percentile bootstrap (the 2.5th and 97.5th percentiles of the figure over "+
			"resamples of its items with replacement: the set's pairs; retrieval and rankings: its queries; an aggregate: resampled within each of its sets), "+
			"%d resamples (unless configured otherwise) drawn from the evaluation's seed. Chance lines have none. Two checkpoints whose intervals overlap may still differ: "+
			"parastream eval compare tests the difference on the same items.\n", metric.DefaultResamples)
	}
	if small {
		fmt.Fprintf(&b, "\n† fewer than %d pairs (queries): too small to compare models on; such a figure can move tens of points between two equally good models.\n", SmallSet)
	}
	writeWatchComparisons(&b, comparisons)
	_, err := io.WriteString(w, b.String())
	return err
}

// reportTable is one of the report's tables after the similarity tables
// (one per figure column of KindDataset rows, Pearson's then Spearman's):
// a line per row of its kinds and figure column those kinds carry
// (Column.Kinds), the columns named in first first, then the others in
// the order of Columns.
type reportTable struct {
	title string
	kinds []string
	first []string
}

// reportTables returns the report's tables after the similarity tables.
func reportTables() []reportTable {
	return []reportTable{
		{title: "Response retrieval among candidates (1 true, the rest drawn at random from the set's other responses): precision at N and MRR, × 100",
			kinds: []string{KindRetrieval, KindRetrievalChance}},
		{title: "Rankings the data gives (a question with labelled candidates; each line says which questions it keeps): MAP and MRR, × 100",
			kinds: []string{KindRanking, KindRankingChance}, first: []string{"map"}},
		{title: "Classification on the frozen sentence embeddings (logistic regression; each line says its training data and how its L2 penalty was chosen): accuracy and F1 of the positive class, × 100",
			kinds: []string{KindClassification}},
		{title: "Classification by the checkpoint's own head (trained with the encoder): accuracy, × 100",
			kinds: []string{KindClassificationHead}},
		{title: "Word similarity in context: the human rating against the cosine of the two words' representations, Spearman's ρ and Pearson's r × 100",
			kinds: []string{KindWordContext}, first: []string{"spearman"}},
		{title: "Generation (the model's outputs against the set's references): corpus BLEU-1 to 4, mean sentence METEOR and corpus TER, × 100 (TER: edits per reference word, lower is better)",
			kinds: []string{KindGeneration}},
	}
}

// figures returns the table's figure columns in the table's order.
func (t reportTable) figures() []Column {
	var first, rest []Column
	for _, c := range Columns() {
		switch {
		case !c.IsFigure() || !slices.ContainsFunc(t.kinds, c.Carries):
		case slices.Contains(t.first, c.Name):
			first = append(first, c)
		default:
			rest = append(rest, c)
		}
	}
	slices.SortStableFunc(first, func(a, b Column) int { return slices.Index(t.first, a.Name) - slices.Index(t.first, b.Name) })
	return append(first, rest...)
}

// figureInterval formats a figure's interval: "55.1–59.6", or "-3.2 to
// 1.5" where a bound is negative (a dash between minus signs misleads).
func figureInterval(lo, hi float64) string {
	f := func(v float64) string { return strconv.FormatFloat(v, 'f', 1, 64) }
	if lo < 0 || hi < 0 {
		return f(lo) + " to " + f(hi)
	}
	return f(lo) + "–" + f(hi)
}

// writeWatchComparisons writes the report's section on eval watch's
// comparisons: for each run (adapted evaluations apart), its latest
// checkpoint's comparison with the best evaluation of the run before it.
func writeWatchComparisons(b *strings.Builder, rows []ComparisonRow) {
	byID := map[string]*CheckpointComparison{}
	latest := map[string]*CheckpointComparison{}
	var runs []string
	for _, r := range rows {
		if r.Origin != OriginWatch {
			continue
		}
		c := byID[r.ComparisonID]
		if c == nil {
			c = &CheckpointComparison{ID: r.ComparisonID}
			byID[r.ComparisonID] = c
		}
		c.Rows = append(c.Rows, r)
	}
	for _, c := range byID {
		r := c.Rows[0]
		run := displayRun(Result{Run: r.RunB, Adaptation: r.AdaptationB})
		l := latest[run]
		if l == nil {
			runs = append(runs, run)
		}
		if l == nil || cmp.Or(cmp.Compare(r.StepB, l.Rows[0].StepB), r.ComparedAt.Compare(l.Rows[0].ComparedAt), cmp.Compare(r.ComparisonID, l.ID)) > 0 {
			latest[run] = c
		}
	}
	if len(runs) == 0 {
		return
	}
	slices.Sort(runs)
	b.WriteString("\n## Each run's latest checkpoint against the run's best before it (eval watch)\n\n")
	b.WriteString("| Run | checkpoint | best before it | headline figure | best before | this | difference (95% interval) | verdict | all figures: better / worse / within noise |\n")
	b.WriteString("|---|---|---|---|---:|---:|---|---|---|\n")
	for _, run := range runs {
		c := latest[run]
		r := c.Rows[0]
		better, worse, noise := c.Counts()
		head, a, bb, diff, verdict := "–", "–", "–", "–", "–"
		if h := c.Headline(); h != nil {
			head, a, bb = h.Label+" "+columnName(h.Column), strconv.FormatFloat(h.A, 'f', 1, 64), strconv.FormatFloat(h.B, 'f', 1, 64)
			diff, verdict = signed(h.Diff)+" ("+diffInterval(h.CILow, h.CIHigh)+")", h.Verdict
		}
		fmt.Fprintf(b, "| %s | step %d (eval %.8s) | step %d (eval %.8s) | %s | %s | %s | %s | %s | %d / %d / %d |\n",
			run, r.StepB, r.EvalB, r.StepA, r.EvalA, head, a, bb, diff, verdict, better, worse, noise)
	}
	b.WriteString("\nThe headline figure (eval watch --headline; by default the average's Pearson's r) picks the best and is the one test to read: " +
		"with dozens of figures, about 1 in 20 of those that do not differ gets a verdict by chance. Every comparison: " +
		ComparisonsDir + "/part-*.parquet.\n")
}

// fileSafe makes a name usable in a file name.
func fileSafe(s string) string {
	return strings.Map(func(r rune) rune {
		if r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '-' || r == '_' || r == '.' {
			return r
		}
		return '_'
	}, s)
}

// footer is the note under the report's tables: only the sentences that
// apply to the kinds of rows it shows.
func footer(rows []Result) string {
	has := func(kinds ...string) bool {
		return slices.ContainsFunc(rows, func(r Result) bool { return slices.Contains(kinds, r.Kind) })
	}
	parts := []string{}
	if has(KindDataset, KindMean, KindWeightedMean, KindPooled, KindAverage) {
		parts = append(parts, fmt.Sprintf("Similarity is the cosine of the sentence embeddings (scale: %s).", rows[0].Scale))
	}
	if has(KindMean, KindWeightedMean, KindPooled) {
		parts = append(parts, "A year's mean is the research's \"STS <year> Average\"; the weighted mean weights sets by their pairs; pooled scores all the year's pairs as one set.")
	}
	n := "n is the pairs scored (an aggregate: all its sets' pairs"
	if has(KindRetrieval, KindRanking) {
		n += "; retrieval and rankings: the queries"
	}
	if has(KindGeneration) {
		n += "; generation: the sentences"
	}
	parts = append(parts, n+").")
	if has(KindRetrieval, KindRetrievalChance) {
		parts = append(parts, "Retrieval ranks each query's true response in a pool of candidates; a chance line is what ranking the same pools at random scores on average.")
	}
	parts = append(parts, "Columns: each run's checkpoint of the highest evaluated step. See docs/evalsink.md.")
	return strings.Join(parts, " ") + "\n"
}
