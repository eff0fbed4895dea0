package cuda_test

import (
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/parastream/parastream/trainstep/compute"
	"github.com/parastream/parastream/trainstep/cpu"
	"github.com/parastream/parastream/trainstep/cuda"
)

// smallConfig is a model small enough for the emulator, with sizes that
// differ from one another (dim 6, hidden 5) so that a transposed or
// misplaced product cannot line up by accident.
func smallConfig(enc, neg string) compute.Config {
	return smallModel(enc, compute.LossMargin, neg)
}

// smallModel is smallConfig with loss: the self-check's tiny model
// (cuda.CheckModel: Glorot starts for the recurrent encoders, gran5 has
// Hidden = Dim, the DAN layers of 7 and 4 units and 11 bigram buckets,
// the softmax loss's tower one tanh layer of 4, sim 4 hidden units).
func smallModel(enc, loss, neg string) compute.Config {
	return cuda.CheckModel(compute.Config{Negatives: neg}, enc, loss).Defaults()
}

// batch draws n pairs of lengths 1 to 7 (padded to 8, so that every row
// has padded steps or none) with the noise of cfg.
func batch(t *testing.T, cfg compute.Config, n int, seed uint64) *compute.Batch {
	t.Helper()
	rng := rand.New(rand.NewPCG(seed, 9))
	var a, b [][]int32
	for i := range n {
		sa, sb := make([]int32, 1+(i*3)%7), make([]int32, 1+(i*5+2)%7)
		for j := range sa {
			sa[j] = rng.Int32N(int32(cfg.Vocab))
		}
		for j := range sb {
			sb[j] = rng.Int32N(int32(cfg.Vocab))
		}
		sb[0] = sa[0] // a word in both sides: its gradient is a sum
		a, b = append(a, sa), append(b, sb)
	}
	var labels []float32
	if cfg.Loss == compute.LossSim {
		for i := range n {
			labels = append(labels, float32(i*37%51)/10) // 0 to 5, between the classes
		}
	}
	bt, err := compute.NewBatch(cfg, a, b, labels, rng)
	if err != nil {
		t.Fatal(err)
	}
	return bt
}

// params are cfg's initial parameters, scaled up so that gates and
// cosines are away from their linear regime and the hinge is active, and
// with random biases and peepholes (they start at zero, where a wrong
// gradient term would go unseen).
func params(cfg compute.Config) []compute.Tensor {
	return cuda.CheckParams(cfg, rand.New(rand.NewPCG(cfg.Seed, 5)))
}

func buildWith(t *testing.T, b compute.Backend, cfg compute.Config, ps []compute.Tensor) compute.Model {
	t.Helper()
	m, err := b.Build(cfg, ps)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { m.Close() })
	return m
}

// close reports whether got is within float32 tolerance of want over a
// tensor: |got - want| ≤ 1e-5 + 1e-3·max|want|.
func closeTo(got, want []float32) (int, float64, bool) {
	var scale float64
	for _, w := range want {
		scale = max(scale, math.Abs(float64(w)))
	}
	tol := 1e-5 + 1e-3*scale
	for i := range want {
		if d := math.Abs(float64(got[i] - want[i])); d > tol || math.IsNaN(float64(got[i])) {
			return i, d, false
		}
	}
	return 0, 0, true
}

// emulatorCases are the encoder, loss and negatives TestEmulatorMatchesCPU
// checks: the first encoders with the margin loss and every negative
// strategy, every other encoder with the margin loss (mix negatives), and
// the other losses with the average, a bidirectional and the DAN encoder.
func emulatorCases() [][3]string {
	var cs [][3]string
	first := []string{compute.EncAvg, compute.EncLSTM, compute.EncLSTMAvg, compute.EncGRAN}
	for _, enc := range first {
		for _, neg := range []string{compute.NegMax, compute.NegMix, compute.NegRand} {
			cs = append(cs, [3]string{enc, compute.LossMargin, neg})
		}
	}
	for _, enc := range gpuEncoders() {
		if !slices.Contains(first, enc) {
			cs = append(cs, [3]string{enc, compute.LossMargin, compute.NegMix})
		}
	}
	for _, loss := range []string{compute.LossHinge, compute.LossSoftmax, compute.LossSim, compute.LossMNRL} {
		for _, enc := range []string{compute.EncAvg, compute.EncBiLSTMAvg, compute.EncDAN, compute.EncTransformer} {
			cs = append(cs, [3]string{enc, loss, ""})
		}
	}
	return cs
}

