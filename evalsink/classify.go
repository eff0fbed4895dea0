package evalsink

import (
	"context"
	"fmt"
	"hash/fnv"
	"log/slog"
	"math"
	"math/rand/v2"
	"runtime"
	"slices"
	"strings"
	"time"

	"github.com/parastream/parastream/evalsink/metric"
)

// The classification tasks (SentEval's transfer tasks, Conneau & Kiela
// 2018): a logistic regression (metric.FitLogReg) trained on frozen sentence
// embeddings, its penalty C chosen from a grid as SentEval's three
// classifiers choose it:
//
//   - split: trained on a train set for each C, C chosen by the accuracy
//     on a dev set (SentEval's SplitClassifier; grid 2^-2 .. 2^3);
//   - k-fold: C chosen by the mean accuracy of a k-fold cross-validation
//     on the train set, then trained on all of it (KFoldClassifier; grid
//     2^-1 .. 2^5);
//   - nested: a k-fold cross-validation over the whole set, each outer
//     fold's C chosen by an inner cross-validation on the outer training
//     part (InnerKFoldClassifier; grid 2^-2 .. 2^3); every item is scored
//     once, by the fold that held it out.
//
// Folds are stratified (each class dealt evenly among them, in an order
// drawn from the seed). A tie between values of C goes to the smaller, as
// SentEval's argmax. Along a grid each fit starts from the previous
// one's solution (the optimum does not depend on it).

// classifyFolds is the folds of every cross-validation, outer and inner
// (SentEval's kfold 10).
const classifyFolds = 10

// splitGrid is the C grid of SentEval's SplitClassifier and
// InnerKFoldClassifier, 2^-2 .. 2^3; kfoldGrid that of its
// KFoldClassifier, 2^-1 .. 2^5.
func splitGrid() []float64 { return []float64{0.25, 0.5, 1, 2, 4, 8} }
func kfoldGrid() []float64 { return []float64{0.5, 1, 2, 4, 8, 16, 32} }

// Features of an item from its texts' embeddings u (and v).
const (
	// featSingle is u (SST, MR).
	featSingle = iota
	// featPair is (|u − v|, u ⊙ v): SentEval's MRPC and SICK entailment.
	featPair
	// featNLI is (u, v, |u − v|, u ⊙ v): SentEval's SNLI.
	featNLI
)

// labelled is a set's items with their features and labels.
type labelled struct {
	ids []string
	x   metric.Features
	y   []int
}

// subset returns the items at idx.
func (l labelled) subset(idx []int) labelled {
	out := labelled{x: l.x.Subset(idx), ids: make([]string, len(idx)), y: make([]int, len(idx))}
	for k, i := range idx {
		out.ids[k], out.y[k] = l.ids[i], l.y[i]
	}
	return out
}

// classifyTask is one classification task.
type classifyTask struct {
	// name names the task in the log; corpus is its sets' corpus.
	name, corpus string
	classes      int
	features     int
	// label is a pair's class, ok false for a pair without one.
	label func(Pair) (int, bool)
}

// classifyTasks returns the tasks in the order of their rows.
func classifyTasks() []classifyTask {
	binary := func(p Pair) (int, bool) { return int(p.Gold), p.Gold == 0 || p.Gold == 1 }
	nli := func(p Pair) (int, bool) { return int(p.Gold), p.Gold == 0 || p.Gold == 1 || p.Gold == 2 }
	return []classifyTask{
		{name: "SST-2", corpus: "sst", classes: 2, features: featSingle, label: binary},
		{name: "MR", corpus: "mr", classes: 2, features: featSingle, label: binary},
		{name: "MRPC", corpus: "msrp", classes: 2, features: featPair, label: binary},
		{name: "SICK-E", corpus: "sick", classes: 3, features: featPair, label: sickEntailment},
		{name: "SNLI", corpus: "snli", classes: 3, features: featNLI, label: nli},
	}
}

// sickEntailment is a SICK pair's entailment label, in SNLI's order:
// ENTAILMENT 0, NEUTRAL 1, CONTRADICTION 2.
func sickEntailment(p Pair) (int, bool) {
	i := slices.Index([]string{"ENTAILMENT", "NEUTRAL", "CONTRADICTION"}, strings.ToUpper(p.Meta["entailment"]))
	return i, i >= 0
}

