// Command benchreport is `make bench` (issue 21): it runs the benchmarks
// that compare parastream with a peer, each figure -count times, runs the
// peers (scripts/nmf_bench.py, train_bench.py and vocab_bench.py, kcat in
// BenchmarkStreamVsKcat), and writes one report:
//
//	bench/results/<date>-<short commit>.txt   the go test -bench output, benchstat's format
//	bench/results/<date>-<short commit>.md    the table: what, input, parastream, peer, ratio
//	bench/results/<date>-<short commit>.json  the same, with every run's figures
//
// Each figure is the median of its runs with their min and max; a ratio is
// taken within the run (each run's own where the benchmark measures both
// sides, else median over median). A peer that is not installed leaves
// its rows saying so and how to install it; it does not fail the run. A
// suite that fails is named in the report, and the command exits 1 after
// writing it.
//
// Usage (from the repository root):
//
//	go run ./tools/benchreport [-bench REGEXP] [-count 3] [-out bench/results]
//	    [-reddit-comments 1000000] [-nmf-quick] [-quick]
//
// -bench selects suites by name: ExtractReddit, ExtractRSS, NMF,
// StreamVsKcat, TrainStep, VocabScaling, RunFeed, and BenchMem, which
// reads the last `make bench-mem` table (out/bench/mem.json) rather than
// running it (-list lists them).
package main

import (
	"flag"
	"fmt"
	"os"
	"regexp"
	"time"
)

var (
	benchFlag    = flag.String("bench", ".", "regular expression: the suites to run (-list lists them)")
	countFlag    = flag.Int("count", 3, "runs of every figure (at least 3 for a median with a spread)")
	outFlag      = flag.String("out", "bench/results", "directory of the reports")
	commentsFlag = flag.Int64("reddit-comments", 1_000_000, "generated Reddit comments of ExtractReddit and ExtractRSS")
	nmfQuickFlag = flag.Bool("nmf-quick", false, "scripts/nmf_bench.py --quick: smaller NMF budgets")
	quickFlag    = flag.Bool("quick", false, "a smoke run of the machinery, its figures not for reading: a tenth of the training steps, -nmf-quick, 50,000 comments unless -reddit-comments is given")
	memFlag      = flag.String("mem-json", "out/bench/mem.json", "make bench-mem's table, read into the report (BenchMem) when it is there")
	listFlag     = flag.Bool("list", false, "list the suites and exit")
)

func main() {
	flag.Parse()
	if *listFlag {
		for _, s := range suites() {
			fmt.Printf("%-14s %s\n", s.name, s.about)
		}
		return
	}
	re, err := regexp.Compile(*benchFlag)
	if err != nil {
		fmt.Fprintf(os.Stderr, "benchreport: -bench %q is not a regular expression: %v\n", *benchFlag, err)
		os.Exit(2)
	}
	if *countFlag < 1 {
		fmt.Fprintf(os.Stderr, "benchreport: -count %d: give at least 1 (3 or more for a median with a spread)\n", *countFlag)
		os.Exit(2)
	}
	opt := options{bench: re, count: *countFlag, out: *outFlag, comments: *commentsFlag, nmfQuick: *nmfQuickFlag || *quickFlag, steps: fullSteps(), memJSON: *memFlag}
	if *quickFlag {
		opt.steps = quickSteps()
		opt.quick = true
		given := false
		flag.Visit(func(f *flag.Flag) { given = given || f.Name == "reddit-comments" })
		if !given {
			opt.comments = 50_000
		}
	}
	r := &runner{opt: opt, start: time.Now()}
	failed, err := r.run()
	if err != nil {
		fmt.Fprintf(os.Stderr, "benchreport: %v\n", err)
		os.Exit(1)
	}
	if failed {
		os.Exit(1)
	}
}
