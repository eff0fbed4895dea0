package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"math"
	"os"
	"regexp"
	"strings"
	"testing"
)

// cannedTrain is go test -bench output of the kind the suites produce:
// three runs of two sub-benchmarks with logs between them.
const cannedTrain = `goos: linux
goarch: amd64
pkg: github.com/parastream/parastream/trainstep
cpu: AMD EPYC
BenchmarkTrainStep/avg-2         	      30	  48812345 ns/op	      2000 pairs/s	   512.0 peak-RSS-MiB	 1024 B/op	 3 allocs/op
--- BENCH: BenchmarkTrainStep/avg-2
    trainbench.go:95: device: cpu (gonum)
BenchmarkTrainStep/avg-2         	      30	  48812345 ns/op	      2200 pairs/s	   512.0 peak-RSS-MiB	 1024 B/op	 3 allocs/op
BenchmarkTrainStep/avg-2         	      30	  48812345 ns/op	      1800 pairs/s	   512.0 peak-RSS-MiB	 1024 B/op	 3 allocs/op
BenchmarkTrainStep/gran-2        	       4	 900000000 ns/op	       111 pairs/s
BenchmarkTrainStep/gran-2        	       4	 900000000 ns/op	       100 pairs/s
BenchmarkTrainStep/gran-2        	       4	 900000000 ns/op	       120 pairs/s
PASS
ok  	github.com/parastream/parastream/trainstep	40.1s
`

func TestParseBench(t *testing.T) {
	bs, err := ParseBench(strings.NewReader(cannedTrain))
	if err != nil {
		t.Fatal(err)
	}
	if len(bs) != 6 {
		t.Fatalf("parsed %d results, want 6: %+v", len(bs), bs)
	}
	b := bs[0]
	if b.Name != "BenchmarkTrainStep/avg" || b.Procs != 2 || b.Iters != 30 || b.Pkg != "github.com/parastream/parastream/trainstep" {
		t.Errorf("first result %+v: want BenchmarkTrainStep/avg, 2 procs, 30 iterations, package trainstep", b)
	}
	if b.Metrics["pairs/s"] != 2000 || b.Metrics["allocs/op"] != 3 || b.Metrics["ns/op"] != 48812345 {
		t.Errorf("first result's metrics %v", b.Metrics)
	}
	vals, procs := Values(bs, "BenchmarkTrainStep/gran", "pairs/s")
	if want := []float64{111, 100, 120}; !equal(vals, want) || procs != 2 {
		t.Errorf("gran pairs/s %v (procs %d), want %v (2)", vals, procs, want)
	}
	if vals, _ := Values(bs, "BenchmarkTrainStep/gran", "peak-RSS-MiB"); len(vals) != 0 {
		t.Errorf("gran has no peak-RSS-MiB, got %v", vals)
	}
}

func TestParseBenchRejectsBrokenLine(t *testing.T) {
	_, err := ParseBench(strings.NewReader("BenchmarkX-2 10 12 ns/op 5\n"))
	if err == nil || !strings.Contains(err.Error(), "line 1") {
		t.Errorf("an odd number of fields after the iterations: error %v, want one naming line 1", err)
	}
	_, err = ParseBench(strings.NewReader("BenchmarkX-2 10 twelve ns/op\n"))
	if err == nil || !strings.Contains(err.Error(), "twelve") {
		t.Errorf("a value that is not a number: error %v, want one naming it", err)
	}
	// A name followed by log output (no iterations) is not a result.
	bs, err := ParseBench(strings.NewReader("BenchmarkX-2 \tsome log line\nBenchmarkY 3 4 ns/op\n"))
	if err != nil || len(bs) != 1 || bs[0].Name != "BenchmarkY" || bs[0].Procs != 1 {
		t.Errorf("got %+v, %v: want BenchmarkY alone, GOMAXPROCS 1", bs, err)
	}
}

func equal(a, b []float64) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if math.Abs(a[i]-b[i]) > 1e-9 {
			return false
		}
	}
	return true
}

