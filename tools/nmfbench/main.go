// Command nmfbench is the Go side of scripts/nmf_bench.py, the comparison of
// featurize's NMF solver with scikit-learn's. It builds the matrices and
// runs the Go fits; the script runs scikit-learn on the same matrices and
// starting points and prints the table.
//
//	nmfbench quora -in quora.tsv -out X.mtx [-min-df 2]
//	    bag-of-words (raw counts) of the distinct questions of a Quora
//	    question-pairs file: normalised and lowercased tokens, terms in at
//	    least min-df questions
//	nmfbench gen -rows 20000 -cols 30000 -density 0.001 -seed 1 -out X.mtx
//	    a random sparse matrix, values uniform in (0,1]
//	nmfbench init -x X.mtx -k K -seed S -out DIR
//	    featurize.RandomInit, written as DIR/W0.npy and DIR/H0.npy (float64)
//	nmfbench fit -x X.mtx -init DIR -k K -l1 λ -iters N [-target E] [-out DIR]
//	    FitNMF from that start, printing one JSON object: per-iteration
//	    seconds and relative errors; with -out, W.npy and H.npy
package main

import (
	"bufio"
	"context"
	"encoding/binary"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"maps"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"time"

	"github.com/parastream/parastream/corpora"
	"github.com/parastream/parastream/featurize"
	"github.com/parastream/parastream/transforms/text"
)

func main() {
	if len(os.Args) < 2 {
		fmt.Fprintln(os.Stderr, "usage: nmfbench quora|gen|init|fit [flags]")
		os.Exit(2)
	}
	cmds := map[string]func([]string) error{"quora": quora, "gen": gen, "init": initCmd, "fit": fit}
	cmd, ok := cmds[os.Args[1]]
	if !ok {
		fmt.Fprintf(os.Stderr, "nmfbench: unknown command %q (quora, gen, init, fit)\n", os.Args[1])
		os.Exit(2)
	}
	if err := cmd(os.Args[2:]); err != nil {
		fmt.Fprintln(os.Stderr, "nmfbench:", err)
		os.Exit(1)
	}
}

func quora(args []string) error {
	fs := flag.NewFlagSet("quora", flag.ExitOnError)
	in := fs.String("in", "", "Quora question-pairs TSV")
	out := fs.String("out", "", "output .mtx")
	minDF := fs.Int("min-df", 2, "keep terms that occur in at least this many questions")
	fs.Parse(args)
	r, err := corpora.OpenFormat("quora", []string{*in}, corpora.Options{})
	if err != nil {
		return err
	}
	defer r.Close()
	seen := map[string]bool{}
	var docs [][]string
	add := func(s string) {
		s = text.Normalize(s, text.NormalizeOptions{})
		if s == "" || seen[s] {
			return
		}
		seen[s] = true
		docs = append(docs, text.Tokenize(s, text.TokenizeOptions{Lower: true}))
	}
	for {
		e, err := r.Next()
		if errors.Is(err, io.EOF) {
			break
		}
		var pe *corpora.ParseError
		if errors.As(err, &pe) {
			continue // counted by the reader; a benchmark needs only the good rows
		}
		if err != nil {
			return err
		}
		add(e.A)
		add(e.B)
	}
	df := map[string]int{}
	for _, d := range docs {
		for _, w := range uniq(d) {
			df[w]++
		}
	}
	var vocab []string
	for w, n := range df {
		if n >= *minDF {
			vocab = append(vocab, w)
		}
	}
	slices.Sort(vocab)
	id := make(map[string]int32, len(vocab))
	for i, w := range vocab {
		id[w] = int32(i)
	}
	x := featurize.NewCSR(len(vocab))
	counts := map[int32]float32{}
	var idx []int32
	var val []float32
	for _, d := range docs {
		clear(counts)
		for _, w := range d {
			if j, ok := id[w]; ok {
				counts[j]++
			}
		}
		if len(counts) == 0 {
			continue
		}
		idx, val = idx[:0], val[:0]
		for _, j := range slices.Sorted(maps.Keys(counts)) {
			idx = append(idx, j)
			val = append(val, counts[j])
		}
		if err := x.AppendRow(idx, val); err != nil {
			return err
		}
	}
	fmt.Fprintf(os.Stderr, "quora: %d questions × %d terms, %d non-zeros\n", x.Rows, x.Cols, x.NNZ())
	return writeMTX(*out, x)
}

func uniq(words []string) []string {
	s := slices.Clone(words)
	slices.Sort(s)
	return slices.Compact(s)
}

func gen(args []string) error {
	fs := flag.NewFlagSet("gen", flag.ExitOnError)
	rows := fs.Int("rows", 20000, "rows (documents)")
	cols := fs.Int("cols", 30000, "columns (terms)")
	density := fs.Float64("density", 0.001, "fraction of non-zero entries")
	seed := fs.Uint64("seed", 1, "random seed")
	out := fs.String("out", "", "output .mtx")
	fs.Parse(args)
	rng := rand.New(rand.NewPCG(*seed, 7))
	n := int(math.Round(*density * float64(*rows) * float64(*cols)))
	r, c, v := make([]int32, n), make([]int32, n), make([]float32, n)
	for p := range n {
		r[p], c[p] = int32(rng.IntN(*rows)), int32(rng.IntN(*cols))
		v[p] = float32(1 - rng.Float64()) // (0,1]
	}
	x, err := featurize.CSRFromTriplets(*rows, *cols, r, c, v)
	if err != nil {
		return err
	}
	return writeMTX(*out, x)
}

