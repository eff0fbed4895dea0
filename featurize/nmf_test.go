package featurize_test

import (
	"bytes"
	"context"
	"errors"
	"math"
	"math/rand/v2"
	"reflect"
	"testing"

	"github.com/parastream/parastream/featurize"
)

func nan() float64 { return math.NaN() }

// randomSparse is a rows×cols matrix of small counts (1..5) with about
// density·rows·cols entries, seeded.
func randomSparse(rows, cols int, density float64, seed uint64) *featurize.CSR {
	rng := rand.New(rand.NewPCG(seed, 1))
	m := featurize.NewCSR(cols)
	var idx []int32
	var val []float32
	for range rows {
		idx, val = idx[:0], val[:0]
		for j := range cols {
			if rng.Float64() < density {
				idx = append(idx, int32(j))
				val = append(val, float32(1+rng.IntN(5)))
			}
		}
		if err := m.AppendRow(idx, val); err != nil {
			panic(err)
		}
	}
	return m
}

// randomFactor is a rows×cols row-major non-negative matrix with about
// density of its entries uniform in (0.5, 1.5), the rest zero, and no
// zero row.
func randomFactor(rng *rand.Rand, rows, cols int, density float64) []float64 {
	m := make([]float64, rows*cols)
	for i := range rows {
		row := m[i*cols : (i+1)*cols]
		for j := range row {
			if rng.Float64() < density {
				row[j] = 0.5 + rng.Float64()
			}
		}
		row[rng.IntN(cols)] = 0.5 + rng.Float64()
	}
	return m
}

// planted returns X = W*·H* for sparse random factors with k topics, and H*.
func planted(docs, terms, k int, seed uint64) (*featurize.CSR, []float64) {
	rng := rand.New(rand.NewPCG(seed, 2))
	w := randomFactor(rng, docs, k, 0.4)
	h := randomFactor(rng, k, terms, 0.3)
	x := featurize.NewCSR(terms)
	var idx []int32
	var val []float32
	for i := range docs {
		idx, val = idx[:0], val[:0]
		for j := range terms {
			var v float64
			for t := range k {
				v += w[i*k+t] * h[t*terms+j]
			}
			if v != 0 {
				idx = append(idx, int32(j))
				val = append(val, float32(v))
			}
		}
		if err := x.AppendRow(idx, val); err != nil {
			panic(err)
		}
	}
	return x, h
}

func cosine(a, b []float64) float64 {
	var ab, aa, bb float64
	for i := range a {
		ab += a[i] * b[i]
		aa += a[i] * a[i]
		bb += b[i] * b[i]
	}
	if aa == 0 || bb == 0 {
		return 0
	}
	return ab / math.Sqrt(aa*bb)
}

func row64(m []float32, i, n int) []float64 {
	out := make([]float64, n)
	for j := range out {
		out[j] = float64(m[i*n+j])
	}
	return out
}

// bestMatching is the permutation of the k topics maximising the smallest
// cosine between found and planted topics (exhaustive: k is small), and
// that smallest cosine.
func bestMatching(found []float32, planted []float64, k, terms int) float64 {
	cos := make([][]float64, k)
	for a := range k {
		cos[a] = make([]float64, k)
		for b := range k {
			cos[a][b] = cosine(row64(found, a, terms), planted[b*terms:(b+1)*terms])
		}
	}
	perm := make([]int, k)
	used := make([]bool, k)
	best := -1.0
	var search func(a int, worst float64)
	search = func(a int, worst float64) {
		if worst <= best {
			return
		}
		if a == k {
			best = worst
			return
		}
		for b := range k {
			if !used[b] {
				used[b], perm[a] = true, b
				search(a+1, min(worst, cos[a][b]))
				used[b] = false
			}
		}
	}
	search(0, math.Inf(1))
	return best
}

func TestFitNMFRecoversPlantedFactors(t *testing.T) {
	const docs, terms, k = 200, 300, 5
	x, h := planted(docs, terms, k, 1)
	m, res, err := featurize.FitNMF(context.Background(), x, featurize.NMFConfig{K: k, MaxIter: 3000, Tol: 1e-12, Seed: 3})
	if err != nil {
		t.Fatal(err)
	}
	if res.RelError > 1e-3 {
		t.Fatalf("relative error %.3g after %d iterations, want < 1e-3", res.RelError, res.Iters)
	}
	if direct := featurize.RelativeError(x, res.W, m.H); math.Abs(direct-res.RelError) > 1e-4 {
		t.Errorf("RelativeError %.6g differs from the fit's own %.6g", direct, res.RelError)
	}
	if worst := bestMatching(m.H, h, k, terms); worst < 0.99 {
		t.Fatalf("worst cosine between matched topics %.4f, want > 0.99", worst)
	}
	for tp := range k {
		if n := math.Sqrt(dot(row64(m.H, tp, terms), row64(m.H, tp, terms))); n > 1+1e-6 {
			t.Errorf("topic %d has norm %v > 1", tp, n)
		}
	}
	t.Logf("rel error %.3g after %d iterations", res.RelError, res.Iters)
}

