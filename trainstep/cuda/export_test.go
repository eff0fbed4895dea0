package cuda

import "slices"

// Hooks for the external tests.

// CheckModel and CheckParams are the self-check's tiny models and their
// parameters, which the backend's tests build too.
var (
	CheckModel  = checkModel
	CheckParams = checkParams
)

// CSignatures parses the kernels' C signatures.
var CSignatures = cSignatures

// KernelParams are the Go twins' parameter lists by kernel name.
func KernelParams() map[string][]string {
	out := map[string][]string{}
	for _, k := range newKernels() {
		out[k.name] = k.params
	}
	return out
}

// LaunchBlocks is the number of blocks of a launch of kernel name with
// integer arguments ints (the others zero).
func LaunchBlocks(name string, ints map[int]int) (int, int, error) {
	for _, k := range newKernels() {
		if k.name != name {
			continue
		}
		a := make([]arg, len(k.params))
		for i, p := range k.params {
			a[i].kind = p[0]
			a[i].n = int32(ints[i])
		}
		return launchDims(k, a)
	}
	panic("no kernel " + name)
}

// WithoutLoaderCache is e that does not ask the dynamic loader by name.
func WithoutLoaderCache(e Env) Env { e.noLoaderCache = true; return e }

// SearchDirs are the directories searched for cuBLAS.
func SearchDirs(e Env) []string { return e.searchDirs(libCUBLAS()) }

// CompileKernels compiles Source for arch (0: the oldest it supports) with
// the NVRTC that env finds.
func CompileKernels(env Env, arch int) (ptx, version string, archs []int, err error) {
	r, err := loadNVRTC(env)
	if err != nil {
		return "", "", nil, err
	}
	if archs, err = r.archs(); err != nil {
		return "", "", nil, err
	}
	if arch == 0 { // the oldest this NVRTC supports: compute_52 is gone from CUDA 13's
		arch = archs[0]
	}
	ptx, err = r.compile(Source(), "parastream_kernels.cu", CompileOptions(arch))
	return ptx, r.version(), archs, err
}

// CachedPTX is nvrtc.cachedPTX with the NVRTC that env finds.
func CachedPTX(env Env, dir string, arch int) (string, bool, error) {
	r, err := loadNVRTC(env)
	if err != nil {
		return "", false, err
	}
	return r.cachedPTX(dir, Source(), CompileOptions(arch))
}

// LoadCUBLAS loads cuBLAS as Open does.
func LoadCUBLAS(env Env) error {
	_, err := loadCUBLAS(env)
	return err
}

// GraphStats are a model's captured steps, replays and evicted graphs
// (zeros with CUDA graphs off).
func GraphStats(m any) (captures, replays, evicted int) {
	c := m.(*model).graphs
	if c == nil {
		return 0, 0, 0
	}
	return c.captures, c.replays, c.evicted
}

// plantedKernel is a copy of kernel name of table ks whose body scales
// its output value tid (its last argument) by factor after the twin ran:
// a planted disagreement for kernels that write one value a thread, as
// masked_mean ("0.5f / len" for "1.0f / len" is factor 0.5).
func plantedKernel(ks *kernelTable, name string, factor float32) (kernelID, *kernel) {
	for id, k := range ks {
		if k.name != name {
			continue
		}
		pk := *k
		body := k.body
		pk.body = func(tid, n int, a []hostArg) {
			body(tid, n, a)
			if out := a[len(a)-1].f; tid < len(out) {
				out[tid] *= factor
			}
		}
		return kernelID(id), &pk
	}
	panic("no kernel " + name)
}

// EmulatorPlantedUpdate is EmulatorWith(opts) on which the optimiser
// kernel name (adam, sgd, rmsprop, adam_rows, ...) makes factor times
// its change to the parameter w: a wrong step size.
func EmulatorPlantedUpdate(opts Options, name string, factor float32) *Backend {
	b := EmulatorWith(opts)
	e := b.dev.(*emulator)
	for id, k := range e.kernels {
		if k.name != name {
			continue
		}
		w := slices.IndexFunc(k.params, func(p string) bool { return p == "f w" })
		pk := *k
		body := k.body
		pk.body = func(tid, n int, a []hostArg) {
			// The rows kernels write w at a row's index, not tid's: find
			// what the thread changed (the test models are small).
			out := a[w].f
			old := slices.Clone(out)
			body(tid, n, a)
			for j := range out {
				if out[j] != old[j] {
					out[j] = old[j] + factor*(out[j]-old[j])
				}
			}
		}
		e.kernels[id] = &pk
		return b
	}
	panic("no kernel " + name)
}

// EmulatorPlanted is EmulatorWith(opts) with kernel name's twin
// perturbed (plantedKernel): a fake device that disagrees with the
// emulator wherever that kernel runs.
func EmulatorPlanted(opts Options, name string, factor float32) *Backend {
	b := EmulatorWith(opts)
	e := b.dev.(*emulator)
	id, k := plantedKernel(e.kernels, name, factor)
	e.kernels[id] = k
	return b
}

// graphFault is an emulator whose kernel id, when captured into a CUDA
// graph, replays perturbed; launched eagerly it is right.
type graphFault struct {
	*emulator
	id kernelID
	k  *kernel
}

func (g *graphFault) launch(id kernelID, a []arg) error {
	if g.rec == nil || id != g.id {
		return g.emulator.launch(id, a)
	}
	a = slices.Clone(a)
	_, err := g.capture(func() error { return g.launchNow(g.k, a) })
	return err
}

// EmulatorGraphFault is EmulatorWith(opts) on which kernel name's twin is
// perturbed (plantedKernel) only in steps replayed from a CUDA graph.
func EmulatorGraphFault(opts Options, name string, factor float32) *Backend {
	e := newEmulator()
	e.tf32 = opts.TF32
	id, k := plantedKernel(e.kernels, name, factor)
	return &Backend{dev: &graphFault{emulator: e, id: id, k: k}, opts: opts}
}

// noCapture is an emulator on which every launch during a capture is
// refused (as a call that needs the host mid-way is on a GPU).
type noCapture struct{ *emulator }

func (n *noCapture) launch(id kernelID, a []arg) error {
	if err := n.refuse("a launch"); err != nil {
		return err
	}
	return n.emulator.launch(id, a)
}

// EmulatorNoCapture is EmulatorWith(opts) on which no step can be
// captured: CUDA graphs fall back to eager launches.
func EmulatorNoCapture(opts Options) *Backend {
	e := newEmulator()
	e.tf32 = opts.TF32
	return &Backend{dev: &noCapture{e}, opts: opts}
}
