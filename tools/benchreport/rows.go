package main

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
)

// The peers' install hints, for the rows of a peer that is not installed.
const (
	noKcat    = "kcat not installed (apt-get install kcat)"
	noB3sum   = "b3sum not installed (apt-get install b3sum)"
	noSklearn = "scikit-learn not installed (apt-get install python3-sklearn python3-scipy)"
	noTorch   = "PyTorch not installed (apt-get install python3-torch)"
)

// PolyAI's conversational-datasets builds its Reddit dataset with a Beam
// pipeline on Dataflow; its reddit/README.md (commit 50f626a) gives, for
// the comments up to 2019: 3,680,746,776 comments, "Total vCPU time:
// 625.507 vCPU hr".
const (
	polyAIComments  = 3_680_746_776
	polyAIVCPUHours = 625.507
)

// polyAIRate is PolyAI's Reddit pipeline's comments per vCPU-second.
func polyAIRate() float64 { return polyAIComments / (polyAIVCPUHours * 3600) }

// missing is the note of a parastream figure that a suite did not give.
func missing(suiteErr, what string) string {
	if suiteErr != "" {
		return "failed: " + suiteErr
	}
	return "not measured: " + what + " gave no figure"
}

// costs names a benchmark's metrics of a row's peak RSS and allocations:
// rss (MiB) and allocs, the latter divided by div (the units of work in an
// op, for allocs/op; 1 for a metric already per unit), per naming the unit.
type costs struct {
	rss, allocs, per string
	div              float64
}

// withCosts sets r's peak RSS and allocations from the metrics c names of
// benchmark name; a metric the benchmark did not report is left out.
func withCosts(r Row, bs []Benchmark, name string, c costs) Row {
	if v, _ := Values(bs, name, c.rss); len(v) > 0 {
		r.PeakRSSMiB = Summarize(v)
	}
	if v, _ := Values(bs, name, c.allocs); len(v) > 0 && c.div > 0 {
		r.Allocs, r.AllocsPer = Summarize(v).Scale(1/c.div), c.per
	}
	return r
}

// stepCosts are the training benchmarks' costs: allocs/op over the pairs
// of a step.
func stepCosts() costs {
	return costs{rss: "peak-RSS-MiB", allocs: "allocs/op", per: "pair", div: trainBatch}
}

// extractRows are the Reddit extraction's rows from BenchmarkExtractReddit.
func extractRows(bs []Benchmark, comments int64, suiteErr string) []Row {
	const name = "BenchmarkExtractReddit"
	pipe, procs := Values(bs, name, "pipeline-comments/s")
	loop, _ := Values(bs, name, "loop-comments/s")
	ratio, _ := Values(bs, name, "pipeline/loop")
	input := fmt.Sprintf("%s generated Reddit comments (zstd JSON), Beam on Prism", num(float64(comments)))
	perCore := Row{
		Suite: "ExtractReddit", What: "Reddit extraction, comments/s per core", Input: input, Unit: "comments/s",
		Peer:       "PolyAI conversational-datasets (Beam on Dataflow)",
		PeerFigure: Summarize([]float64{polyAIRate()}),
		PeerNote:   "quoted: 3,680,746,776 comments in 625.507 vCPU-hours (its reddit/README.md)",
		RatioHow:   "over the quoted figure",
	}
	if s := Summarize(pipe); s != nil && procs > 0 {
		perCore.Parastream = s.Scale(1 / float64(procs))
		perCore.Input += fmt.Sprintf(", GOMAXPROCS %d", procs)
	} else {
		perCore.ParastreamNote = missing(suiteErr, name)
	}
	vsLoop := Row{
		Suite: "ExtractReddit", What: "Reddit extraction, pipeline / plain Go loop", Input: input, Unit: "comments/s",
		Parastream: Summarize(pipe), Peer: "a plain Go loop doing the parse, filter and tokenise alone, same run",
		PeerFigure: Summarize(loop), Ratio: Summarize(ratio), RatioHow: "each run's own",
	}
	if vsLoop.Parastream == nil {
		vsLoop.ParastreamNote = missing(suiteErr, name)
	}
	// The benchmark's peak RSS is the pipeline's: the loop keeps nothing.
	perCore = withCosts(perCore, bs, name, costs{"peak-RSS-MiB", "pipeline-allocs/comment", "comment", 1})
	vsLoop = withCosts(vsLoop, bs, name, costs{"peak-RSS-MiB", "pipeline-allocs/comment", "comment", 1})
	return []Row{withRatio(perCore), withRatio(vsLoop)}
}

