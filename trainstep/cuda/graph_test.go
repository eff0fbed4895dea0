package cuda_test

import (
	"cmp"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/parastream/parastream/trainstep/compute"
	"github.com/parastream/parastream/trainstep/cuda"
)

// batchOf draws n pairs of lengths 1 to maxLen (1 + (3i mod maxLen)), so
// that batches of the same n and maxLen have the same shape and different
// words, noise, negatives (margin, hinge) and labels (sim).
func batchOf(t *testing.T, cfg compute.Config, n, maxLen int, seed uint64) *compute.Batch {
	t.Helper()
	rng := rand.New(rand.NewPCG(seed, 17))
	var a, b [][]int32
	for i := range n {
		sa, sb := make([]int32, 1+(i*3)%maxLen), make([]int32, 1+(i*5+2)%maxLen)
		for j := range sa {
			sa[j] = rng.Int32N(int32(cfg.Vocab))
		}
		for j := range sb {
			sb[j] = rng.Int32N(int32(cfg.Vocab))
		}
		a, b = append(a, sa), append(b, sb)
	}
	var labels []float32
	if cfg.Loss == compute.LossSim {
		for range n {
			labels = append(labels, float32(rng.IntN(51))/10) // 0 to 5, new each batch
		}
	}
	bt, err := compute.NewBatch(cfg, a, b, labels, rng)
	if err != nil {
		t.Fatal(err)
	}
	return bt
}

// sameBits reports the first index where got and want differ in their
// bits, or -1. On the device (PARASTREAM_TEST_GPU=1) it allows float32
// rounding (closeTo): the embedding gradient's atomicAdd sums a word's
// occurrences in whatever order the threads come, eager or replayed.
func sameBits(got, want []float32) int {
	if len(got) != len(want) {
		return 0
	}
	if onGPU() {
		if i, _, ok := closeTo(got, want); !ok {
			return i
		}
		return -1
	}
	for i := range want {
		if math.Float32bits(got[i]) != math.Float32bits(want[i]) {
			return i
		}
	}
	return -1
}

// sameLoss is loss equality: bits on the emulator, float32 rounding on
// the device.
func sameLoss(got, want float64) bool {
	if onGPU() {
		return math.Abs(got-want) <= 1e-5*math.Abs(want)+1e-6
	}
	return math.Float64bits(got) == math.Float64bits(want)
}