func TestSummarize(t *testing.T) {
	for _, c := range []struct {
		in            []float64
		med, min, max float64
		n             int
	}{
		{[]float64{3, 1, 2}, 2, 1, 3, 3},
		{[]float64{4, 1, 3, 2}, 2.5, 1, 4, 4},
		{[]float64{5}, 5, 5, 5, 1},
		{[]float64{math.NaN(), 7, math.Inf(1), 9, 8}, 8, 7, 9, 3},
	} {
		s := Summarize(c.in)
		if s == nil || s.Median != c.med || s.Min != c.min || s.Max != c.max || s.N != c.n {
			t.Errorf("Summarize(%v) = %+v, want median %v, min %v, max %v, n %d", c.in, s, c.med, c.min, c.max, c.n)
		}
	}
	if s := Summarize([]float64{math.NaN()}); s != nil {
		t.Errorf("Summarize of NaN alone = %+v, want nil", s)
	}
	if s := Summarize([]float64{4, 2, 6}).Scale(0.5); s.Median != 2 || s.Min != 1 || s.Max != 3 {
		t.Errorf("Scale(0.5) = %+v", s)
	}
}

// TestTrainRowsWithAndWithoutTorch: each encoder's rows name the PyTorch
// variant they compare with, the headline (first) row the strongest: avg
// beside SparseAdam, lstmavg and gran beside the same model and then
// torch.nn.LSTM as a speed bar.
func TestTrainRowsWithAndWithoutTorch(t *testing.T) {
	bs, err := ParseBench(strings.NewReader(cannedTrain))
	if err != nil {
		t.Fatal(err)
	}
	var tt TorchTrain
	if err := json.Unmarshal([]byte(`{"torch": "1.13.0", "threads": 2, "models": {"avg": {"steps": 30, "pairs_per_s": [1000, 1100, 900]},
		"avg-sparseadam": {"steps": 30, "pairs_per_s": [2500]}, "gran": {"steps": 4, "pairs_per_s": [200, 250, 150]}, "gran-nnlstm": {"steps": 4, "pairs_per_s": [400]}}}`), &tt); err != nil {
		t.Fatal(err)
	}
	rows := trainRows(bs, &tt, "", "")
	if len(rows) != 6 {
		t.Fatalf("%d rows, want 2 an encoder", len(rows))
	}
	sparse, dense, lstm, gran, granLSTM := rows[0], rows[1], rows[2], rows[4], rows[5]
	if sparse.Parastream.Median != 2000 || sparse.PeerFigure.Median != 2500 || sparse.Ratio.Median != 0.8 || !strings.Contains(sparse.Peer, "SparseAdam") {
		t.Errorf("avg's headline row %+v: want 2000 beside SparseAdam's 2500, ratio 0.8", sparse)
	}
	if dense.PeerFigure.Median != 1000 || !strings.Contains(dense.Peer, "dense Adam") || !strings.Contains(dense.Peer, "not a headline") {
		t.Errorf("avg beside dense Adam %+v: want it labelled as the weaker variant", dense)
	}
	if gran.Ratio == nil || math.Abs(gran.Ratio.Median-111.0/200) > 1e-9 || !strings.Contains(gran.Peer, "the same model") {
		t.Errorf("gran row %+v, want 111/200 beside the same model", gran)
	}
	if granLSTM.PeerFigure == nil || granLSTM.PeerFigure.Median != 400 || !strings.Contains(granLSTM.Peer, "torch.nn.LSTM") || !strings.Contains(granLSTM.Peer, "speed bar") {
		t.Errorf("gran beside nn.LSTM %+v", granLSTM)
	}
	if lstm.Parastream != nil || !strings.HasPrefix(lstm.ParastreamNote, "not measured") || lstm.Ratio != nil || lstm.PeerNote == "" {
		t.Errorf("lstmavg (neither side ran) %+v: want notes and no ratio", lstm)
	}
	if got := trainModels(); got != "avg-sparseadam,avg,lstmavg,lstmavg-nnlstm,gran,gran-nnlstm" {
		t.Errorf("models asked of scripts/train_bench.py: %s", got)
	}
	rows = trainRows(bs, nil, noTorch, "")
	if rows[0].Parastream == nil || rows[0].PeerFigure != nil || rows[0].PeerNote != noTorch || rows[0].Ratio != nil {
		t.Errorf("avg row without torch %+v: want parastream's figure and the install hint", rows[0])
	}
}

