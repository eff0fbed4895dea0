package compute_test

import (
	"math"
	"slices"
	"strings"
	"testing"

	"github.com/parastream/parastream/trainstep/compute"
)

// table is a Markov model for BeamSearch: the state is the last token, and
// p[last] are the next token's probabilities.
type table map[int32][]float64

func (tb table) step(_ int32, last int32) ([]float64, int32) {
	p := tb[last]
	logp := make([]float64, len(p))
	for i, v := range p {
		logp[i] = math.Log(v)
	}
	return logp, last
}

// TestBeamSearchBeatsGreedy: from 0, greedy takes 1 (0.6) and then the
// end 3 (0.35), 0.21 in all; the beam finds 2 (0.4) then the end
// 3 (0.9), 0.36.
func TestBeamSearchBeatsGreedy(t *testing.T) {
	const end = 3
	tb := table{
		0: {0, 0.6, 0.4, 0},
		1: {0.3, 0.3, 0.05, 0.35},
		2: {0.05, 0.05, 0, 0.9},
	}
	// The state is the last token; the step ignores it and uses the token.
	step := func(s int32, tok int32) ([]float64, int32) { return tb.step(s, tok) }
	greedy := compute.BeamSearch(step, 0, 0, end, 1, 5)
	if want := []int32{1}; !slices.Equal(greedy.Tokens, want) || math.Abs(greedy.LogP-math.Log(0.6*0.35)) > 1e-12 {
		t.Fatalf("greedy: %v (log p %g), want %v (log %g)", greedy.Tokens, greedy.LogP, want, math.Log(0.21))
	}
	beam := compute.BeamSearch(step, 0, 0, end, 2, 5)
	if want := []int32{2}; !slices.Equal(beam.Tokens, want) || math.Abs(beam.LogP-math.Log(0.4*0.9)) > 1e-12 {
		t.Fatalf("beam 2: %v (log p %g), want %v (log %g)", beam.Tokens, beam.LogP, want, math.Log(0.36))
	}
}

// TestBeamSearchMaxLen: a model that never ends stops at maxLen tokens.
func TestBeamSearchMaxLen(t *testing.T) {
	step := func(s int32, tok int32) ([]float64, int32) {
		return []float64{math.Log(0.1), math.Log(0.9), math.Inf(-1)}, s
	}
	for _, beam := range []int{1, 3} {
		h := compute.BeamSearch(step, 0, 0, 2, beam, 4)
		if want := []int32{1, 1, 1, 1}; !slices.Equal(h.Tokens, want) {
			t.Fatalf("beam %d: %v, want %v", beam, h.Tokens, want)
		}
	}
}

func TestEDDConfig(t *testing.T) {
	cfg := compute.Config{Encoder: compute.EncEDD, Vocab: 50}.Defaults()
	if cfg.Loss != compute.LossLocalGlobal || cfg.GlobalWeight != 1 || cfg.RecurrentInit != compute.RecurrentInitGlorot || cfg.OutClasses() != 50 {
		t.Fatalf("defaults: %+v", cfg)
	}
	if err := cfg.Validate(); err != nil {
		t.Fatal(err)
	}
	if cfg.EmbedDim() != cfg.Hidden {
		t.Fatalf("embedding size %d, want hidden %d", cfg.EmbedDim(), cfg.Hidden)
	}
	for _, tc := range []struct {
		cfg  compute.Config
		want string
	}{
		{compute.Config{Encoder: compute.EncEDD, Loss: compute.LossMargin, Vocab: 50}, "encoder edd trains with loss"},
		{compute.Config{Encoder: compute.EncLSTM, Loss: compute.LossLocal, Vocab: 50}, "--model edd"},
		{compute.Config{Encoder: compute.EncEDD, Vocab: 4}, "special ids"},
		{compute.Config{Encoder: compute.EncEDD, Vocab: 50, GlobalWeight: -1}, "global_weight"},
	} {
		err := tc.cfg.Defaults().Validate()
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%+v: error %v, want one saying %q", tc.cfg, err, tc.want)
		}
	}
	names := map[string]bool{}
	for _, s := range compute.Layout(cfg) {
		names[s.Name] = true
	}
	for _, n := range []string{"lstm.wx", "dec.lstm.wx", "dec.wf", "out.w", "out.b"} {
		if !names[n] {
			t.Errorf("layout lacks %s", n)
		}
	}
}
