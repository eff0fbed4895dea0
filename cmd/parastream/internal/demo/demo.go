// Package demo runs the main job on the project's fixtures: every corpus
// format read, extracted with the Beam pipeline, featurized, published to
// the embedded broker and read back, a small model trained from the
// stream and evaluated. `parastream demo` (and `make demo`) calls Run.
package demo

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"

	"github.com/apache/beam/sdks/v2/go/pkg/beam"
	beamlog "github.com/apache/beam/sdks/v2/go/pkg/beam/log"

	"github.com/parastream/parastream/cmd/parastream/internal/report"
	"github.com/parastream/parastream/corpora"
	"github.com/parastream/parastream/evalsink"
	"github.com/parastream/parastream/pipelines"
	"github.com/parastream/parastream/shards"
	"github.com/parastream/parastream/transforms"
)

// Input is one fixture the demo reads.
type Input struct {
	Format string
	Files  []string // relative to the data directory
}

// Inputs are a fixture of every format, all under testdata/.
func Inputs() []Input {
	return []Input{
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
}

// Config configures Run. Data and Out are required.
type Config struct {
	// Data is the directory of the fixtures (the repository's testdata);
	// Out the directory of the demo's outputs (rejects files, shards,
	// checkpoints, results).
	Data, Out string
	// Show is the number of examples and rejects printed per input; 0
	// prints one line per input and per corpus extracted (a screen a
	// stage), more prints each one's whole report.
	Show int
	// Stdout gets the demo's report; Stderr the warnings of training.
	Stdout, Stderr io.Writer
	// ContextFor computes the topic context of a checkpoint whose model
	// takes one (evalsink.Config.ContextFor).
	ContextFor evalsink.ContextFunc
	// Self is the command as the user runs it, for the hint that ends
	// the training ("parastream" when empty).
	Self string
}

// Run runs the demo: it reads a fixture of every format, extracts,
// featurizes, streams, trains and evaluates, printing each stage's
// summary to cfg.Stdout.
func Run(ctx context.Context, cfg Config) error {
	if _, err := os.Stat(cfg.Data); err != nil {
		return fmt.Errorf("fixtures not found (run from the repository root or pass --data): %w", err)
	}
	fmt.Fprintf(cfg.Stdout, "parastream demo: reading a fixture of every corpus format from %s\n\n", cfg.Data)
	var total corpora.Stats
	failed := 0
	inputs := Inputs()
	for i, in := range inputs {
		paths := make([]string, len(in.Files))
		for j, f := range in.Files {
			paths[j] = filepath.Join(cfg.Data, f)
		}
		rejects := filepath.Join(cfg.Out, "rejects", fmt.Sprintf("%02d-%s.jsonl", i, in.Format))
		rep, err := corpora.ReadAll(ctx, in.Format, paths, corpora.ReadAllOptions{Show: cfg.Show, RejectsPath: rejects, Progress: report.ReadProgress(cfg.Stderr, in.Format)})
		if cfg.Show > 0 {
			report.Read(cfg.Stdout, rep, cfg.Show)
		} else {
			report.ReadLine(cfg.Stdout, rep)
		}
		if err != nil {
			failed++
		}
		total.Add(rep.Stats)
	}
	fmt.Fprintf(cfg.Stdout, "\ntotal: %d inputs, %d records, %d examples, %d rejected%s, %d skipped; rejects kept under %s\n",
		len(inputs), total.Records, total.Examples, total.RejectedTotal(), report.Breakdown(total.Rejected), report.Sum(total.Skipped), filepath.Join(cfg.Out, "rejects"))
	if failed > 0 {
		return fmt.Errorf("%d of %d inputs could not be read", failed, len(inputs))
	}
	shardsDir, featurized := filepath.Join(cfg.Out, "shards"), filepath.Join(cfg.Out, "featurized")
	if err := Extract(ctx, cfg.Stdout, cfg.Data, shardsDir, cfg.Show > 0); err != nil {
		return err
	}
	if err := Featurize(ctx, cfg.Stdout, shardsDir, featurized); err != nil {
		return err
	}
	if err := Stream(ctx, cfg.Stdout, featurized); err != nil {
		return err
	}
	checkpoints := filepath.Join(cfg.Out, "checkpoints")
	if err := cfg.TrainStream(ctx, featurized, checkpoints); err != nil {
		return err
	}
	steps, err := filepath.Glob(filepath.Join(checkpoints, "step-*"))
	if err != nil || len(steps) == 0 {
		return fmt.Errorf("the demo's training left no checkpoint in %s", checkpoints)
	}
	slices.Sort(steps)
	return cfg.Eval(ctx, steps[len(steps)-1], featurized, filepath.Join(cfg.Out, "results"))
}

// oovBuckets is the demo's number of out-of-vocabulary buckets,
// fewer than featurize's default 100,000: the optimiser updates every
// embedding row at each step, and with 100,000 bucket rows after the
// fixtures' few hundred words the demo's training ran at a fourteenth of
// its speed. The fixtures' unseen words fit 1,000 buckets with few
// collisions.
const oovBuckets = 1000

// Featurize fits a small vocabulary and topic model on the demo
// shards' training texts and writes the shards again with ids and topics.
func Featurize(ctx context.Context, w io.Writer, in, out string) error {
	fmt.Fprintf(w, "\nparastream demo: featurizing %s into %s (vocabulary, tf-idf, NMF topics)\n\n", in, out)
	cfg := pipelines.NewFeaturizeConfig(in, out)
	// The fixtures are tiny: every word counts and a few topics do.
	cfg.Vocab.MinCount, cfg.Topics = 1, 8
	cfg.OOVBuckets = oovBuckets
	cfg.Command = []string{"parastream", "demo"}
	sum, err := pipelines.RunFeaturize(ctx, cfg, pipelines.RunOptions{})
	if err != nil {
		return fmt.Errorf("featurizing the demo shards: %w", err)
	}
	report.Featurize(w, sum, out, 5, 8)
	m, err := shards.ReadManifest(out)
	if err != nil {
		return err
	}
	if err := m.Verify(out); err != nil {
		return err
	}
	fmt.Fprintf(w, "\nmanifest verified: %s\n", filepath.Join(out, shards.ManifestName))
	return nil
}

// extracts are an extraction of every corpus fixture.
func extracts() []extraction {
	return []extraction{
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
}

// extraction is one extract run of the demo: a corpus and its fixtures.
type extraction struct {
	corpus, input, inputB, submissions string
}

// Extract runs the extraction pipeline (Beam, on Prism in-process) on
// every corpus fixture into one output directory, and checks its manifest.
func Extract(ctx context.Context, w io.Writer, data, out string, full bool) error {
	beamlog.LogLevel = "warn"
	beam.Init()
	fmt.Fprintf(w, "\nparastream demo: extracting every corpus with the Beam pipeline (Prism, in-process) into %s\n\n", out)
	for _, x := range extracts() {
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
		if full {
			report.Extract(w, sum, out)
		} else {
			report.ExtractLine(w, sum)
		}
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
	fmt.Fprintf(w, "\n%d shards, %d rows, %d splits; manifest verified: %s\n", len(m.Files), rows, len(m.Splits), filepath.Join(out, shards.ManifestName))
	return nil
}
