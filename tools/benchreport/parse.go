package main

import (
	"bufio"
	"fmt"
	"io"
	"math"
	"regexp"
	"slices"
	"strconv"
	"strings"
)

// Benchmark is one result line of `go test -bench` output: the benchmark's
// name without its GOMAXPROCS suffix, that suffix, the package it ran in
// (the "pkg:" line before it), its iterations and its metrics by unit
// (ns/op, pairs/s, ...).
type Benchmark struct {
	Pkg     string
	Name    string
	Procs   int
	Iters   int64
	Metrics map[string]float64
}

// procsSuffix is the "-N" go test appends to a benchmark's name when
// GOMAXPROCS is not 1.
func procsSuffix() *regexp.Regexp { return regexp.MustCompile(`^(.*)-(\d+)$`) }

// ParseBench reads `go test -bench` output (the format benchstat reads,
// several runs concatenated) and returns its result lines in order. Lines
// that are not results (logs, PASS, ok, goos:) are skipped; a line that
// starts like a result but does not parse is an error naming it.
func ParseBench(r io.Reader) ([]Benchmark, error) {
	var out []Benchmark
	pkg := ""
	suffix := procsSuffix()
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, 64<<10), 4<<20)
	for n := 1; sc.Scan(); n++ {
		line := sc.Text()
		if p, ok := strings.CutPrefix(line, "pkg: "); ok {
			pkg = strings.TrimSpace(p)
			continue
		}
		f := strings.Fields(line)
		if len(f) < 2 || !strings.HasPrefix(f[0], "Benchmark") {
			continue
		}
		iters, err := strconv.ParseInt(f[1], 10, 64)
		if err != nil {
			// A benchmark's name followed by its log output, not a result.
			continue
		}
		if len(f)%2 != 0 {
			return nil, fmt.Errorf("line %d: %q: a result line has value and unit pairs after the iterations", n, line)
		}
		b := Benchmark{Pkg: pkg, Name: f[0], Procs: 1, Iters: iters, Metrics: map[string]float64{}}
		if m := suffix.FindStringSubmatch(f[0]); m != nil {
			b.Name = m[1]
			b.Procs, _ = strconv.Atoi(m[2])
		}
		for i := 2; i < len(f); i += 2 {
			v, err := strconv.ParseFloat(f[i], 64)
			if err != nil {
				return nil, fmt.Errorf("line %d: %q: metric value %q is not a number", n, line, f[i])
			}
			b.Metrics[f[i+1]] = v
		}
		out = append(out, b)
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("reading benchmark output: %w", err)
	}
	return out, nil
}

// Values are the figures in unit of every run of the benchmark name (its
// name without the GOMAXPROCS suffix), in the order they ran, and the
// GOMAXPROCS of the last of them (0 when none ran).
func Values(bs []Benchmark, name, unit string) (vals []float64, procs int) {
	for _, b := range bs {
		if b.Name != name {
			continue
		}
		if v, ok := b.Metrics[unit]; ok {
			vals = append(vals, v)
			procs = b.Procs
		}
	}
	return vals, procs
}

// Summary is a figure measured several times: the median, the least and
// the largest of the values, and the values themselves.
type Summary struct {
	Median float64   `json:"median"`
	Min    float64   `json:"min"`
	Max    float64   `json:"max"`
	N      int       `json:"n"`
	Values []float64 `json:"values"`
}

// Summarize is the summary of vals (NaN and infinite values left out),
// nil when none is left.
func Summarize(vals []float64) *Summary {
	var v []float64
	for _, x := range vals {
		if !math.IsNaN(x) && !math.IsInf(x, 0) {
			v = append(v, x)
		}
	}
	if len(v) == 0 {
		return nil
	}
	s := &Summary{N: len(v), Values: slices.Clone(v)}
	slices.Sort(v)
	s.Min, s.Max = v[0], v[len(v)-1]
	if len(v)%2 == 1 {
		s.Median = v[len(v)/2]
	} else {
		s.Median = (v[len(v)/2-1] + v[len(v)/2]) / 2
	}
	return s
}

// Scale is s with every value multiplied by k (nil stays nil).
func (s *Summary) Scale(k float64) *Summary {
	if s == nil {
		return nil
	}
	v := make([]float64, len(s.Values))
	for i, x := range s.Values {
		v[i] = x * k
	}
	return Summarize(v)
}

// RepairBench mends result lines that a benchmark's own output split: go
// test prints a benchmark's name before running it and its figures after,
// so whatever the benchmark writes to stdout meanwhile (Beam's log lines,
// for one) lands between them, and neither benchstat nor ParseBench can
// read the result. The name is moved down to the figures' line; the
// output in between is kept on lines of its own.
func RepairBench(text string) string {
	lines := strings.Split(text, "\n")
	out := make([]string, 0, len(lines))
	pending := ""
	for _, line := range lines {
		f := strings.Fields(line)
		switch {
		case len(f) >= 1 && strings.HasPrefix(f[0], "Benchmark") && (len(f) < 2 || !isInt(f[1])):
			if pending != "" {
				out = append(out, pending) // a name never followed by figures
			}
			pending = f[0]
			if rest := strings.TrimSpace(strings.TrimPrefix(strings.TrimSpace(line), f[0])); rest != "" {
				out = append(out, rest)
			}
		case pending != "" && len(f) >= 3 && len(f)%2 == 1 && isInt(f[0]) && !strings.HasPrefix(line, "Benchmark"):
			out = append(out, pending+"\t"+strings.TrimSpace(line))
			pending = ""
		default:
			out = append(out, line)
		}
	}
	if pending != "" {
		out = append(out, pending)
	}
	return strings.Join(out, "\n")
}

// isInt reports whether s is a decimal integer.
func isInt(s string) bool {
	_, err := strconv.ParseInt(s, 10, 64)
	return err == nil
}
