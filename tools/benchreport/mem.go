package main

import (
	"encoding/json"
	"fmt"
	"os"
)

// MemBench is what scripts/mem_bench.sh (make bench-mem) writes to
// mem.json: the peak RSS of every long-running command.
type MemBench struct {
	Date     string `json:"date"`
	Version  string `json:"version"`
	Box      string `json:"box"`
	Rows     int64  `json:"rows"`
	Commands []struct {
		Command       string   `json:"command"`
		Input         string   `json:"input"`
		DataBytes     int64    `json:"data_bytes"`
		ParastreamMiB *float64 `json:"parastream_peak_rss_mib"`
		PyTorchMiB    *float64 `json:"pytorch_peak_rss_mib"`
		PyTorchNote   string   `json:"pytorch_note"`
		Note          string   `json:"note"`
	} `json:"commands"`
}

// memRows are the rows of a make bench-mem run (one run a figure: the
// script takes half an hour, so make bench reads its last table rather
// than running it), and the note that says where they come from.
func memRows(mb *MemBench, path string) ([]Row, string) {
	var rows []Row
	for _, c := range mb.Commands {
		r := Row{Suite: "BenchMem", What: "peak RSS, `" + c.Command + "`", Input: c.Input, Unit: "MiB", LowerIsBetter: true,
			Peer: "PyTorch, scripts/parity.py (make parity's reference trainer)"}
		if c.ParastreamMiB != nil {
			r.Parastream = Summarize([]float64{*c.ParastreamMiB})
		} else {
			r.ParastreamNote = "failed: " + c.Note
		}
		switch {
		case c.PyTorchMiB != nil:
			r.PeerFigure = Summarize([]float64{*c.PyTorchMiB})
		case c.PyTorchNote != "":
			r.PeerNote = c.PyTorchNote
		default:
			r.Peer = "no peer: the data it handles"
			if c.DataBytes > 0 {
				r.PeerFigure = Summarize([]float64{float64(c.DataBytes) / (1 << 20)})
				r.RatioHow = "peak RSS / data"
			}
		}
		rows = append(rows, withRatio(r))
	}
	note := fmt.Sprintf("BenchMem rows: one run of make bench-mem (%s, %s, %s, %s generated rows), read from %s, not measured by this run: "+
		"`make bench-mem` (about 30 minutes) measures them again.", mb.Date, mb.Version, mb.Box, num(float64(mb.Rows)), path)
	return rows, note
}

// readMemBench reads a mem.json (nil, nil when there is none).
func readMemBench(path string) (*MemBench, error) {
	b, err := os.ReadFile(path)
	if os.IsNotExist(err) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	var mb MemBench
	if err := json.Unmarshal(b, &mb); err != nil {
		return nil, fmt.Errorf("%s is not make bench-mem's mem.json: %w (run make bench-mem again)", path, err)
	}
	return &mb, nil
}
