package main

import (
	"context"
	"fmt"
	"log/slog"

	"github.com/parastream/parastream/cmd/parastream/internal/cli"
	"github.com/parastream/parastream/cmd/parastream/internal/trainflags"
	"github.com/parastream/parastream/trainstep"
)

func runTrain(ctx context.Context, e *env, args []string) error {
	tf := trainflags.New(e.stdout, e.stderr)
	if err := tf.Parse(args); err != nil {
		return err
	}
	rc, err := tf.Config(version)
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
	if tf.CPUProfile != "" {
		stop, err := cli.StartCPUProfile(tf.CPUProfile)
		if err != nil {
			return err
		}
		defer stop()
	}
	sum, err := trainstep.Run(ctx, rc)
	err = tf.Explain(err, rc)
	if sum.Run != "" {
		fmt.Fprintf(e.stdout, "run %s: %d steps (%d in all), %d examples, %d skipped, %d filtered, epoch %d, loss %.4f, %.0f examples/s on %s; last checkpoint %s\n",
			sum.Run, sum.Steps, sum.TotalSteps, sum.Examples, sum.Skipped, sum.Filtered, sum.Epoch, sum.Loss,
			float64(sum.Examples)/max(sum.Elapsed.Seconds(), 1e-9), sum.Device, sum.Checkpoint)
		fmt.Fprintf(e.stdout, "run %s: of %.2f s, the loop waited %.2f s for the feed and %.2f s in checkpoints\n",
			sum.Run, sum.Elapsed.Seconds(), sum.FeedWait.Seconds(), sum.CheckpointWait.Seconds())
		if rc.HardNegatives {
			fmt.Fprintf(e.stdout, "run %s: %d labelled non-paraphrases read as hard negatives; %d trained pairs had one\n", sum.Run, sum.Negatives, sum.WithNegative)
		}
	}
	return err
}
