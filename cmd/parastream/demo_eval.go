package main

import (
	"context"
	"fmt"
	"os"

	"github.com/parastream/parastream/evalsink"
)

// demoEval evaluates the demo's checkpoint on the evaluation sets among the
// demo's shards (the STS, STS Benchmark and SICK fixtures), writes the
// result tables under out and prints the report.
func demoEval(ctx context.Context, e *env, checkpointDir, evalShards, out string) error {
	fmt.Fprintf(e.stdout, "\nparastream demo: evaluating %s on the evaluation sets of %s into %s\n\n", checkpointDir, evalShards, out)
	ev, err := evalsink.NewEvaluator(ctx, evalsink.Config{Eval: evalShards, Out: out, ContextFor: topicContext})
	if err != nil {
		return fmt.Errorf("evaluating the demo checkpoint: %w", err)
	}
	defer ev.Close()
	sum, err := ev.Evaluate(ctx, evalsink.Target{Dir: checkpointDir})
	if err != nil {
		return fmt.Errorf("evaluating the demo checkpoint: %w", err)
	}
	printEvalSummary(e, sum)
	report, err := os.ReadFile(sum.Report)
	if err != nil {
		return err
	}
	fmt.Fprintf(e.stdout, "\n%s", report)
	return nil
}
