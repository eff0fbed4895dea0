package cpu_test

import (
	"math"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/parastream/parastream/trainstep/compute"
	"github.com/parastream/parastream/trainstep/cpu"
)

func build(t *testing.T, cfg compute.Config, params []compute.Tensor) compute.Model {
	t.Helper()
	m, err := cpu.New().Build(cfg, params)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { m.Close() })
	return m
}

// TestMasksPadding embeds the same sentences unpadded (bucket width 1,
// each chunk padded only to its longest sentence) and padded (width 16,
// and beside a long sentence): every encoder must give the same vectors.
func TestMasksPadding(t *testing.T) {
	seqs := [][]int32{{1}, {2, 3}, {4, 5, 6, 7, 8}, {9, 1, 2}}
	long := []int32{3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3}
	for _, enc := range compute.Encoders() {
		t.Run(enc, func(t *testing.T) {
			cfg := compute.Config{Encoder: enc, Dim: 5, Hidden: 4, Vocab: 10, DANLayers: []int{6}, BigramBuckets: 5, BucketWidth: 1}
			if enc == compute.EncGRAN5 {
				cfg.Hidden = 5
			}
			if enc == compute.EncTransformer {
				cfg.Dim, cfg.TFLayers, cfg.TFHeads, cfg.TFFilter = 6, 2, 2, 8
			}
			cfg = cfg.Defaults()
			params := compute.InitParams(cfg, rand.New(rand.NewPCG(1, 2)))
			tight := build(t, cfg, params)
			cfg.BucketWidth = 16
			padded := build(t, cfg, params)
			for i, s := range seqs {
				alone, err := tight.Embed([][]int32{s})
				if err != nil {
					t.Fatal(err)
				}
				withLong, err := padded.Embed([][]int32{long, s})
				if err != nil {
					t.Fatal(err)
				}
				for u := range alone[0] {
					if d := math.Abs(float64(alone[0][u] - withLong[1][u])); d > 1e-6 {
						t.Fatalf("sentence %d unit %d: unpadded %v, padded %v", i, u, alone[0][u], withLong[1][u])
					}
				}
			}
		})
	}
}

// TestNoAccumulation runs the same batch twice: the gradients must be
// equal (nothing accumulates across runs) and the parameters untouched.
func TestNoAccumulation(t *testing.T) {
	cfg := compute.Config{Encoder: compute.EncGRAN, Dim: 4, Vocab: 10, BatchSize: 3, Margin: 1}.Defaults()
	params := compute.InitParams(cfg, rand.New(rand.NewPCG(3, 4)))
	m := build(t, cfg, params)
	b, err := compute.NewBatch(cfg, [][]int32{{1, 2}, {3}, {4, 5, 6}}, [][]int32{{2, 1}, {3, 7}, {8}}, nil, rand.New(rand.NewPCG(1, 1)))
	if err != nil {
		t.Fatal(err)
	}
	var grads [2][]compute.Tensor
	var losses [2]float64
	for i := range 2 {
		if losses[i], err = m.ForwardBackward(b); err != nil {
			t.Fatal(err)
		}
		grads[i] = m.Grads()
	}
	if losses[0] != losses[1] {
		t.Errorf("losses %v", losses)
	}
	nonzero := 0
	for i := range grads[0] {
		if !slices.Equal(grads[0][i].Data, grads[1][i].Data) {
			t.Errorf("%s: gradient changed on the second run", grads[0][i].Name)
		}
		for _, v := range grads[0][i].Data {
			if v != 0 {
				nonzero++
			}
		}
	}
	if nonzero == 0 {
		t.Error("all gradients zero")
	}
	for i, p := range m.Params() {
		if !slices.Equal(p.Data, params[i].Data) {
			t.Errorf("%s changed by ForwardBackward", p.Name)
		}
	}
}