// TestEmulatorMatchesCPU runs the CUDA backend's model code on the kernel
// emulator (the GPU with PARASTREAM_TEST_GPU set: testBackend) and the
// gorgonia CPU backend (float64) on the same batch: the
// loss and every gradient must agree within float32 tolerance, for every
// encoder, loss and negative strategy the backend implements
// (emulatorCases), with and without dropout and the L2 terms.
func TestEmulatorMatchesCPU(t *testing.T) {
	type variant struct {
		name string
		mod  func(*compute.Config)
	}
	variants := []variant{
		{"plain", func(*compute.Config) {}},
		{"noise", func(c *compute.Config) {
			c.Dropout, c.WordDropout, c.Scramble, c.LambdaC, c.LambdaW = 0.2, 0.1, 0.5, 0.01, 0.02
		}},
	}
	for _, c := range emulatorCases() {
		enc, loss, neg := c[0], c[1], c[2]
		name := enc + "/" + loss
		if neg != "" {
			name += "/" + neg
		}
		{
			for _, v := range variants {
				t.Run(name+"/"+v.name, func(t *testing.T) {
					cfg := smallModel(enc, loss, neg)
					v.mod(&cfg)
					ps := params(cfg)
					if v.name == "noise" {
						// λw needs embeddings away from their initial values.
						for i := range ps[0].Data {
							ps[0].Data[i] *= 1.1
						}
					}
					ref := buildWith(t, &cpu.Backend{Float64: true}, cfg, ps)
					emu := buildWith(t, testBackend(t), cfg, ps)
					if v.name == "noise" {
						init := compute.Tensor{Name: "init/embeddings", Shape: ps[0].Shape, Data: make([]float32, len(ps[0].Data))}
						for i, x := range ps[0].Data {
							init.Data[i] = x / 1.1
						}
						for _, m := range []compute.Model{ref, emu} {
							st := m.State()
							st[len(st)-1] = init
							if err := m.SetState(st); err != nil {
								t.Fatal(err)
							}
						}
					}
					sameStep(t, ref, emu, batch(t, cfg, 5, 11))
				})
			}
		}
	}
}

// TestEmulatorMatchesCPUTall is TestEmulatorMatchesCPU at a batch whose
// T·R rows (8 × 80) pass colChunk: the recurrent encoders' bias and
// peephole gradients take col_reduce's two passes.
func TestEmulatorMatchesCPUTall(t *testing.T) {
	for _, c := range [][2]string{{compute.EncLSTMAvg, compute.LossMargin}, {compute.EncGRAN, compute.LossMargin}, {compute.EncBiLSTMAvg, compute.LossSoftmax}} {
		t.Run(c[0]+"/"+c[1], func(t *testing.T) {
			cfg := smallModel(c[0], c[1], "")
			ps := params(cfg)
			sameStep(t, buildWith(t, &cpu.Backend{Float64: true}, cfg, ps), buildWith(t, testBackend(t), cfg, ps), batch(t, cfg, 40, 12))
		})
	}
}