func dot(a, b []float64) float64 {
	var s float64
	for i := range a {
		s += a[i] * b[i]
	}
	return s
}

func TestFitNMFObjectiveNeverIncreases(t *testing.T) {
	x := randomSparse(300, 400, 0.05, 2)
	for _, l1 := range []float64{0, 0.5} {
		_, res, err := featurize.FitNMF(context.Background(), x, featurize.NMFConfig{K: 10, L1: l1, MaxIter: 150, Tol: -1, Seed: 1})
		if err != nil {
			t.Fatal(err)
		}
		if res.Iters != 150 || len(res.Objective) != 150 {
			t.Fatalf("ran %d iterations (%d objectives), want all 150", res.Iters, len(res.Objective))
		}
		for i := 1; i < len(res.Objective); i++ {
			if prev, cur := res.Objective[i-1], res.Objective[i]; cur > prev*(1+1e-9) {
				t.Fatalf("λ=%v: objective rose from %.12g to %.12g at iteration %d", l1, prev, cur, i+1)
			}
		}
		if first, last := res.Objective[0], res.Objective[len(res.Objective)-1]; !(last < first) {
			t.Fatalf("λ=%v: objective did not decrease (%v to %v)", l1, first, last)
		}
	}
}

func zeroFraction(w []float32) float64 {
	z := 0
	for _, v := range w {
		if v == 0 {
			z++
		}
	}
	return float64(z) / float64(len(w))
}

func TestFitNMFLargerL1SparserCodes(t *testing.T) {
	x := randomSparse(300, 400, 0.05, 3)
	prev := -1.0
	for _, l1 := range []float64{0, 0.3, 3} {
		_, res, err := featurize.FitNMF(context.Background(), x, featurize.NMFConfig{K: 10, L1: l1, MaxIter: 100, Seed: 1})
		if err != nil {
			t.Fatal(err)
		}
		z := zeroFraction(res.W)
		t.Logf("λ=%v: %.1f%% zero codes, rel error %.4f", l1, 100*z, res.RelError)
		if z <= prev {
			t.Fatalf("λ=%v: %.3f of codes are zero, not more than %.3f at the smaller λ", l1, z, prev)
		}
		prev = z
	}
}

func fitSmall(t testing.TB, l1 float64) (*featurize.CSR, *featurize.NMF, *featurize.FitResult) {
	t.Helper()
	x := randomSparse(300, 400, 0.05, 4)
	m, res, err := featurize.FitNMF(context.Background(), x, featurize.NMFConfig{K: 8, L1: l1, MaxIter: 500, Tol: 1e-10, Seed: 5})
	if err != nil {
		t.Fatal(err)
	}
	return x, m, res
}

func TestTransformMatchesFittedCodes(t *testing.T) {
	x, m, res := fitSmall(t, 0.2)
	tr := m.NewTransformer()
	dst := make([]float32, m.K)
	worst := 1.0
	for i := range x.Rows {
		fitted := row64(res.W, i, m.K)
		if dot(fitted, fitted) == 0 {
			continue
		}
		idx, val := x.Row(i)
		got := tr.Transform(dst, idx, val)
		worst = min(worst, cosine(row64(got, 0, m.K), fitted))
	}
	if worst < 0.99 {
		t.Fatalf("worst cosine between Transform and the fitted code %.4f, want > 0.99", worst)
	}
	if got := tr.Transform(dst, nil, nil); zeroFraction(got) != 1 {
		t.Fatalf("empty text gave %v, want zeros", got)
	}
}