// TestGraphReplayMatchesEager trains the same model twice on the same
// batches, once with every kernel launched one by one (NoGraphs) and once
// with CUDA graphs: the second shape-mate of a batch is captured (each
// upload buffer has its own), later ones replay it, with new words,
// lengths, noise, random negatives, the DAN's bigram ids, the hinge
// loss's negatives and the sim loss's targets copied into the fixed
// buffers before each replay (no shape may be refused: the counts below); a new shape is captured anew and an old one
// replayed again. Losses, gradients and the parameters after each update
// must be the same bits (on the device: within float32 rounding, see
// sameBits).
func TestGraphReplayMatchesEager(t *testing.T) {
	type shape struct{ n, maxLen, steps int }
	plan := []shape{{5, 7, 6}, {3, 7, 4}, {5, 3, 4}, {5, 7, 3}} // (10 rows × 8 steps), (6 × 8), (10 × 4), the first again
	for _, tc := range []struct {
		enc, neg string
		mod      func(*compute.Config)
		loss     string // margin when empty
	}{
		{compute.EncLSTMAvg, compute.NegMix, func(c *compute.Config) {
			c.Dropout, c.WordDropout, c.Scramble, c.LambdaC, c.LambdaW = 0.2, 0.1, 0.5, 0.01, 0.02
		}, ""},
		{compute.EncGRAN, compute.NegRand, func(c *compute.Config) {
			c.EmbeddingUpdate, c.LambdaW, c.Optimizer = compute.UpdateDense, 0.02, compute.OptRMSProp
		}, ""},
		{compute.EncLSTM, compute.NegMax, func(c *compute.Config) { c.Optimizer = compute.OptSGD }, ""},
		{compute.EncAvg, compute.NegMax, func(c *compute.Config) { c.LambdaC = 0.01 }, ""},
		// The DAN's bigram table is row-sparse (its catch-up outside the
		// graph), its bigram ids and the hinge loss's negatives uploaded.
		{compute.EncDAN, "", func(c *compute.Config) { c.Dropout, c.LambdaC = 0.1, 0.01 }, compute.LossHinge},
		{compute.EncBiLSTMAvg, "", func(c *compute.Config) { c.WordDropout, c.Optimizer = 0.1, compute.OptRMSProp }, compute.LossSoftmax},
		{compute.EncGRAN3, "", func(c *compute.Config) { c.LambdaW = 0.02 }, compute.LossSim},
		{compute.EncTransformer, compute.NegMix, func(c *compute.Config) {
			c.Dropout, c.WordDropout, c.LambdaC, c.Optimizer = 0.1, 0.1, 0.01, compute.OptSGD
		}, ""},
	} {
		loss := cmp.Or(tc.loss, compute.LossMargin)
		t.Run(strings.TrimSuffix(fmt.Sprintf("%s/%s/%s", tc.enc, loss, tc.neg), "/"), func(t *testing.T) {
			cfg := smallModel(tc.enc, loss, tc.neg)
			tc.mod(&cfg)
			cfg = cfg.Defaults()
			ps := params(cfg)
			eager := buildWith(t, testBackendWith(t, cuda.Options{NoGraphs: true}), cfg, ps)
			graphed := buildWith(t, testBackendWith(t, cuda.Options{}), cfg, ps)
			step := int64(0)
			reach := make([]float64, len(ps)) // each parameter's largest gradient entry over the steps
			for _, sh := range plan {
				for range sh.steps {
					step++
					b := batchOf(t, cfg, sh.n, sh.maxLen, uint64(step))
					want, err := eager.ForwardBackward(b)
					if err != nil {
						t.Fatal(err)
					}
					got, err := graphed.ForwardBackward(b)
					if err != nil {
						t.Fatal(err)
					}
					if !sameLoss(got, want) {
						t.Fatalf("step %d (%d rows × %d): loss %v with graphs, %v without", step, 2*sh.n, b.Len, got, want)
					}
					wg, gg := eager.Grads(), graphed.Grads()
					for i := range wg {
						for _, v := range wg[i].Data {
							reach[i] = max(reach[i], math.Abs(float64(v)))
						}
						if j := sameBits(gg[i].Data, wg[i].Data); j >= 0 {
							t.Fatalf("step %d: gradient of %s differs at %d: %v with graphs, %v without", step, wg[i].Name, j, gg[i].Data[j], wg[i].Data[j])
						}
					}
					for _, m := range []compute.Model{eager, graphed} {
						if err := m.Update(step, cfg.LR); err != nil {
							t.Fatal(err)
						}
					}
				}
			}
			wp, gp := eager.Params(), graphed.Params()
			largest := slices.Max(reach)
			for i := range wp {
				if onGPU() && reach[i] <= 1e-6*largest {
					// The softmax loss's resp.bout: a bias added to every
					// response cancels in each row's softmax, so its
					// gradient is rounding (1e-8), which RMSProp and Adam
					// turn into steps of about the learning rate. On the
					// device the atomicAdds' order changes that rounding.
					t.Logf("after %d steps %s is not compared: the loss does not reach it (largest gradient %.2g of the model's %.2g)", step, wp[i].Name, reach[i], largest)
					continue
				}
				if j := sameBits(gp[i].Data, wp[i].Data); j >= 0 {
					t.Errorf("after %d steps %s differs at %d: %v with graphs, %v without", step, wp[i].Name, j, gp[i].Data[j], wp[i].Data[j])
				}
			}
			captures, replays, _ := cuda.GraphStats(graphed)
			// Per shape and upload buffer: eager, captured, then replayed.
			// 6 steps of the first shape: 2 captures, 2 replays; 4 of the
			// next two: 2 captures each; 3 more of the first: 3 replays.
			// The update: eager, captured, then 15 replays.
			if captures != 6+1 || replays != 5+15 {
				t.Errorf("%d captures and %d replays, want 7 and 20", captures, replays)
			}
			if c, r, _ := cuda.GraphStats(eager); c != 0 || r != 0 {
				t.Errorf("NoGraphs: %d captures, %d replays", c, r)
			}
		})
	}
}

