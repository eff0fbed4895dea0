package compute_test

import (
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/parastream/parastream/trainstep/compute"
)

// The help of --model and --dim is read from the list: the same text as
// when it was written out by hand.
func TestEncoderHelp(t *testing.T) {
	if got, want := compute.ModelHelp(), "encoder: avg, lstm, lstmavg, bilstmavg, gran, gran2, gran3, gran4, gran5, bigran, dan, transformer, csae; edd (a paraphrase generator, docs/models/edd.md)"; got != want {
		t.Errorf("ModelHelp\n got %q\nwant %q", got, want)
	}
	if got, want := compute.DimHelp(), "word embedding size (0: 300; 512 for transformer, the paper's)"; got != want {
		t.Errorf("DimHelp\n got %q\nwant %q", got, want)
	}
}

// Every entry of the list is well formed, and the facts it replaced
// (hasLSTM, EmbedDim's switch, the loss defaults) read the same.
func TestEncoderSpecs(t *testing.T) {
	seen := map[string]bool{}
	var recurrent []string
	for _, s := range compute.EncoderSpecs() {
		if s.Name == "" || seen[s.Name] {
			t.Errorf("encoder %q: empty or listed twice", s.Name)
		}
		seen[s.Name] = true
		if !s.Has(compute.BackendCPU) {
			t.Errorf("encoder %s: the CPU backend is the reference and builds every encoder", s.Name)
		}
		for _, b := range s.Backends {
			if b != compute.BackendCPU && b != compute.BackendCUDA {
				t.Errorf("encoder %s: unknown backend %q", s.Name, b)
			}
		}
		if got, ok := compute.LookupEncoder(s.Name); !ok || got.Name != s.Name {
			t.Errorf("LookupEncoder(%s) = %v, %v", s.Name, got.Name, ok)
		}
		if s.Recurrent {
			recurrent = append(recurrent, s.Name)
		}
		cfg := compute.Config{Encoder: s.Name, Vocab: 50}.Defaults()
		if err := cfg.Validate(); err != nil {
			t.Errorf("encoder %s: its defaults do not validate: %v", s.Name, err)
		}
		if (cfg.RecurrentInit != "") != s.Recurrent {
			t.Errorf("encoder %s: recurrent %v, but recurrent_init defaults to %q", s.Name, s.Recurrent, cfg.RecurrentInit)
		}
	}
	if want := []string{"lstm", "lstmavg", "bilstmavg", "gran", "gran2", "gran3", "gran4", "gran5", "bigran", "edd"}; !slices.Equal(recurrent, want) {
		t.Errorf("recurrent encoders %v, want %v", recurrent, want)
	}
	if _, ok := compute.LookupEncoder("nope"); ok {
		t.Error("LookupEncoder found an encoder that is not listed")
	}
	if err := (compute.Config{Encoder: "nope", Vocab: 50}).Defaults().Validate(); err == nil {
		t.Error("an unlisted encoder validates")
	}
	for enc, want := range map[string]string{compute.EncCSAE: compute.LossRecon, compute.EncEDD: compute.LossLocalGlobal, compute.EncAvg: compute.LossMargin} {
		if got := (compute.Config{Encoder: enc, Vocab: 50}).Defaults().Loss; got != want {
			t.Errorf("encoder %s: default loss %s, want %s", enc, got, want)
		}
	}
}

// WithEncoder runs an encoder outside the list: Defaults, Validate,
// Layout and EmbedDim read its entry.
func TestWithEncoder(t *testing.T) {
	toy := compute.EncoderSpec{Name: "toy", Recurrent: true, Dim: 6, Backends: []string{compute.BackendCPU},
		EmbedDim: func(c compute.Config) int { return 2 * c.Dim },
		Layout: func(c compute.Config) []compute.ParamSpec {
			return []compute.ParamSpec{{Name: "toy.w", Shape: []int{c.Dim, 2 * c.Dim}, Init: compute.InitGlorot, Compositional: true}}
		}}
	cfg := compute.Config{Vocab: 10}.WithEncoder(toy).Defaults()
	if err := cfg.Validate(); err != nil {
		t.Fatal(err)
	}
	if cfg.Encoder != "toy" || cfg.Dim != 6 || cfg.RecurrentInit != compute.RecurrentInitAvg || cfg.EmbedDim() != 12 {
		t.Errorf("encoder %s, dim %d, recurrent_init %q, embedding %d", cfg.Encoder, cfg.Dim, cfg.RecurrentInit, cfg.EmbedDim())
	}
	var names []string
	for _, p := range compute.Layout(cfg) {
		names = append(names, p.Name)
	}
	if !slices.Equal(names, []string{compute.ParamEmbeddings, "toy.w"}) {
		t.Errorf("layout %v", names)
	}
	if _, ok := compute.LookupEncoder("toy"); ok {
		t.Error("the toy leaked into the list")
	}
}

// docs/gpu.md names the encoders the CUDA backend has and those it
// refuses: the list's, by their Backends.
func TestGPUDocEncoders(t *testing.T) {
	doc, err := os.ReadFile(filepath.Join("..", "..", "docs", "gpu.md"))
	if err != nil {
		t.Fatal(err)
	}
	text := strings.Join(strings.Fields(string(doc)), " ")
	has := between(t, text, "The backend implements the encoders whose entry", "It implements every loss")
	refused := between(t, text, "A topic context (`--context topics`), the encoders", "and the NLI head")
	var wantHas, wantRefused []string
	for _, s := range compute.EncoderSpecs() {
		if s.Has(compute.BackendCUDA) {
			wantHas = append(wantHas, s.Name)
		} else {
			wantRefused = append(wantRefused, s.Name)
		}
	}
	names := func(s string) []string {
		var out []string
		for _, m := range regexp.MustCompile("`([a-z0-9]+)`").FindAllStringSubmatch(s, -1) {
			out = append(out, m[1])
		}
		return out
	}
	if got := names(has); !slices.Equal(got, wantHas) {
		t.Errorf("docs/gpu.md says the CUDA backend has %v; the list says %v", got, wantHas)
	}
	if got := names(refused); !slices.Equal(got, wantRefused) {
		t.Errorf("docs/gpu.md says the CUDA backend refuses %v; the list says %v", got, wantRefused)
	}
}

// between is the text of s from the start of from to the start of to.
func between(t *testing.T, s, from, to string) string {
	t.Helper()
	i := strings.Index(s, from)
	j := strings.Index(s[max(i, 0):], to)
	if i < 0 || j < 0 {
		t.Fatalf("docs/gpu.md: no %q ... %q", from, to)
	}
	return s[i : i+j]
}