// TestMaxGraphs: a model bounded to two graphs keeps at most two, and
// gives the same embeddings and losses as an unbounded one, a shape whose
// graph was dropped included (it is built again).
func TestMaxGraphs(t *testing.T) {
	cfg := compute.Config{Encoder: compute.EncGRAN, Dim: 4, Vocab: 10, BatchSize: 2, Margin: 1, BucketWidth: 1}.Defaults()
	params := compute.InitParams(cfg, rand.New(rand.NewPCG(5, 6)))
	free := build(t, cfg, params)
	bounded, err := (&cpu.Backend{MaxGraphs: 2}).Build(cfg, params)
	if err != nil {
		t.Fatal(err)
	}
	defer bounded.Close()
	graphs := func() int { return bounded.(interface{ Graphs() int }).Graphs() }
	batches := [][2][][]int32{
		{{{1}, {2}}, {{3}, {4}}},
		{{{1, 2}, {3, 4}}, {{5, 6}, {7, 8}}},
		{{{1, 2, 3}, {4, 5, 6}}, {{7, 8, 9}, {1, 1, 1}}},
	}
	for round := range 2 {
		for i, ab := range batches {
			b, err := compute.NewBatch(cfg, ab[0], ab[1], nil, rand.New(rand.NewPCG(1, uint64(i))))
			if err != nil {
				t.Fatal(err)
			}
			want, err := free.ForwardBackward(b)
			if err != nil {
				t.Fatal(err)
			}
			got, err := bounded.ForwardBackward(b)
			if err != nil {
				t.Fatal(err)
			}
			if got != want {
				t.Errorf("round %d batch %d: loss %v bounded, %v unbounded", round, i, got, want)
			}
			if n := graphs(); n > 2 {
				t.Fatalf("round %d batch %d: %d graphs held, bound 2", round, i, n)
			}
		}
	}
	if _, err := (&cpu.Backend{MaxGraphs: -1}).Build(cfg, params); err == nil {
		t.Error("a negative bound was accepted")
	}
}

// TestContextEmbed: a model with the topic context embeds a sentence as its
// encoder does plus tanh(θ·W_θ + b_θ): with W_θ and b_θ at zero (their
// start) exactly as the plain model, otherwise differently for different θ;
// Embed, which has no θ, refuses it.
func TestContextEmbed(t *testing.T) {
	seqs := [][]int32{{1, 2}, {3}, {4, 5, 6}}
	ctx := [][]float32{{1, 0, 0}, {0, 0.5, 0.5}, nil}
	for _, enc := range []string{compute.EncAvg, compute.EncGRAN} {
		t.Run(enc, func(t *testing.T) {
			plainCfg := compute.Config{Encoder: enc, Dim: 5, Vocab: 10}.Defaults()
			cfg := plainCfg
			cfg.Context, cfg.Topics = compute.ContextTopics, 3
			params := compute.InitParams(cfg, rand.New(rand.NewPCG(1, 2)))
			var plainParams []compute.Tensor
			for _, p := range params {
				if p.Name != compute.ParamContextW && p.Name != compute.ParamContextB {
					plainParams = append(plainParams, p)
				}
			}
			plain := build(t, plainCfg, plainParams)
			m := build(t, cfg, params)
			if _, err := m.Embed(seqs); err == nil {
				t.Fatal("Embed of a context model without its topic vectors: no error")
			}
			want, err := plain.Embed(seqs)
			if err != nil {
				t.Fatal(err)
			}
			got, err := m.(compute.ContextEmbedder).EmbedContext(seqs, ctx)
			if err != nil {
				t.Fatal(err)
			}
			for i := range want {
				for u := range want[i] {
					if math.Abs(float64(want[i][u]-got[i][u])) > 1e-6 {
						t.Fatalf("W_θ = 0: sentence %d unit %d: %v, the plain model %v", i, u, got[i][u], want[i][u])
					}
				}
			}
			w := compute.NewTensor(compute.ParamContextW, 3, cfg.EmbedDim())
			for j := range w.Data {
				w.Data[j] = float32(j%7) / 7
			}
			if err := m.SetParams([]compute.Tensor{w}); err != nil {
				t.Fatal(err)
			}
			a, err := m.(compute.ContextEmbedder).EmbedContext([][]int32{{1, 2}, {1, 2}, {1, 2}}, ctx)
			if err != nil {
				t.Fatal(err)
			}
			if slices.Equal(a[0], a[1]) || !slices.Equal(a[2], want[0]) {
				t.Errorf("one sentence with three contexts: %v; want the first two to differ and the third (θ = 0) to be the plain %v", a, want[0])
			}
		})
	}
}