// Classification is the task of the classification rows: SST-2 (trained
// on sst/train, C chosen on sst/dev, dev reported; sst/test too when
// present), MR (nested 10-fold cross-validation over all of it), MRPC
// (msrp/test when present, trained on msrp/train with C by 10-fold
// cross-validation; otherwise nested 10-fold cross-validation over
// msrp/train), SICK entailment (sick/test when present, trained on
// sick/train with C chosen on sick/trial; otherwise sick/trial, trained on
// sick/train with C by 10-fold cross-validation) and SNLI (snli/dev,
// trained on snli/train with C by 10-fold cross-validation; snli/test too
// when present, C chosen on dev). Each row is a KindClassification row
// with its accuracy (and, for two classes, the F1 of class 1) and their
// items. A task whose sets are absent gives no row.
func Classification(ctx context.Context, env TaskEnv) ([]RowFigures, error) {
	var out []RowFigures
	for _, task := range classifyTasks() {
		rows, err := task.run(ctx, env)
		if err != nil {
			return nil, fmt.Errorf("classification %s: %w", task.name, err)
		}
		out = append(out, rows...)
	}
	return out, nil
}

// set returns the task's set of split, nil when absent.
func (t classifyTask) set(sets *Sets, split string) *Set {
	for _, s := range sets.Sets {
		if s.Corpus == t.corpus && s.Split == split && len(s.Pairs) > 0 {
			return s
		}
	}
	return nil
}

// cv is how the C of a model is chosen.
type cv struct {
	grid  []float64
	folds int
	seed  uint64
	// stream names the draw of the folds.
	stream string
	log    *slog.Logger
}

// run scores the task's sets present in env.
func (t classifyTask) run(ctx context.Context, env TaskEnv) ([]RowFigures, error) {
	get := func(split string) *Set {
		if env.Sets == nil {
			return nil
		}
		return t.set(env.Sets, split)
	}
	train, dev, test := get("train"), get("dev"), get("test")
	if t.corpus == "sick" {
		dev = get("trial")
	}
	// last keeps the test row of a split protocol (its dev row is not
	// the task's figure), none when the test set had no labelled item.
	last := func(r []RowFigures, err error) ([]RowFigures, error) {
		if err != nil || len(r) < 2 {
			return nil, err
		}
		return r[1:], nil
	}
	switch {
	case t.corpus == "sst" && train != nil && dev != nil:
		return t.split(ctx, env, train, dev, test)
	case t.corpus == "mr" && test != nil:
		return t.nested(ctx, env, test)
	case t.corpus == "msrp" && train != nil && test != nil:
		return t.kfold(ctx, env, train, test)
	case t.corpus == "msrp" && train != nil:
		return t.nested(ctx, env, train)
	case t.corpus == "sick" && train != nil && dev != nil && test != nil:
		return last(t.split(ctx, env, train, dev, test))
	case t.corpus == "sick" && train != nil && dev != nil:
		return t.kfold(ctx, env, train, dev)
	case t.corpus == "snli" && train != nil && dev != nil:
		rows, err := t.kfold(ctx, env, train, dev)
		if err != nil || test == nil {
			return rows, err
		}
		r, err := last(t.split(ctx, env, train, dev, test))
		return append(rows, r...), err
	}
	return nil, nil
}

// info logs at info level when the environment has a logger.
func (env TaskEnv) info(msg string, args ...any) {
	if env.Log != nil {
		env.Log.Info(msg, args...)
	}
}

// data embeds a set's texts and returns its labelled items (pairs without
// a label are left out, and logged).
func (t classifyTask) data(ctx context.Context, env TaskEnv, s *Set) (labelled, error) {
	var l labelled
	var as, bs [][]string
	skipped := 0
	for _, p := range s.Pairs {
		c, ok := t.label(p)
		if !ok {
			skipped++
			continue
		}
		l.ids, l.y = append(l.ids, p.ID), append(l.y, c)
		as, bs = append(as, p.A), append(bs, p.B)
	}
	if skipped > 0 && env.Log != nil {
		env.Log.Warn("classification: pairs without a label left out", "task", t.name, "set", s.Dataset, "pairs", skipped)
	}
	if len(l.y) == 0 {
		return l, nil
	}
	u, err := env.Emb.Embed(ctx, as)
	if err != nil {
		return l, fmt.Errorf("embedding %s: %w", s.Dataset, err)
	}
	var v [][]float32
	if t.features != featSingle {
		if v, err = env.Emb.Embed(ctx, bs); err != nil {
			return l, fmt.Errorf("embedding %s: %w", s.Dataset, err)
		}
	}
	l.x = classifyFeatures(t.features, u, v)
	return l, nil
}

