package metric_test

import (
	"context"
	"encoding/csv"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"testing"

	"github.com/parastream/parastream/evalsink/internal/evaltest"
	"github.com/parastream/parastream/evalsink/metric"
	"gonum.org/v1/gonum/floats"
)

// logRegFixture is testdata/logreg_fixture.csv (written by
// testdata/logreg_fixture.py): 400 items of 20 raw features, a binary and a
// 3-class label; the first 300 items train, the last 100 are held out.
type logRegFixture struct {
	x      metric.Features
	y2, y3 []int
}

const fixtureTrain = 300

func readLogRegFixture(t *testing.T) logRegFixture {
	t.Helper()
	f, err := os.Open(filepath.Join("testdata", "logreg_fixture.csv"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	recs, err := csv.NewReader(f).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	recs = recs[1:]
	fx := logRegFixture{x: metric.NewFeatures(len(recs), len(recs[0])-2)}
	for i, rec := range recs {
		for j, s := range rec {
			v, err := strconv.ParseFloat(s, 64)
			if err != nil {
				t.Fatal(err)
			}
			switch j {
			case 0:
				fx.y2 = append(fx.y2, int(v))
			case 1:
				fx.y3 = append(fx.y3, int(v))
			default:
				fx.x.Row(i)[j-2] = v
			}
		}
	}
	return fx
}

// rows returns the items lo..hi-1 of f.
func rows(f metric.Features, lo, hi int) metric.Features {
	idx := make([]int, hi-lo)
	for i := range idx {
		idx[i] = lo + i
	}
	return f.Subset(idx)
}

func accuracy(pred, gold []int) float64 {
	var ok float64
	for i := range pred {
		if pred[i] == gold[i] {
			ok++
		}
	}
	return ok / float64(len(pred))
}

// sklearnFit is scikit-learn's fit of one set with one C
// (testdata/sklearn_check.py).
type sklearnFit struct {
	Name       string
	C          float64
	Coef       [][]float64
	Intercept  []float64
	Objective  float64
	Grad       float64
	Accuracy   float64
	Iterations int
}

// TestLogRegAgainstSklearnPinned fits the fixture's binary and 3-class
// labels with C 0.25, 1 and 8 and compares each fit with scikit-learn
// 1.2.1's, whose figures are written here (pinnedSklearnFits) as
// compareFit does: the held-out accuracy (100 items) equal to half a point,
// the objective no higher and at most 1e-6 lower, the first four weights
// of each row and the intercepts within the bounds that scikit-learn's
// excess objective allows. It runs without Python.
func TestLogRegAgainstSklearnPinned(t *testing.T) {
	fx := readLogRegFixture(t)
	train, test := rows(fx.x, 0, fixtureTrain), rows(fx.x, fixtureTrain, fx.x.Rows)
	for _, want := range pinnedSklearnFits() {
		y := fx.y2
		if want.Name == "3-class" {
			y = fx.y3
		}
		classes := 2
		if want.Name == "3-class" {
			classes = 3
		}
		m, err := metric.FitLogReg(context.Background(), train, y[:fixtureTrain], classes, metric.LogRegConfig{C: want.C, Tol: testTol})
		if err != nil {
			t.Fatal(err)
		}
		compareFit(t, m, want, accuracy(m.Predict(test), y[fixtureTrain:]), train)
	}
}

// testTol is the gradient tolerance of the fits compared with
// scikit-learn: far below its own, so that the comparison measures
// scikit-learn's distance from the optimum.
const testTol = 1e-10

// compareFit compares m, fitted on train, with scikit-learn's fit:
//   - the held-out accuracy within half a point;
//   - the objective no higher than scikit-learn's (1e-12 for rounding),
//     and scikit-learn's within 1e-6 of it (scipy's L-BFGS-B stops on a
//     relative change of the objective below 2.2e-9, its default, before
//     the gradient tolerance);
//   - the weights within the distance that the difference of objectives
//     allows: the per-item objective is 1/(Cn)-strongly convex in the
//     weights, so f(w) − f* ≥ ‖w − w*‖²/(2Cn): ‖w_sk − w*‖ ≤
//     √(2Cn (f_sk − f*)), and ‖w − w*‖ ≤ Cn ‖∇f(w)‖;
//   - the intercepts (not penalised: the bound does not hold for them)
//     within the most that weights this far apart move an item's score,
//     that bound times the largest ‖x_i‖, as the intercept that zeroes the
//     loss's derivative moves with the scores.
func compareFit(t *testing.T, m *metric.LogReg, want sklearnFit, acc float64, train metric.Features) {
	t.Helper()
	what := fmt.Sprintf("%s C=%g", want.Name, want.C)
	if !m.Converged {
		t.Errorf("%s: not converged after %d iterations (gradient %.3g)", what, m.Iterations, m.GradNorm)
	}
	if math.Abs(acc-want.Accuracy) > 0.005 {
		t.Errorf("%s: held-out accuracy %.4f, scikit-learn %.4f", what, acc, want.Accuracy)
	}
	gap := want.Objective - m.Objective
	if gap < -1e-12 || gap > 1e-6 {
		t.Errorf("%s: objective %.12f, scikit-learn %.12f", what, m.Objective, want.Objective)
	}
	if len(m.Coef) != len(want.Coef) {
		t.Fatalf("%s: %d coefficient rows, scikit-learn %d", what, len(m.Coef), len(want.Coef))
	}
	params := float64(len(m.Coef) * (len(m.Coef[0]) + 1))
	cn := want.C * float64(train.Rows)
	bound := math.Sqrt(2*cn*max(gap, 0)) + cn*math.Sqrt(params)*m.GradNorm + 1e-9
	var radius float64
	for i := range train.Rows {
		radius = max(radius, math.Sqrt(floats.Dot(train.Row(i), train.Row(i))))
	}
	var dist, bias float64
	for k := range want.Coef {
		for j, w := range want.Coef[k] {
			d := m.Coef[k][j] - w
			dist += d * d
		}
		bias = max(bias, math.Abs(m.Intercept[k]-want.Intercept[k]))
	}
	dist = math.Sqrt(dist)
	if dist > bound || bias > bound*radius {
		t.Errorf("%s: the weights are %.3g from scikit-learn's (bound %.3g), an intercept %.3g (bound %.3g)\n got %v %v\nwant %v %v",
			what, dist, bound, bias, bound*radius, m.Coef, m.Intercept, want.Coef, want.Intercept)
	}
	t.Logf("%s: accuracy %.4f (scikit-learn %.4f), objective %.12f (%.12f), weights %.2g apart (bound %.2g), intercepts %.2g (%.2g), %d iterations (scikit-learn %d), gradient %.2g (%.2g)",
		what, acc, want.Accuracy, m.Objective, want.Objective, dist, bound, bias, bound*radius, m.Iterations, want.Iterations, m.GradNorm, want.Grad)
}

// pinnedSklearnFits returns scikit-learn 1.2.1's fits of the fixture
// (scipy 1.10.1, numpy 1.24.2, Debian bookworm), the first four weights of
// each row: /usr/bin/python3 evalsink/metric/testdata/sklearn_check.py --pin
// evalsink/metric/testdata/logreg_fixture.csv.
func pinnedSklearnFits() []sklearnFit {
	return []sklearnFit{
		{Name: "binary", C: 0.25, Accuracy: 0.85, Objective: 0.470393414262, Grad: 6.1e-06, Iterations: 66,
			Coef: [][]float64{{-0.5336975557, 0.3640801144, 0.06462191459, 0.4374321013}}, Intercept: []float64{-2.257141145}},
		{Name: "binary", C: 1, Accuracy: 0.85, Objective: 0.413497913967, Grad: 1.1e-05, Iterations: 100,
			Coef: [][]float64{{-0.729092945, 0.4926378143, 0.08868176741, 0.5928323574}}, Intercept: []float64{-3.394129758}},
		{Name: "binary", C: 8, Accuracy: 0.85, Objective: 0.376460939129, Grad: 5.9e-06, Iterations: 117,
			Coef: [][]float64{{-0.8859091725, 0.589298419, 0.1142191679, 0.7227141099}}, Intercept: []float64{-4.566258186}},
		{Name: "3-class", C: 0.25, Accuracy: 0.87, Objective: 0.504409964102, Grad: 2.2e-05, Iterations: 110,
			Coef: [][]float64{{0.3963940493, 0.09613046288, 0.03544754265, -0.9653665775}, {-0.4517594703, -0.1314693877, 0.3478684402, -0.068928571}, {0.05536542108, 0.03533892484, -0.3833159828, 1.034295149}}, Intercept: []float64{-0.4359047421, -1.474687999, 1.910592741}},
		{Name: "3-class", C: 1, Accuracy: 0.88, Objective: 0.384728096388, Grad: 4.5e-05, Iterations: 139,
			Coef: [][]float64{{0.5234883135, 0.1414198427, 0.06456158256, -1.516649034}, {-0.5408146864, -0.2071990485, 0.464451332, -0.09972489025}, {0.01732637289, 0.06577920584, -0.5290129146, 1.616373924}}, Intercept: []float64{-1.714463708, -2.362998898, 4.077462607}},
		{Name: "3-class", C: 8, Accuracy: 0.89, Objective: 0.280662314585, Grad: 1.2e-05, Iterations: 210,
			Coef: [][]float64{{0.7472447367, 0.2081914554, 0.1309779369, -2.536336105}, {-0.6664552834, -0.322035632, 0.694003931, -0.2118576009}, {-0.08078945337, 0.1138441766, -0.824981868, 2.748193705}}, Intercept: []float64{-4.646712813, -3.78553663, 8.432249443}},
	}
}

// sklearnSet is one set sklearn_check.py fits.
type sklearnSet struct {
	Name    string      `json:"name"`
	X       [][]float64 `json:"x"`
	Y       []int       `json:"y"`
	TestX   [][]float64 `json:"test_x"`
	TestY   []int       `json:"test_y"`
	Cs      []float64   `json:"cs"`
	classes int
	train   metric.Features
	test    metric.Features
}

func newSklearnSet(name string, x metric.Features, y []int, nTrain, classes int, cs []float64) sklearnSet {
	s := sklearnSet{Name: name, Cs: cs, classes: classes, train: rows(x, 0, nTrain), test: rows(x, nTrain, x.Rows)}
	for i := range x.Rows {
		if i < nTrain {
			s.X, s.Y = append(s.X, x.Row(i)), append(s.Y, y[i])
		} else {
			s.TestX, s.TestY = append(s.TestX, x.Row(i)), append(s.TestY, y[i])
		}
	}
	return s
}

// randomSet draws n items of d features in the given classes: Gaussian
// class means at distance sep, features scaled unevenly.
func randomSet(seed uint64, n, d, classes int, sep float64) (metric.Features, []int) {
	rng := rand.New(rand.NewPCG(seed, 1))
	means := make([][]float64, classes)
	for c := range means {
		for range d {
			means[c] = append(means[c], sep*rng.NormFloat64())
		}
	}
	scale := make([]float64, d)
	for j := range scale {
		scale[j] = math.Exp(rng.Float64()*3 - 1.5)
	}
	x := metric.NewFeatures(n, d)
	y := make([]int, n)
	for i := range n {
		y[i] = rng.IntN(classes)
		for j := range d {
			x.Row(i)[j] = scale[j] * (means[y[i]][j] + rng.NormFloat64())
		}
	}
	return x, y
}

// TestLogRegAgainstSklearn runs scikit-learn (testdata/sklearn_check.py)
// on the fixture and on random sets (binary and 4 classes, up to 2,000
// items of 60 features, separable or nearly), and compares each fit with
// it as the pinned test does.
func TestLogRegAgainstSklearn(t *testing.T) {
	py := evaltest.PythonWith(t, "sklearn.linear_model, scipy.special", "python3-sklearn", "PARASTREAM_REQUIRE_SKLEARN")
	fx := readLogRegFixture(t)
	cs := []float64{0.25, 1, 8}
	sets := []sklearnSet{
		newSklearnSet("binary", fx.x, fx.y2, fixtureTrain, 2, cs),
		newSklearnSet("3-class", fx.x, fx.y3, fixtureTrain, 3, cs),
	}
	for i, c := range []struct{ n, d, classes int }{{2000, 60, 2}, {2000, 60, 4}, {300, 60, 2}} {
		x, y := randomSet(uint64(i+1), c.n, c.d, c.classes, 0.3)
		sets = append(sets, newSklearnSet(fmt.Sprintf("random %d×%d, %d classes", c.n, c.d, c.classes), x, y, c.n*3/4, c.classes,
			[]float64{0.25, 2, 32}))
	}
	var ref struct {
		Sklearn string
		Fits    []sklearnFit
	}
	evaltest.Run(t, py, "sklearn_check.py", map[string]any{"sets": sets}, &ref)
	t.Logf("scikit-learn %s", ref.Sklearn)
	byName := map[string]sklearnSet{}
	for _, s := range sets {
		byName[s.Name] = s
	}
	for _, want := range ref.Fits {
		s := byName[want.Name]
		m, err := metric.FitLogReg(context.Background(), s.train, s.Y, s.classes, metric.LogRegConfig{C: want.C, Tol: testTol})
		if err != nil {
			t.Fatal(err)
		}
		compareFit(t, m, want, accuracy(m.Predict(s.test), s.TestY), s.train)
	}
}

// BenchmarkFitLogReg fits SST-2 train's size (67,349 items) of 100 and 512
// features along SentEval's C grid (2^-2 .. 2^3), warm-started, on every
// core.
func BenchmarkFitLogReg(b *testing.B) {
	for _, d := range []int{100, 512} {
		x, y := randomSet(9, 67349, d, 2, 0.05)
		b.Run(fmt.Sprintf("67349x%d", d), func(b *testing.B) {
			for range b.N {
				var warm *metric.LogReg
				iters := 0
				for _, c := range []float64{0.25, 0.5, 1, 2, 4, 8} {
					m, err := metric.FitLogReg(context.Background(), x, y, 2, metric.LogRegConfig{C: c, Warm: warm, Workers: runtime.GOMAXPROCS(0)})
					if err != nil {
						b.Fatal(err)
					}
					warm = m
					iters += m.Iterations
				}
				b.ReportMetric(float64(iters), "iterations")
			}
		})
	}
}
