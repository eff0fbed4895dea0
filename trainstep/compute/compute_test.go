package compute_test

import (
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/parastream/parastream/trainstep/compute"
)

// TestOptimizers checks one step of each optimiser against the update
// rule computed by hand.
func TestOptimizers(t *testing.T) {
	g := []float32{0.5, -2}
	for _, tc := range []struct {
		opt  string
		want func(w, g float64) float64
	}{
		{compute.OptSGD, func(w, g float64) float64 { return w - 0.1*g }},
		{compute.OptRMSProp, func(w, g float64) float64 { return w - 0.1*g/(math.Sqrt(0.1*g*g)+1e-8) }},
		// Adam's first step: m̂ = g, v̂ = g², so the step is lr·sign(g).
		{compute.OptAdam, func(w, g float64) float64 { return w - 0.1*g/(math.Abs(g)+1e-8) }},
	} {
		cfg := compute.Config{Optimizer: tc.opt, LR: 0.1, Vocab: 1, Dim: 2}.Defaults()
		o := compute.NewOptimizer(cfg, []compute.ParamSpec{{Name: "w", Shape: []int{2}}})
		w := []float32{1, 1}
		o.Step("w", w, g, 1, cfg.LR)
		for i := range w {
			if want := tc.want(1, float64(g[i])); math.Abs(float64(w[i])-want) > 1e-6 {
				t.Errorf("%s: w[%d] = %v, want %v", tc.opt, i, w[i], want)
			}
		}
	}
}

// TestNewBatchNoise checks the drawn noise: random negatives never fall in
// their own pair, hinge negatives are k distinct other pairs, scrambling
// keeps each sentence's words, and dropout masks zero exactly the padding
// and the dropped words.
func TestNewBatchNoise(t *testing.T) {
	cfg := compute.Config{Vocab: 50, Dim: 3, Negatives: compute.NegMix, Scramble: 0.5, WordDropout: 0.3, BatchSize: 6}.Defaults()
	rng := rand.New(rand.NewPCG(1, 2))
	var a, b [][]int32
	for i := range 6 {
		a = append(a, []int32{int32(i), int32(i + 10), int32(i + 20)})
		b = append(b, []int32{int32(i + 30), int32(i + 40)})
	}
	bt, err := compute.NewBatch(cfg, a, b, nil, rng)
	if err != nil {
		t.Fatal(err)
	}
	if bt.Len != 8 {
		t.Errorf("len %d, want the bucket 8", bt.Len)
	}
	for r, c := range bt.NegRand {
		if int(c)%6 == r%6 {
			t.Errorf("row %d: negative %d is in its own pair", r, c)
		}
	}
	for i := range a {
		sa, sb := slices.Clone(bt.A[i]), slices.Clone(bt.B[i])
		slices.Sort(sa)
		slices.Sort(sb)
		if !slices.Equal(sa, a[i]) || !slices.Equal(sb, b[i]) {
			t.Errorf("pair %d: scrambling changed the words: %v %v", i, bt.A[i], bt.B[i])
		}
		for tt := range bt.Len {
			row := bt.DropA[(i*bt.Len+tt)*3 : (i*bt.Len+tt+1)*3]
			zero := row[0] == 0 && row[1] == 0 && row[2] == 0
			one := row[0] == 1 && row[1] == 1 && row[2] == 1
			if tt >= len(bt.A[i]) && !zero || tt < len(bt.A[i]) && !zero && !one {
				t.Errorf("pair %d step %d: mask %v", i, tt, row)
			}
		}
	}
	cfg = compute.Config{Vocab: 50, Dim: 3, Loss: compute.LossHinge, HingeK: 4, BatchSize: 6}.Defaults()
	bt, err = compute.NewBatch(cfg, a, b, nil, rng)
	if err != nil {
		t.Fatal(err)
	}
	for i, js := range append(bt.HingeNegA, bt.HingeNegB...) {
		c := slices.Clone(js)
		slices.Sort(c)
		if len(c) != 4 || slices.Contains(c, int32(i%6)) || len(slices.Compact(c)) != 4 {
			t.Errorf("hinge negatives %v of pair %d", js, i%6)
		}
	}
}

func TestSimTarget(t *testing.T) {
	for _, tc := range []struct {
		y    float64
		want []float64
	}{
		{1, []float64{1, 0, 0}}, {2.25, []float64{0, 0.75, 0.25}}, {3, []float64{0, 0, 1}}, {9, []float64{0, 0, 1}},
	} {
		got := compute.SimTarget(tc.y, 3)
		for i := range got {
			if math.Abs(got[i]-tc.want[i]) > 1e-12 {
				t.Errorf("y %g: %v, want %v", tc.y, got, tc.want)
				break
			}
		}
	}
}

func TestTransformerConfig(t *testing.T) {
	c := compute.Config{Encoder: compute.EncTransformer, Vocab: 10}.Defaults()
	if c.Dim != 512 || c.TFLayers != 6 || c.TFHeads != 8 || c.TFFilter != 2048 || c.EmbedDim() != 512 {
		t.Fatalf("defaults: dim %d layers %d heads %d filter %d embed %d, want the paper's 512, 6, 8, 2048", c.Dim, c.TFLayers, c.TFHeads, c.TFFilter, c.EmbedDim())
	}
	if err := c.Validate(); err != nil {
		t.Fatal(err)
	}
	if n := len(compute.Layout(c)); n != 1+6*12+2 {
		t.Fatalf("layout has %d parameters, want %d", n, 1+6*12+2)
	}
	bad := compute.Config{Encoder: compute.EncTransformer, Vocab: 10, Dim: 30, TFHeads: 8}.Defaults()
	if err := bad.Validate(); err == nil || !strings.Contains(err.Error(), "multiple of tf_heads") {
		t.Fatalf("dim 30 with 8 heads: %v, want a multiple-of-heads error", err)
	}
	pe := compute.TimingSignal(3, 4)
	// t = 2, i = 1: ω = 10000^(-1/2) = 0.01.
	if math.Abs(pe[2*4+1]-math.Sin(0.02)) > 1e-12 || math.Abs(pe[2*4+3]-math.Cos(0.02)) > 1e-12 || pe[0] != 0 || pe[2] != 1 {
		t.Fatalf("timing signal %v", pe)
	}
}