// classifyFeatures returns the features of each item from its texts'
// embeddings.
func classifyFeatures(kind int, u, v [][]float32) metric.Features {
	d := 0
	if len(u) > 0 {
		d = len(u[0])
	}
	width := map[int]int{featSingle: d, featPair: 2 * d, featNLI: 4 * d}[kind]
	x := metric.NewFeatures(len(u), width)
	for i := range u {
		row := x.Row(i)
		for j := range d {
			a := float64(u[i][j])
			switch kind {
			case featSingle:
				row[j] = a
			case featPair:
				b := float64(v[i][j])
				row[j], row[d+j] = math.Abs(a-b), a*b
			case featNLI:
				b := float64(v[i][j])
				row[j], row[d+j], row[2*d+j], row[3*d+j] = a, b, math.Abs(a-b), a*b
			}
		}
	}
	return x
}

// split trains on train for each C of the split grid, chooses C by the
// accuracy on dev, and reports dev, and test when there is one, scored by
// the model of that C.
func (t classifyTask) split(ctx context.Context, env TaskEnv, trainSet, devSet, testSet *Set) ([]RowFigures, error) {
	start := time.Now()
	train, err := t.data(ctx, env, trainSet)
	if err != nil {
		return nil, err
	}
	dev, err := t.data(ctx, env, devSet)
	if err != nil || len(train.y) == 0 || len(dev.y) == 0 {
		return nil, err
	}
	grid := splitGrid()
	models, err := fitGrid(ctx, train.x, train.y, grid, fitOptions{classes: t.classes, workers: runtime.GOMAXPROCS(0), log: env.Log})
	if err != nil {
		return nil, err
	}
	best, bestAcc := 0, -1.0
	accs := make([]string, len(models))
	for i, m := range models {
		acc := accuracyOf(m.predict(dev.x), dev.y)
		if acc > bestAcc {
			best, bestAcc = i, acc
		}
		accs[i] = fmt.Sprintf("%.2f", 100*acc)
	}
	rows := []RowFigures{t.row(env.Base, devSet, dev, models[best].predict(dev.x))}
	env.info("classification", "task", t.name, "set", devSet.Dataset, "protocol", "split", "train", len(train.y), "items", len(dev.y),
		"C", grid[best], "accuracy", fmt.Sprintf("%.2f", *rows[0].Row.Accuracy), "dev_by_C", strings.Join(accs, " "),
		"elapsed", time.Since(start).Round(time.Millisecond))
	if testSet == nil {
		return rows, nil
	}
	test, err := t.data(ctx, env, testSet)
	if err != nil || len(test.y) == 0 {
		return rows, err
	}
	rows = append(rows, t.row(env.Base, testSet, test, models[best].predict(test.x)))
	env.info("classification", "task", t.name, "set", testSet.Dataset, "protocol", "split", "train", len(train.y), "items", len(test.y),
		"C", grid[best], "accuracy", fmt.Sprintf("%.2f", *rows[1].Row.Accuracy))
	return rows, nil
}

// kfold chooses C by 10-fold cross-validation on train over the k-fold
// grid, trains on all of train with it and reports test.
func (t classifyTask) kfold(ctx context.Context, env TaskEnv, trainSet, testSet *Set) ([]RowFigures, error) {
	start := time.Now()
	train, err := t.data(ctx, env, trainSet)
	if err != nil {
		return nil, err
	}
	test, err := t.data(ctx, env, testSet)
	if err != nil || len(train.y) == 0 || len(test.y) == 0 {
		return nil, err
	}
	c := cv{grid: kfoldGrid(), folds: classifyFolds, seed: env.Seed, stream: t.name + "/" + trainSet.Dataset, log: env.Log}
	best, err := c.choose(ctx, train, t.classes, runtime.GOMAXPROCS(0))
	if err != nil {
		return nil, err
	}
	m, err := fitGrid(ctx, train.x, train.y, []float64{best}, fitOptions{classes: t.classes, workers: runtime.GOMAXPROCS(0), log: env.Log})
	if err != nil {
		return nil, err
	}
	row := t.row(env.Base, testSet, test, m[0].predict(test.x))
	env.info("classification", "task", t.name, "set", testSet.Dataset, "protocol", "k-fold", "train", len(train.y), "items", len(test.y),
		"C", best, "accuracy", fmt.Sprintf("%.2f", *row.Row.Accuracy), "elapsed", time.Since(start).Round(time.Millisecond))
	return []RowFigures{row}, nil
}