// TestGraphCacheEvicts bounds the cache at two graphs: three shapes in
// turn evict the least recently used, and a shape evicted is captured
// again, with the same results as without graphs.
func TestGraphCacheEvicts(t *testing.T) {
	cfg := smallConfig(compute.EncLSTMAvg, compute.NegMax)
	ps := params(cfg)
	eager := buildWith(t, testBackendWith(t, cuda.Options{NoGraphs: true}), cfg, ps)
	graphed := buildWith(t, testBackendWith(t, cuda.Options{MaxGraphs: 2}), cfg, ps)
	step := int64(0)
	// Each shape four times in a row (its two upload buffers: eager, then
	// captured), then the first again six times.
	for i, n := range []int{5, 4, 3, 5} {
		for range 4 + i/3*2 {
			step++
			b := batchOf(t, cfg, n, 7, uint64(step))
			want, err := eager.ForwardBackward(b)
			if err != nil {
				t.Fatal(err)
			}
			got, err := graphed.ForwardBackward(b)
			if err != nil {
				t.Fatal(err)
			}
			if !sameLoss(got, want) {
				t.Fatalf("step %d (%d rows): loss %v with graphs, %v without", step, 2*n, got, want)
			}
		}
	}
	captures, replays, evicted := cuda.GraphStats(graphed)
	// Every shape: 2 captures (steps 3 and 4), each past the first two
	// pushing out the least recently used; the first shape again is
	// captured again (steps 1 and 2 of it), then replayed (3 to 6).
	if captures != 8 || evicted != 6 || replays != 4 {
		t.Errorf("%d captures, %d replays, %d evicted; want 8, 4, 6", captures, replays, evicted)
	}
}

// TestEveryModelCaptures runs every encoder with every loss five steps of
// one shape with and without CUDA graphs: each upload buffer's first step
// runs eagerly, its second is captured, the fifth replays, so a model
// whose step uploads, reads back or allocates mid-way (refused by the
// capture, run eagerly: correct but slow) shows as too few captures. The
// losses and the parameters after the updates must match (bits on the
// emulator).
func TestEveryModelCaptures(t *testing.T) {
	for _, enc := range gpuEncoders() {
		for _, loss := range []string{compute.LossMargin, compute.LossHinge, compute.LossSoftmax, compute.LossSim} {
			t.Run(enc+"/"+loss, func(t *testing.T) {
				cfg := smallModel(enc, loss, compute.NegMix)
				cfg.Dropout = 0.1
				cfg = cfg.Defaults()
				ps := params(cfg)
				eager := buildWith(t, testBackendWith(t, cuda.Options{NoGraphs: true}), cfg, ps)
				graphed := buildWith(t, testBackendWith(t, cuda.Options{}), cfg, ps)
				for step := int64(1); step <= 5; step++ {
					b := batchOf(t, cfg, 4, 5, uint64(step))
					want, err := eager.ForwardBackward(b)
					if err != nil {
						t.Fatal(err)
					}
					got, err := graphed.ForwardBackward(b)
					if err != nil {
						t.Fatal(err)
					}
					if !sameLoss(got, want) {
						t.Fatalf("step %d: loss %v with graphs, %v without", step, got, want)
					}
					for _, m := range []compute.Model{eager, graphed} {
						if err := m.Update(step, cfg.LR); err != nil {
							t.Fatal(err)
						}
					}
				}
				wp, gp := eager.Params(), graphed.Params()
				for i := range wp {
					if j := sameBits(gp[i].Data, wp[i].Data); j >= 0 {
						t.Errorf("%s differs at %d: %v with graphs, %v without", wp[i].Name, j, gp[i].Data[j], wp[i].Data[j])
					}
				}
				// Steps: 2 captures, 1 replay; the update: 1 capture, 3 replays.
				if captures, replays, _ := cuda.GraphStats(graphed); captures != 3 || replays != 4 {
					t.Errorf("%d captures and %d replays, want 3 and 4: a step was refused by the capture", captures, replays)
				}
			})
		}
	}
}