// TestTransformKKT checks the optimality conditions of the penalised
// non-negative least squares: with g = HHᵀw − Hx + λ, g_t = 0 where
// w_t > 0 and g_t ≥ 0 where w_t = 0.
func TestTransformKKT(t *testing.T) {
	_, m, _ := fitSmall(t, 0.2)
	k, terms := m.K, m.Terms
	tr := m.NewTransformer()
	tr.Tol = 1e-10
	unseen := randomSparse(20, terms, 0.08, 99)
	for i := range unseen.Rows {
		idx, val := unseen.Row(i)
		w := row64(tr.Transform(nil, idx, val), 0, k)
		for tp := range k {
			h := row64(m.H, tp, terms)
			var g, hx float64
			for s := range k {
				g += dot(h, row64(m.H, s, terms)) * w[s]
			}
			for p, j := range idx {
				hx += h[j] * float64(val[p])
			}
			g += m.L1 - hx
			scale := 1 + math.Abs(hx)
			if w[tp] > 0 && math.Abs(g) > 1e-4*scale || w[tp] == 0 && g < -1e-4*scale {
				t.Fatalf("text %d topic %d: code %v with projected gradient %v", i, tp, w[tp], g)
			}
		}
	}
}

func TestTransformDoesNotAllocate(t *testing.T) {
	_, m, _ := fitSmall(t, 0.2)
	tr := m.NewTransformer()
	dst := make([]float32, m.K)
	idx, val := []int32{1, 5, 9, 300}, []float32{1, 2, 1, 3}
	if n := testing.AllocsPerRun(50, func() { tr.Transform(dst, idx, val) }); n != 0 {
		t.Fatalf("Transform allocates %v times a call", n)
	}
}

func TestFitNMFDeterministicAcrossWorkers(t *testing.T) {
	// Large enough for several chunks of every parallel loop.
	x := randomSparse(1500, 2500, 0.01, 6)
	var first *featurize.NMF
	var firstW []float32
	for _, workers := range []int{1, 3, 4} {
		m, res, err := featurize.FitNMF(context.Background(), x, featurize.NMFConfig{K: 8, L1: 0.1, MaxIter: 8, Seed: 9, Workers: workers})
		if err != nil {
			t.Fatal(err)
		}
		if first == nil {
			first, firstW = m, res.W
			continue
		}
		if !reflect.DeepEqual(m.H, first.H) || !reflect.DeepEqual(res.W, firstW) || m.Objective != first.Objective {
			t.Fatalf("Workers=%d gave a different fit than Workers=1", workers)
		}
	}
}

func TestFitNMFErrors(t *testing.T) {
	ctx := context.Background()
	x := randomSparse(10, 10, 0.3, 1)
	for name, cfg := range map[string]featurize.NMFConfig{
		"no K":        {},
		"negative L1": {K: 2, L1: -1},
		"workers":     {K: 2, Workers: -1},
		"init shape":  {K: 2, Init: &featurize.NMFInit{W: make([]float32, 3), H: make([]float32, 20)}},
	} {
		if _, _, err := featurize.FitNMF(ctx, x, cfg); err == nil {
			t.Errorf("%s: no error", name)
		}
	}
	neg := randomSparse(10, 10, 0.3, 1)
	neg.Data[0] = -1
	if _, _, err := featurize.FitNMF(ctx, neg, featurize.NMFConfig{K: 2}); err == nil {
		t.Error("a negative entry was accepted")
	}
	if _, _, err := featurize.FitNMF(ctx, featurize.NewCSR(4), featurize.NMFConfig{K: 2}); err == nil {
		t.Error("an empty matrix was accepted")
	}
	cancelled, cancel := context.WithCancel(ctx)
	cancel()
	if _, _, err := featurize.FitNMF(cancelled, x, featurize.NMFConfig{K: 2}); !errors.Is(err, context.Canceled) {
		t.Errorf("cancelled context: %v", err)
	}
}

func TestChooseKFindsPlantedK(t *testing.T) {
	x, _ := planted(150, 200, 5, 11)
	best, curve, err := featurize.ChooseK(context.Background(), x, []int{8, 2, 3, 5, 4, 6, 10}, featurize.NMFConfig{MaxIter: 400, Seed: 2})
	if err != nil {
		t.Fatal(err)
	}
	if len(curve) != 7 || curve[0].K != 2 || curve[6].K != 10 {
		t.Fatalf("curve %+v, want k = 2..10 in order", curve)
	}
	for _, p := range curve {
		t.Logf("k=%d rel error %.4f (%d iterations)", p.K, p.RelError, p.Iters)
	}
	if best != 5 {
		t.Fatalf("chose k = %d, want the planted 5", best)
	}
}

