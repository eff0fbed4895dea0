package adapt_test

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/parastream/parastream/evalsink"
	"github.com/parastream/parastream/evalsink/adapt"
	"github.com/parastream/parastream/evalsink/internal/evaltest"
	"github.com/parastream/parastream/pipelines"
)

// distortedPairs draws n pairs whose gold score is the angular similarity
// 1 − arccos(cos)/π of their true d-dimensional vectors, observed through
// a distortion (a few directions scaled by 8, the rest kept): the
// distortion's inverse is a linear map that makes the observed vectors
// score perfectly.
func distortedPairs(rng *rand.Rand, n, d int) adapt.Pairs {
	scale := make([]float64, d)
	for k := range scale {
		scale[k] = 1
		if k < d/4 {
			scale[k] = 8
		}
	}
	p := adapt.Pairs{A: make([][]float32, n), B: make([][]float32, n), Gold: make([]float64, n)}
	for i := range n {
		ta, tb := make([]float64, d), make([]float64, d)
		noise := 2 * rng.Float64()
		for k := range d {
			ta[k] = rng.NormFloat64()
			tb[k] = ta[k] + noise*rng.NormFloat64()
		}
		var ab, aa, bb float64
		for k := range d {
			ab, aa, bb = ab+ta[k]*tb[k], aa+ta[k]*ta[k], bb+tb[k]*tb[k]
		}
		p.Gold[i] = 1 - math.Acos(ab/math.Sqrt(aa*bb))/math.Pi
		p.A[i], p.B[i] = make([]float32, d), make([]float32, d)
		for k := range d {
			p.A[i][k], p.B[i][k] = float32(scale[k]*ta[k]), float32(scale[k]*tb[k])
		}
	}
	return p
}

// TestAdaptationLearnsAKnownMap: on pairs observed through a distortion
// that a linear map undoes, the adaptation raises the dev Pearson well
// above out of the box, deterministically given the seed.
func TestAdaptationLearnsAKnownMap(t *testing.T) {
	const d = 12
	rng := rand.New(rand.NewPCG(7, 7))
	train, dev := distortedPairs(rng, 600, d), distortedPairs(rng, 300, d)
	cfg := adapt.Config{Epochs: 15, LearningRates: []float64{3e-3, 1e-2}, Lambdas: []float64{0, 1e-3}, Seed: 5}
	a, trials, chosen, err := adapt.Train(context.Background(), train, dev, cfg)
	if err != nil {
		t.Fatal(err)
	}
	before, after := adapt.Pearson(dev, nil), adapt.Pearson(dev, a)
	t.Logf("dev Pearson angular %.2f -> %.2f, cosine %.2f -> %.2f; chosen %+v; %d trials", before.Angular, after.Angular, before.Cosine, after.Cosine, chosen, len(trials))
	if after.Angular < before.Angular+5 {
		t.Errorf("dev Pearson %.2f adapted, %.2f out of the box: want a rise of 5 points at least", after.Angular, before.Angular)
	}
	if chosen.Epochs == 0 || len(trials) != 4 {
		t.Errorf("chosen %+v, %d trials: want an epoch past the identity and 4 trials", chosen, len(trials))
	}
	again, _, _, err := adapt.Train(context.Background(), train, dev, cfg)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(a.W, again.W) {
		t.Error("two trainings with the same seed differ")
	}
}