// sameStep runs one forward-backward pass of b on the CPU backend's model
// ref and on the device's (or emulator's) emu, and checks that their
// losses and every gradient agree; the loss must be away from 0 (active
// hinge terms, an untrained softmax), or the check would prove little.
func sameStep(t *testing.T, ref, emu compute.Model, b *compute.Batch) {
	t.Helper()
	want, err := ref.ForwardBackward(b)
	if err != nil {
		t.Fatal(err)
	}
	got, err := emu.ForwardBackward(b)
	if err != nil {
		t.Fatal(err)
	}
	if want <= 0.05 {
		t.Fatalf("reference loss %g: the check needs active hinge terms and a loss away from 0", want)
	}
	if math.Abs(got-want) > 1e-5+1e-4*math.Abs(want) {
		t.Errorf("loss: %s %.7g, cpu %.7g", testBackend(t).Name(), got, want)
	}
	wg, gg := ref.Grads(), emu.Grads()
	for i := range wg {
		if wg[i].Name != gg[i].Name || !compute.SameShape(wg[i].Shape, gg[i].Shape) {
			t.Fatalf("gradient %d: %s %v, cpu %s %v", i, gg[i].Name, gg[i].Shape, wg[i].Name, wg[i].Shape)
		}
		if j, d, ok := closeTo(gg[i].Data, wg[i].Data); !ok {
			t.Errorf("gradient of %s differs at %d by %.3g: %s %v, cpu %v", wg[i].Name, j, d, testBackend(t).Name(), gg[i].Data[j], wg[i].Data[j])
		}
	}
}

// TestEmulatorUpdate applies each optimiser after the same 8 batches, with
// sparse (the batch's rows, caught up with the steps they sat out: rows
// leave and return between the batches) and dense embedding updates and
// with and without λw, then flushed (the rows owed steps catch up): the
// parameters and the optimiser state must match the CPU backend's. gran
// with the margin loss under every optimiser; the DAN (whose bigram table
// is row-sparse too) with the hinge and softmax losses, and bigran with
// sim, under some.
func TestEmulatorUpdate(t *testing.T) {
	type variant struct {
		enc, loss   string
		opt, update string
		lambdaW     float64
	}
	var variants []variant
	for _, opt := range []string{compute.OptAdam, compute.OptSGD, compute.OptRMSProp} {
		for _, up := range []string{compute.UpdateSparse, compute.UpdateDense} {
			variants = append(variants, variant{compute.EncGRAN, compute.LossMargin, opt, up, 0})
		}
	}
	variants = append(variants,
		variant{compute.EncGRAN, compute.LossMargin, compute.OptAdam, compute.UpdateSparse, 0.05},
		variant{compute.EncGRAN, compute.LossMargin, compute.OptAdam, compute.UpdateDense, 0.05},
		variant{compute.EncDAN, compute.LossHinge, compute.OptAdam, compute.UpdateSparse, 0.05},
		variant{compute.EncDAN, compute.LossHinge, compute.OptRMSProp, compute.UpdateSparse, 0},
		// SGD: the softmax loss's resp.bout has a gradient of 0 (each
		// row of dS sums to 0), rounding noise that Adam and RMSProp
		// would turn into steps of ±lr of either sign.
		variant{compute.EncDAN, compute.LossSoftmax, compute.OptSGD, compute.UpdateSparse, 0},
		variant{compute.EncDAN, compute.LossSoftmax, compute.OptSGD, compute.UpdateDense, 0},
		variant{compute.EncBiGRAN, compute.LossSim, compute.OptAdam, compute.UpdateDense, 0},
		// SGD again: the k block of the transformer's bqkv has a gradient
		// of 0 (a query's scores all shift by q·b_k, which the softmax
		// ignores), rounding noise under Adam and RMSProp.
		variant{compute.EncTransformer, compute.LossMargin, compute.OptSGD, compute.UpdateSparse, 0.05},
		variant{compute.EncTransformer, compute.LossMargin, compute.OptSGD, compute.UpdateDense, 0})
	for _, v := range variants {
		t.Run(fmt.Sprintf("%s/%s/%s/%s/lambda_w=%g", v.enc, v.loss, v.opt, v.update, v.lambdaW), func(t *testing.T) {
			cfg := smallModel(v.enc, v.loss, compute.NegMax)
			cfg.Optimizer, cfg.LR, cfg.EmbeddingUpdate, cfg.LambdaW = v.opt, 0, v.update, v.lambdaW
			cfg = cfg.Defaults()
			ps := params(cfg)
			ref := buildWith(t, cpu.New(), cfg, ps)
			emu := buildWith(t, testBackend(t), cfg, ps)
			for step := int64(1); step <= 8; step++ {
				b := batch(t, cfg, 5, uint64(step))
				for _, m := range []compute.Model{ref, emu} {
					if _, err := m.ForwardBackward(b); err != nil {
						t.Fatal(err)
					}
					if err := m.Update(step, cfg.LR); err != nil {
						t.Fatal(err)
					}
				}
			}
			for _, m := range []compute.Model{ref, emu} { // as before a checkpoint
				if err := m.(compute.Flusher).Flush(8); err != nil {
					t.Fatal(err)
				}
			}
			for i, w := range ref.Params() {
				if j, d, ok := closeTo(emu.Params()[i].Data, w.Data); !ok {
					t.Errorf("%s differs at %d by %.3g", w.Name, j, d)
				}
			}
			ws, gs := ref.State(), emu.State()
			if len(ws) != len(gs) {
				t.Fatalf("state: %d tensors, cpu %d", len(gs), len(ws))
			}
			for i := range ws {
				if ws[i].Name != gs[i].Name {
					t.Fatalf("state %d: %s, cpu %s", i, gs[i].Name, ws[i].Name)
				}
				if j, d, ok := closeTo(gs[i].Data, ws[i].Data); !ok {
					t.Errorf("state %s differs at %d by %.3g", ws[i].Name, j, d)
				}
			}
		})
	}
}