const cannedStream = `pkg: github.com/parastream/parastream/stream
BenchmarkStreamVsKcat-2   1   80.0 publish-MB/s   1.10 publish/kcat   100 consume-MB/s   1.00 consume/nowait/kcat   200 consume-wire-MB/s   2.00 consume-wire/nowait/kcat   8.00 consume-wire/kcat   72.7 kcat-produce-MB/s   100 kcat-consume-nowait-MB/s   25.0 kcat-consume-MB/s   66.7 b3sum-kcat-produce-MB/s   1.20 publish/b3sum-kcat
BenchmarkStreamVsKcat-2   1   90.0 publish-MB/s   1.20 publish/kcat   110 consume-MB/s   1.10 consume/nowait/kcat   220 consume-wire-MB/s   2.20 consume-wire/nowait/kcat   8.80 consume-wire/kcat   75.0 kcat-produce-MB/s   100 kcat-consume-nowait-MB/s   25.0 kcat-consume-MB/s   70.0 b3sum-kcat-produce-MB/s   1.29 publish/b3sum-kcat
BenchmarkStreamVsKcat-2   1   70.0 publish-MB/s   0.90 publish/kcat   90 consume-MB/s   0.90 consume/nowait/kcat   180 consume-wire-MB/s   1.80 consume-wire/nowait/kcat   7.20 consume-wire/kcat   77.8 kcat-produce-MB/s   100 kcat-consume-nowait-MB/s   25.0 kcat-consume-MB/s   65.0 b3sum-kcat-produce-MB/s   1.08 publish/b3sum-kcat
`

func TestStreamRowsUseEachRunsRatio(t *testing.T) {
	bs, err := ParseBench(strings.NewReader(cannedStream))
	if err != nil {
		t.Fatal(err)
	}
	rows := streamRows(bs, "", "")
	if len(rows) != 6 {
		t.Fatalf("%d rows, want 6", len(rows))
	}
	pub := rows[0]
	// The median of the runs' own ratios (1.10), not median over median
	// (80/75 = 1.07).
	if pub.Parastream.Median != 80 || pub.PeerFigure.Median != 75 || pub.Ratio.Median != 1.1 || pub.Ratio.Min != 0.9 || pub.RatioHow != "each run's own" {
		t.Errorf("publish row %+v", pub)
	}
	// Beside b3sum --check then kcat -P: the same publish figures, that
	// pair's own ratios.
	if c := rows[1]; c.Parastream.Median != 80 || c.PeerFigure.Median != 66.7 || c.Ratio.Median != 1.2 || c.Ratio.Min != 1.08 || !strings.HasPrefix(c.Peer, "b3sum --check") {
		t.Errorf("publish beside b3sum and kcat %+v", c)
	}
	if w := rows[2]; w.Ratio.Median != 2 || !strings.Contains(w.Peer, "fetch.wait.max.ms=10") {
		t.Errorf("consume-wire row %+v: want ratio 2 against kcat without the wait", w)
	}
	// A run without b3sum: that row says so, the others keep their figures.
	noB3, err := ParseBench(strings.NewReader(regexp.MustCompile(`\s+\S+ (b3sum-kcat-produce-MB/s|publish/b3sum-kcat)`).ReplaceAllString(cannedStream, "")))
	if err != nil {
		t.Fatal(err)
	}
	rows = streamRows(noB3, "", "")
	if c := rows[1]; c.Parastream == nil || c.PeerFigure != nil || c.PeerNote != noB3sum || c.Ratio != nil {
		t.Errorf("publish beside b3sum, b3sum not installed: %+v", c)
	}
	if p := rows[0]; p.Ratio == nil || p.PeerNote != "" {
		t.Errorf("publish beside kcat, b3sum not installed: %+v", p)
	}
	for _, r := range streamRows(nil, noKcat, "") {
		if r.Parastream != nil || !strings.Contains(r.ParastreamNote, "needs kcat") || r.PeerNote != noKcat || r.Ratio != nil {
			t.Errorf("row without kcat %+v: want both notes and no ratio", r)
		}
	}
}

