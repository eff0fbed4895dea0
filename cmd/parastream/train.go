package main

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"path/filepath"
	"strings"
	"time"

	"github.com/parastream/parastream/cmd/parastream/internal/trainflags"
	"github.com/parastream/parastream/internal/cli"
	"github.com/parastream/parastream/stream"
	"github.com/parastream/parastream/trainstep"
	"github.com/parastream/parastream/trainstep/compute"
)

func runTrain(ctx context.Context, e *env, args []string) error {
	tf := trainflags.New(e.stdout, e.stderr)
	if err := tf.Parse(args); err != nil {
		return err
	}
	rc, err := tf.Config()
	if err != nil {
		return err
	}
	logger := slog.New(slog.NewTextHandler(e.stderr, &slog.HandlerOptions{Level: slog.LevelWarn}))
	device := deviceFlags{&tf.Device}
	backend, release, err := device.backend(e.stderr, logger)
	if err != nil {
		return err
	}
	defer release()
	rc.Backend, rc.Logger = backend, logger
	if !tf.Quiet {
		rc.Progress = e.stderr
	}
	cfg := rc.Model
	if rc.Resume == "" {
		if rc.Run == "" {
			rc.Run = fmt.Sprintf("%s-%s-%s", strings.Join(cli.SplitList(tf.Dataset()), "+"), cfg.Encoder, time.Now().UTC().Format("20060102-150405"))
		}
		if rc.CheckpointDir == "" {
			rc.CheckpointDir = filepath.Join("checkpoints", rc.Run)
		}
		v, err := stream.FetchVocabulary(ctx, rc.Client, rc.Prefix, cli.SplitList(tf.Dataset())[0], cfg.Context != "")
		if err != nil {
			return err
		}
		rc.Vocab, rc.Model.OOVBuckets, rc.Model.OOVHash = v.Words, v.OOVBuckets, v.OOVHash
		if cfg.Context != "" {
			rc.Model.Topics, rc.Featurize = v.Topics, v.Files
		}
		if tf.Vectors() != "" {
			if rc.Vectors, err = trainstep.LoadVectors(tf.Vectors()); err != nil {
				return fmt.Errorf("reading vectors %s: %w", tf.Vectors(), err)
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
