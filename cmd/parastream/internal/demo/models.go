package demo

import (
	"cmp"
	"context"
	"fmt"
	"log/slog"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/parastream/parastream/evalsink"
	"github.com/parastream/parastream/shards"
	"github.com/parastream/parastream/stream"
	"github.com/parastream/parastream/trainstep"
	"github.com/parastream/parastream/trainstep/compute"
)

// modelSteps bounds each model's training in Models: enough to show the
// loss fall, not to train (docs/models/ give the real runs).
const modelSteps = 40

// modelDemo is one model Models trains.
type modelDemo struct {
	what  string
	model trainstep.Config
	// topics trains with the topic context (featurize's topic vectors).
	topics bool
}

// modelDemos are the research's three larger models at demo sizes.
func modelDemos() []modelDemo {
	return []modelDemo{
		{what: "transformer encoder, batch softmax (Yang et al. 2018)",
			model: trainstep.Config{Encoder: compute.EncTransformer, Loss: compute.LossSoftmax, Dim: 32, TFLayers: 2, TFHeads: 4, TFFilter: 64}},
		{what: "context-sensitive autoencoder with the NMF topic context (Amiri et al. 2016)",
			model:  trainstep.Config{Encoder: compute.EncCSAE, Loss: compute.LossRecon, Context: compute.ContextTopics, Dim: 32, CSAELayers: []int{32}, WordDropout: 0.1},
			topics: true},
		{what: "encoder-decoder with the pairwise discriminator (Patro et al. 2018)",
			model: trainstep.Config{Encoder: compute.EncEDD, Loss: compute.LossLocalGlobal, Dim: 32, Hidden: 32, OutVocab: 2000, Optimizer: compute.OptRMSProp, LR: 0.0008}},
	}
}

// Models is `parastream demo --models` (make demo-models): the fixtures
// extracted and featurized as Run does them, the dataset with the most
// training rows published to the embedded broker, and the transformer,
// the context-sensitive autoencoder and the paraphrase generator each
// trained from the stream for a few steps at small sizes, evaluated as
// `eval run` does, and the generator's paraphrases of the Quora fixture
// scored (BLEU, METEOR, TER) beside copying the input.
func (cfg Config) Models(ctx context.Context) error {
	shardsDir, featurized := filepath.Join(cfg.Out, "shards"), filepath.Join(cfg.Out, "featurized")
	if err := Extract(ctx, cfg.Stdout, cfg.Data, shardsDir, cfg.Show > 0); err != nil {
		return err
	}
	if err := Featurize(ctx, cfg.Stdout, shardsDir, featurized); err != nil {
		return err
	}
	b, dataset, err := publishLargest(ctx, featurized)
	if err != nil {
		return err
	}
	defer b.Close()
	cc := stream.ClientConfig{Brokers: []string{b.Addr()}}
	results := filepath.Join(cfg.Out, "results")
	for _, md := range modelDemos() {
		dir := filepath.Join(cfg.Out, "checkpoints", md.model.Encoder)
		fmt.Fprintf(cfg.Stdout, "\nparastream demo: %s, %d steps on %s\n\n", md.what, modelSteps, dataset)
		last, err := cfg.trainModel(ctx, trainJob{cc: cc, dataset: dataset, demo: md, steps: modelSteps, out: dir})
		if err != nil {
			return err
		}
		if err := cfg.Eval(ctx, last, featurized, results); err != nil {
			return err
		}
		if md.model.Encoder == compute.EncEDD {
			if err := cfg.generation(ctx, last, results); err != nil {
				return err
			}
		}
	}
	return nil
}

// trainJob is one training run of the demo.
type trainJob struct {
	cc      stream.ClientConfig
	dataset string
	demo    modelDemo
	steps   int64
	// duration bounds the run's time (0: steps alone).
	duration time.Duration
	out      string
}