func TestExtractRowsPerCore(t *testing.T) {
	bs, err := ParseBench(strings.NewReader(`BenchmarkExtractReddit-2 1 1 ns/op 180000 loop-comments/s 110000 pipeline-comments/s 0.61 pipeline/loop
BenchmarkExtractReddit-2 1 1 ns/op 182000 loop-comments/s 120000 pipeline-comments/s 0.66 pipeline/loop
BenchmarkExtractReddit-2 1 1 ns/op 181000 loop-comments/s 100000 pipeline-comments/s 0.55 pipeline/loop
`))
	if err != nil {
		t.Fatal(err)
	}
	rows := extractRows(bs, 1_000_000, "")
	perCore, vsLoop := rows[0], rows[1]
	if perCore.Parastream.Median != 55000 || perCore.Parastream.Min != 50000 || math.Abs(perCore.PeerFigure.Median-1634.6) > 0.1 {
		t.Errorf("per-core row %+v: want 55,000 (50,000-60,000) beside PolyAI's 1,634.6", perCore)
	}
	if perCore.Ratio == nil || math.Abs(perCore.Ratio.Median-55000/polyAIRate()) > 1e-6 {
		t.Errorf("per-core ratio %+v", perCore.Ratio)
	}
	if vsLoop.Ratio.Median != 0.61 || vsLoop.PeerFigure.Median != 181000 {
		t.Errorf("pipeline/loop row %+v", vsLoop)
	}
	failed := extractRows(nil, 1000, "go test: exit status 1")
	if failed[0].Parastream != nil || failed[0].ParastreamNote != "failed: go test: exit status 1" || failed[0].PeerFigure == nil {
		t.Errorf("failed run's row %+v: want the failure and PolyAI's quoted figure", failed[0])
	}
}

// TestNMFRows: a matrix's headline row is at equal threads (one each);
// the all-cores figure is a row of its own labelled as unequal; output of
// a scikit-learn run before the one-thread figure says it awaits one.
func TestNMFRows(t *testing.T) {
	var res NMFResult
	err := json.Unmarshal([]byte(`{"sklearn": "1.2.1", "runs": [
		{"matrix": "quora", "shape": "10x20", "nnz": 50, "k": 5, "iters": 100, "sk_secs": 2.0, "ps_to": 0.8, "ratio": 0.4, "workers": 2, "ps_to_1": 1.6, "ratio_1": 0.8},
		{"matrix": "quora", "shape": "10x20", "nnz": 50, "k": 5, "iters": 100, "sk_secs": 2.2, "ps_to": 0.66, "ratio": 0.3, "workers": 2, "ps_to_1": 1.32, "ratio_1": 0.6},
		{"matrix": "quora", "shape": "10x20", "nnz": 50, "k": 5, "iters": 100, "sk_secs": 1.0, "ps_to": 0.5, "ratio": 0.5, "workers": 2, "ps_to_1": 1.0, "ratio_1": 1.0},
		{"matrix": "generated", "shape": "5x8", "nnz": 9, "k": 2, "iters": 10, "sk_secs": 1.0, "ps_to": null, "ratio": null}]}`), &res)
	if err != nil {
		t.Fatal(err)
	}
	rows := nmfRows(&res, "", "")
	if len(rows) != 4 {
		t.Fatalf("%d rows, want two a matrix", len(rows))
	}
	q1, q, g1, g := rows[0], rows[1], rows[2], rows[3]
	if !q1.LowerIsBetter || q1.Parastream.Median != 1.32 || q1.PeerFigure.Median != 2.0 || q1.Ratio.Median != 0.8 || !strings.Contains(q1.What, "equal threads") {
		t.Errorf("quora's headline row %+v: want one thread each", q1)
	}
	if q.Parastream.Median != 0.66 || q.Ratio.Median != 0.4 || q.Ratio.N != 3 || !strings.Contains(q.What, "2 threads") || !strings.Contains(q.What, "unequal threads") {
		t.Errorf("quora's 2-thread row %+v: want it labelled", q)
	}
	if g.Parastream != nil || g.Ratio != nil || !strings.Contains(g.ParastreamNote, "did not reach") {
		t.Errorf("generated row (never reached the error) %+v", g)
	}
	if g1.Parastream != nil || !strings.Contains(g1.ParastreamNote, "awaits the next make bench") {
		t.Errorf("generated row without a one-thread figure %+v", g1)
	}
	none := nmfRows(nil, noSklearn, "")
	if len(none) != 1 || none[0].PeerNote != noSklearn || !strings.Contains(none[0].ParastreamNote, "needs scikit-learn") {
		t.Errorf("rows without scikit-learn %+v", none)
	}
}