// rssRows is the extraction's peak RSS over repeated runs of `parastream
// extract`, beside the size of its input.
func rssRows(rssMiB []float64, comments int64, jsonBytes int64, suiteErr string) []Row {
	r := Row{
		Suite: "ExtractRSS", What: "Reddit extraction, peak RSS (`parastream extract --corpus reddit`)",
		Input:         fmt.Sprintf("%s generated comments, %s MiB of JSON (zstd)", num(float64(comments)), num(float64(jsonBytes)/(1<<20))),
		Unit:          "MiB",
		LowerIsBetter: true,
		Parastream:    Summarize(rssMiB),
		Peer:          "no peer: the input's size (uncompressed JSON)",
	}
	if jsonBytes > 0 {
		r.PeerFigure = Summarize([]float64{float64(jsonBytes) / (1 << 20)})
		r.RatioHow = "peak RSS / input size"
	}
	if r.Parastream == nil {
		r.ParastreamNote = missing(suiteErr, "parastream extract")
	}
	return []Row{withRatio(r)}
}

// streamRows are the publish and consume rows from BenchmarkStreamVsKcat;
// peerNote is set when kcat is not installed. The row beside b3sum and
// kcat says that b3sum is not installed where the benchmark ran without
// it (the suite's other figures there, that one not).
func streamRows(bs []Benchmark, peerNote, suiteErr string) []Row {
	const name = "BenchmarkStreamVsKcat"
	input := "200,000 featurized rows in 16 shards, the embedded broker"
	// stage is the benchmark's name of the part measured: its figures are
	// <stage>-MB/s, <stage>-allocs/row and <stage>-peak-RSS-MiB.
	// absent, where set, is the row's note when the benchmark ran without
	// the peer's tool (its other rows measured).
	type pair struct{ what, stage, peer, peerMetric, ratio, absent string }
	pairs := []pair{
		{"publish (shards to acknowledged messages)", "publish", "kcat -P (librdkafka), acks=all", "kcat-produce-MB/s", "publish/kcat", ""},
		{"publish beside the same work by the peers (every shard's BLAKE3 checked, then the messages sent)", "publish", "b3sum --check of the shards (BLAKE3's Rust code, every core), then kcat -P, acks=all", "b3sum-kcat-produce-MB/s", "publish/b3sum-kcat", noB3sum},
		{"consume-wire (the consumer's fetch path, no decoding)", "consume-wire", "kcat -C with fetch.wait.max.ms=10 (the fair pair)", "kcat-consume-nowait-MB/s", "consume-wire/nowait/kcat", ""},
		{"consume with decode, every column (rows handed out)", "consume", "kcat -C with fetch.wait.max.ms=10", "kcat-consume-nowait-MB/s", "consume/nowait/kcat", ""},
		{"consume with decode, the trainer's columns (rows handed to the trainer)", "consume-train", "kcat -C with fetch.wait.max.ms=10", "kcat-consume-nowait-MB/s", "consume-train/nowait/kcat", ""},
		{"consume-wire beside kcat's default wait", "consume-wire", "kcat -C with librdkafka's default 500 ms wait at the end", "kcat-consume-MB/s", "consume-wire/kcat", ""},
	}
	var rows []Row
	for _, p := range pairs {
		ps, _ := Values(bs, name, p.stage+"-MB/s")
		peer, _ := Values(bs, name, p.peerMetric)
		ratio, _ := Values(bs, name, p.ratio)
		r := Row{Suite: "StreamVsKcat", What: p.what, Input: input, Unit: "MB/s", Parastream: Summarize(ps),
			Peer: p.peer, PeerFigure: Summarize(peer), Ratio: Summarize(ratio), RatioHow: "each run's own"}
		if r.Ratio == nil {
			r.RatioHow = ""
		}
		if r.Parastream == nil {
			switch {
			case peerNote != "":
				r.ParastreamNote = "not measured: " + name + " needs kcat"
			default:
				r.ParastreamNote = missing(suiteErr, name)
			}
		}
		switch {
		case r.PeerFigure == nil && peerNote != "":
			r.PeerNote = peerNote
		case r.PeerFigure == nil && r.Parastream != nil && p.absent != "":
			r.PeerNote = p.absent
		}
		r = withCosts(r, bs, name, costs{p.stage + "-peak-RSS-MiB", p.stage + "-allocs/row", "row", 1})
		rows = append(rows, withRatio(r))
	}
	return rows
}

