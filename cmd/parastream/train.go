package main

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/parastream/parastream/cmd/parastream/internal/cli"
	"github.com/parastream/parastream/stream"
	"github.com/parastream/parastream/trainstep"
	"github.com/parastream/parastream/trainstep/compute"
)

const trainUsage = "parastream train --brokers ADDR --dataset NAME [flags] | parastream train --resume DIR [flags that override the run's]"

func runTrain(ctx context.Context, e *env, args []string) error {
	fs := newFlags(e, "train", trainUsage)
	client := cli.ClientFlags(fs)
	prefix := fs.String("topic-prefix", stream.DefaultPrefix, "prefix of the topic names")
	dataset := fs.String("dataset", "", "dataset (corpus) to train on, as published (required); several, comma-separated, are mixed in one run (featurized together: one vocabulary)")
	mix := fs.String("mix", "", "weights of a mix of datasets, as ppdb=2,quora=1 (default: their sizes, so an epoch is one pass over each)")
	split := fs.String("split", stream.DefaultSplit, "split to train on")
	run := fs.String("run", "", "name of the run: its consumer group and the name in checkpoint events (default: <dataset>-<model>-<UTC time>; when resuming, the checkpoint's)")
	var cfg trainstep.Config
	modelFlags := trainstep.ModelFlags(fs, &cfg)
	fs.StringVar(&cfg.Context, "context", "", "topics: add each sentence's NMF topic vector to its embedding through a learned projection (Amiri et al. 2016); evaluation computes it with the featurize model kept in the checkpoint")
	fs.IntVar(&cfg.BatchSize, "batch", 100, "pairs per batch")
	fs.IntVar(&cfg.MaxLen, "max-len", 0, "longer sentences are truncated (0: 64)")
	fs.IntVar(&cfg.BucketWidth, "bucket-width", 0, "padded lengths are multiples of this (0: 8)")
	fs.StringVar(&cfg.Optimizer, "optimizer", "adam", "adam, sgd or rmsprop")
	fs.StringVar(&cfg.EmbeddingUpdate, "embedding-update", "", "sparse: a step updates only the embedding rows of its batch's words (lazy, as PyTorch's SparseAdam; the default); dense: every row")
	fs.Float64Var(&cfg.LR, "lr", 0, "learning rate (0: 0.001 adam, 0.01 sgd and rmsprop)")
	fs.Float64Var(&cfg.Decay, "decay", 0, "learning rate multiplier per finished epoch (0: none)")
	fs.Uint64Var(&cfg.Seed, "seed", 1, "seed of the initialisation, the noise and the shuffle")
	csaeFlags := trainstep.CSAEFlags(fs, &cfg)
	epochs := fs.Int("epochs", 1, "passes over the data (0: follow new data for ever)")
	ckDir := fs.String("checkpoint-dir", "", "directory of the checkpoints, step-N subdirectories (default: checkpoints/<run>; when resuming, the resumed checkpoint's directory)")
	every := fs.Int64("checkpoint-every", trainstep.DefaultCheckpointEvery, "steps between checkpoints (one is also written at the end)")
	keep := fs.Int("keep-checkpoints", 0, "keep only the newest N checkpoints, removing older ones once a newer one is committed (0: keep all)")
	async := fs.Bool("checkpoint-async", true, "write checkpoints in the background: a checkpoint step snapshots the model (on a GPU, into pinned host memory on a copy stream) and training goes on while the files are written; the offsets are committed once they are durable, one write at a time (false: write before the next step)")
	feedAhead := fs.Int("feed-ahead", trainstep.DefaultFeedAhead, "windows of batches read, bucketed and paired ahead of the step in a goroutine of their own (0: read between steps); the batches and their order are the same")
	resume := fs.String("resume", "", "continue from this checkpoint, or from the newest good one in this checkpoint directory (a corrupt newer one is passed over with a warning), exactly at its stream position and with the run's flags (run.json): a flag given again overrides the run's value with a line saying so (--epochs, --duration, --max-steps, --checkpoint-every, --brokers, ...) or is refused where it would change the model or its data (--model, --lr, --dim, --dataset, ...)")
	vectors := fs.String("vectors", "", "GloVe or word2vec text file initialising the word embeddings (.gz read)")
	initFrom := fs.String("init-from", "", "checkpoint whose parameters of the same names and shapes start this new run (a pretraining run's, as the csae's --loss recon before a pair loss); the same vocabulary")
	buffer := fs.Int("shuffle-buffer", 0, "rows the consumer shuffles among (0: 10,000; 1: topic order)")
	window := fs.Int("window", trainstep.DefaultWindow, "batches of rows read before sorting them into length buckets")
	maxSteps := fs.Int64("max-steps", 0, "stop after this many steps of this run, with a checkpoint (0: none)")
	duration := fs.Duration("duration", 0, "stop after this long, with a checkpoint (0: none)")
	progressEvery := fs.Duration("progress-every", trainstep.DefaultProgressEvery, "interval of the progress lines")
	traceIDs := fs.String("trace-ids", "", "debugging aid: append '<step>\\t<epoch>\\t<row id>' for every trained example to this file, synced each step")
	minLabel := fs.String("min-label", "", "train only rows whose label is at least this (Quora: 1 keeps the duplicates); rows without a label are trained")
	saveInitial := fs.Bool("save-initial", false, "also write the checkpoint of step 0 (the initial parameters) before training")
	quiet := fs.Bool("quiet", false, "no progress lines")
	device := addDeviceFlags(fs)
	cli.Describe(fs, e.stdout, trainUsage, "parastream train --brokers 127.0.0.1:9092 --dataset quora --model lstmavg --epochs 2 --run quora-lstmavg\n"+
		"parastream train --resume checkpoints/quora-lstmavg --epochs 4   # go on where it stopped",
		cli.FlagGroup{Title: "input", Names: []string{"dataset", "split", "mix", "min-label", "topic-prefix", "vectors", "init-from", "context", "max-len", "shuffle-buffer", "window", "bucket-width", "feed-ahead"}},
		cli.FlagGroup{Title: "model", Names: modelFlags},
		cli.FlagGroup{Title: "csae (--model csae)", Names: csaeFlags},
		cli.FlagGroup{Title: "optimisation", Names: []string{"optimizer", "lr", "decay", "batch", "epochs", "embedding-update", "seed"}},
		cli.FlagGroup{Title: "output", Names: []string{"run", "checkpoint-dir", "checkpoint-every", "keep-checkpoints", "checkpoint-async", "save-initial", "resume"}},
		cli.FlagGroup{Title: "run", Names: []string{"max-steps", "duration", "progress-every", "quiet", "trace-ids"}},
		cli.FlagGroup{Title: "device", Names: []string{"device", "cuda-lib-dir", "cuda-graphs", "tf32", "blas", "blas-threads", "memory-budget", "max-graphs"}},
		cli.ConnectionGroup())
	if err := cli.Parse(fs, args); err != nil {
		return err
	}
	if *resume != "" && fs.NArg() == 0 {
		// The run's flags, from the checkpoint it resumes from.
		dir, err := trainstep.FindCheckpoint(*resume, func(bad string, err error) {
			fmt.Fprintf(e.stderr, "train: WARNING: passing over the corrupt checkpoint %s: %v\n", bad, err)
		})
		if err != nil {
			return err
		}
		if dir != *resume {
			fmt.Fprintf(e.stderr, "train: resuming from %s\n", dir)
		}
		if err := trainstep.RestoreFlags(fs, dir, e.stderr); err != nil {
			if fe := (*trainstep.FlagsError)(nil); errors.As(err, &fe) {
				return fmt.Errorf("%w: %v", cli.ErrUsage, err) // a refused override: a command-line mistake
			}
			return err
		}
		*resume = dir
	}
	if *dataset == "" || fs.NArg() > 0 {
		return fmt.Errorf("%w: --brokers and --dataset are required (or --resume), and nothing else", cli.ErrUsage)
	}
	cc, err := client()
	if err != nil {
		return err
	}
	logger := slog.New(slog.NewTextHandler(e.stderr, &slog.HandlerOptions{Level: slog.LevelWarn}))
	backend, release, err := device.backend(e.stderr, logger)
	if err != nil {
		return err
	}
	defer release()
	rc := trainstep.RunConfig{
		Backend: backend, Client: cc, Prefix: *prefix, Split: *split, Run: *run, Model: cfg,
		Epochs: *epochs, ShuffleBuffer: *buffer, Window: *window, CheckpointDir: *ckDir, CheckpointEvery: *every, KeepCheckpoints: *keep,
		Resume: *resume, MaxSteps: *maxSteps, Duration: *duration, ProgressEvery: *progressEvery, TraceIDs: *traceIDs,
		SaveInitial: *saveInitial, InitFrom: *initFrom, Logger: logger, Flags: trainstep.KeptFlags(fs), CheckpointSync: !*async, FeedAhead: *feedAhead,
	}
	if *feedAhead <= 0 {
		rc.FeedAhead = -1 // the serial feed (RunConfig's 0 is the default)
	}
	if names := cli.SplitList(*dataset); len(names) > 1 {
		rc.Datasets = names
	} else {
		rc.Dataset = *dataset
	}
	if *mix != "" {
		if rc.Mix, err = trainstep.ParseMix(*mix); err != nil {
			return fmt.Errorf("%w: --%v", cli.ErrUsage, err)
		}
	}
	if *minLabel != "" {
		v, err := strconv.ParseFloat(*minLabel, 64)
		if err != nil {
			return fmt.Errorf("%w: --min-label %q is not a number", cli.ErrUsage, *minLabel)
		}
		rc.MinLabel = &v
	}
	if !*quiet {
		rc.Progress = e.stderr
	}
	if *resume == "" {
		if rc.Run == "" {
			rc.Run = fmt.Sprintf("%s-%s-%s", strings.Join(cli.SplitList(*dataset), "+"), cfg.Encoder, time.Now().UTC().Format("20060102-150405"))
		}
		if rc.CheckpointDir == "" {
			rc.CheckpointDir = filepath.Join("checkpoints", rc.Run)
		}
		v, err := stream.FetchVocabulary(ctx, cc, *prefix, cli.SplitList(*dataset)[0], cfg.Context != "")
		if err != nil {
			return err
		}
		rc.Vocab, rc.Model.OOVBuckets, rc.Model.OOVHash = v.Words, v.OOVBuckets, v.OOVHash
		if cfg.Context != "" {
			rc.Model.Topics, rc.Featurize = v.Topics, v.Files
		}
		if *vectors != "" {
			if rc.Vectors, err = trainstep.LoadVectors(*vectors); err != nil {
				return fmt.Errorf("reading vectors %s: %w", *vectors, err)
			}
		}
	}
	sum, err := trainstep.Run(ctx, rc)
	if errors.Is(err, compute.ErrMemoryBudget) {
		budget, _, _ := device.budget()
		err = fmt.Errorf("%w\ntrain: give a larger --memory-budget (now %s), or a smaller --batch (now %d) or --max-len: on the CPU a recurrent model's graph grows with both",
			err, compute.FormatBytes(budget), cfg.BatchSize)
	}
	if sum.Run != "" {
		fmt.Fprintf(e.stdout, "run %s: %d steps (%d in all), %d examples, %d skipped, %d filtered, epoch %d, loss %.4f, %.0f examples/s on %s; last checkpoint %s\n",
			sum.Run, sum.Steps, sum.TotalSteps, sum.Examples, sum.Skipped, sum.Filtered, sum.Epoch, sum.Loss,
			float64(sum.Examples)/max(sum.Elapsed.Seconds(), 1e-9), sum.Device, sum.Checkpoint)
	}
	return err
}
