package cuda

// The host harness: the kernels' CUDA C compiled with the machine's C++
// compiler through testdata/hostshim.h into a shared object, loaded with
// purego, each kernel's grid run on the CPU on the same inputs as its Go
// twin in the emulator, and the buffers compared. It checks that each twin
// computes what its CUDA C computes (TestSourcesEmbedded checks only the
// signatures); the C semantics, not the GPU's.

import (
	"fmt"
	"hash/fnv"
	"math"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"unsafe"

	"github.com/ebitengine/purego"
)

// HostCompiler is the first C++ compiler on PATH, or "" where there is
// none.
func HostCompiler() string {
	for _, c := range []string{"c++", "g++", "clang++"} {
		if p, err := exec.LookPath(c); err == nil {
			return p
		}
	}
	return ""
}

// HostResult is one kernel's comparison on one case: the largest error of
// its buffers as a fraction of the kernel's tolerance (at most 1 passes),
// or what went wrong.
type HostResult struct {
	Kernel, Case string
	Worst        float64 // max |c - twin| / (tol * (|twin| + mean |twin| of the buffer))
	Where        string  // the buffer and index of the worst value
	Err          string
}

// Failed says whether the C and the twin disagree.
func (r HostResult) Failed() bool { return r.Err != "" || r.Worst > 1 }

func (r HostResult) String() string {
	if r.Err != "" {
		return fmt.Sprintf("%s [%s]: %s", r.Kernel, r.Case, r.Err)
	}
	if r.Worst == 0 {
		return fmt.Sprintf("%s [%s]: bit-identical", r.Kernel, r.Case)
	}
	return fmt.Sprintf("%s [%s]: worst %.3g of tolerance %.0e at %s", r.Kernel, r.Case, r.Worst, hostTolerance(r.Kernel), r.Where)
}

// RunHostHarness compiles src (the kernels' CUDA C, as Source returns it)
// with the C++ compiler cc in dir and runs every kernel of the twins'
// table on each harness case. It fails only when the source does not
// compile or load; disagreements are results.
func RunHostHarness(cc, src, dir string) ([]HostResult, error) {
	lib, err := buildHostKernels(cc, src, dir)
	if err != nil {
		return nil, err
	}
	defer func() { _ = purego.Dlclose(lib.handle) }()
	var out []HostResult
	for id, k := range newKernels() {
		cid, ok := lib.ids[k.name]
		if !ok {
			out = append(out, HostResult{Kernel: k.name, Err: "no such function in the C source"})
			continue
		}
		if c := lib.sigs[k.name]; !slices.Equal(c, k.params) {
			// The launcher would read the arguments wrongly.
			out = append(out, HostResult{Kernel: k.name, Err: fmt.Sprintf("C parameters %v, twin %v", c, k.params)})
			continue
		}
		for _, c := range hostCases(k) {
			r := HostResult{Kernel: k.name, Case: c.name}
			if err := c.run(kernelID(id), lib, cid, &r); err != nil {
				r.Err = err.Error()
			}
			out = append(out, r)
		}
	}
	return out, nil
}

// hostKernels is the loaded shared object: launch runs kernel id's grid
// with args as cuLaunchKernel takes them (one pointer to each value).
type hostKernels struct {
	handle uintptr
	ids    map[string]int32
	sigs   map[string][]string // the C parameters, as kernel.params
	launch func(id, grid, block int32, args unsafe.Pointer) int32
}