// TorchTrain is what scripts/train_bench.py --torch-only --json prints.
type TorchTrain struct {
	Torch   string `json:"torch"`
	Threads int    `json:"threads"`
	Models  map[string]struct {
		Steps      int       `json:"steps"`
		PairsPerS  []float64 `json:"pairs_per_s"`
		PeakRSSMiB []float64 `json:"peak_rss_mib"`
	} `json:"models"`
}

// TorchVocab is what scripts/vocab_bench.py --torch-only --json prints.
type TorchVocab struct {
	Torch   string `json:"torch"`
	Threads int    `json:"threads"`
	Sizes   map[string]struct {
		PairsPerS []float64 `json:"pairs_per_s"`
	} `json:"sizes"`
}

// torchPeer is the figure of a PyTorch model (nil without one) and the
// peer's note.
func torchPeer(tt *TorchTrain, model, peerNote string) (*Summary, string) {
	if tt == nil {
		if peerNote == "" {
			peerNote = "not measured"
		}
		return nil, peerNote
	}
	m, ok := tt.Models[model]
	if !ok {
		return nil, "scripts/train_bench.py gave no figure for " + model
	}
	return Summarize(m.PairsPerS), ""
}

// trainPeer is a PyTorch variant a training row is compared with: its
// model name in scripts/train_bench.py and how the row names it.
type trainPeer struct{ model, label string }

// trainPeers are the peers of each encoder's rows, the headline first: for
// avg, PyTorch's strongest variant of the sparse step (a sparse embedding
// gradient and SparseAdam), then the same model with dense Adam; for
// lstmavg and gran, the same model (its recurrence a Python loop, dense
// Adam), then torch.nn.LSTM's fused recurrence as a speed bar.
func trainPeers(enc string) []trainPeer {
	if enc == "avg" {
		return []trainPeer{
			{"avg-sparseadam", "sparse embedding gradient, SparseAdam (the strongest PyTorch variant of the sparse step)"},
			{"avg", "the same model with dense Adam (a weaker variant: not a headline)"},
		}
	}
	return []trainPeer{
		{enc, "the same model, its recurrence a Python loop, dense Adam"},
		{enc + "-nnlstm", "torch.nn.LSTM's fused recurrence (no peepholes: not the same model, a speed bar)"},
	}
}

// trainRows are BenchmarkTrainStep's rows beside PyTorch (tt nil: not
// measured, peerNote says why): each encoder beside each of its peers
// (trainPeers), each row naming the variant.
func trainRows(bs []Benchmark, tt *TorchTrain, peerNote, suiteErr string) []Row {
	var rows []Row
	for _, enc := range []string{"avg", "lstmavg", "gran"} {
		name := "BenchmarkTrainStep/" + enc
		ps, _ := Values(bs, name, "pairs/s")
		for _, p := range trainPeers(enc) {
			r := Row{Suite: "TrainStep", What: "training step, " + enc,
				Input: "batch 100, dim 300, 20,000 words, STS 2012 lengths, margin/max, Adam (parastream's sparse update)", Unit: "pairs/s",
				Parastream: Summarize(ps), Peer: torchLabel(tt) + ": " + p.label}
			r.PeerFigure, r.PeerNote = torchPeer(tt, p.model, peerNote)
			if r.Parastream == nil {
				r.ParastreamNote = missing(suiteErr, name)
			}
			r = withCosts(r, bs, name, stepCosts())
			rows = append(rows, withRatio(r))
		}
	}
	return rows
}

// trainModels are the scripts/train_bench.py models trainRows reads.
func trainModels() string {
	var ms []string
	for _, enc := range []string{"avg", "lstmavg", "gran"} {
		for _, p := range trainPeers(enc) {
			ms = append(ms, p.model)
		}
	}
	return strings.Join(ms, ",")
}

// torchLabel names the PyTorch peer.
func torchLabel(tt *TorchTrain) string {
	if tt == nil {
		return "PyTorch CPU (scripts/train_bench.py)"
	}
	return fmt.Sprintf("PyTorch %s CPU, %d threads (scripts/train_bench.py)", tt.Torch, tt.Threads)
}