// nested scores every item of s by a nested 10-fold cross-validation.
func (t classifyTask) nested(ctx context.Context, env TaskEnv, s *Set) ([]RowFigures, error) {
	start := time.Now()
	all, err := t.data(ctx, env, s)
	if err != nil || len(all.y) == 0 {
		return nil, err
	}
	outer := cv{grid: splitGrid(), folds: classifyFolds, seed: env.Seed, stream: t.name + "/" + s.Dataset, log: env.Log}
	folds := outer.assign(all.y)
	pred := make([]int, len(all.y))
	chosen := make([]float64, len(folds))
	err = parallel(ctx, len(folds), runtime.GOMAXPROCS(0), func(f int) error {
		trainIdx := complement(folds[f], len(all.y))
		train, held := all.subset(trainIdx), all.subset(folds[f])
		inner := outer
		inner.stream = fmt.Sprintf("%s/outer-%d", outer.stream, f)
		c, err := inner.choose(ctx, train, t.classes, 1)
		if err != nil {
			return err
		}
		m, err := fitGrid(ctx, train.x, train.y, []float64{c}, fitOptions{classes: t.classes, workers: 1, log: env.Log})
		if err != nil {
			return err
		}
		for k, p := range m[0].predict(held.x) {
			pred[folds[f][k]] = p
		}
		chosen[f] = c
		return nil
	})
	if err != nil {
		return nil, err
	}
	row := t.row(env.Base, s, all, pred)
	env.info("classification", "task", t.name, "set", s.Dataset, "protocol", "nested 10-fold", "items", len(all.y),
		"C", fmt.Sprint(chosen), "accuracy", fmt.Sprintf("%.2f", *row.Row.Accuracy), "elapsed", time.Since(start).Round(time.Millisecond))
	return []RowFigures{row}, nil
}

// row is the classification row of set s scored by pred, with its
// figures.
func (t classifyTask) row(base Result, s *Set, l labelled, pred []int) RowFigures {
	r := base
	r.Corpus, r.Split, r.Dataset, r.Kind, r.Pairs = s.Corpus, s.Split, s.Dataset, KindClassification, int64(len(l.y))
	acc := metric.Figure{Column: "accuracy", Metric: metric.MetricMean}
	f1 := metric.Figure{Column: "f1", Metric: metric.MetricF1}
	for i, id := range l.ids {
		acc.Items = append(acc.Items, metric.Item{ID: id, Pred: b2f(pred[i] == l.y[i])})
		f1.Items = append(f1.Items, metric.Item{ID: id, Pred: float64(pred[i]), Gold: float64(l.y[i])})
	}
	r.Accuracy = ptr(100 * acc.Value())
	figs := []metric.Figure{acc}
	if t.classes == 2 {
		r.F1 = ptr(100 * f1.Value())
		figs = append(figs, f1)
	}
	return RowFigures{Row: r, Figures: figs}
}

// classifier is a fitted model over the classes its training items had:
// a logistic regression over two or more, a constant over one.
type classifier struct {
	m *metric.LogReg
	// classes maps the model's classes to the task's.
	classes []int
}

func (c classifier) predict(x metric.Features) []int {
	if c.m == nil {
		out := make([]int, x.Rows)
		for i := range out {
			out[i] = c.classes[0]
		}
		return out
	}
	out := c.m.Predict(x)
	for i, k := range out {
		out[i] = c.classes[k]
	}
	return out
}

// fitOptions are the settings of fitGrid: the task's classes, the
// goroutines of each fit, and where a fit that stopped at its iteration
// limit is reported (nil: nowhere).
type fitOptions struct {
	classes, workers int
	log              *slog.Logger
}

// fitGrid fits a model for each C of grid (increasing), each from the
// last one's solution, on the classes present in y.
func fitGrid(ctx context.Context, x metric.Features, y []int, grid []float64, o fitOptions) ([]classifier, error) {
	var present []int
	index := make([]int, o.classes)
	for c := range o.classes {
		if slices.Contains(y, c) {
			index[c] = len(present)
			present = append(present, c)
		}
	}
	out := make([]classifier, len(grid))
	if len(present) < 2 {
		for i := range out {
			out[i] = classifier{classes: present}
		}
		return out, nil
	}
	yy := y
	if len(present) < o.classes {
		yy = make([]int, len(y))
		for i, c := range y {
			yy[i] = index[c]
		}
	}
	var warm *metric.LogReg
	for i, c := range grid {
		m, err := metric.FitLogReg(ctx, x, yy, len(present), metric.LogRegConfig{C: c, Warm: warm, Workers: o.workers})
		if err != nil {
			return nil, err
		}
		if !m.Converged && o.log != nil {
			o.log.Warn("classification: logistic regression stopped at its iteration limit", "C", c, "items", x.Rows,
				"features", x.Cols, "iterations", m.Iterations, "gradient", m.GradNorm)
		}
		out[i], warm = classifier{m: m, classes: present}, m
	}
	return out, nil
}

