package demo

import (
	"context"
	"fmt"

	"github.com/parastream/parastream/cmd/parastream/internal/report"
	"github.com/parastream/parastream/evalsink"
)

// Eval evaluates the demo's checkpoint on the evaluation sets among the
// demo's shards (the STS, STS Benchmark and SICK fixtures), writes the
// result tables under out and prints the report.
func (cfg Config) Eval(ctx context.Context, checkpointDir, evalShards, out string) error {
	fmt.Fprintf(cfg.Stdout, "\nparastream demo: evaluating %s on the evaluation sets of %s into %s\n\n", checkpointDir, evalShards, out)
	ev, err := evalsink.NewEvaluator(ctx, evalsink.Config{Eval: evalShards, Out: out, ContextFor: cfg.ContextFor})
	if err != nil {
		return fmt.Errorf("evaluating the demo checkpoint: %w", err)
	}
	defer ev.Close()
	sum, err := ev.Evaluate(ctx, evalsink.Target{Dir: checkpointDir})
	if err != nil {
		return fmt.Errorf("evaluating the demo checkpoint: %w", err)
	}
	return report.Eval(cfg.Stdout, sum)
}