func TestVocabAndFeedRows(t *testing.T) {
	bs, err := ParseBench(strings.NewReader(`BenchmarkVocabScaling/vocab=20000-2 20 1 ns/op 3000 pairs/s
BenchmarkVocabScaling/vocab=400000-2 20 1 ns/op 2900 pairs/s
BenchmarkRunFeed/ahead-async-2 1 1 ns/op 1500 examples/s
`))
	if err != nil {
		t.Fatal(err)
	}
	var tv TorchVocab
	if err := json.Unmarshal([]byte(`{"torch": "1.13", "threads": 2, "sizes": {"20000": {"pairs_per_s": [1500]}}}`), &tv); err != nil {
		t.Fatal(err)
	}
	rows := vocabRows(bs, []int{20_000, 400_000}, &tv, "", "")
	if rows[0].Ratio == nil || rows[0].Ratio.Median != 2 {
		t.Errorf("20,000 words row %+v: want ratio 2", rows[0])
	}
	if rows[1].PeerFigure != nil || rows[1].Ratio != nil || !strings.Contains(rows[1].PeerNote, "no figure") {
		t.Errorf("400,000 words row (no PyTorch figure) %+v", rows[1])
	}
	feed := feedRows(bs, "ahead-async", nil, noTorch, "")
	if feed[0].Parastream.Median != 1500 || feed[0].PeerNote != noTorch || feed[0].Ratio != nil {
		t.Errorf("feed row without torch %+v", feed[0])
	}
}

func TestWriteReport(t *testing.T) {
	bs, err := ParseBench(strings.NewReader(cannedStream))
	if err != nil {
		t.Fatal(err)
	}
	rep := &Report{Date: "2026-11-25 16:00 UTC", Commit: "abc1234", Bench: ".", Count: 3, Seconds: 600, RawGo: "bench/results/x.txt",
		Machine:  Machine{Cores: 2, CPU: "AMD EPYC", MemoryGiB: 24, LoadStart: "1.0 1.0 1.0", LoadEnd: "2.0 2.0 2.0"},
		Versions: map[string]string{"go": "go1.26.8", "kcat": "1.7.1", "torch": noTorch},
		Rows:     append(streamRows(bs, "", ""), trainRows(nil, nil, noTorch, "")...),
		Failures: []string{"TrainStep: go test ./trainstep/ -bench 'x': exit status 1"}}
	var md bytes.Buffer
	if err := WriteMarkdown(&md, rep); err != nil {
		t.Fatal(err)
	}
	text := md.String()
	for _, want := range []string{
		"2 cores, AMD EPYC, 24 GiB", "go go1.26.8", "kcat 1.7.1", "torch " + noTorch,
		"| publish (shards to acknowledged messages) | 200,000 featurized rows in 16 shards, the embedded broker | 80.0 MB/s (70.0–90.0, n=3) |",
		"| 1.10 (0.900–1.20, n=3) (each run's own) |",
		noTorch, "Failed:", "TrainStep: go test", "make bench-compare OLD=",
	} {
		if !strings.Contains(text, want) {
			t.Errorf("the Markdown lacks %q:\n%s", want, text)
		}
	}
	// One table line per row, every line with the table's 10 bars.
	var lines int
	for _, l := range strings.Split(text, "\n") {
		if strings.HasPrefix(l, "| ") && !strings.HasPrefix(l, "| what") {
			lines++
			if n := strings.Count(l, "|") - strings.Count(l, `\|`); n != 10 {
				t.Errorf("table line with %d bars: %s", n, l)
			}
		}
	}
	if lines != len(rep.Rows) {
		t.Errorf("%d table lines, want %d", lines, len(rep.Rows))
	}

	var js bytes.Buffer
	if err := WriteJSON(&js, rep); err != nil {
		t.Fatal(err)
	}
	var back Report
	if err := json.Unmarshal(js.Bytes(), &back); err != nil {
		t.Fatal(err)
	}
	if len(back.Rows) != len(rep.Rows) || back.Rows[0].Parastream.N != 3 || back.Rows[0].Ratio.Median != 1.1 ||
		back.Rows[6].PeerNote != noTorch || back.Machine.Cores != 2 || len(back.Failures) != 1 {
		t.Errorf("the JSON read back differs: %+v", back)
	}
}

