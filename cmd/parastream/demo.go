package main

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"

	"github.com/apache/beam/sdks/v2/go/pkg/beam"
	beamlog "github.com/apache/beam/sdks/v2/go/pkg/beam/log"

	"github.com/parastream/parastream/corpora"
	"github.com/parastream/parastream/internal/outdir"
	"github.com/parastream/parastream/pipelines"
	"github.com/parastream/parastream/shards"
	"github.com/parastream/parastream/transforms"
)

// demoInput is one fixture the demo reads.
type demoInput struct {
	format string
	files  []string // relative to the data directory
}

// demoInputs is a fixture of every format, all under testdata/.
var demoInputs = []demoInput{
	{"reddit-comments", []string{"reddit/comments.jsonl"}},
	{"reddit-comments", []string{"reddit/comments.jsonl.zst"}},
	{"reddit-submissions", []string{"reddit/submissions.jsonl"}},
	{"europarl", []string{"europarl/mini.fr-en.en", "europarl/mini.fr-en.fr"}},
	{"moses", []string{"moses/fr-en.phrase-table"}},
	{"moses", []string{"moses/de-en.phrase-table"}},
	{"ppdb", []string{"ppdb/ppdb-2.0-s-mini.raw"}},
	{"ppdb", []string{"ppdb/ppdb-1.0-s-mini.raw"}},
	{"ppdb-pairs", []string{"ppdb/lexical-pairs.tsv"}},
	{"ppdb-human", []string{"ppdb/human-labels.tsv"}},
	{"simpwiki", []string{"simpwiki/normal.aligned", "simpwiki/simple.aligned"}},
	{"turkcorpus", []string{"turkcorpus/mini.8turkers.tok.norm", "turkcorpus/mini.8turkers.tok.simp"}},
	{"quora", []string{"quora/mini.tsv"}},
	{"msrp", []string{"msrp/msr_paraphrase_mini.txt"}},
	{"sts", []string{"sts/2016/STS.input.mini.txt", "sts/2016/STS.gs.mini.txt"}},
	{"stsb", []string{"stsb/sts-mini.csv"}},
	{"sick", []string{"sick/SICK_mini.txt"}},
}

func runDemo(ctx context.Context, e *env, args []string) error {
	fs := newFlags(e, "demo", "parastream demo [--data DIR] [--out DIR] [--show N]")
	data := fs.String("data", "testdata", "directory of the fixtures")
	out := fs.String("out", filepath.Join("out", "demo"), "directory for the demo's outputs (rejects files, shards)")
	show := fs.Int("show", 2, "examples and rejects to print per input")
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	if err := outdir.Check(*out); err != nil {
		return fmt.Errorf("%w: --out: %v", errUsage, err)
	}
	if _, err := os.Stat(*data); err != nil {
		return fmt.Errorf("fixtures not found (run from the repository root or pass --data): %w", err)
	}
	fmt.Fprintf(e.stdout, "parastream demo: reading a fixture of every corpus format from %s\n\n", *data)
	var total corpora.Stats
	failed := 0
	for i, in := range demoInputs {
		paths := make([]string, len(in.files))
		for j, f := range in.files {
			paths[j] = filepath.Join(*data, f)
		}
		rejects := filepath.Join(*out, "rejects", fmt.Sprintf("%02d-%s.jsonl", i, in.format))
		rep, err := readFormat(ctx, e, in.format, paths, corpora.Options{}, *show, rejects)
		rep.print(e.stdout, *show)
		if err != nil {
			failed++
		}
		total.Add(rep.stats)
	}
	fmt.Fprintf(e.stdout, "\ntotal: %d inputs, %d records, %d examples, %d rejected%s, %d skipped; rejects kept under %s\n",
		len(demoInputs), total.Records, total.Examples, total.RejectedTotal(), breakdown(total.Rejected), sumSkipped(total.Skipped), filepath.Join(*out, "rejects"))
	if failed > 0 {
		return fmt.Errorf("%d of %d inputs could not be read", failed, len(demoInputs))
	}
	shardsDir, featurized := filepath.Join(*out, "shards"), filepath.Join(*out, "featurized")
	if err := demoExtract(ctx, e, *data, shardsDir); err != nil {
		return err
	}
	if err := demoFeaturize(ctx, e, shardsDir, featurized); err != nil {
		return err
	}
	if err := demoStream(ctx, e, featurized); err != nil {
		return err
	}
	checkpoints := filepath.Join(*out, "checkpoints")
	if err := demoTrainStream(ctx, e, featurized, checkpoints); err != nil {
		return err
	}
	steps, err := filepath.Glob(filepath.Join(checkpoints, "step-*"))
	if err != nil || len(steps) == 0 {
		return fmt.Errorf("the demo's training left no checkpoint in %s", checkpoints)
	}
	slices.Sort(steps)
	return demoEval(ctx, e, steps[len(steps)-1], featurized, filepath.Join(*out, "results"))
}

