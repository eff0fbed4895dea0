// Command graphmem measures what --max-graphs does to a recurrent model on
// the CPU backend: gran at batch 100 and dimension 300, trained for two
// rounds over eight padded lengths (6 to 34 words) in a seeded random
// order, with the bound given as its argument. It prints the steps and
// pairs/s; run it under /usr/bin/time for the peak RSS:
//
//	go build -o /tmp/graphmem ./tools/graphmem
//	/usr/bin/time -f "peak RSS %M KB" /tmp/graphmem 2
package main

import (
	"fmt"
	"math/rand/v2"
	"os"
	"strconv"
	"time"

	"github.com/parastream/parastream/trainstep/compute"
	"github.com/parastream/parastream/trainstep/cpu"
)

func main() {
	if len(os.Args) != 2 {
		fmt.Fprintln(os.Stderr, "usage: graphmem MAX_GRAPHS")
		os.Exit(2)
	}
	maxGraphs, err := strconv.Atoi(os.Args[1])
	if err != nil {
		fmt.Fprintln(os.Stderr, "graphmem:", err)
		os.Exit(2)
	}
	cfg := compute.Config{Encoder: compute.EncGRAN, Dim: 300, Vocab: 20000, BatchSize: 100, Margin: 0.4}.Defaults()
	params := compute.InitParams(cfg, rand.New(rand.NewPCG(1, 2)))
	m, err := (&cpu.Backend{MaxGraphs: maxGraphs}).Build(cfg, params)
	if err != nil {
		panic(err)
	}
	rng := rand.New(rand.NewPCG(3, 4))
	lengths := []int{6, 10, 14, 18, 22, 26, 30, 34}
	start := time.Now()
	steps := 0
	for round := 0; round < 2; round++ {
		for _, i := range rng.Perm(len(lengths)) {
			L := lengths[i]
			a, b := make([][]int32, 100), make([][]int32, 100)
			for r := range a {
				a[r], b[r] = make([]int32, L), make([]int32, L)
				for j := range L {
					a[r][j], b[r][j] = int32(4+rng.IntN(19990)), int32(4+rng.IntN(19990))
				}
			}
			bt, err := compute.NewBatch(cfg, a, b, nil, rng)
			if err != nil {
				panic(err)
			}
			if _, err := m.ForwardBackward(bt); err != nil {
				panic(err)
			}
			steps++
		}
	}
	fmt.Printf("max-graphs %d: %d steps in %.1fs (%.0f pairs/s)\n", maxGraphs, steps, time.Since(start).Seconds(), float64(steps*100)/time.Since(start).Seconds())
}