// vocabRows are BenchmarkVocabScaling's sparse rows at sizes beside
// PyTorch's SparseAdam.
func vocabRows(bs []Benchmark, sizes []int, tv *TorchVocab, peerNote, suiteErr string) []Row {
	var rows []Row
	for _, v := range sizes {
		name := fmt.Sprintf("BenchmarkVocabScaling/vocab=%d", v)
		ps, _ := Values(bs, name, "pairs/s")
		r := Row{Suite: "VocabScaling", What: fmt.Sprintf("training step at %s words (sparse update)", num(float64(v))),
			Input: "avg, batch 100, dim 300, STS 2012 lengths", Unit: "pairs/s", Parastream: Summarize(ps),
			Peer: "PyTorch CPU, sparse embedding gradient and SparseAdam (scripts/vocab_bench.py)"}
		switch {
		case tv == nil:
			r.PeerNote = peerNote
			if r.PeerNote == "" {
				r.PeerNote = "not measured"
			}
		default:
			r.Peer = fmt.Sprintf("PyTorch %s CPU, %d threads, SparseAdam (scripts/vocab_bench.py)", tv.Torch, tv.Threads)
			if s, ok := tv.Sizes[strconv.Itoa(v)]; ok {
				r.PeerFigure = Summarize(s.PairsPerS)
			} else {
				r.PeerNote = "scripts/vocab_bench.py gave no figure at this size"
			}
		}
		if r.Parastream == nil {
			r.ParastreamNote = missing(suiteErr, name)
		}
		r = withCosts(r, bs, name, stepCosts())
		rows = append(rows, withRatio(r))
	}
	return append(rows, vocabRatioRow(bs, sizes, suiteErr))
}

// trainBatch is the training benchmarks' batch: the pairs of an op (a step).
const trainBatch = 100

// vocabRatioRow is the sparse step's rate at the largest vocabulary of
// sizes over its rate at the smallest, each run's own (the runs of go test
// -count pair up in order): 1 when the step's cost does not grow with the
// vocabulary.
func vocabRatioRow(bs []Benchmark, sizes []int, suiteErr string) Row {
	lo, hi := sizes[0], sizes[len(sizes)-1]
	name := func(v int) string { return fmt.Sprintf("BenchmarkVocabScaling/vocab=%d", v) }
	hiRates, _ := Values(bs, name(hi), "pairs/s")
	loRates, _ := Values(bs, name(lo), "pairs/s")
	var ratios []float64
	for i := range min(len(hiRates), len(loRates)) {
		if loRates[i] > 0 {
			ratios = append(ratios, hiRates[i]/loRates[i])
		}
	}
	r := Row{Suite: "VocabScaling", What: fmt.Sprintf("training step at %s words over %s (sparse update; 1: flat in the vocabulary)", num(float64(hi)), num(float64(lo))),
		Input: "avg, batch 100, dim 300, STS 2012 lengths", Unit: "pairs/s",
		Parastream: Summarize(hiRates), Peer: fmt.Sprintf("parastream at %s words, same run", num(float64(lo))), PeerFigure: Summarize(loRates),
		Ratio: Summarize(ratios), RatioHow: "each run's own"}
	if r.Ratio == nil {
		r.RatioHow = ""
	}
	if r.Parastream == nil {
		r.ParastreamNote = missing(suiteErr, name(hi))
	}
	return withCosts(r, bs, name(hi), stepCosts())
}

// feedRows is BenchmarkRunFeed's end-to-end rate beside PyTorch's avg
// step rate from batches in memory.
func feedRows(bs []Benchmark, variant string, tt *TorchTrain, peerNote, suiteErr string) []Row {
	name := "BenchmarkRunFeed/" + variant
	ps, _ := Values(bs, name, "examples/s")
	r := Row{Suite: "RunFeed", What: "training end to end from the embedded broker (" + variant + ")",
		Input: "avg, 20,000 rows (200 steps of 100), dim 300, a checkpoint every 50 steps", Unit: "examples/s",
		Parastream: Summarize(ps), Peer: torchLabel(tt) + ": avg steps from batches in memory, no feed, dense Adam (not the strongest variant: see the sparse-step rows)"}
	r.PeerFigure, r.PeerNote = torchPeer(tt, "avg", peerNote)
	if r.Parastream == nil {
		r.ParastreamNote = missing(suiteErr, name)
	}
	r = withCosts(r, bs, name, costs{"peak-RSS-MiB", "allocs/op", "example", feedRows20k})
	return []Row{withRatio(r)}
}

// feedRows20k are the examples of one op of BenchmarkRunFeed.
const feedRows20k = 20_000

// NMFResult is what scripts/nmf_bench.py --json prints.
type NMFResult struct {
	Sklearn string   `json:"sklearn"`
	Scipy   string   `json:"scipy"`
	Numpy   string   `json:"numpy"`
	Quick   bool     `json:"quick"`
	Runs    []NMFRun `json:"runs"`
}