// choose returns the C of the grid with the best mean accuracy over a
// stratified k-fold cross-validation of l (ties: the smaller C), the
// folds fitted on workers goroutines.
func (c cv) choose(ctx context.Context, l labelled, classes, workers int) (float64, error) {
	o := fitOptions{classes: classes, workers: 1, log: c.log}
	folds := c.assign(l.y)
	// acc[f][g]: fold f's accuracy with the grid's C g.
	acc := make([][]float64, len(folds))
	err := parallel(ctx, len(folds), workers, func(f int) error {
		train, held := l.subset(complement(folds[f], len(l.y))), l.subset(folds[f])
		models, err := fitGrid(ctx, train.x, train.y, c.grid, o)
		if err != nil {
			return err
		}
		acc[f] = make([]float64, len(c.grid))
		for g, m := range models {
			acc[f][g] = accuracyOf(m.predict(held.x), held.y)
		}
		return nil
	})
	if err != nil {
		return 0, err
	}
	best, bestAcc := 0, -1.0
	for g := range c.grid {
		var mean float64
		for f := range folds {
			mean += acc[f][g] / float64(len(folds))
		}
		if mean > bestAcc+1e-12 {
			best, bestAcc = g, mean
		}
	}
	return c.grid[best], nil
}

// assign deals the items with labels y into c.folds stratified folds (as
// many as the items, when fewer): each class's items in an order drawn
// from the seed and the stream, dealt in turn, each class starting at the
// fold after the last one dealt to, so that fold sizes differ by one at
// most. Each fold lists its items in increasing order.
func (c cv) assign(y []int) [][]int {
	k := min(c.folds, len(y))
	h := fnv.New64a()
	h.Write([]byte(c.stream))
	rng := rand.New(rand.NewPCG(c.seed, h.Sum64()))
	byClass := map[int][]int{}
	var classes []int
	for i, l := range y {
		if _, ok := byClass[l]; !ok {
			classes = append(classes, l)
		}
		byClass[l] = append(byClass[l], i)
	}
	slices.Sort(classes)
	folds := make([][]int, k)
	next := 0
	for _, l := range classes {
		items := byClass[l]
		rng.Shuffle(len(items), func(i, j int) { items[i], items[j] = items[j], items[i] })
		for _, i := range items {
			folds[next] = append(folds[next], i)
			next = (next + 1) % k
		}
	}
	for _, f := range folds {
		slices.Sort(f)
	}
	return folds
}

// complement returns 0..n-1 less the sorted indexes in idx.
func complement(idx []int, n int) []int {
	out := make([]int, 0, n-len(idx))
	j := 0
	for i := range n {
		if j < len(idx) && idx[j] == i {
			j++
			continue
		}
		out = append(out, i)
	}
	return out
}

func accuracyOf(pred, gold []int) float64 {
	ok := 0
	for i := range pred {
		if pred[i] == gold[i] {
			ok++
		}
	}
	return float64(ok) / float64(len(pred))
}

// classificationLabel is how the report names a classification row: the
// set and how its model was trained and its C chosen.
func classificationLabel(r Result) string {
	if r.Kind == KindClassificationHead {
		return r.Dataset + " (the multitask run's NLI head, trained with the encoder)"
	}
	if r.Kind != KindClassification {
		return r.Dataset
	}
	split := "split: trained on train, C (2^-2..2^3) chosen on dev"
	kfold := "trained on train, C (2^-1..2^5) by 10-fold cross-validation on train"
	nested := "10-fold cross-validation, each fold's C (2^-2..2^3) by an inner 10-fold cross-validation"
	switch r.Corpus + "/" + r.Split {
	case "sst/dev":
		return "SST-2 dev (" + split + ")"
	case "sst/test":
		return "SST-2 test (" + split + ")"
	case "mr/test":
		return "MR, " + nested
	case "msrp/train":
		return "MRPC train, " + nested
	case "msrp/test":
		return "MRPC test (" + kfold + ")"
	case "sick/trial":
		return "SICK entailment trial (" + kfold + ")"
	case "sick/test":
		return "SICK entailment test (trained on train, C (2^-2..2^3) chosen on trial)"
	case "snli/dev":
		return "SNLI dev (" + kfold + ")"
	case "snli/test":
		return "SNLI test (trained on train, C (2^-2..2^3) chosen on dev)"
	}
	return r.Dataset
}