// trainModel trains j's model from the broker, the vocabulary (and, for
// a model with the topic context, the featurize model) read from the
// artifacts topic, writes its checkpoints under j.out and returns the last.
func (cfg Config) trainModel(ctx context.Context, j trainJob) (string, error) {
	v, err := stream.FetchVocabulary(ctx, j.cc, "", j.dataset, j.demo.topics)
	if err != nil {
		return "", err
	}
	// The checkpoints of an earlier demo would be mistaken for this one's.
	if err := os.RemoveAll(j.out); err != nil {
		return "", err
	}
	m := j.demo.model
	m.BatchSize, m.OOVBuckets, m.OOVHash = cmp.Or(m.BatchSize, 10), v.OOVBuckets, v.OOVHash
	rc := trainstep.RunConfig{
		Client: j.cc, Dataset: j.dataset, Run: "demo-" + m.Encoder + "-" + j.dataset, Vocab: v.Words, VocabCounts: v.Counts, Model: m,
		Epochs: 300, MaxSteps: j.steps, Duration: j.duration, CheckpointDir: j.out, CheckpointEvery: 200, ShuffleBuffer: 1000,
		Progress: cfg.Stdout, ProgressEvery: time.Second,
		Logger: slog.New(slog.NewTextHandler(cfg.Stderr, &slog.HandlerOptions{Level: slog.LevelWarn})),
	}
	if j.demo.topics {
		rc.Model.Topics, rc.Featurize = v.Topics, v.Files
	}
	sum, err := trainstep.Run(ctx, rc)
	if err != nil {
		return "", fmt.Errorf("training %s on the demo stream: %w", m.Encoder, err)
	}
	fmt.Fprintf(cfg.Stdout, "\ntrained %s: %d steps (%d examples, %.0f/s) in %d epochs, loss %.4f; last checkpoint %s\n",
		m.Encoder, sum.Steps, sum.Examples, float64(sum.Examples)/sum.Elapsed.Seconds(), sum.Epoch, sum.Loss, sum.Checkpoint)
	return sum.Checkpoint, nil
}

// generation paraphrases two questions of the Quora fixture with the edd
// checkpoint and scores its paraphrases of the fixture's duplicates
// beside copying the input, appending the rows to results.
func (cfg Config) generation(ctx context.Context, checkpoint, results string) error {
	quora := filepath.Join(cfg.Data, "quora", "mini.tsv")
	rows, err := evalsink.EvaluateGeneration(ctx, evalsink.GenerationEval{Checkpoint: checkpoint, Pairs: []string{quora}, Out: results})
	if err != nil {
		return fmt.Errorf("scoring the demo generator: %w", err)
	}
	p, _, err := evalsink.OpenParaphraser(checkpoint)
	if err != nil {
		return err
	}
	defer p.Close()
	in := []string{"how do i learn to cook?", "what is the best way to learn go?"}
	toks := make([][]string, len(in))
	for i, s := range in {
		toks[i] = p.Tokenize(s)
	}
	gen, err := p.Paraphrase(toks, compute.GenerateOptions{Beam: 3, MaxLen: 12})
	if err != nil {
		return err
	}
	fmt.Fprintf(cfg.Stdout, "\nparaphrases (beam 3; after a few steps a decoder has learnt little beyond ending early: docs/models/edd.md has trained ones):\n")
	for i, s := range in {
		out := strings.Join(gen[i], " ")
		if out == "" {
			out = "(nothing: the end token first)"
		}
		fmt.Fprintf(cfg.Stdout, "  %-40s -> %s\n", s, out)
	}
	fmt.Fprintf(cfg.Stdout, "\ngeneration on %s's duplicates (%s):\n  %-28s %6s %6s %6s %6s %7s %6s\n", quora, results, "", "BLEU-1", "BLEU-2", "BLEU-3", "BLEU-4", "METEOR", "TER")
	for _, r := range rows {
		if r.BLEU1 == nil || r.BLEU2 == nil || r.BLEU3 == nil || r.BLEU4 == nil || r.METEOR == nil || r.TER == nil {
			continue
		}
		fmt.Fprintf(cfg.Stdout, "  %-28s %6.1f %6.1f %6.1f %6.1f %7.1f %6.1f\n", r.Dataset, *r.BLEU1, *r.BLEU2, *r.BLEU3, *r.BLEU4, *r.METEOR, *r.TER)
	}
	return nil
}

// largestTrainSplit is the corpus of the featurized shards with the most
// rows in the training split.
func largestTrainSplit(featurized string) (string, error) {
	m, err := shards.ReadManifest(featurized)
	if err != nil {
		return "", err
	}
	dataset, most := "", int64(-1)
	for _, key := range slices.Sorted(maps.Keys(m.Splits)) {
		if s := m.Splits[key]; s.Split == stream.DefaultSplit && s.Rows > most {
			dataset, most = s.Corpus, s.Rows
		}
	}
	if dataset == "" {
		return "", fmt.Errorf("the demo shards in %s have no training split", featurized)
	}
	return dataset, nil
}