func TestNum(t *testing.T) {
	for in, want := range map[float64]string{1634.6: "1,635", 1234567: "1,234,567", 55.55: "55.5", 1.105: "1.10", 0.4123: "0.412", -2500: "-2,500", 0: "0"} {
		if got := num(in); got != want {
			t.Errorf("num(%v) = %q, want %q", in, got, want)
		}
	}
}

func TestMachineParsers(t *testing.T) {
	if got := cpuModel("processor\t: 0\nvendor_id\t: AuthenticAMD\nmodel name\t: AMD EPYC 7B13\nprocessor\t: 1\nmodel name\t: AMD EPYC 7B13\n"); got != "AMD EPYC 7B13" {
		t.Errorf("cpuModel = %q", got)
	}
	k, l := kcatVersions("kcat - Apache Kafka producer and consumer tool\nhttps://github.com/edenhill/kcat\nCopyright (c) 2014-2021, Magnus Edenhill\nVersion 1.7.1 (JSON, librdkafka 2.0.2 builtin.features=gzip)\n")
	if k != "1.7.1" || l != "2.0.2" {
		t.Errorf("kcatVersions = %q, %q, want 1.7.1, 2.0.2", k, l)
	}
	if polyAIRate() < 1634 || polyAIRate() > 1635 {
		t.Errorf("PolyAI's rate %.1f comments per vCPU-second, want 1,634.6", polyAIRate())
	}
}

func TestSuiteNames(t *testing.T) {
	seen := map[string]bool{}
	for _, s := range suites() {
		if seen[s.name] || s.run == nil || s.about == "" {
			t.Errorf("suite %q: duplicate, or no run or description", s.name)
		}
		seen[s.name] = true
	}
	for _, want := range []string{"ExtractReddit", "ExtractRSS", "NMF", "StreamVsKcat", "TrainStep", "VocabScaling", "RunFeed"} {
		if !seen[want] {
			t.Errorf("no suite %s", want)
		}
	}
}

func TestMemRows(t *testing.T) {
	var mb MemBench
	err := json.Unmarshal([]byte(`{"date": "2026-11-25T08:31:00Z", "version": "6d0d75b", "box": "2 cores, 24 GiB", "rows": 1000000, "commands": [
		{"command": "extract --corpus quora", "input": "the TSV", "data_bytes": 104857600, "parastream_peak_rss_mib": 711, "pytorch_peak_rss_mib": null, "pytorch_note": "", "note": ""},
		{"command": "train avg --batch 100", "input": "Quora sample", "data_bytes": 2726297, "parastream_peak_rss_mib": 2212, "pytorch_peak_rss_mib": 1395, "pytorch_note": "", "note": ""},
		{"command": "train gran --batch 100", "input": "Quora sample", "data_bytes": 2726297, "parastream_peak_rss_mib": 2991, "pytorch_peak_rss_mib": null, "pytorch_note": "not installed (apt-get install python3-torch)", "note": ""}]}`), &mb)
	if err != nil {
		t.Fatal(err)
	}
	rows, note := memRows(&mb, "out/bench/mem.json")
	if len(rows) != 3 || !strings.Contains(note, "6d0d75b") || !strings.Contains(note, "not measured by this run") {
		t.Fatalf("%d rows, note %q", len(rows), note)
	}
	if r := rows[0]; r.Ratio == nil || math.Abs(r.Ratio.Median-711.0/100) > 1e-9 || r.RatioHow != "peak RSS / data" {
		t.Errorf("extract row %+v: want RSS over 100 MiB of data", r)
	}
	if r := rows[1]; r.Ratio == nil || math.Abs(r.Ratio.Median-2212.0/1395) > 1e-9 {
		t.Errorf("train row %+v: want parastream over PyTorch", r)
	}
	if r := rows[2]; r.Ratio != nil || !strings.Contains(r.PeerNote, "python3-torch") {
		t.Errorf("train row without torch %+v", r)
	}
	if mb, err := readMemBench(t.TempDir() + "/absent.json"); mb != nil || err != nil {
		t.Errorf("an absent mem.json: %v, %v; want nothing", mb, err)
	}
}