func initCmd(args []string) error {
	fs := flag.NewFlagSet("init", flag.ExitOnError)
	xPath := fs.String("x", "", "input .mtx")
	k := fs.Int("k", 10, "topics")
	seed := fs.Uint64("seed", 1, "seed")
	out := fs.String("out", "", "output directory")
	fs.Parse(args)
	x, err := readMTX(*xPath)
	if err != nil {
		return err
	}
	init := featurize.RandomInit(x, *k, *seed)
	if err := writeNPY(filepath.Join(*out, "W0.npy"), init.W, x.Rows, *k); err != nil {
		return err
	}
	return writeNPY(filepath.Join(*out, "H0.npy"), init.H, *k, x.Cols)
}

// fitReport is what fit prints.
type fitReport struct {
	Seconds   []float64 `json:"seconds"` // since FitNMF was called, at the end of each iteration
	RelErrors []float64 `json:"rel_errors"`
	Objective []float64 `json:"objective"`
	RelError  float64   `json:"rel_error"` // featurize.RelativeError of the result
	Workers   int       `json:"workers"`
}

func fit(args []string) error {
	fs := flag.NewFlagSet("fit", flag.ExitOnError)
	xPath := fs.String("x", "", "input .mtx")
	initDir := fs.String("init", "", "directory with W0.npy and H0.npy")
	k := fs.Int("k", 10, "topics")
	l1 := fs.Float64("l1", 0, "λ")
	iters := fs.Int("iters", 100, "iteration budget")
	target := fs.Float64("target", 0, "stop at this relative error")
	out := fs.String("out", "", "write W.npy and H.npy here")
	fs.Parse(args)
	x, err := readMTX(*xPath)
	if err != nil {
		return err
	}
	var init featurize.NMFInit
	if init.W, err = readNPY(filepath.Join(*initDir, "W0.npy"), x.Rows**k); err != nil {
		return err
	}
	if init.H, err = readNPY(filepath.Join(*initDir, "H0.npy"), *k*x.Cols); err != nil {
		return err
	}
	var rep fitReport
	start := time.Now()
	cfg := featurize.NMFConfig{K: *k, L1: *l1, MaxIter: *iters, Tol: -1, StopAtRelError: *target, Init: &init,
		Progress: func(int, float64) { rep.Seconds = append(rep.Seconds, time.Since(start).Seconds()) }}
	m, res, err := featurize.FitNMF(context.Background(), x, cfg)
	if err != nil {
		return err
	}
	rep.RelErrors, rep.Objective = res.RelErrors, res.Objective
	rep.RelError = featurize.RelativeError(x, res.W, m.H)
	rep.Workers = runtime.GOMAXPROCS(0)
	if *out != "" {
		if err := writeNPY(filepath.Join(*out, "W.npy"), res.W, x.Rows, *k); err != nil {
			return err
		}
		if err := writeNPY(filepath.Join(*out, "H.npy"), m.H, *k, x.Cols); err != nil {
			return err
		}
	}
	return json.NewEncoder(os.Stdout).Encode(rep)
}

func readMTX(path string) (*featurize.CSR, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	x, err := featurize.ReadMatrixMarket(bufio.NewReaderSize(f, 1<<20))
	if err != nil {
		return nil, fmt.Errorf("reading %s: %w", path, err)
	}
	return x, nil
}

func writeMTX(path string, x *featurize.CSR) error {
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	if err := featurize.WriteMatrixMarket(f, x); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

// writeNPY writes a rows×cols float64 array in NumPy's .npy format 1.0.
func writeNPY(path string, v []float32, rows, cols int) error {
	hdr := fmt.Sprintf("{'descr': '<f8', 'fortran_order': False, 'shape': (%d, %d), }", rows, cols)
	pad := 64 - (10+len(hdr)+1)%64
	hdr += strings.Repeat(" ", pad) + "\n"
	buf := make([]byte, 0, 10+len(hdr)+8*len(v))
	buf = append(buf, "\x93NUMPY\x01\x00"...)
	buf = binary.LittleEndian.AppendUint16(buf, uint16(len(hdr)))
	buf = append(buf, hdr...)
	for _, x := range v {
		buf = binary.LittleEndian.AppendUint64(buf, math.Float64bits(float64(x)))
	}
	return os.WriteFile(path, buf, 0o644)
}

// readNPY reads n float64 values written by writeNPY (or numpy.save of a
// C-ordered float64 array), as float32.
func readNPY(path string, n int) ([]float32, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	if len(b) < 10 || string(b[:6]) != "\x93NUMPY" {
		return nil, fmt.Errorf("%s: not a .npy file", path)
	}
	off := 10 + int(binary.LittleEndian.Uint16(b[8:10]))
	if off > len(b) || !strings.Contains(string(b[10:off]), "'<f8'") || len(b)-off != 8*n {
		return nil, fmt.Errorf("%s: want %d little-endian float64 values", path, n)
	}
	out := make([]float32, n)
	for i := range out {
		out[i] = float32(math.Float64frombits(binary.LittleEndian.Uint64(b[off+8*i:])))
	}
	return out, nil
}
