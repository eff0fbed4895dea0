package report

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/parastream/parastream/evalsink"
	"github.com/parastream/parastream/featurize"
	"github.com/parastream/parastream/pipelines"
	"github.com/parastream/parastream/shards"
)

// Extract prints an extraction's summary: what was read, rejected,
// filtered and kept, and the hints of its outcome. out is the output
// directory.
// ExtractLine prints one corpus's extraction on one line: the pairs kept
// by split, of the records read, and what was dropped on the way.
func ExtractLine(w io.Writer, sum *pipelines.Summary) {
	c := sum.Counters
	splits := make([]string, 0, len(sum.Splits))
	var kept int64
	for s, n := range sum.Splits {
		splits = append(splits, fmt.Sprintf("%s %d", s, n))
		kept += n
	}
	sort.Strings(splits)
	fmt.Fprintf(w, "  %-11s kept %4d pairs (%s) of %d records; rejected %d, filtered %d, duplicates %d; %s\n", sum.Corpus, kept, strings.Join(splits, ", "),
		c["read"], sumPrefix(c, "rejected_"), sumPrefix(c, "filtered_"), c["dedupe_exact"]+c["dedupe_normalized"]+c["dedupe_external"], sum.Elapsed.Round(1e6))
}

func Extract(w io.Writer, sum *pipelines.Summary, out string) {
	c := sum.Counters
	fmt.Fprintf(w, "%s: extracted in %s\n", sum.Corpus, sum.Elapsed.Round(1e6))
	fmt.Fprintf(w, "  in        %s, %d records (%s), %d parsed\n", plural(c["files"], "file"), c["read"], HumanBytes(c["bytes_read"]), c["parsed"])
	fmt.Fprintf(w, "  rejected  %d%s -> %s\n", sumPrefix(c, "rejected_"), breakdownPrefix(c, "rejected_"), sum.Rejects)
	if n := sumPrefix(c, "skipped_"); n > 0 {
		fmt.Fprintf(w, "  skipped   %d%s\n", n, breakdownPrefix(c, "skipped_"))
	}
	fmt.Fprintf(w, "  filtered  %d%s\n", sumPrefix(c, "filtered_"), breakdownPrefix(c, "filtered_"))
	if c["threads"] > 0 {
		fmt.Fprintf(w, "  threads   %d, paired %d (titles %d), orphan replies %d\n", c["threads"], c["paired"], c["paired_titles"], c["orphan_replies"])
	}
	if c["budget_tokens_kept"] > 0 || c["budget_dropped"] > 0 {
		fmt.Fprintf(w, "  budget    kept %d tokens, dropped %d pairs\n", c["budget_tokens_kept"], c["budget_dropped"])
	}
	fmt.Fprintf(w, "  duplicates dropped %d (exact %d, normalised %d, against earlier extractions %d)\n",
		c["dedupe_exact"]+c["dedupe_normalized"]+c["dedupe_external"], c["dedupe_exact"], c["dedupe_normalized"], c["dedupe_external"])
	splits := make([]string, 0, len(sum.Splits))
	var kept int64
	for s, n := range sum.Splits {
		splits = append(splits, s)
		kept += n
	}
	sort.Strings(splits)
	var parts []string
	for _, s := range splits {
		parts = append(parts, fmt.Sprintf("%s %d", s, sum.Splits[s]))
	}
	fmt.Fprintf(w, "  kept      %d pairs: %s -> %s/%s/<split>/, manifest %s/%s\n", kept, strings.Join(parts, ", "), out, sum.Corpus, out, shards.ManifestName)
	for _, h := range extractOutcome(c, kept).hints() {
		fmt.Fprintf(w, "  %s\n", h)
	}
}

// Featurize prints a featurize run's summary and the first words of its
// first topics. out is the output directory.
func Featurize(w io.Writer, sum *pipelines.FeaturizeSummary, out string, topics, words int) {
	m := sum.Model
	st := sum.Stats
	verb := "applied"
	if sum.Fitted {
		verb = "fitted"
	}
	fmt.Fprintf(w, "featurized %d shards, %d rows, in %s\n", sum.Shards, sum.Rows, sum.Elapsed.Round(1e6))
	fmt.Fprintf(w, "  model %s: vocabulary %d entries, %d topics (λ %g, %s), relative reconstruction error %.4f on %d texts\n",
		verb, m.Vocab.Len(), m.NMF.K, m.NMF.L1, m.Info.Weighting, m.Info.RelError, m.Info.FitTexts)
	if st.Tokens > 0 {
		fmt.Fprintf(w, "  texts %d, tokens %d, unknown %d: %s; texts with no known word %d\n",
			st.Texts, st.Tokens, st.Unknown, pipelines.OOVShare(st, m.Lex.Buckets()), st.Empty)
	}
	fmt.Fprintf(w, "  -> %s (model in %s/featurize/)\n", out, out)
	Topics(w, m, topics, words)
}

// Topics prints the first words of a model's first topics, one line each.
func Topics(w io.Writer, m *featurize.Model, topics, words int) {
	for t := range min(topics, m.NMF.K) {
		var parts []string
		for _, tw := range m.Topic(t, words) {
			parts = append(parts, tw.Token)
		}
		fmt.Fprintf(w, "  topic %3d: %s\n", t, strings.Join(parts, " "))
	}
}

// MTEB prints the evaluation's figures in MTEB's metric, a line: the
// Spearman ×100 of the cosines over each STS year's pooled pairs and of
// the STS Benchmark's sets (nothing when it has none of them).
func MTEB(w io.Writer, scores []evalsink.MTEBScore) {
	if len(scores) == 0 {
		return
	}
	parts := make([]string, len(scores))
	for i, s := range scores {
		parts[i] = fmt.Sprintf("%s %.1f", s.Task, s.Spearman)
		if s.Split != "test" {
			parts[i] = fmt.Sprintf("%s (%s) %.1f", s.Task, s.Split, s.Spearman)
		}
	}
	fmt.Fprintf(w, "MTEB main score (Spearman ×100 of the cosines over a task's pooled pairs): %s\n", strings.Join(parts, ", "))
}

// Eval prints an evaluation's summary and the report it wrote
// (report.md).
func Eval(w io.Writer, sum *evalsink.Summary) error {
	what := "evaluated"
	if !sum.Added {
		what = "evaluated before: no rows added"
	}
	fmt.Fprintf(w, "%s: %s (%d rows, part %s)", sum.Rows[0].Checkpoint, what, len(sum.Rows), sum.Part)
	if sum.Added {
		fmt.Fprintf(w, "; %d tokens, %d not in the checkpoint's vocabulary", sum.Tokens, sum.Unknown)
		if sum.Buckets > 0 {
			fmt.Fprintf(w, " (mapped to its %d out-of-vocabulary buckets)", sum.Buckets)
		}
		fmt.Fprintf(w, ", %d texts with no token id (zero vectors)", sum.Empty)
	}
	if sum.SQLInserted > 0 { // with no database configured, nothing to say
		fmt.Fprintf(w, "; SQL rows added: %d", sum.SQLInserted)
	}
	fmt.Fprintf(w, "\nreport %s", sum.Report)
	if len(sum.Plots) > 0 {
		fmt.Fprintf(w, "; plots (%d) in %s", len(sum.Plots), filepath.Dir(sum.Plots[0]))
	}
	fmt.Fprintln(w)
	report, err := os.ReadFile(sum.Report)
	if err != nil {
		return err
	}
	_, err = fmt.Fprintf(w, "\n%s", report)
	return err
}