// demoOOVBuckets is the demo's number of out-of-vocabulary buckets,
// fewer than featurize's default 100,000: the optimiser updates every
// embedding row at each step, and with 100,000 bucket rows after the
// fixtures' few hundred words the demo's training ran at a fourteenth of
// its speed. The fixtures' unseen words fit 1,000 buckets with few
// collisions.
const demoOOVBuckets = 1000

// demoFeaturize fits a small vocabulary and topic model on the demo
// shards' training texts and writes the shards again with ids and topics.
func demoFeaturize(ctx context.Context, e *env, in, out string) error {
	fmt.Fprintf(e.stdout, "\nparastream demo: featurizing %s into %s (vocabulary, tf-idf, NMF topics)\n\n", in, out)
	cfg := pipelines.NewFeaturizeConfig(in, out)
	// The fixtures are tiny: every word counts and a few topics do.
	cfg.Vocab.MinCount, cfg.Topics = 1, 8
	cfg.OOVBuckets = demoOOVBuckets
	cfg.Command = []string{"parastream", "demo"}
	sum, err := pipelines.RunFeaturize(ctx, cfg, pipelines.RunOptions{})
	if err != nil {
		return fmt.Errorf("featurizing the demo shards: %w", err)
	}
	printFeaturizeSummary(e, sum, out, 5, 8)
	m, err := shards.ReadManifest(out)
	if err != nil {
		return err
	}
	if err := m.Verify(out); err != nil {
		return err
	}
	fmt.Fprintf(e.stdout, "\nmanifest verified: %s\n", filepath.Join(out, shards.ManifestName))
	return nil
}

// demoExtracts is an extraction of every corpus fixture.
var demoExtracts = []struct {
	corpus, input, inputB, submissions string
}{
	{"reddit", "reddit/comments.jsonl.zst", "", "reddit/submissions.jsonl"},
	{"europarl", "europarl/*.en", "europarl/*.fr", ""},
	{"moses", "moses/*.phrase-table", "", ""},
	{"ppdb", "ppdb/ppdb-*.raw", "", ""},
	{"ppdb-pairs", "ppdb/lexical-pairs.tsv", "", ""},
	{"ppdb-human", "ppdb/human-labels.tsv", "", ""},
	{"simpwiki", "simpwiki/normal.aligned", "simpwiki/simple.aligned", ""},
	{"turkcorpus", "turkcorpus/*.norm", "turkcorpus/*.simp", ""},
	{"quora", "quora/mini.tsv", "", ""},
	{"msrp", "msrp/msr_paraphrase_*.txt", "", ""},
	{"sts", "sts/*/STS.input.*.txt", "", ""},
	{"stsb", "stsb/sts-*.csv", "", ""},
	{"sick", "sick/SICK_*.txt", "", ""},
}

// demoExtract runs the extraction pipeline (Beam, on Prism in-process) on
// every corpus fixture into one output directory, and checks its manifest.
func demoExtract(ctx context.Context, e *env, data, out string) error {
	beamlog.LogLevel = "warn"
	beam.Init()
	fmt.Fprintf(e.stdout, "\nparastream demo: extracting every corpus with the Beam pipeline (Prism, in-process) into %s\n\n", out)
	for _, x := range demoExtracts {
		cfg := pipelines.NewExtractConfig(x.corpus, filepath.Join(data, x.input), out)
		if x.inputB != "" {
			cfg.InputB = filepath.Join(data, x.inputB)
		}
		if x.submissions != "" {
			cfg.Submissions = filepath.Join(data, x.submissions)
			cfg.Pair = transforms.PairOptions{Context: 2, Titles: true}
		}
		cfg.Command = []string{"parastream", "demo"}
		sum, err := pipelines.RunExtract(ctx, cfg, pipelines.RunOptions{})
		if err != nil {
			return fmt.Errorf("extracting %s: %w", x.corpus, err)
		}
		printSummary(e, sum, out)
	}
	m, err := shards.ReadManifest(out)
	if err != nil {
		return err
	}
	if err := m.Verify(out); err != nil {
		return err
	}
	var rows int64
	for _, f := range m.Files {
		rows += f.Rows
	}
	fmt.Fprintf(e.stdout, "\n%d shards, %d rows, %d splits; manifest verified: %s\n", len(m.Files), rows, len(m.Splits), filepath.Join(out, shards.ManifestName))
	return nil
}