// TestSparseUpdate: with the sparse embedding update a step moves only the
// rows of its batch's words (the other rows, and their Adam moments, stay
// as they were), with λw pulling only those rows; with the dense update a
// row touched by an earlier batch keeps moving on its momentum. Both agree
// on the rows of the batch and on every other parameter.
func TestSparseUpdate(t *testing.T) {
	step := func(cfg compute.Config, params []compute.Tensor) (after1, after2 []compute.Tensor) {
		m := build(t, cfg, params)
		for s, ids := range [][2][]int32{{{1, 2}, {3}}, {{4, 5}, {6, 4}}} {
			b, err := compute.NewBatch(cfg, [][]int32{ids[0], ids[1]}, [][]int32{ids[1], ids[0]}, nil, rand.New(rand.NewPCG(1, 1)))
			if err != nil {
				t.Fatal(err)
			}
			if _, err := m.ForwardBackward(b); err != nil {
				t.Fatal(err)
			}
			if err := m.Update(int64(s+1), 0.01); err != nil {
				t.Fatal(err)
			}
			if s == 0 {
				after1 = m.Params()
			}
		}
		return after1, m.Params()
	}
	row := func(ts []compute.Tensor, r, d int) []float32 { return ts[0].Data[r*d : (r+1)*d] }
	for _, lw := range []float64{0, 0.1} {
		base := compute.Config{Encoder: compute.EncAvg, Dim: 4, Vocab: 10, LambdaW: lw}
		sparseCfg, denseCfg := base, base
		sparseCfg.EmbeddingUpdate, denseCfg.EmbeddingUpdate = compute.UpdateSparse, compute.UpdateDense
		sparseCfg, denseCfg = sparseCfg.Defaults(), denseCfg.Defaults()
		params := compute.InitParams(sparseCfg, rand.New(rand.NewPCG(3, 4)))
		s1, s2 := step(sparseCfg, params)
		d1, d2 := step(denseCfg, params)
		d := 4
		for r := range 10 {
			inFirst, inSecond := r >= 1 && r <= 3, r >= 4 && r <= 6
			switch {
			case !inFirst && !inSecond:
				if !slices.Equal(row(s2, r, d), row(params, r, d)) {
					t.Errorf("λw %g: sparse: row %d, in no batch, moved", lw, r)
				}
			case inFirst:
				if !slices.Equal(row(s2, r, d), row(s1, r, d)) {
					t.Errorf("λw %g: sparse: row %d, only in the first batch, moved in the second step", lw, r)
				}
				if slices.Equal(row(d2, r, d), row(d1, r, d)) {
					t.Errorf("λw %g: dense: row %d did not move on its momentum in the second step", lw, r)
				}
			}
			if inFirst && !slices.Equal(row(s1, r, d), row(d1, r, d)) {
				t.Errorf("λw %g: after one step, row %d of the batch: sparse %v, dense %v", lw, r, row(s1, r, d), row(d1, r, d))
			}
		}
	}
}