func TestNMFSaveLoadRoundTrip(t *testing.T) {
	_, m, _ := fitSmall(t, 0.2)
	var buf bytes.Buffer
	n, err := m.WriteTo(&buf)
	if err != nil || n != int64(buf.Len()) {
		t.Fatalf("WriteTo: %d bytes, %v (buffer holds %d)", n, err, buf.Len())
	}
	saved := bytes.Clone(buf.Bytes())
	back, err := featurize.ReadNMF(&buf)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(back.H, m.H) || back.K != m.K || back.Terms != m.Terms || back.L1 != m.L1 ||
		back.Iters != m.Iters || back.Objective != m.Objective || back.RelError != m.RelError || back.Seed != m.Seed {
		t.Fatal("the model read back differs")
	}
	var again bytes.Buffer
	if _, err := back.WriteTo(&again); err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(again.Bytes(), saved) {
		t.Fatal("writing the model read back gives different bytes")
	}
}

func TestReadNMFCorrupt(t *testing.T) {
	_, m, _ := fitSmall(t, 0.2)
	var buf bytes.Buffer
	if _, err := m.WriteTo(&buf); err != nil {
		t.Fatal(err)
	}
	good := buf.Bytes()
	for _, cut := range []int{0, 4, 8, 20, len(good) / 2, len(good) - 1} {
		if _, err := featurize.ReadNMF(bytes.NewReader(good[:cut])); !errors.Is(err, featurize.ErrBadModel) {
			t.Errorf("truncated at %d: %v, want ErrBadModel", cut, err)
		}
	}
	flipped := bytes.Clone(good)
	flipped[len(flipped)-3] ^= 0x40
	if _, err := featurize.ReadNMF(bytes.NewReader(flipped)); !errors.Is(err, featurize.ErrBadModel) {
		t.Errorf("flipped topic byte: %v, want ErrBadModel", err)
	}
	header := bytes.Clone(good)
	header[12] = '!'
	if _, err := featurize.ReadNMF(bytes.NewReader(header)); !errors.Is(err, featurize.ErrBadModel) {
		t.Errorf("broken header: %v, want ErrBadModel", err)
	}
}

func FuzzReadNMF(f *testing.F) {
	x := randomSparse(20, 30, 0.2, 1)
	m, _, err := featurize.FitNMF(context.Background(), x, featurize.NMFConfig{K: 2, L1: 0.1, MaxIter: 5, Seed: 1})
	if err != nil {
		f.Fatal(err)
	}
	var buf bytes.Buffer
	if _, err := m.WriteTo(&buf); err != nil {
		f.Fatal(err)
	}
	f.Add(buf.Bytes())
	f.Add(buf.Bytes()[:40])
	f.Add([]byte{8, 0, 0, 0, 0, 0, 0, 0, '{', '}', ' ', ' ', ' ', ' ', ' ', ' '})
	f.Fuzz(func(t *testing.T, data []byte) {
		m, err := featurize.ReadNMF(bytes.NewReader(data))
		if err != nil {
			if !errors.Is(err, featurize.ErrBadModel) {
				t.Fatalf("error does not wrap ErrBadModel: %v", err)
			}
			return
		}
		var out bytes.Buffer
		if _, err := m.WriteTo(&out); err != nil {
			t.Fatal(err)
		}
		back, err := featurize.ReadNMF(&out)
		if err != nil || !reflect.DeepEqual(back.H, m.H) || back.L1 != m.L1 || back.Seed != m.Seed {
			t.Fatalf("model read from fuzz input does not round-trip: %v", err)
		}
	})
}

func BenchmarkTransform(b *testing.B) {
	x := randomSparse(2000, 5000, 0.004, 12)
	m, _, err := featurize.FitNMF(context.Background(), x, featurize.NMFConfig{K: 100, L1: 0.1, MaxIter: 20, Seed: 1})
	if err != nil {
		b.Fatal(err)
	}
	tr := m.NewTransformer()
	dst := make([]float32, m.K)
	b.ReportAllocs()
	n := 0
	for b.Loop() {
		idx, val := x.Row(n % x.Rows)
		tr.Transform(dst, idx, val)
		n++
	}
	b.ReportMetric(float64(n)/b.Elapsed().Seconds(), "texts/s")
}

func BenchmarkFitNMFIteration(b *testing.B) {
	x := randomSparse(5000, 8000, 0.001, 13)
	cfg := featurize.NMFConfig{K: 100, MaxIter: 1, Tol: -1, Seed: 1}
	cfg.Init = new(featurize.RandomInit(x, cfg.K, cfg.Seed))
	for b.Loop() {
		if _, _, err := featurize.FitNMF(context.Background(), x, cfg); err != nil {
			b.Fatal(err)
		}
	}
}