func TestRepairBench(t *testing.T) {
	// Beam's log lines between the name go test printed and the figures.
	split := "pkg: github.com/parastream/parastream/pipelines\n" +
		"BenchmarkExtractReddit-2   \ttime=2026-11-25T16:31:41.432Z level=INFO msg=\"pipeline done!\"\n" +
		"time=2026-11-25T16:31:41.434Z level=INFO msg=\"[SDK] pipeline completed\"\n" +
		"       1\t8237361700 ns/op\t        57.37 loop-MB/s\t     0.2902 pipeline/loop\n" +
		"--- BENCH: BenchmarkExtractReddit-2\n" +
		"BenchmarkExtractReddit-2\n" +
		"       1\t8000000000 ns/op\t        50 loop-MB/s\t     0.31 pipeline/loop\n" +
		"BenchmarkTrainStep/avg-2   3   416142683 ns/op   240.4 pairs/s\n"
	fixed := RepairBench(split)
	bs, err := ParseBench(strings.NewReader(fixed))
	if err != nil {
		t.Fatal(err)
	}
	vals, _ := Values(bs, "BenchmarkExtractReddit", "pipeline/loop")
	if !equal(vals, []float64{0.2902, 0.31}) {
		t.Errorf("pipeline/loop %v after repair, want both runs:\n%s", vals, fixed)
	}
	if v, _ := Values(bs, "BenchmarkTrainStep/avg", "pairs/s"); !equal(v, []float64{240.4}) {
		t.Errorf("an intact line changed: %v", v)
	}
	if !strings.Contains(fixed, "level=INFO msg=\"pipeline done!\"") || !strings.Contains(fixed, "[SDK] pipeline completed") {
		t.Errorf("the log lines were lost:\n%s", fixed)
	}
	if RepairBench(cannedTrain) != cannedTrain {
		t.Errorf("RepairBench changed output that needed no repair")
	}
}

func FuzzParseBench(f *testing.F) {
	f.Add(cannedTrain)
	f.Add(cannedStream)
	f.Add("BenchmarkX-2 \tlog\n 1 2 ns/op\n")
	f.Add("BenchmarkX 1 2 ns/op 3")
	f.Fuzz(func(t *testing.T, text string) {
		for _, in := range []string{text, RepairBench(text)} {
			bs, err := ParseBench(strings.NewReader(in))
			if err != nil {
				continue
			}
			for _, b := range bs {
				if !strings.HasPrefix(b.Name, "Benchmark") || b.Metrics == nil {
					t.Fatalf("parsed %+v from %q", b, in)
				}
			}
		}
	})
}

func TestWriteFileReplaces(t *testing.T) {
	path := t.TempDir() + "/r.md"
	for _, text := range []string{"first, longer", "second"} {
		if err := writeFile(path, func(w io.Writer) error { _, err := io.WriteString(w, text); return err }); err != nil {
			t.Fatal(err)
		}
		if b, err := os.ReadFile(path); err != nil || string(b) != text {
			t.Fatalf("read %q, %v; want %q", b, err, text)
		}
	}
	if _, err := os.Stat(path + ".tmp"); !os.IsNotExist(err) {
		t.Errorf("the temporary file is left: %v", err)
	}
	if err := writeFile(path, func(io.Writer) error { return errors.New("broken") }); err == nil {
		t.Error("a failed write gave no error")
	}
	if b, _ := os.ReadFile(path); string(b) != "second" {
		t.Errorf("a failed write replaced the report: %q", b)
	}
}

