// Package trainbench is the training-throughput benchmark that the CPU
// (trainstep) and GPU (trainstep/cuda) benchmarks share, so that both
// measure the same steps on the same batches.
package trainbench

import (
	"bufio"
	"math/rand/v2"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"syscall"
	"testing"

	"github.com/parastream/parastream/internal/sysmem"
	"github.com/parastream/parastream/internal/testenv"
	"github.com/parastream/parastream/trainstep"
	"github.com/parastream/parastream/trainstep/compute"
	"github.com/parastream/parastream/trainstep/cpu"
	"github.com/parastream/parastream/trainstep/cpu/cblas"
)

// Vocab is the benchmarks' vocabulary size.
const Vocab = 20000

// Lengths are sentence lengths in tokens: those of the STS 2012 test
// sentences when ../shared/data is there, else 2,000 lengths drawn
// uniformly from 4 to 24 (seeded).
func Lengths(b testing.TB) []int {
	files, _ := filepath.Glob(filepath.Join(testenv.Root(), "..", "shared", "data", "eval", "sts", "2012", "STS.input.*.txt"))
	var lens []int
	for _, f := range files {
		fh, err := os.Open(f)
		if err != nil {
			continue
		}
		sc := bufio.NewScanner(fh)
		for sc.Scan() {
			for _, s := range strings.Split(sc.Text(), "\t") {
				if n := len(strings.Fields(s)); n > 0 {
					lens = append(lens, n)
				}
			}
		}
		fh.Close()
	}
	if len(lens) == 0 {
		b.Log("../shared/data/eval/sts/2012 absent: synthetic lengths 4-24")
		rng := rand.New(rand.NewPCG(1, 1))
		for range 2000 {
			lens = append(lens, 4+rng.IntN(21))
		}
	}
	return lens
}

// Run measures Trainer.Step on the backend (nil: the CPU) in pairs/s, and
// reports the process's peak RSS (peak-RSS-MiB; one benchmark a process
// for a figure of its own):
// eight batches of random word ids with lengths drawn from lens, dimension
// 300, margin loss with max negatives and Adam (the defaults). The steps
// before the timer starts (warmUp, reported as warm-up-steps) build the
// graphs and workspaces and bring the heap to its steady state.
func Run(b *testing.B, enc string, batch int, backend compute.Backend, lens []int) float64 {
	return RunConfig(b, trainstep.Config{Encoder: enc, Dim: 300, Vocab: Vocab, BatchSize: batch}, backend, lens)
}

// RunConfig is Run for any configuration (Vocab, EmbeddingUpdate, ...): the
// word ids are drawn uniformly from cfg.Vocab. It returns the pairs/s
// reported.
func RunConfig(b *testing.B, cfg trainstep.Config, backend compute.Backend, lens []int) float64 {
	rng := rand.New(rand.NewPCG(2, 3))
	batch := cfg.BatchSize
	seq := func() []int32 {
		s := make([]int32, lens[rng.IntN(len(lens))])
		for i := range s {
			s[i] = rng.Int32N(int32(cfg.Vocab))
		}
		return s
	}
	pairs := make([]trainstep.Pair, 8*batch)
	for i := range pairs {
		pairs[i] = trainstep.Pair{A: seq(), B: seq()}
	}
	batches, _ := trainstep.Batches(pairs, batch, 64)
	if backend == nil {
		useBLAS(b)
	}
	tr, err := trainstep.New(cfg, trainstep.Options{Backend: backend})
	if err != nil {
		b.Fatal(err)
	}
	defer tr.Close()
	b.Logf("device: %s", tr.Device())
	warm := warmUp(b, tr, batches, backend != nil)
	faults0 := minorFaults()
	// b.Loop runs this function once however many steps the benchtime
	// asks for (b.N's loop ran it again for each b.N tried, the warm-up
	// with it): on a GPU a transformer's warm-up is most of the time.
	n, steps := 0, 0
	for b.Loop() {
		bt := batches[steps%len(batches)]
		if _, err := tr.Step(bt); err != nil { // Step reads the loss back: synchronised on a GPU too
			b.Fatal(err)
		}
		n += len(bt)
		steps++
	}
	rate := float64(n) / b.Elapsed().Seconds()
	b.ReportMetric(rate, "pairs/s")
	b.ReportMetric(float64(warm), "warm-up-steps")
	if f0, f1 := faults0, minorFaults(); f0 >= 0 && f1 >= 0 {
		b.ReportMetric(float64(f1-f0)/float64(steps), "page-faults/step")
	}
	if hwm, ok := sysmem.PeakRSS(); ok {
		b.ReportMetric(float64(hwm)/(1<<20), "peak-RSS-MiB")
	}
	return rate
}

// warmUp steps every batch once, so that graphs and workspaces are built,
// and returns the steps taken. On a device (device true) it steps every
// batch three times: eagerly, captured as a CUDA graph, replayed; the
// heap matters little there (the host makes little garbage a step), and
// waiting for collections took 150-300 steps on an H200, a minute of a
// transformer at batch 1,000. On the CPU it goes on stepping until the
// garbage collector has finished two cycles since the first step (at
// most maxWarmUp steps in all). Until the heap's first collection a
// step's garbage (the graph's values: about 15 MB a step at batch 100)
// lands on memory the process has never touched, each page a fault;
// after it the freed memory is reused. With a 2 GB model (400,000 words)
// the first collection comes only after about 130 steps, so a short timed
// loop would measure those faults rather than the steps of a run, which
// takes thousands.
func warmUp(b *testing.B, tr *trainstep.Trainer, batches [][]trainstep.Pair, device bool) int {
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	gc0 := ms.NumGC
	steps := 0
	for ; steps < maxWarmUp; steps++ {
		if device && steps >= 3*len(batches) {
			break
		}
		if !device && steps >= len(batches) {
			runtime.ReadMemStats(&ms)
			if ms.NumGC >= gc0+2 {
				break
			}
		}
		if _, err := tr.Step(batches[steps%len(batches)]); err != nil {
			b.Fatal(err)
		}
	}
	return steps
}

// minorFaults is the process's page faults so far that needed no I/O
// (getrusage's ru_minflt: first touches of memory), or -1 where unknown.
func minorFaults() int64 {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return -1
	}
	return ru.Minflt
}

// maxWarmUp bounds warmUp's steps.
const maxWarmUp = 2000

// BLASEnv names the CPU backend's BLAS for the benchmarks (cpu.UseBLAS:
// auto, go or openblas); unset: auto, the default of the backend.
const BLASEnv = "PARASTREAM_BENCH_BLAS"

func useBLAS(b *testing.B) {
	choice := os.Getenv(BLASEnv)
	if choice == "" {
		return
	}
	if _, err := cpu.UseBLAS(choice, cblas.Options{}); err != nil {
		b.Fatalf("%s=%s: %v", BLASEnv, choice, err)
	}
}
