package cuda_test

import (
	"errors"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/parastream/parastream/internal/testenv"
	"github.com/parastream/parastream/trainstep/compute"
	"github.com/parastream/parastream/trainstep/cuda"
)

// TestGPUClaims: the GPU row of docs/reference.md ("What works today",
// which the README links) names exactly the encoders and losses the
// backend builds (its tables, through CheckCases) and the
// things it refuses, each of which Supports refuses; no "every encoder
// and loss".
func TestGPUClaims(t *testing.T) {
	b, err := os.ReadFile(filepath.Join(testenv.Root(), "docs", "reference.md"))
	if err != nil {
		t.Fatal(err)
	}
	readme := strings.Join(strings.Fields(string(b)), " ")
	if strings.Contains(readme, "every encoder and loss") {
		t.Error(`docs/reference.md says the GPU has "every encoder and loss"`)
	}
	i := strings.Index(readme, "| trainer on the GPU")
	if i < 0 {
		t.Fatal("docs/reference.md: no row | trainer on the GPU")
	}
	row := readme[i:]
	row = row[:strings.Index(row[1:], "|")+1]
	part := func(from, to string) []string {
		j, k := strings.Index(row, from), strings.Index(row, to)
		if j < 0 || k < j {
			t.Fatalf("docs/reference.md's GPU row: no %q ... %q in %q", from, to, row)
		}
		var out []string
		for _, m := range regexp.MustCompile("`([a-z0-9]+)`").FindAllStringSubmatch(row[j:k], -1) {
			out = append(out, m[1])
		}
		return out
	}
	var encs, losses []string
	for _, c := range cuda.CheckCases() {
		if !slices.Contains(encs, c.Encoder) {
			encs = append(encs, c.Encoder)
		}
		if !slices.Contains(losses, c.Loss) {
			losses = append(losses, c.Loss)
		}
	}
	if got := part("Encoders:", "losses:"); !slices.Equal(got, encs) {
		t.Errorf("docs/reference.md: the GPU has the encoders %v; the backend builds %v", got, encs)
	}
	if got := part("losses:", "Refused"); !slices.Equal(got, losses) {
		t.Errorf("docs/reference.md: the GPU has the losses %v; the backend builds %v", got, losses)
	}
	refused := row[strings.Index(row, "Refused"):]
	for _, s := range compute.EncoderSpecs() {
		if !slices.Contains(encs, s.Name) && !strings.Contains(refused, "`"+s.Name+"`") {
			t.Errorf("docs/reference.md: the GPU row does not say that encoder %s is refused", s.Name)
		}
	}
	for _, c := range []struct {
		claim string
		cfg   compute.Config
	}{
		{"a topic context", compute.Config{Encoder: compute.EncAvg, Loss: compute.LossMargin, Context: compute.ContextTopics}},
		{"the multitask NLI head", compute.Config{Encoder: compute.EncAvg, Loss: compute.LossMargin, NLIHidden: 4}},
	} {
		if !strings.Contains(refused, c.claim) {
			t.Errorf("docs/reference.md: the GPU row does not say that %s is refused", c.claim)
		}
		if err := cuda.Supports(c.cfg); !errors.Is(err, cuda.ErrUnsupported) {
			t.Errorf("docs/reference.md says %s is refused; Supports: %v", c.claim, err)
		}
	}
}
