package cpu

import (
	"errors"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	G "gorgonia.org/gorgonia"

	"github.com/parastream/parastream/trainstep/compute"
	"github.com/parastream/parastream/trainstep/cuda"
)

// The CPU backend builds an encoder exactly when its table has it, and
// the list's entry says so (compute.EncoderSpec.Backends).
func TestEncoderTableAgrees(t *testing.T) {
	table := encoderBuilders()
	listed := map[string]bool{}
	for _, s := range compute.EncoderSpecs() {
		listed[s.Name] = true
		_, built := table[s.Name]
		if built != s.Has(compute.BackendCPU) {
			t.Errorf("encoder %s: in the CPU table %v, its spec's backends %v", s.Name, built, s.Backends)
		}
	}
	for name := range table {
		if !listed[name] {
			t.Errorf("the CPU table builds %s, which compute.EncoderSpecs does not list", name)
		}
	}
}

// toySpec and toyBuilder are the toy encoder of TestAddEncoderRecipe:
// the mean of the words through one matrix, g(s) = (Σ_t x_t / len)·W.
func toySpec() compute.EncoderSpec {
	return compute.EncoderSpec{
		Name: "toy", Summary: "the mean of the words through a matrix", Backends: []string{compute.BackendCPU},
		Layout: func(c compute.Config) []compute.ParamSpec {
			return []compute.ParamSpec{{Name: "toy.w", Shape: []int{c.Dim, c.Dim}, Init: compute.InitGlorot, Compositional: true}}
		},
	}
}

func toyBuilder() encoderBuilder {
	return encoderBuilder{build: func(e *encoderGraph) *G.Node {
		return e.mul(e.prod(e.sum(e.x, 0), e.inv(e.cfg.Dim)), e.p("toy.w"))
	}}
}

// TestAddEncoderRecipe follows docs/architecture.md's recipe "Add an
// encoder" once, touching nothing but the list and the CPU backend's
// table: a toy encoder's entry (given to the configuration with
// WithEncoder, as compute.EncoderSpecs would give it) and its builder (a
// table of its own, as encoderBuilders would hold it). The model builds,
// trains a step that moves its own parameter, and the CUDA backend, whose
// table does not have it, refuses it with its message.
func TestAddEncoderRecipe(t *testing.T) {
	table := encoderBuilders()
	table["toy"] = toyBuilder()
	b := &Backend{encoders: table}

	cfg := compute.Config{Dim: 4, Vocab: 12, BatchSize: 3}.WithEncoder(toySpec()).Defaults()
	params := compute.InitParams(cfg, rand.New(rand.NewPCG(1, 2)))
	m, err := b.Build(cfg, params)
	if err != nil {
		t.Fatal(err)
	}
	batch, err := compute.NewBatch(cfg, [][]int32{{1, 2}, {3}, {4, 5, 6}}, [][]int32{{2, 1}, {3, 7}, {8}}, nil, rand.New(rand.NewPCG(1, 1)))
	if err != nil {
		t.Fatal(err)
	}
	loss, err := m.ForwardBackward(batch)
	if err != nil {
		t.Fatal(err)
	}
	if loss <= 0 {
		t.Errorf("loss %g", loss)
	}
	if err := m.Update(1, cfg.LR); err != nil {
		t.Fatal(err)
	}
	moved := false
	for i, p := range m.Params() {
		if p.Name == "toy.w" && !slices.Equal(p.Data, params[i].Data) {
			moved = true
		}
	}
	if !moved {
		t.Error("the step did not move toy.w")
	}
	if emb, err := m.Embed([][]int32{{1, 2, 3}}); err != nil || len(emb) != 1 || len(emb[0]) != cfg.EmbedDim() {
		t.Errorf("embedding %v, %v", emb, err)
	}

	err = cuda.Supports(cfg)
	if !errors.Is(err, cuda.ErrUnsupported) || !strings.Contains(err.Error(), "encoder toy (it has avg, lstm,") {
		t.Errorf("cuda.Supports: %v", err)
	}
	t.Log(err)
	em := cuda.Emulator()
	defer em.Close()
	if _, err := em.Build(cfg, params); !errors.Is(err, cuda.ErrUnsupported) {
		t.Errorf("the CUDA emulator built the toy: %v", err)
	}

	// Without its builder the CPU backend refuses it too, and the package's
	// table stays as it was.
	if _, err := New().Build(cfg, params); err == nil || !strings.Contains(err.Error(), "no builder") {
		t.Errorf("the package's backend: %v", err)
	}
	if _, ok := encoderBuilders()["toy"]; ok {
		t.Error("the toy leaked into the package's table")
	}
}