// TestAdaptationIdentityIsOutOfTheBox: the identity map (where training
// starts, epoch 0) gives the out-of-the-box predictions bit for bit,
// through the embedder as through AdaptPearson.
func TestAdaptationIdentityIsOutOfTheBox(t *testing.T) {
	sets := evaltest.LoadSets(t, fixtures.FixtureSets(t))
	dir := evaltest.Checkpoint(t, t.TempDir(), "ck", evaltest.Vocabulary(sets, 0), 3)
	emb, _, err := evalsink.OpenEmbedder(dir, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer emb.Close()
	ctx := context.Background()
	for _, s := range sets.Sets {
		plain, err := evalsink.ScoreSimilarity(ctx, emb, s, evalsink.ScaleAngular)
		if err != nil {
			t.Fatal(err)
		}
		if err := emb.SetAdaptation(evalsink.IdentityAdaptation(24)); err != nil {
			t.Fatal(err)
		}
		same, err := evalsink.ScoreSimilarity(ctx, emb, s, evalsink.ScaleAngular)
		if err != nil {
			t.Fatal(err)
		}
		if !slices.Equal(plain.Pred, same.Pred) {
			t.Errorf("%s: the identity adaptation changes the predictions", s.Dataset)
		}
		p, err := adapt.Embeddings(ctx, emb, s)
		if err != nil {
			t.Fatal(err)
		}
		if got, want := adapt.Pearson(p, evalsink.IdentityAdaptation(24)), adapt.Pearson(p, nil); got != want {
			t.Errorf("%s: identity %+v, out of the box %+v", s.Dataset, got, want)
		}
		if err := emb.SetAdaptation(nil); err != nil {
			t.Fatal(err)
		}
	}
	if err := emb.SetAdaptation(evalsink.IdentityAdaptation(5)); err == nil {
		t.Error("an adaptation of 5 components accepted for a model of 24")
	}
}

// TestAdaptationStorage: saved and loaded back, the same W and record;
// the hash is the file's; a checkpoint without one, or whose model is not
// the one it was trained for, is refused with a clear error.
func TestAdaptationStorage(t *testing.T) {
	sets := evaltest.LoadSets(t, fixtures.FixtureSets(t))
	root := t.TempDir()
	vocab := evaltest.Vocabulary(sets, 0)
	dirA, dirB := evaltest.Checkpoint(t, root, "a", vocab, 1), evaltest.Checkpoint(t, root, "b", vocab, 2)
	if _, err := evalsink.LoadAdaptation(dirA); !errors.Is(err, evalsink.ErrNoAdaptation) || !strings.Contains(err.Error(), "parastream adapt --checkpoint") {
		t.Fatalf("no adaptation: got %v, want ErrNoAdaptation telling to run parastream adapt", err)
	}
	ownHash := func(dir string) string {
		data, err := os.ReadFile(filepath.Join(dir, "model.safetensors"))
		if err != nil {
			t.Fatal(err)
		}
		s := sha256.Sum256(data)
		return hex.EncodeToString(s[:])
	}
	a := evalsink.IdentityAdaptation(24)
	for i := range a.W {
		a.W[i] += float32(i%7) / 100
	}
	a.ModelHash = ownHash(dirA)
	a.Info = evalsink.AdaptInfo{Adaptation: evalsink.AdaptationLinear, ModelHash: a.ModelHash, TrainPairs: 9,
		DevBefore: evalsink.AdaptFigures{Angular: 50, Cosine: 49}, DevAfter: evalsink.AdaptFigures{Angular: 60, Cosine: 59.5},
		Chosen: evalsink.AdaptHyper{LearningRate: 1e-3, Epochs: 4, Batch: 64}}
	if err := evalsink.SaveAdaptation(dirA, a); err != nil {
		t.Fatal(err)
	}
	got, err := evalsink.LoadAdaptation(dirA)
	if err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile(filepath.Join(dirA, evalsink.AdaptFile))
	if err != nil {
		t.Fatal(err)
	}
	fileHash := sha256.Sum256(data)
	if !slices.Equal(got.W, a.W) || got.Dim != 24 || got.Name != evalsink.AdaptationLinear || got.Hash != hex.EncodeToString(fileHash[:]) || got.Hash != a.Hash ||
		got.ModelHash != a.ModelHash || got.Info.DevAfter != a.Info.DevAfter || got.Info.Chosen != a.Info.Chosen || got.Info.TrainPairs != 9 {
		t.Errorf("round trip: got %+v, saved %+v", got, a)
	}
	// The same file beside another model is refused.
	if err := os.WriteFile(filepath.Join(dirB, evalsink.AdaptFile), data, 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := evalsink.LoadAdaptation(dirB); err == nil || !strings.Contains(err.Error(), "trained for another model") {
		t.Errorf("model hash mismatch: got %v", err)
	}
	leftovers, _ := filepath.Glob(filepath.Join(dirA, ".*.tmp"))
	if len(leftovers) > 0 {
		t.Errorf("temporary files left: %v", leftovers)
	}
}

// stsbFixture writes a small STS Benchmark train and dev in its format: a
// sentence and its copy with some words replaced, scored by the share kept.
func stsbFixture(t *testing.T, dir string) string {
	t.Helper()
	words := strings.Fields("a man woman dog cat is riding playing eating the horse guitar ball bread quickly slowly on in park street red small big old child")
	rng := rand.New(rand.NewPCG(11, 12))
	for split, n := range map[string]int{"train": 120, "dev": 60} {
		var b strings.Builder
		for i := range n {
			s := make([]string, 6+rng.IntN(4))
			for j := range s {
				s[j] = words[rng.IntN(len(words))]
			}
			o := slices.Clone(s)
			kept := len(o)
			for j := range o {
				if rng.Float64() < 0.5 {
					o[j] = words[rng.IntN(len(words))]
					kept--
				}
			}
			fmt.Fprintf(&b, "main-captions\tMSRvid\t2012test\t%04d\t%.3f\t%s.\t%s.\n", i, 5*float64(kept)/float64(len(o)), strings.Join(s, " "), strings.Join(o, " "))
		}
		if err := os.WriteFile(filepath.Join(dir, "sts-"+split+".csv"), []byte(b.String()), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	out := filepath.Join(dir, "eval")
	if _, err := pipelines.RunExtract(context.Background(), pipelines.NewExtractConfig("stsb", filepath.Join(dir, "sts-*.csv"), out), pipelines.RunOptions{}); err != nil {
		t.Fatal(err)
	}
	return out
}

// TestEvaluateAdapted: parastream adapt's function writes the adaptation
// into the checkpoint; eval with Adapt evaluates with it, its rows marked
// and under an EvalID of their own, beside the out-of-the-box column of
// the report; a checkpoint without one is refused.
func TestEvaluateAdapted(t *testing.T) {
	root := t.TempDir()
	eval := stsbFixture(t, root)
	sets := evaltest.LoadSets(t, eval)
	ck := evaltest.Checkpoint(t, root, "run-x", evaltest.Vocabulary(sets, 0), 4)
	bare := evaltest.Checkpoint(t, root, "bare", evaltest.Vocabulary(sets, 0), 4)
	ctx := context.Background()
	var log strings.Builder
	if err := adapt.Run(ctx, adapt.Config{Checkpoint: ck, Eval: eval, Epochs: 3, LearningRates: []float64{1e-2}, Lambdas: []float64{0}}, &log); err != nil {
		t.Fatal(err)
	}
	t.Log(log.String())
	if !strings.Contains(log.String(), "out of the box") {
		t.Errorf("adapt's summary lacks the out-of-the-box figure:\n%s", log.String())
	}
	a, err := evalsink.LoadAdaptation(ck)
	if err != nil {
		t.Fatal(err)
	}
	if a.Info.TrainPairs != 120 || a.Info.DevPairs != 60 || a.Info.DataHash != sets.DataHash || a.Info.DevAfter.Angular < a.Info.DevBefore.Angular {
		t.Errorf("adaptation record %+v", a.Info)
	}
	out := filepath.Join(root, "results")
	evaluate := func(adapt bool, dir string) (*evalsink.Summary, error) {
		ev, err := evalsink.NewEvaluator(ctx, evalsink.Config{Eval: eval, Out: out, Adapt: adapt, Scale: evalsink.ScaleAngular, Logger: evaltest.Logger(t)})
		if err != nil {
			t.Fatal(err)
		}
		defer ev.Close()
		return ev.Evaluate(ctx, evalsink.Target{Dir: dir, Run: "run-x"})
	}
	plain, err := evaluate(false, ck)
	if err != nil {
		t.Fatal(err)
	}
	adapted, err := evaluate(true, ck)
	if err != nil {
		t.Fatal(err)
	}
	if plain.EvalID == adapted.EvalID || !adapted.Added {
		t.Fatalf("adapted evaluation: EvalID %s (plain %s), added %v", adapted.EvalID, plain.EvalID, adapted.Added)
	}
	dev := func(rows []evalsink.Result) evalsink.Result {
		for _, r := range rows {
			if r.Dataset == "stsb/dev" {
				return r
			}
		}
		t.Fatal("no stsb/dev row")
		return evalsink.Result{}
	}
	for _, r := range plain.Rows {
		if r.Adaptation != "" {
			t.Errorf("out-of-the-box row %s marked %q", r.Dataset, r.Adaptation)
		}
	}
	for _, r := range adapted.Rows {
		if r.Adaptation != evalsink.AdaptationLinear || r.EvalID != adapted.EvalID {
			t.Errorf("adapted row %s: adaptation %q, eval id %s", r.Dataset, r.Adaptation, r.EvalID)
		}
	}
	// The evaluator's dev figure is the one adapt recorded.
	if got, want := *dev(adapted.Rows).Pearson, a.Info.DevAfter.Angular; math.Abs(got-want) > 1e-9 {
		t.Errorf("adapted stsb/dev Pearson %.6f in the rows, %.6f in adapt-sts.json", got, want)
	}
	if got, want := *dev(plain.Rows).Pearson, a.Info.DevBefore.Angular; math.Abs(got-want) > 1e-9 {
		t.Errorf("out-of-the-box stsb/dev Pearson %.6f in the rows, %.6f in adapt-sts.json", got, want)
	}
	report, err := os.ReadFile(adapted.Report)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(report), "| run-x (avg, step 0) | run-x adapted (sts-linear) (avg, step 0) |") {
		t.Errorf("the report does not show the adapted column beside the plain one:\n%s", report)
	}
	if !slices.ContainsFunc(adapted.Plots, func(p string) bool { return strings.Contains(filepath.Base(p), "scatter-run-x_adapted__sts-linear_-") }) ||
		!slices.ContainsFunc(plain.Plots, func(p string) bool { return strings.Contains(filepath.Base(p), "scatter-run-x-step") }) {
		t.Errorf("scatter plots: plain %v, adapted %v: want one each, apart", plain.Plots, adapted.Plots)
	}
	if _, err := evaluate(true, bare); !errors.Is(err, evalsink.ErrNoAdaptation) {
		t.Errorf("--adapt on a checkpoint without an adaptation: got %v", err)
	}
}

// TestAdaptationOnSharedSTSb: on the real STS Benchmark (../shared), the
// adaptation of an untrained 24-dimensional word-averaging model raises
// its dev Pearson over out of the box.
func TestAdaptationOnSharedSTSb(t *testing.T) {
	eval := fixtures.SharedSets(t)
	sets := evaltest.LoadSets(t, eval)
	ck := evaltest.Checkpoint(t, t.TempDir(), "random", evaltest.Vocabulary(sets, 0), 1)
	var log strings.Builder
	if err := adapt.Run(context.Background(), adapt.Config{Checkpoint: ck, Eval: eval, Epochs: 5}, &log); err != nil {
		t.Fatal(err)
	}
	t.Log(log.String())
	a, err := evalsink.LoadAdaptation(ck)
	if err != nil {
		t.Fatal(err)
	}
	if a.Info.TrainPairs != 5749 || a.Info.DevPairs != 1500 {
		t.Errorf("trained on %d pairs, chosen on %d: want STSb's 5749 and 1500", a.Info.TrainPairs, a.Info.DevPairs)
	}
	if a.Info.DevAfter.Angular < a.Info.DevBefore.Angular+1 {
		t.Errorf("STSb dev Pearson %.2f adapted, %.2f out of the box: want a rise of a point at least", a.Info.DevAfter.Angular, a.Info.DevBefore.Angular)
	}
}