// TestEmulatorEmbed compares Embed with the CPU backend's, across chunks
// and bucket lengths, for every encoder.
func TestEmulatorEmbed(t *testing.T) {
	for _, enc := range compute.Encoders() {
		t.Run(enc, func(t *testing.T) {
			if spec, _ := compute.LookupEncoder(enc); !spec.Has(compute.BackendCUDA) {
				t.Skipf("the %s is the CPU backend's alone (TestUnsupported)", enc)
			}
			cfg := smallConfig(enc, compute.NegMax)
			cfg.MaxLen = 9
			ps := params(cfg)
			ref := buildWith(t, cpu.New(), cfg, ps)
			emu := buildWith(t, testBackend(t), cfg, ps)
			var seqs [][]int32
			for i := range 140 { // two chunks
				s := make([]int32, 1+i%12) // some beyond MaxLen
				for j := range s {
					s[j] = int32((i*7 + j*3) % cfg.Vocab)
				}
				seqs = append(seqs, s)
			}
			want, err := ref.Embed(seqs)
			if err != nil {
				t.Fatal(err)
			}
			got, err := emu.Embed(seqs)
			if err != nil {
				t.Fatal(err)
			}
			for i := range want {
				if j, d, ok := closeTo(got[i], want[i]); !ok {
					t.Fatalf("sequence %d unit %d differs by %.3g", i, j, d)
				}
			}
			if _, err := emu.Embed([][]int32{{1}, {}}); err == nil {
				t.Error("empty sequence embedded")
			}
			if _, err := emu.Embed([][]int32{{int32(cfg.Vocab)}}); err == nil {
				t.Error("token outside the vocabulary embedded")
			}
		})
	}
}