// buildHostKernels writes src with a launcher per kernel, compiles it into
// dir/kernels.so and loads it.
func buildHostKernels(cc, src, dir string) (*hostKernels, error) {
	sigs, err := cSignatures(src)
	if err != nil {
		return nil, err
	}
	shim, err := filepath.Abs("testdata")
	if err != nil {
		return nil, err
	}
	names := make([]string, 0, len(sigs))
	for n := range sigs {
		names = append(names, n)
	}
	slices.Sort(names)
	var b strings.Builder
	fmt.Fprintf(&b, "#include \"hostshim.h\"\n%s\n#line 1 \"host-launchers\"\n", src)
	b.WriteString("extern \"C\" int ps_launch(int id, int grid, int block, void** a) {\n    switch (id) {\n")
	ids := map[string]int32{}
	for i, n := range names {
		ids[n] = int32(i)
		fmt.Fprintf(&b, "    case %d:\n        ps_run_grid(grid, block, [&] { %s(%s); });\n        return 0;\n", i, n, hostCallArgs(sigs[n]))
	}
	b.WriteString("    }\n    return -1;\n}\n")
	cfile, so := filepath.Join(dir, "kernels.cc"), filepath.Join(dir, "kernels.so")
	if err := os.WriteFile(cfile, []byte(b.String()), 0o644); err != nil {
		return nil, err
	}
	// No fast math and no contraction of a*b+c into an FMA: the C's own
	// float32 semantics, operation by operation.
	cmd := exec.Command(cc, "-std=c++17", "-O1", "-ffp-contract=off", "-fPIC", "-shared", "-Wall", "-I", shim, "-o", so, cfile)
	if msg, err := cmd.CombinedOutput(); err != nil {
		return nil, fmt.Errorf("compiling the kernels with %s: %v\n%s", cc, err, msg)
	}
	h, err := purego.Dlopen(so, purego.RTLD_NOW|purego.RTLD_LOCAL)
	if err != nil {
		return nil, fmt.Errorf("loading %s: %w", so, err)
	}
	lib := &hostKernels{handle: h, ids: ids, sigs: sigs}
	addr, err := purego.Dlsym(h, "ps_launch")
	if err != nil {
		_ = purego.Dlclose(h)
		return nil, err
	}
	purego.RegisterFunc(&lib.launch, addr)
	return lib, nil
}

// hostCallArgs is the C argument list of a kernel of params ("kind name"),
// each read through the launch's pointer to it.
func hostCallArgs(params []string) string {
	ctype := map[byte]string{pFloats: "float*", pInts: "int*", pDoubles: "double*", pInt: "int", pFloat: "float"}
	parts := make([]string, len(params))
	for i, p := range params {
		parts[i] = fmt.Sprintf("*(%s*)a[%d]", ctype[p[0]], i)
	}
	return strings.Join(parts, ", ")
}

// hostCase is one set of arguments for a kernel: the integer sizes of a
// shape, and with nulls the kernel's optional pointers NULL and every beta
// 0 (the other branch of the kernels that read them).
type hostCase struct {
	name  string
	shape map[string]int
	nulls bool
	seed  uint64
}

// hostShapes are the sizes the harness runs: small, but with grids of
// several blocks, the last one partial, sentences of length 1 and of the
// full padded length, and rows skipped by the sparse updates. n is an
// element count for the elementwise kernels, the number of pairs for the
// losses'. ld is the row length of the mnrl loss's prefix kernels, longer
// than d: a Matryoshka prefix of wider rows. chunk is the two-pass column
// sums' chunk of rows: the last chunk shorter.
func hostShapes() []hostShape {
	return []hostShape{
		{"A", map[string]int{"rows": 7, "T": 6, "d": 8, "H": 2, "n": 300, "pairs": 5, "cols": 10, "lda": 12, "ldb": 11, "ldm": 13,
			"ld": 12, "t": 3, "E": 8, "k": 3, "K": 7, "nrows": 5, "width": 60, "chunk": 3}},
		{"B", map[string]int{"rows": 9, "T": 4, "d": 40, "H": 4, "n": 513, "pairs": 11, "cols": 300, "lda": 301, "ldb": 300, "ldm": 302,
			"ld": 47, "t": 2, "E": 40, "k": 2, "K": 6, "nrows": 13, "width": 23, "chunk": 4}},
	}
}

// hostShape is a named set of the integer parameters' values.
type hostShape struct {
	name  string
	sizes map[string]int
}

// hostWords is the size of every buffer but the doubles': more than any
// kernel reads or writes at the shapes above, so that each pointer may
// address the whole of its buffer.
const hostWords = 8192

// hostNullable says whether a kernel accepts NULL for its pointer
// parameter name.
func hostNullable(name string) bool {
	return slices.Contains([]string{"drop", "w0", "target", "neg_rand", "mul"}, name)
}

func hostCases(k *kernel) []hostCase {
	optional := slices.ContainsFunc(k.params, func(p string) bool {
		return hostNullable(p[2:]) || p == "s beta"
	})
	var out []hostCase
	for i, s := range hostShapes() {
		out = append(out, hostCase{name: s.name, shape: s.sizes, seed: uint64(i)})
		if optional {
			out = append(out, hostCase{name: s.name + " NULL/beta 0", shape: s.sizes, nulls: true, seed: uint64(i)})
		}
	}
	return out
}