// TestHeldCellBias: the LSTM's cell-input bias stays at 0 through training
// unless TrainCellBias; the other biases train either way.
func TestHeldCellBias(t *testing.T) {
	for _, train := range []bool{false, true} {
		cfg := compute.Config{Encoder: compute.EncLSTMAvg, Dim: 4, Hidden: 3, Vocab: 10, TrainCellBias: train}.Defaults()
		m := build(t, cfg, compute.InitParams(cfg, rand.New(rand.NewPCG(1, 2))))
		for step := range 3 {
			b, err := compute.NewBatch(cfg, [][]int32{{1, 2}, {3}, {4, 5, 6}}, [][]int32{{2, 1}, {7}, {6}}, nil, rand.New(rand.NewPCG(5, uint64(step))))
			if err != nil {
				t.Fatal(err)
			}
			if _, err := m.ForwardBackward(b); err != nil {
				t.Fatal(err)
			}
			if err := m.Update(int64(step+1), 0.01); err != nil {
				t.Fatal(err)
			}
		}
		var bias []float32
		for _, p := range m.Params() {
			if p.Name == "lstm.b" {
				bias = p.Data
			}
		}
		h := cfg.Hidden
		cell := bias[2*h : 3*h]
		held := !slices.ContainsFunc(cell, func(v float32) bool { return v != 0 })
		if held == train {
			t.Errorf("train_cell_bias %v: cell-input bias %v", train, cell)
		}
		if !slices.ContainsFunc(bias[:h], func(v float32) bool { return v != 0 }) {
			t.Errorf("train_cell_bias %v: the input gate's bias did not train: %v", train, bias[:h])
		}
	}
}

// TestStartsAsAverage: with recurrent_init avg (the default) every
// untrained recurrent encoder embeds each sentence in nearly the direction
// of the mean of its words (cosine above 0.99; 0.999 for the encoders that
// average gated words or states), and the Glorot start of lstmavg and
// bilstmavg does not.
func TestStartsAsAverage(t *testing.T) {
	seqs := [][]int32{{1, 2, 3, 4, 5, 6, 7}, {8, 9}, {10, 11, 12, 1, 2}}
	for _, enc := range compute.Encoders() {
		if spec, _ := compute.LookupEncoder(enc); !spec.Recurrent {
			continue
		}
		for _, init := range []string{compute.RecurrentInitAvg, compute.RecurrentInitGlorot} {
			if init == compute.RecurrentInitGlorot && enc != compute.EncLSTMAvg && enc != compute.EncBiLSTMAvg {
				continue
			}
			t.Run(enc+"/"+init, func(t *testing.T) {
				cfg := compute.Config{Encoder: enc, Dim: 50, Vocab: 13, RecurrentInit: init}.Defaults()
				if def := (compute.Config{Encoder: enc}).Defaults().RecurrentInit; def != compute.RecurrentInitAvg {
					t.Fatalf("%s: default recurrent_init %q, want avg", enc, def)
				}
				params := compute.InitParams(cfg, rand.New(rand.NewPCG(3, 4)))
				avgCfg := compute.Config{Encoder: compute.EncAvg, Dim: 50, Vocab: 13}.Defaults()
				want, err := build(t, avgCfg, params[:1]).Embed(seqs)
				if err != nil {
					t.Fatal(err)
				}
				got, err := build(t, cfg, params).Embed(seqs)
				if err != nil {
					t.Fatal(err)
				}
				least := 0.999
				switch enc {
				case compute.EncLSTM, compute.EncGRAN3, compute.EncGRAN4:
					least = 0.99 // a sum decayed by 0.95 a step, not the mean
				}
				for i := range seqs {
					var dot, a, b float64
					for u := range want[i] {
						dot += float64(want[i][u] * got[i][u])
						a += float64(want[i][u] * want[i][u])
						b += float64(got[i][u] * got[i][u])
					}
					cos := dot / math.Sqrt(a*b)
					if init == compute.RecurrentInitAvg && cos < least {
						t.Errorf("sentence %d: cosine with the mean of its words %.4f, want > %g", i, cos, least)
					}
					if init == compute.RecurrentInitGlorot && cos > 0.9 {
						t.Errorf("sentence %d: the Glorot start has cosine %.4f with the mean of the words; the test cannot tell the starts apart", i, cos)
					}
				}
			})
		}
	}
}
