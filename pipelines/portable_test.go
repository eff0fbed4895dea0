package pipelines_test

import (
	"context"
	"testing"

	"github.com/apache/beam/sdks/v2/go/pkg/beam"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/core/runtime/graphx"
	pipepb "github.com/apache/beam/sdks/v2/go/pkg/beam/model/pipeline_v1"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/runners/vet"

	"github.com/parastream/parastream/pipelines"
)

// The extraction pipeline can be serialised for a portable runner (Flink,
// Spark, Dataflow): every DoFn, function, type, emitter and iterator is
// registered (Beam's vet runner finds nothing to register and no
// reflection fallback), and the graph marshals to the portable pipeline
// proto.
func TestExtractPipelineIsPortable(t *testing.T) {
	dir := t.TempDir()
	for _, cfg := range []pipelines.ExtractConfig{
		{Corpus: "reddit", Input: fixture("reddit/comments.jsonl"), Submissions: fixture("reddit/submissions.jsonl"), DedupeAgainst: []string{dir}},
		{Corpus: "quora", Input: fixture("quora/mini.tsv")},
		{Corpus: "europarl", Input: fixture("europarl/*.en"), InputB: fixture("europarl/*.fr")},
		{Corpus: "sts", Input: fixture("sts/*/STS.input.*.txt")},
	} {
		t.Run(cfg.Corpus, func(t *testing.T) {
			cfg.Out, cfg.WorkDir, cfg.Buckets = dir, dir, 4
			if err := cfg.Validate(); err != nil {
				t.Fatal(err)
			}
			p, s := beam.NewPipelineWithRoot()
			pipelines.Extract(s, cfg)
			e, err := vet.Evaluate(context.Background(), p)
			if err != nil {
				t.Fatal(err)
			}
			if !e.Performant() {
				t.Errorf("pipeline needs registrations or falls back to reflection:\n%s", e.Bytes())
			}
			edges, _, err := p.Build()
			if err != nil {
				t.Fatal(err)
			}
			pb, err := graphx.Marshal(edges, &graphx.Options{Environment: &pipepb.Environment{Urn: "beam:env:docker:v1"}})
			if err != nil {
				t.Fatalf("marshalling for a portable runner: %v", err)
			}
			if len(pb.GetComponents().GetTransforms()) < 10 {
				t.Errorf("only %d transforms marshalled", len(pb.GetComponents().GetTransforms()))
			}
		})
	}
}