// run launches k on the case's arguments in the emulator (the Go twin)
// and in lib (the C), from the same initial buffers, and compares every
// buffer afterwards into r.
func (c hostCase) run(kid kernelID, lib *hostKernels, id int32, r *HostResult) error {
	emu := newEmulator()
	k := emu.kernels[kid]
	in, err := c.arguments(k)
	if err != nil {
		return err
	}
	// The twin, through the emulator's launch (its argument checks and
	// grid) on buffers holding the initial words.
	args := make([]arg, len(k.params))
	bufs := make([]*buffer, len(k.params))
	for i, p := range k.params {
		args[i] = arg{kind: p[0], n: in.ints[i], s: in.floats[i]}
		if in.words[i] == nil {
			continue
		}
		b, err := emu.alloc(len(in.words[i]))
		if err != nil {
			return err
		}
		copy(unsafe.Slice((*uint32)(unsafe.Pointer(unsafe.SliceData(b.host))), b.words), in.words[i])
		bufs[i], args[i].p = b, ptr{b: b}
	}
	if err := emu.launch(kid, args); err != nil {
		return fmt.Errorf("twin: %w", err)
	}
	grid, block, err := launchDims(k, args)
	if err != nil {
		return err
	}
	// The C, on copies of the same words.
	cw, err := c.launchC(lib, id, in, grid, block)
	if err != nil {
		return err
	}
	tol := hostTolerance(k.name)
	for i, p := range k.params {
		if bufs[i] == nil {
			continue
		}
		twin := unsafe.Slice((*uint32)(unsafe.Pointer(unsafe.SliceData(bufs[i].host))), bufs[i].words)
		worst, at := compareWords(p[0], twin, cw[i], tol)
		if worst > r.Worst || r.Where == "" {
			r.Worst, r.Where = worst, fmt.Sprintf("%s[%d]", p[2:], at)
		}
	}
	return nil
}

// launchC runs the C kernel on copies of the initial words and returns
// the buffers after the launch (nil where the argument is not a pointer
// or is NULL).
func (c hostCase) launchC(lib *hostKernels, id int32, in *hostInputs, grid, block int) ([][]uint32, error) {
	var pin runtime.Pinner
	defer pin.Unpin()
	n := len(in.words)
	out := make([][]uint32, n)
	ptrs := make([]unsafe.Pointer, n) // the pointer arguments' values
	vals := make([]unsafe.Pointer, n) // what the launch reads: a pointer to each value
	for i := range n {
		switch {
		case in.words[i] != nil:
			// As []uint64, so that double buffers are 8-byte aligned.
			mem := make([]uint64, (len(in.words[i])+1)/2)
			out[i] = unsafe.Slice((*uint32)(unsafe.Pointer(unsafe.SliceData(mem))), len(in.words[i]))
			copy(out[i], in.words[i])
			pin.Pin(unsafe.SliceData(mem))
			ptrs[i] = unsafe.Pointer(unsafe.SliceData(mem))
			vals[i] = unsafe.Pointer(&ptrs[i])
		case in.pointer[i]:
			vals[i] = unsafe.Pointer(&ptrs[i]) // NULL
		case in.isFloat[i]:
			vals[i] = unsafe.Pointer(&in.floats[i])
		default:
			vals[i] = unsafe.Pointer(&in.ints[i])
		}
	}
	pin.Pin(unsafe.SliceData(ptrs))
	pin.Pin(unsafe.SliceData(in.ints))
	pin.Pin(unsafe.SliceData(in.floats))
	if rc := lib.launch(id, int32(grid), int32(block), unsafe.Pointer(unsafe.SliceData(vals))); rc != 0 {
		return nil, fmt.Errorf("the C launcher has no kernel %d", id)
	}
	runtime.KeepAlive(vals)
	return out, nil
}