// TestSpreadAndCosts: a row whose runs spread more than 2x gives no ratio
// and says why; one within 2x gives its ratio and its spread; the peak RSS
// and allocations come from the benchmark's metrics, allocs/op divided by
// the pairs of a step.
func TestSpreadAndCosts(t *testing.T) {
	bs, err := ParseBench(strings.NewReader(`BenchmarkStreamVsKcat-2 1 1600 consume-wire-MB/s 1.4 consume-wire/nowait/kcat 1100 kcat-consume-nowait-MB/s 90 consume-wire-peak-RSS-MiB 0.5 consume-wire-allocs/row
BenchmarkStreamVsKcat-2 1 580 consume-wire-MB/s 0.5 consume-wire/nowait/kcat 1140 kcat-consume-nowait-MB/s 95 consume-wire-peak-RSS-MiB 0.5 consume-wire-allocs/row
BenchmarkStreamVsKcat-2 1 450 consume-wire-MB/s 0.4 consume-wire/nowait/kcat 1080 kcat-consume-nowait-MB/s 92 consume-wire-peak-RSS-MiB 0.6 consume-wire-allocs/row
BenchmarkVocabScaling/vocab=20000-2 200 1 ns/op 8000 pairs/s 300 peak-RSS-MiB 1500 allocs/op
BenchmarkVocabScaling/vocab=400000-2 200 1 ns/op 7600 pairs/s 2300 peak-RSS-MiB 1600 allocs/op
BenchmarkVocabScaling/vocab=20000-2 200 1 ns/op 8200 pairs/s 300 peak-RSS-MiB 1500 allocs/op
BenchmarkVocabScaling/vocab=400000-2 200 1 ns/op 7400 pairs/s 2300 peak-RSS-MiB 1600 allocs/op
`))
	if err != nil {
		t.Fatal(err)
	}
	wire := withSpread(streamRows(bs, "", "")[2])
	if !wire.Unsteady || math.Abs(wire.Spread-1600.0/450) > 1e-9 {
		t.Errorf("consume-wire row spread %.2f, unsteady %v: want 3.56 and unsteady", wire.Spread, wire.Unsteady)
	}
	if c := ratioCell(wire); !strings.Contains(c, "none: the runs spread 3.6x") {
		t.Errorf("the ratio cell of an unsteady row says %q", c)
	}
	if wire.PeakRSSMiB == nil || wire.PeakRSSMiB.Median != 92 || wire.Allocs == nil || wire.Allocs.Median != 0.5 || wire.AllocsPer != "row" {
		t.Errorf("consume-wire row costs: RSS %+v, allocs %+v per %q", wire.PeakRSSMiB, wire.Allocs, wire.AllocsPer)
	}
	rows := vocabRows(bs, []int{20_000, 400_000}, nil, noTorch, "")
	ratio := withSpread(rows[2])
	if ratio.Ratio == nil || ratio.Ratio.N != 2 || math.Abs(ratio.Ratio.Min-7400.0/8200) > 1e-9 || math.Abs(ratio.Ratio.Max-7600.0/8000) > 1e-9 || ratio.Unsteady {
		t.Errorf("400,000 over 20,000 row %+v: want each run's own ratio, 0.902 and 0.95", ratio.Ratio)
	}
	if c := ratioCell(ratio); !strings.HasPrefix(c, "0.926 (0.902–0.950, n=2)") {
		t.Errorf("the ratio cell of a steady row says %q", c)
	}
	if r := rows[1]; r.Allocs == nil || r.Allocs.Median != 16 || r.AllocsPer != "pair" || r.PeakRSSMiB.Median != 2300 {
		t.Errorf("400,000 words row costs: allocs %+v per %q, RSS %+v: want 16 a pair, 2,300 MiB", r.Allocs, r.AllocsPer, r.PeakRSSMiB)
	}
}