// TestNoAccumulation: the same batch twice gives the same loss and
// gradients, and leaves the parameters alone.
func TestNoAccumulation(t *testing.T) {
	cfg := smallConfig(compute.EncGRAN, compute.NegMax)
	ps := params(cfg)
	m := buildWith(t, testBackend(t), cfg, ps)
	b := batch(t, cfg, 5, 4)
	l1, err := m.ForwardBackward(b)
	if err != nil {
		t.Fatal(err)
	}
	g1 := m.Grads()
	l2, err := m.ForwardBackward(b)
	if err != nil {
		t.Fatal(err)
	}
	if l1 != l2 {
		t.Errorf("losses %v, %v", l1, l2)
	}
	for i, g := range m.Grads() {
		if _, _, ok := closeTo(g.Data, g1[i].Data); !ok {
			t.Errorf("%s: gradient changed on the second run", g.Name)
		}
	}
	for i, p := range m.Params() {
		if _, d, ok := closeTo(p.Data, ps[i].Data); !ok || d != 0 {
			t.Errorf("%s changed by ForwardBackward", p.Name)
		}
	}
}

// TestNonFinite: a NaN parameter gives ErrNonFinite.
func TestNonFinite(t *testing.T) {
	cfg := smallConfig(compute.EncLSTMAvg, compute.NegMax)
	ps := params(cfg)
	for i := range ps {
		if ps[i].Name == "lstm.wh" {
			ps[i].Data[0] = float32(math.NaN())
		}
	}
	m := buildWith(t, testBackend(t), cfg, ps)
	if _, err := m.ForwardBackward(batch(t, cfg, 5, 1)); err == nil || !errorsIs(err, compute.ErrNonFinite) {
		t.Fatalf("error %v, want ErrNonFinite", err)
	}
}

// TestUnsupported: Build refuses what the backend does not implement (a
// topic context, the csae, the NLI head of multitask training), and says
// so; every encoder and loss is built.
func TestUnsupported(t *testing.T) {
	for _, c := range []compute.Config{
		{Encoder: compute.EncAvg, Context: compute.ContextTopics, Topics: 3, Vocab: 10},
		{Encoder: compute.EncDAN, Loss: compute.LossSim, Context: compute.ContextTopics, Topics: 3, Vocab: 10, BigramBuckets: 7},
	} {
		cfg := c.Defaults()
		_, err := testBackend(t).Build(cfg, compute.InitParams(cfg, rand.New(rand.NewPCG(1, 1))))
		if !errorsIs(err, cuda.ErrUnsupported) || !strings.Contains(err.Error(), "context topics") {
			t.Errorf("%s/%s with topics: error %v, want ErrUnsupported naming the context", cfg.Encoder, cfg.Loss, err)
		}
	}
	for _, enc := range compute.Encoders() {
		for _, loss := range compute.Losses() {
			if spec, _ := compute.LookupEncoder(enc); !spec.Has(compute.BackendCUDA) || loss == compute.LossRecon {
				continue // the csae is the CPU backend's alone: refused below
			}
			cfg := smallModel(enc, loss, compute.NegMax)
			if err := cuda.Supports(cfg); err != nil {
				t.Errorf("%s/%s: %v", enc, loss, err)
			}
			m, err := testBackend(t).Build(cfg, params(cfg))
			if err != nil {
				t.Errorf("%s/%s: %v", enc, loss, err)
				continue
			}
			m.Close()
		}
	}
	csae := compute.Config{Encoder: compute.EncCSAE, Loss: compute.LossRecon, Dim: 4, Vocab: 10}.Defaults()
	if _, err := testBackend(t).Build(csae, params(csae)); !errorsIs(err, cuda.ErrUnsupported) || !strings.Contains(err.Error(), "csae") {
		t.Errorf("csae/recon: error %v, want ErrUnsupported naming csae", err)
	}
	nli := smallModel(compute.EncAvg, compute.LossMargin, compute.NegMax)
	nli.NLIHidden = 8
	if _, err := testBackend(t).Build(nli, params(nli)); !errorsIs(err, cuda.ErrUnsupported) || !strings.Contains(err.Error(), "NLI head") {
		t.Errorf("avg with an NLI head: error %v, want ErrUnsupported naming the NLI head", err)
	}
}