// compareWords is the largest error between the twin's buffer and the C's
// as a fraction of the allowed one, and where it is. Floats are allowed
// tol * (|twin| + the buffer's mean |twin|): relative to the value, with a
// floor for values that a cancellation made small; ints and doubles must
// be equal but for tol on doubles.
func compareWords(kind byte, twin, c []uint32, tol float64) (float64, int) {
	worst, at := 0.0, 0
	note := func(e float64, i int) {
		if e > worst || math.IsNaN(e) {
			worst, at = e, i
			if math.IsNaN(e) {
				worst = math.Inf(1)
			}
		}
	}
	switch kind {
	case pInts:
		for i := range twin {
			if twin[i] != c[i] {
				note(math.Inf(1), i)
			}
		}
	case pDoubles:
		for i := 0; i+1 < len(twin); i += 2 {
			a := math.Float64frombits(uint64(twin[i]) | uint64(twin[i+1])<<32)
			b := math.Float64frombits(uint64(c[i]) | uint64(c[i+1])<<32)
			if a != b {
				note(math.Abs(a-b)/(tol*math.Abs(a)), i/2)
			}
		}
	default:
		mean := 0.0
		for _, w := range twin {
			if v := math.Abs(float64(math.Float32frombits(w))); !math.IsInf(v, 0) && !math.IsNaN(v) {
				mean += v / float64(len(twin))
			}
		}
		for i := range twin {
			if twin[i] == c[i] {
				continue
			}
			a, b := float64(math.Float32frombits(twin[i])), float64(math.Float32frombits(c[i]))
			note(math.Abs(a-b)/(tol*(math.Abs(a)+mean)), i)
		}
	}
	return worst, at
}

// hostInputs are a launch's arguments: per parameter, its scalar, or the
// initial words of its buffer (nil for a scalar or a NULL pointer).
type hostInputs struct {
	ints    []int32
	floats  []float32
	words   [][]uint32
	pointer []bool
	isFloat []bool
}

// arguments builds k's arguments for the case from the parameters' names:
// the sizes of the shape, random buffers with the values each name
// stands for (lengths from 1 to the padded length, ids that repeat,
// distinct row lists, an inverse index that matches its negatives), the
// optimisers' usual constants. An unknown name is an error, so that a new
// kernel cannot pass unexamined.
func (c hostCase) arguments(k *kernel) (*hostInputs, error) {
	h := fnv.New64a()
	h.Write([]byte(k.name))
	rng := rand.New(rand.NewPCG(c.seed, h.Sum64())) // a stream of its own per kernel and shape
	n := len(k.params)
	in := &hostInputs{ints: make([]int32, n), floats: make([]float32, n), words: make([][]uint32, n),
		pointer: make([]bool, n), isFloat: make([]bool, n)}
	size := map[string]int{}
	for key, v := range c.shape {
		size[key] = v
	}
	if slices.ContainsFunc(k.params, func(p string) bool { return p == "n E" || p == "f C" || p == "f dC" }) {
		size["n"] = size["pairs"] // the losses: n pairs, 2n rows
	}
	byName := map[string][]uint32{}
	for i, p := range k.params {
		kind, name := p[0], p[2:]
		in.pointer[i] = kind == pFloats || kind == pInts || kind == pDoubles
		in.isFloat[i] = kind == pFloat
		switch kind {
		case pInt:
			v, ok := size[name]
			if !ok {
				return nil, fmt.Errorf("harness: no size for int parameter %s", name)
			}
			in.ints[i] = int32(v)
		case pFloat:
			v, ok := hostScalar(name, c.nulls)
			if !ok {
				return nil, fmt.Errorf("harness: no value for float parameter %s", name)
			}
			in.floats[i] = v
		case pDoubles:
			in.words[i] = make([]uint32, 2*max(k.fixedThreads, hostWords/2))
			for j := 0; j+1 < len(in.words[i]); j += 2 {
				b := math.Float64bits(rng.Float64())
				in.words[i][j], in.words[i][j+1] = uint32(b), uint32(b>>32)
			}
		default:
			if c.nulls && hostNullable(name) {
				continue
			}
			w, err := hostInit(kind, name, size, byName, rng)
			if err != nil {
				return nil, err
			}
			in.words[i] = w
			byName[name] = w
		}
	}
	if f := slices.Index(k.params, "i flag"); f > 0 {
		// nonfinite: one infinite value, in the last block, raises the flag.
		in.words[f-1][size["n"]-2] = math.Float32bits(float32(math.Inf(1)))
	}
	return in, nil
}

// hostScalar is the value of a float parameter.
func hostScalar(name string, nulls bool) (float32, bool) {
	if name == "beta" && nulls {
		return 0, true
	}
	v, ok := map[string]float32{"beta": 0.5, "lambda": 0.01, "delta": 0.4, "b1": 0.9, "b2": 0.999, "eps": 1e-8,
		"rho": 0.9, "lr": 0.05, "c1": 1.25, "c2": 1.1, "scale": 0.7, "s": 1.3, "v": 0.25}[name]
	return v, ok
}