// NMFRun is one run of one matrix of scripts/nmf_bench.py.
type NMFRun struct {
	Matrix string   `json:"matrix"`
	Shape  string   `json:"shape"`
	NNZ    int64    `json:"nnz"`
	K      int      `json:"k"`
	Iters  int      `json:"iters"`
	SkSecs float64  `json:"sk_secs"`
	PsTo   *float64 `json:"ps_to"`
	Ratio  *float64 `json:"ratio"`
	// PsTo1 and Ratio1 are parastream's time to scikit-learn's error on
	// one thread (GOMAXPROCS=1), scikit-learn's cd solver's count, and its
	// ratio; Workers is the threads of PsTo (absent in older output).
	PsTo1   *float64 `json:"ps_to_1"`
	Ratio1  *float64 `json:"ratio_1"`
	Workers int      `json:"workers"`
}

// nmfRows are scripts/nmf_bench.py's rows, one a matrix: parastream's time
// to scikit-learn's error beside scikit-learn's time.
func nmfRows(res *NMFResult, peerNote, suiteErr string) []Row {
	if res == nil {
		r := Row{Suite: "NMF", What: "NMF to scikit-learn's error", Input: "the Quora sample's bag of words; a generated sparse matrix",
			Unit: "s", LowerIsBetter: true, Peer: "scikit-learn NMF, solver cd (scripts/nmf_bench.py)", PeerNote: peerNote}
		switch {
		case suiteErr != "":
			r.ParastreamNote = "failed: " + suiteErr
		case peerNote != "":
			r.ParastreamNote = "not measured: scripts/nmf_bench.py needs scikit-learn"
		default:
			r.ParastreamNote = "not measured"
		}
		return []Row{r}
	}
	var order []string
	byMatrix := map[string][]NMFRun{}
	for _, run := range res.Runs {
		if _, ok := byMatrix[run.Matrix]; !ok {
			order = append(order, run.Matrix)
		}
		byMatrix[run.Matrix] = append(byMatrix[run.Matrix], run)
	}
	var rows []Row
	for _, m := range order {
		runs := byMatrix[m]
		first := runs[0]
		input := fmt.Sprintf("%s matrix %s, %s non-zeros, k %d, scikit-learn's %d iterations", m, first.Shape, num(float64(first.NNZ)), first.K, first.Iters)
		peer := fmt.Sprintf("scikit-learn %s NMF, solver cd (one thread), from the same start", res.Sklearn)
		pick := func(to, ratio func(NMFRun) *float64) (ps, sk, rs []float64) {
			for _, run := range runs {
				sk = append(sk, run.SkSecs)
				if v := to(run); v != nil {
					ps = append(ps, *v)
				}
				if v := ratio(run); v != nil {
					rs = append(rs, *v)
				}
			}
			return ps, sk, rs
		}
		row := func(what string, ps, sk, ratio []float64, note string) Row {
			r := Row{Suite: "NMF", What: what, Unit: "s", LowerIsBetter: true, Input: input, Parastream: Summarize(ps), Peer: peer,
				PeerFigure: Summarize(sk), Ratio: Summarize(ratio), RatioHow: "each run's own"}
			if r.Ratio == nil {
				r.RatioHow = ""
			}
			if r.Parastream == nil {
				r.ParastreamNote = note
			}
			return withRatio(r)
		}
		ps1, sk, r1 := pick(func(r NMFRun) *float64 { return r.PsTo1 }, func(r NMFRun) *float64 { return r.Ratio1 })
		note1 := "did not reach scikit-learn's error in 5 times its iterations"
		if !slices.ContainsFunc(runs, func(r NMFRun) bool { return r.Workers > 0 }) {
			note1 = "not measured: awaits the next make bench (scripts/nmf_bench.py now times one thread too)"
		}
		rows = append(rows, row("NMF, time to scikit-learn's final error, one thread each (equal threads)", ps1, sk, r1, note1))
		ps, _, rs := pick(func(r NMFRun) *float64 { return r.PsTo }, func(r NMFRun) *float64 { return r.Ratio })
		threads := "all cores"
		if first.Workers > 0 {
			threads = fmt.Sprintf("%d threads", first.Workers)
		}
		rows = append(rows, row(fmt.Sprintf("NMF, time to scikit-learn's final error, parastream on %s beside scikit-learn on one (unequal threads: not a headline)", threads),
			ps, sk, rs, "did not reach scikit-learn's error in 5 times its iterations"))
	}
	return rows
}