// hostInit is the initial content of a pointer parameter, by its name.
func hostInit(kind byte, name string, size map[string]int, byName map[string][]uint32, rng *rand.Rand) ([]uint32, error) {
	w := make([]uint32, hostWords)
	ints := func(lo, hi int) {
		for j := range w {
			w[j] = uint32(int32(lo + rng.IntN(hi-lo)))
		}
	}
	floats := func(lo, hi float32) {
		for j := range w {
			w[j] = math.Float32bits(lo + (hi-lo)*rng.Float32())
		}
	}
	if kind == pFloats {
		switch name {
		case "v", "nrm", "rstd", "d1", "d2", "hyper", "p":
			floats(0.05, 1) // variances, norms, decays, the {lr, c1, c2}, probabilities
		case "s":
			floats(0, 1) // catch-up steps, a third of them none
			for j := 0; j < len(w); j += 3 {
				w[j] = 0
			}
		default:
			floats(-1, 1)
		}
		return w, nil
	}
	switch name {
	case "lens":
		// Lengths from 1 to the padded length: padded steps and a
		// sentence of one word. Without T (the per-step kernels), up to
		// twice the step t, so that about half the rows are past their end.
		full := size["T"]
		if full == 0 {
			full = 2 * size["t"]
		}
		ints(1, full+1)
		w[0], w[1] = 1, uint32(full)
	case "ids":
		ints(0, 10) // ten words: a batch repeats them (atomicAdd)
	case "rows":
		// Distinct rows of the table, in random order, some never listed.
		perm := rng.Perm(hostWords / size["width"])
		for j := range w {
			w[j] = uint32(perm[j%len(perm)])
		}
	case "neg_rand", "neg":
		ints(0, 2*size["n"])
	case "pidx":
		ints(-1, 2*size["n"]) // a lane's candidate column, -1 for none
	case "use_max":
		ints(0, 2)
	case "neg_a", "neg_b":
		ints(0, size["n"])
	case "in_a_off", "in_b_off", "in_a", "in_b":
		return hostInverse(name, size, byName)
	case "flag":
		// zeros: nonfinite only raises it
	default:
		return nil, fmt.Errorf("harness: no values for int pointer %s", name)
	}
	return w, nil
}

// hostInverse is hinge_bwd's inverse index of neg_a or neg_b: the entries
// i*k+m whose value is pair j, listed by j, with CSR offsets.
func hostInverse(name string, size map[string]int, byName map[string][]uint32) ([]uint32, error) {
	neg := byName["neg_"+name[3:4]]
	if neg == nil {
		return nil, fmt.Errorf("harness: %s before neg_%s", name, name[3:4])
	}
	n, k := size["n"], size["k"]
	off := make([]uint32, hostWords)
	var list []uint32
	for j := range n {
		off[j] = uint32(len(list))
		for e := range n * k {
			if int(neg[e]) == j {
				list = append(list, uint32(e))
			}
		}
	}
	off[n] = uint32(len(list))
	if strings.HasSuffix(name, "_off") {
		return off, nil
	}
	return append(list, make([]uint32, hostWords-len(list))...), nil
}

// hostTolerance is the kernel's allowed relative difference between its C
// and its twin (see compareWords). Both do the same float32 operations in
// the same order, so most agree to the bit; the margins allow:
//   - 1e-6 (8 float32 ulps) where only + - * / and sqrt are involved: a
//     compiler that contracts a*b+c into one fused multiply-add (Go does on
//     arm64) rounds once instead of twice;
//   - 1e-5 where a kernel calls expf, tanhf, logf or the double pow, sin and
//     cos: the C library's float functions are within an ulp or two of
//     the twin's float64 functions rounded to float32, and the kernels
//     chain a few (the LSTM cell, softmax over a row);
//
// (Measured on x86-64 with glibc 2.36: the kernels of the first kind
// bit-identical, those of the second within 1.2e-7.)
// A wrong term (a factor, a missed step or guard) is off by far more.
func hostTolerance(name string) float64 {
	switch name {
	case "lstm_cell_fwd", "lstm_cell_bwd", "gran_gate_fwd", "gran3_step_fwd", "sigmoid_fwd", "tanh_fwd",
		"softmax_xent_fwd", "attn_softmax", "tf_input":
		return 1e-5
	}
	return 1e-6
}
